package server_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestLeftovers19OllamaContextOverflow: Ollama refuses an input longer
// than its context with the same words at any status (the runner's
// errorInputTooLong: 400 from the versions that tell it apart, 500 from
// older ones), natively ({"error": "…"}) and behind its OpenAI-compatible
// endpoint (openai.NewError: invalid_request_error for a 400, api_error
// otherwise) and its Anthropic-compatible one (anthropic.NewError, the
// same types). Each is one answer: InvalidArgument, reason
// CONTEXT_LENGTH_EXCEEDED, not retried (the same input fails again).
// Through the compatible endpoints the 400 was INVALID_REQUEST and the
// 500 UNAVAILABLE, retried three times.
func TestLeftovers19OllamaContextOverflow(t *testing.T) {
	t.Parallel()
	const msg = "the input length exceeds the context length" // testdata/real_lcg_context_length_no_truncate.http
	cases := []struct {
		name   string
		f      f13Format
		status int
		body   string
	}{
		{"native 400", ollamaFormat, http.StatusBadRequest, `{"error":"` + msg + `"}`},
		{"native 500", ollamaFormat, http.StatusInternalServerError, `{"error":"` + msg + `"}`},
		{"v1 400", openaiChat, http.StatusBadRequest, `{"error":{"message":"` + msg + `","type":"invalid_request_error","param":null,"code":null}}`},
		{"v1 500", openaiChat, http.StatusInternalServerError, `{"error":{"message":"` + msg + `","type":"api_error","param":null,"code":null}}`},
		{"anthropic 400", anthropicFormat, http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"` + msg + `"},"request_id":"req_1"}`},
		{"anthropic 500", anthropicFormat, http.StatusInternalServerError, `{"type":"error","error":{"type":"api_error","message":"` + msg + `"},"request_id":"req_1"}`},
		{"v1 500 embed handler", openaiChat, http.StatusInternalServerError, `{"error":{"message":"input exceeds maximum context length and cannot be truncated further","type":"api_error","param":null,"code":null}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(tc.status, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, tc.body))
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.InvalidArgument || info.GetReason() != "CONTEXT_LENGTH_EXCEEDED" {
				t.Errorf("status %v, reason %s", st, info.GetReason())
			}
			if n := up.requests(); n != 1 {
				t.Errorf("%d upstream requests: a context overflow is not retried", n)
			}
		})
	}
}

// resetConn answers a request with a bare TCP reset: no status, no byte.
func resetConn(w http.ResponseWriter, _ *http.Request) {
	c, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// TestLeftovers19AzureReset: a connection Azure resets before answering
// is a connection error like any provider's (TestFault13UnaryTransport
// and TestFault17StreamOpenFailures cover the classic routes' chat with
// an api-key): on the v1 routes with an Entra token, for the Responses
// API unary and streamed and for embeddings too, it is retried (reason
// connection_error, the answer after it kept), and once the attempts are
// used up it is Unavailable, UPSTREAM_UNAVAILABLE.
func TestLeftovers19AzureReset(t *testing.T) {
	t.Parallel()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("entra-token-f19\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	provider := `providers:
  - name: up
    type: azure
    base_url: {{URL}}
    auth: entra
    azure_api: v1
    api_key_file: ` + token + `
models:
`
	embedOK := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.0232,-0.0091]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`
	okHead := hdr("Content-Type", "application/json", "apim-request-id", "req-f19-2")
	type call func(llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error)
	cases := []struct {
		name, caps string
		ok         f13Step
		call       call
	}{
		{"responses", "{chat: {format: openai-responses}}", respond(200, okHead, openaiResponses.okBody),
			func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
				resp, err := c.Chat(context.Background(), chatReq13())
				return resp.GetMeta(), err
			}},
		{"responses stream", "{chat: {format: openai-responses}}",
			respond(200, hdr("Content-Type", "text/event-stream", "apim-request-id", "req-f19-2"), openaiResponses.complete()),
			func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
				got := readStream13(t, c)
				return got.end.GetMeta(), got.err
			}},
		{"embeddings", "{embeddings: {format: openai-embeddings}}", respond(200, okHead, embedOK),
			func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
				resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: []string{"a"}})
				return resp.GetMeta(), err
			}},
	}
	for _, tc := range cases {
		yaml := "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n" + provider +
			"  - {name: m, provider: up, upstream_model: gpt-4.1, capabilities: " + tc.caps + "}\n"
		t.Run(tc.name+"/then success", func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var path, auth string
			up := f13Serve(t, resetConn, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				path, auth = r.URL.Path, r.Header.Get("Authorization")
				mu.Unlock()
				tc.ok(w, r)
			})
			m, err := tc.call(f13Start(t, yaml, up.URL, &f13Clock{}))
			if err != nil {
				t.Fatal(err)
			}
			if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "connection_error" ||
				m.GetProviderRequestId() != "req-f19-2" || up.requests() != 2 {
				t.Errorf("meta %v, upstream %d", m, up.requests())
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.HasPrefix(path, "/openai/v1/") || auth != "Bearer entra-token-f19" {
				t.Errorf("answered %s with %q: not Azure's v1 route with the Entra token", path, auth)
			}
		})
		t.Run(tc.name+"/every attempt", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, resetConn)
			_, err := tc.call(f13Start(t, yaml, up.URL, &f13Clock{}))
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_UNAVAILABLE" {
				t.Fatalf("status %v %s", st, info.GetReason())
			}
			m := failedMeta(t, err)
			if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 2 || m.GetRetryReasons()[1].GetReason() != "connection_error" || up.requests() != 2 {
				t.Errorf("meta %v, upstream %d", m, up.requests())
			}
		})
	}
}
