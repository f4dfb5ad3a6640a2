package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

func post(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestMockShapes(t *testing.T) {
	t.Parallel()
	m := newMock(20, 0, 0, true)
	up := httptest.NewServer(m)
	t.Cleanup(up.Close)

	resp := post(t, up.URL+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[]}`, map[string]string{"X-Mock-Chunks": "3"})
	var unary struct {
		Model   string `json:"model"`
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&unary); err != nil || resp.Header.Get("x-request-id") == "" {
		t.Fatalf("unary: %v %v", err, resp.Header)
	}
	if unary.Model != "gpt-4o-mini" || unary.Choices[0].Message.Content != "Hello there! This" || unary.Usage.CompletionTokens != 3 || unary.Choices[0].FinishReason != "stop" {
		t.Errorf("unary = %+v", unary)
	}

	resp = post(t, up.URL+"/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, nil)
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
		}
	}
	// role, 20 words, finish, usage, [DONE]
	if len(events) != 24 || events[23] != "[DONE]" || !strings.Contains(events[22], `"completion_tokens":20`) || !strings.Contains(events[21], `"finish_reason":"stop"`) {
		t.Errorf("stream: %d events, last %q", len(events), events[len(events)-3:])
	}
	for _, e := range events[:23] {
		if !json.Valid([]byte(e)) {
			t.Errorf("not JSON: %s", e)
		}
	}

	if resp := post(t, up.URL+"/v1/chat/completions", `{`, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON: %d", resp.StatusCode)
	}
	if resp := post(t, up.URL+"/v1/nothing", `{}`, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if m.chat.Load() != 1 || m.chatStream.Load() != 1 {
		t.Errorf("stats: %d unary, %d streams", m.chat.Load(), m.chatStream.Load())
	}
}

// TestRelayThroughMock: llmrelay's OpenAI adapter understands the mock, as
// the benchmark needs (its configuration, reduced).
func TestRelayThroughMock(t *testing.T) {
	t.Parallel()
	m := newMock(5, 0, 0, true)
	up := httptest.NewServer(m)
	t.Cleanup(up.Close)
	cfg, err := config.Parse([]byte(`
providers:
  - {name: mock, type: openai, base_url: "`+up.URL+`/v1", api_key: sk-bench}
models:
  - {name: bench/gpt-4o-mini, provider: mock, upstream_model: gpt-4o-mini, capabilities: {chat: {format: openai-chat}}}
`), "bench")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	t.Cleanup(func() { cancel(); <-done })
	c, err := client.New(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	msgs := []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}}
	resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "bench/gpt-4o-mini", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetMessage().GetParts()[0].GetText(); got != answer(5) || resp.GetMeta().GetUsage().GetOutputTokens() != 5 {
		t.Errorf("chat: %q %v", got, resp.GetMeta().GetUsage())
	}
	s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "bench/gpt-4o-mini", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	texts := 0
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetTextDelta() != nil {
			texts++
		}
	}
	if texts != 5 || s.Acc.Meta().GetUsage().GetOutputTokens() != 5 || m.chatStream.Load() != 1 {
		t.Errorf("stream: %d text events, usage %v, %d streams at the mock", texts, s.Acc.Meta().GetUsage(), m.chatStream.Load())
	}
}
