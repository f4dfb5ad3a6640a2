package faults_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestCancelUnary22: the client cancels a unary Chat or Tools call while
// the provider has not sent its headers, or has sent its headers and part
// of its body and then says nothing: the upstream request ends (its
// context is done: the gateway closed it), the client gets Canceled, no
// second attempt is made although the policy allows two, and no goroutine
// outlives the call (TestMain's goleak check). The unary path had this
// only through the streams' tests (cancel18, fault17).
func TestCancelUnary22(t *testing.T) {
	for _, rpc := range []string{"Chat", "Tools"} {
		for _, when := range []string{"before headers", "mid-body"} {
			t.Run(rpc+"/"+when, func(t *testing.T) {
				arrived := make(chan struct{}, 1)
				ended := make(chan struct{}, 1)
				var requests atomic.Int32
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					requests.Add(1)
					defer func() { ended <- struct{}{} }()
					if when == "mid-body" {
						w.Header().Set("Content-Type", "application/json")
						w.Header().Set("Content-Length", "4096")
						w.WriteHeader(http.StatusOK)
						_, _ = io.WriteString(w, `{"id":"chatcmpl-c22","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"The capital`)
						w.(http.Flusher).Flush()
					}
					arrived <- struct{}{}
					select {
					case <-r.Context().Done():
					case <-time.After(10 * time.Second):
					}
				}))
				c, stopGateway := serveGateway(t, toolsYAML, up.URL)
				stop := sync.OnceFunc(stopGateway)
				defer func() {
					stop()
					up.CloseClientConnections()
					up.Close()
				}()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				msgs := []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}}
				done := make(chan error, 1)
				go func() {
					var err error
					if rpc == "Chat" {
						_, err = c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m", Messages: msgs})
					} else {
						tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Weather for a city", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
						_, err = c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "m", Messages: msgs, Tools: tools})
					}
					done <- err
				}()
				select {
				case <-arrived:
				case err := <-done:
					t.Fatalf("the call ended before the provider answered: %v", err)
				}
				cancel()
				select {
				case <-ended:
				case <-time.After(10 * time.Second):
					t.Fatal("the upstream request outlived the client")
				}
				if err := <-done; status.Code(err) != codes.Canceled {
					t.Errorf("status %v, want Canceled", err)
				}
				stop() // every handler has returned: a retry would have been made
				if n := requests.Load(); n != 1 {
					t.Errorf("upstream saw %d requests: a cancelled call was retried", n)
				}
			})
		}
	}
}
