package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// startServer runs a server on the embedded default on a free port.
func startServer() (addr string, stop func()) {
	cfg, err := config.Default()
	if err != nil {
		panic(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, []net.Listener{lis}); close(done) }()
	return lis.Addr().String(), func() { cancel(); <-done }
}

func text(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }

func Example() {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{
		Model:    "builtin/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("hello")}}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.GetMessage().GetParts()[0].GetText())
	fmt.Println(resp.GetMeta().GetFinishReason(), resp.GetMeta().GetUsage().GetOutputTokens())
	// Output:
	// You said: hello
	// FINISH_REASON_STOP 3
}

func ExampleToolsStream_Wait() {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{
		Model:    "builtin/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("Paris")}}},
		Tools:    []*llmrelayv1.Tool{{Name: "get_weather"}, {Name: "get_time"}},
	})
	if err != nil {
		panic(err)
	}
	msg, meta, err := s.Wait()
	if err != nil {
		panic(err)
	}
	for _, p := range msg.GetParts() {
		fmt.Println(p.GetToolCall().GetName(), p.GetToolCall().GetArguments())
	}
	fmt.Println(meta.GetFinishReason(), meta.GetToolCallCount())
	// Output:
	// get_weather {}
	// get_time {}
	// FINISH_REASON_TOOL_CALLS 2
}

func ExampleAgent_Run() {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	params := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	agent := client.Agent{
		Client: c,
		Tools: map[string]client.ToolFunc{
			"get_weather": func(_ context.Context, args string) (string, error) { return `{"sky":"sunny"}`, nil },
			"get_time":    func(_ context.Context, args string) (string, error) { return `{"time":"14:05"}`, nil },
		},
		OnEvent: func(ev *llmrelayv1.AgentResponse) {
			if r := ev.GetToolCallRequest(); r != nil {
				fmt.Println("round", r.GetRound(), "calls", r.GetName(), r.GetArguments())
			}
		},
	}
	res, err := agent.Run(context.Background(), &llmrelayv1.AgentSetup{
		Model:    "builtin/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("Paris")}}},
		Tools: []*llmrelayv1.Tool{
			{Name: "get_weather", Parameters: params},
			{Name: "get_time", Parameters: params},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.FinishReason, len(res.Messages), "messages,", res.Meta.GetModelCalls(), "model calls")
	// Unordered output:
	// round 1 calls get_weather {"city":"Paris"}
	// round 1 calls get_time {"city":"Paris"}
	// FINISH_REASON_STOP 4 messages, 2 model calls
}

func ExampleClient_Embed() {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	dims := int32(4)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"a", "b"}, Dimensions: &dims})
	if err != nil {
		panic(err)
	}
	for _, e := range resp.GetEmbeddings() {
		fmt.Println(e.GetIndex(), len(e.GetValues()))
	}
	// Output:
	// 0 4
	// 1 4
}

// Errors are statuses with typed details: ErrorInfo (reason, metadata),
// BadRequest (the invalid field), RetryInfo and FailedCallMeta.
func Example_errorDetails() {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_, err = c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo"})
	st := status.Convert(err)
	fmt.Println(st.Code())
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			fmt.Println(d.GetDomain(), d.GetReason())
		case *errdetails.BadRequest:
			fmt.Println(d.GetFieldViolations()[0].GetField())
		}
	}
	// Output:
	// InvalidArgument
	// llmrelay.dev INVALID_REQUEST
	// messages
}
