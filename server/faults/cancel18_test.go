package faults_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

const toolsYAML = `
defaults:
  idle_timeout: 10s
  retry: {max_attempts: 2, base_delay: 1ms, max_delay: 5ms}
providers:
  - {name: oai, type: openai, base_url: "%s", api_key: sk-fault-0000000000}
models:
  - {name: m, provider: oai, capabilities: {chat: {format: openai-chat}, tools: {format: openai-chat}}}
`

// toolCallStream is a complete Chat Completions stream asking for one
// get_weather call.
const toolCallStream = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}}]},"finish_reason":null}]}` + "\n\n" +
	`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
	"data: [DONE]\n\n"

// serveGateway serves the gateway for upURL; the returned stop ends it
// and waits for Serve to return.
func serveGateway(t *testing.T, yamlText, upURL string) (llmrelayv1.GatewayServiceClient, func()) {
	t.Helper()
	cfg, err := config.Parse([]byte(fmt.Sprintf(yamlText, upURL)), "faults")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, []net.Listener{lis}) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return llmrelayv1.NewGatewayServiceClient(conn), func() {
		conn.Close()
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

// TestCancelMidStream18: the client cancels, or its deadline passes,
// while a StreamChat, StreamTools or Agent model call is relaying (or
// while an Agent round waits for its tool result): the upstream request
// ends promptly, the client gets Canceled or DeadlineExceeded, and no
// goroutine outlives the call (TestMain's goleak check).
func TestCancelMidStream18(t *testing.T) {
	for _, rpc := range []string{"StreamChat", "StreamTools", "Agent model call", "Agent tool wait"} {
		for _, how := range []string{"cancel", "deadline"} {
			t.Run(rpc+"/"+how, func(t *testing.T) {
				ended := make(chan struct{}, 2)
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "text/event-stream")
					if rpc == "Agent tool wait" {
						_, _ = io.WriteString(w, toolCallStream)
						return
					}
					defer func() { ended <- struct{}{} }()
					_, _ = io.WriteString(w, chunk)
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
					case <-time.After(10 * time.Second):
					}
				}))
				c, stop := serveGateway(t, toolsYAML, up.URL)
				defer func() {
					stop()
					up.CloseClientConnections()
					up.Close()
				}()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if how == "deadline" {
					ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
					defer cancel()
				}
				msgs := []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}}
				tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Weather for a city", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
				// recv reads until the event that says the call is where
				// the test wants it (first text, or the tool call request).
				var recv func() (bool, error)
				switch rpc {
				case "StreamChat":
					s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: msgs})
					if err != nil {
						t.Fatal(err)
					}
					recv = func() (bool, error) { ev, err := s.Recv(); return ev.GetTextDelta() != nil, err }
				case "StreamTools":
					s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "m", Messages: msgs, Tools: tools})
					if err != nil {
						t.Fatal(err)
					}
					recv = func() (bool, error) { ev, err := s.Recv(); return ev.GetTextDelta() != nil, err }
				default:
					s, err := c.Agent(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: &llmrelayv1.AgentSetup{Model: "m", Messages: msgs, Tools: tools}}}); err != nil {
						t.Fatal(err)
					}
					recv = func() (bool, error) {
						ev, err := s.Recv()
						return ev.GetModel().GetTextDelta() != nil || ev.GetToolCallRequest() != nil, err
					}
				}
				for {
					reached, err := recv()
					if err != nil {
						t.Fatalf("before the point of the test: %v", err)
					}
					if reached {
						break
					}
				}
				start := time.Now()
				if how == "cancel" {
					cancel()
				}
				var err error
				for err == nil {
					_, err = recv()
				}
				want := map[string]codes.Code{"cancel": codes.Canceled, "deadline": codes.DeadlineExceeded}[how]
				if status.Code(err) != want {
					t.Errorf("status %v, want %v", err, want)
				}
				if rpc != "Agent tool wait" {
					select {
					case <-ended:
					case <-time.After(3 * time.Second):
						t.Fatal("the upstream request outlived the client")
					}
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("ended %v after the client", d)
				}
			})
		}
	}
}
