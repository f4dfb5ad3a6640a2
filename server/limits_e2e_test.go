package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func TestConcurrencyCaps(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_ADMIN_TOKEN", adminToken)
	stream := func(c llmrelayv1.GatewayServiceClient, ctx context.Context) (llmrelayv1.GatewayService_StreamChatClient, error) {
		s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("story")}})
		if err != nil {
			return nil, err
		}
		_, err = s.Recv()
		return s, err
	}
	cases := []struct {
		name, yaml string
		ctx        context.Context
		second     func(c llmrelayv1.GatewayServiceClient) error
		limit      string
	}{
		{"streams", "limits: {max_concurrent_streams: 1}\n", context.Background(), func(c llmrelayv1.GatewayServiceClient) error {
			_, err := stream(c, context.Background())
			return err
		}, "limits.max_concurrent_streams"},
		{"calls", "limits: {max_concurrent_calls: 1}\n", context.Background(), func(c llmrelayv1.GatewayServiceClient) error {
			_, err := c.ListModels(context.Background(), &llmrelayv1.ListModelsRequest{})
			return err
		}, "limits.max_concurrent_calls"},
		{"caller", "auth: {tokens: [{name: one, sha256: " + sha(echoToken) + ", max_concurrent_calls: 1}, {name: admin, token_env: LLMRELAY_TEST_ADMIN_TOKEN}]}\n",
			bearer(echoToken), func(c llmrelayv1.GatewayServiceClient) error {
				if _, err := c.ListModels(bearer(adminToken), &llmrelayv1.ListModelsRequest{}); err != nil {
					return fmt.Errorf("another caller refused: %w", err)
				}
				_, err := c.ListModels(bearer(echoToken), &llmrelayv1.ListModelsRequest{})
				return err
			}, "max_concurrent_calls"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up, release := heldStream(t)
			c, _ := startWith(t, geminiYAML+tc.yaml, up.URL)
			held, err := stream(c, tc.ctx)
			if err != nil {
				t.Fatal(err)
			}
			limitOf(t, tc.second(c), codes.ResourceExhausted, tc.limit)
			release()
			if text := readText(t, held); !strings.HasSuffix(text, " upon") {
				t.Errorf("held stream: %q", text)
			}
			// The slot is free again once the stream ended.
			waitFor(t, func() bool {
				_, err := c.ListModels(tc.ctx, &llmrelayv1.ListModelsRequest{})
				return err == nil
			}, "a free slot")
		})
	}
}

const budgetYAML = `
defaults:
  retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}
providers:
  - {name: oai, type: openai, base_url: {{URL}}, api_key: sk-test-0000000000}
models:
  - {name: m, provider: oai, upstream_model: gpt-4o-mini, capabilities: {chat: {format: openai-chat}}}
limits: {max_response_bytes: 65536}
`

// TestResponseBodyBounded: a provider answer over limits.max_response_bytes
// (declared, chunked, or an endless stream) ends the call with
// ResourceExhausted naming the limit, without a retry.
func TestResponseBodyBounded(t *testing.T) {
	t.Parallel()
	big := `{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "` +
		strings.Repeat("a", 200000) + `"}, "finish_reason": "stop"}]}`
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"stream":true`):
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				fmt.Fprint(w, `data: {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"content": "more and more "}}]}`+"\n\n")
				w.(http.Flusher).Flush()
			}
		case strings.Contains(string(body), "chunked"):
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < len(big); i += 4096 {
				io.WriteString(w, big[i:min(i+4096, len(big))])
				w.(http.Flusher).Flush() // no Content-Length
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			io.WriteString(w, big)
		}
	}))
	defer up.Close()
	c, _ := startWith(t, budgetYAML, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, prompt := range []string{"declared", "chunked"} {
		calls.Store(0)
		_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user(prompt)}})
		limitOf(t, err, codes.ResourceExhausted, "limits.max_response_bytes")
		if n := calls.Load(); n != 1 {
			t.Errorf("%s: %d upstream calls, want 1 (a limit is not retried)", prompt, n)
		}
	}
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("endless")}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = s.Recv()
		if err != nil {
			break
		}
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "limits.max_response_bytes") {
		t.Errorf("endless stream: %v", err)
	}
}

func TestHeaderValuesValidated(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "unexpected", http.StatusTeapot)
	}))
	defer up.Close()
	c, _ := startWith(t, `
providers:
  - {name: claude, type: anthropic, base_url: {{URL}}, api_key: sk-ant-test-000000, default_max_tokens: 64}
models:
  - {name: sonnet, provider: claude, capabilities: {chat: {format: anthropic-messages}}}
`, up.URL)
	for i, betas := range [][]string{{"ok-2025-01-01", "x\r\nX-Injected: 1"}, {"a,b"}, {""}, {"caf\u00e9"}} {
		_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "sonnet", Messages: []*llmrelayv1.Message{user("hi")},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{Betas: betas}}}})
		st, _, br := statusDetails(t, err)
		want := fmt.Sprintf("provider_options.anthropic.betas[%d]", len(betas)-1)
		if st.Code() != codes.InvalidArgument || br.GetFieldViolations()[0].GetField() != want {
			t.Errorf("case %d: %v %v", i, st, br)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
}
