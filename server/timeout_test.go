package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

const slowClientYAML = `
defaults:
  idle_timeout: 400ms
  retry: {max_attempts: 1}
providers:
  - name: oai
    type: openai` + keyYAML + `
models:
  - name: m
    provider: oai
    upstream_model: gpt-4o-mini
    capabilities: {chat: {format: openai-chat}}
`

// TestSlowClientIsNotAnIdleProvider: a long answer to a client that reads
// more slowly than the idle timeout is relayed whole. The relay blocks in
// Send (gRPC flow control) and does not read the provider meanwhile; that
// time is not the provider's silence.
func TestSlowClientIsNotAnIdleProvider(t *testing.T) {
	t.Parallel()
	const chunks = 600 // ~5 MiB: far more than the transport windows hold
	content := strings.Repeat("y", 8<<10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range chunks {
			fmt.Fprintf(w, `data: {"id":"chatcmpl-slowreader1","object":"chat.completion.chunk","created":1760433584,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"%d%s"},"finish_reason":null}]}`+"\n\n", i%10, content)
		}
		io.WriteString(w, `data: {"id":"chatcmpl-slowreader1","object":"chat.completion.chunk","created":1760433584,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	c, _ := startWith(t, slowClientYAML, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("go")}})
	if err != nil {
		t.Fatal(err)
	}
	texts := 0
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("after %d text deltas: %v", texts, err)
		}
		if ev.GetTextDelta() != nil {
			texts++
			if texts == 2 {
				// The client pauses for three idle timeouts while the
				// provider has long sent everything it had room for.
				time.Sleep(1200 * time.Millisecond)
			}
		}
		if end := ev.GetEnd(); end != nil {
			if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
				t.Errorf("finish reason %v", end.GetFinishReason())
			}
			break
		}
	}
	if texts != chunks {
		t.Errorf("%d text deltas, want %d", texts, chunks)
	}
}

const callBoundYAML = `
defaults:
  idle_timeout: 5s
  max_call_duration: 400ms
  retry: {max_attempts: 1}
providers:
  - name: oai
    type: openai` + keyYAML + `
models:
  - name: m
    provider: oai
    upstream_model: gpt-4o-mini
    capabilities: {chat: {format: openai-chat}}
`

// TestMaxCallDurationCutsATricklingProvider: a provider that keeps sending
// a little, never silent long enough for the idle timeout, is cut by the
// gateway's max_call_duration: DeadlineExceeded, UPSTREAM_TIMEOUT, and a
// message that names the gateway's bound, unary and streamed, although
// the client's own deadline is far away.
func TestMaxCallDurationCutsATricklingProvider(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := 0; r.Context().Err() == nil; i++ {
			fmt.Fprintf(w, `data: {"id":"chatcmpl-trickle2","object":"chat.completion.chunk","created":1760433590,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"t%d "},"finish_reason":null}]}`+"\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	}))
	defer up.Close()
	c, _ := startWith(t, callBoundYAML, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()

	t.Run("stream", func(t *testing.T) {
		s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("go")}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for {
			if _, err = s.Recv(); err != nil {
				break
			}
		}
		checkCallBound(t, err, time.Since(start))
	})
	t.Run("unary", func(t *testing.T) {
		start := time.Now()
		_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("go")}})
		checkCallBound(t, err, time.Since(start))
	})
}

func checkCallBound(t *testing.T, err error, took time.Duration) {
	t.Helper()
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.DeadlineExceeded || info.GetReason() != "UPSTREAM_TIMEOUT" {
		t.Fatalf("got %v %s: %s, want DeadlineExceeded UPSTREAM_TIMEOUT", st.Code(), info.GetReason(), st.Message())
	}
	if !strings.Contains(st.Message(), "max_call_duration (400ms)") || info.GetMetadata()["maxCallDuration"] != "400ms" {
		t.Errorf("message %q, metadata %v: want the gateway's bound named", st.Message(), info.GetMetadata())
	}
	if took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}
