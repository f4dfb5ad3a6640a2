package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

var scanKeys = []string{"sk-leak-one-0123456789", "sk-two/Leak+9876543210"}

// escapeJSON writes every byte of s as a \u escape, the way a JSON encoder
// may echo a key back.
func escapeJSON(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// echoUpstream is an OpenAI-compatible server that echoes the caller's key
// in every place a provider could: headers, ids, model names, fingerprints,
// error messages, codes and params, literally and JSON-escaped. Models
// "echo-fail" get a 400.
func echoUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		esc := escapeJSON(key)
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("x-request-id", key)
		w.Header().Set("openai-organization", url.QueryEscape(key))
		w.Header().Set("Content-Type", "application/json")
		if req.Model == "echo-fail" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error": {"message": "Incorrect API key provided: %s (%s)", "type": "invalid_request_error", "param": "%s", "code": "%s"}}`, key, esc, esc, key)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			fmt.Fprintf(w, `{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.5]}], "model": "%s", "usage": {"prompt_tokens": 1, "total_tokens": 1}}`, esc)
			return
		}
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, chunk := range []string{
				`{"id": "` + key + `", "object": "chat.completion.chunk", "created": 1, "model": "` + esc + `", "system_fingerprint": "` + key + `", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": null}]}`,
				`{"id": "` + key + `", "object": "chat.completion.chunk", "created": 1, "model": "` + esc + `", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}`,
				`{"id": "` + key + `", "object": "chat.completion.chunk", "created": 1, "model": "` + esc + `", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}`,
			} {
				fmt.Fprintf(w, "data: %s\n\n", chunk)
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		fmt.Fprintf(w, `{"id": "%s", "object": "chat.completion", "created": 1, "model": "%s", "system_fingerprint": "%s", "service_tier": "%s",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}`, key, esc, esc, key)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func scanYAML(u string) string {
	y := "defaults:\n  retry: {max_attempts: 1}\nproviders:\n"
	for i, k := range scanKeys {
		y += fmt.Sprintf("  - {name: p%d, type: openai, base_url: %q, api_key: %q}\n", i, u, k)
	}
	y += "models:\n"
	for i := range scanKeys {
		for _, m := range []string{"ok", "fail"} {
			y += fmt.Sprintf("  - {name: p%d-%s, provider: p%d, upstream_model: echo-%s, capabilities: {chat: {format: openai-chat}, tools: {format: openai-tools}, embeddings: {format: openai-embeddings}}}\n", i, m, i, m)
		}
	}
	return y
}

var (
	jsonEscapes = regexp.MustCompile(`\\+u([0-9a-fA-F]{4})`)
	slashEscape = regexp.MustCompile(`\\+/`)
)

// leaked returns the first key found in text, as is, JSON-escaped (behind
// any number of backslashes) or percent-encoded.
func leaked(text string) string {
	decoded := jsonEscapes.ReplaceAllStringFunc(text, func(m string) string {
		v, _ := strconv.ParseUint(m[len(m)-4:], 16, 32)
		return string(rune(v))
	})
	decoded = slashEscape.ReplaceAllString(decoded, "/")
	forms := []string{text, decoded}
	if u, err := url.QueryUnescape(decoded); err == nil {
		forms = append(forms, u)
	}
	for _, k := range scanKeys {
		for _, f := range forms {
			if strings.Contains(f, k) {
				return k
			}
		}
	}
	return ""
}

// TestNoKeyLeaks calls every RPC, succeeding and failing, against a
// provider that echoes its key everywhere, and scans responses, stream
// events, errors with all their details, raw captures and the server log.
func TestNoKeyLeaks(t *testing.T) {
	t.Parallel()
	up := echoUpstream(t)
	c, logs := startWith(t, scanYAML(up.URL), "")
	ctx := context.Background()
	raw := &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(true)}
	var outputs []proto.Message
	var calls, failures int
	record := func(what string, resp proto.Message, err error) {
		t.Helper()
		calls++
		if err != nil {
			failures++
			outputs = append(outputs, status.Convert(err).Proto())
			return
		}
		outputs = append(outputs, resp)
	}
	msgs := []*llmrelayv1.Message{user("hello")}
	tools := weatherTools(t)
	for i := range scanKeys {
		for _, m := range []string{"ok", "fail"} {
			model := fmt.Sprintf("p%d-%s", i, m)
			resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: model, Messages: msgs, Call: raw})
			record(model+" Chat", resp, err)
			tr, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: model, Messages: msgs, Tools: tools, Call: raw})
			record(model+" Tools", tr, err)
			er, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: model, Inputs: []string{"x"}, Call: raw})
			record(model+" Embed", er, err)
			sc, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: model, Messages: msgs, Call: raw})
			if err != nil {
				t.Fatal(err)
			}
			for {
				ev, err := sc.Recv()
				if err == io.EOF {
					break
				}
				record(model+" StreamChat", ev, err)
				if err != nil {
					break
				}
			}
			st, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: model, Messages: msgs, Tools: tools, Call: raw})
			if err != nil {
				t.Fatal(err)
			}
			for {
				ev, err := st.Recv()
				if err == io.EOF {
					break
				}
				record(model+" StreamTools", ev, err)
				if err != nil {
					break
				}
			}
		}
	}
	lm, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
	record("ListModels", lm, err)
	if failures != 2*5 {
		t.Errorf("%d of %d calls failed, want the 10 calls of the failing models", failures, calls)
	}
	sawRaw := 0
	for _, o := range outputs {
		text := prototext.Format(o)
		if k := leaked(text); k != "" {
			t.Errorf("key %s leaked in\n%s", k, text)
		}
		if strings.Contains(text, "response_status:") {
			sawRaw++
		}
	}
	if sawRaw == 0 {
		t.Error("no raw capture was scanned")
	}
	if k := leaked(logs.String()); k != "" {
		t.Errorf("key %s leaked in the log:\n%s", k, logs.String())
	}
}
