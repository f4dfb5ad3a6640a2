package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRelay: unary answers (Content-Length) and streams (chunked) are
// relayed, one after the other on one kept-alive upstream connection.
func TestRelay(t *testing.T) {
	var conns atomic.Int32
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Length", "11")
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{"event: x\ndata: one\n\n", "data: two\n\n", "data: [DONE]\n\n"} {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)

	f := &floor{up: &upstreamPool{addr: strings.TrimPrefix(up.URL, "http://")}, unary: map[string][]byte{}, stream: map[string][]byte{}}
	if err := f.route("m", "openai-chat", f.up.addr, "/v1", "3"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	llmrelayv1.RegisterGatewayServiceServer(srv, f)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	client := llmrelayv1.NewGatewayServiceClient(cc)
	ctx := context.Background()
	for range 2 {
		resp, err := client.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetMessage().GetParts()[0].GetText(); got != `{"ok":true}` {
			t.Errorf("unary text %q", got)
		}
		s, err := client.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		ended := false
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.GetEnd() != nil {
				ended = true
			} else {
				got = append(got, ev.GetTextDelta().GetText())
			}
		}
		if strings.Join(got, "|") != "data: one|data: two|data: [DONE]" || !ended {
			t.Errorf("stream %q, end %v", got, ended)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d upstream connections, want 1 (kept alive)", n)
	}
	// A pooled connection the server closed is replaced, not an error.
	up.CloseClientConnections()
	time.Sleep(20 * time.Millisecond) // lets the close reach the floor
	if _, err := client.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m"}); err != nil {
		t.Errorf("after the server closed the pooled connection: %v", err)
	}
	if _, err := client.Chat(ctx, &llmrelayv1.ChatRequest{Model: "none"}); err == nil {
		t.Error("unknown model: no error")
	}
}
