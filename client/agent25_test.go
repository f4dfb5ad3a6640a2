package client_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// brokenArgsServer asks for its calls (as the gateway does: arguments as
// the model wrote them, arguments_valid its verdict), takes one result per
// call, and ends the run; results keeps what the client answered.
type brokenArgsServer struct {
	llmrelayv1.UnimplementedGatewayServiceServer
	calls   []*llmrelayv1.AgentToolCallRequest
	mu      sync.Mutex
	results map[string]*llmrelayv1.ToolResult
}

func (b *brokenArgsServer) Agent(s grpc.BidiStreamingServer[llmrelayv1.AgentRequest, llmrelayv1.AgentResponse]) error {
	if _, err := s.Recv(); err != nil { // the setup
		return err
	}
	for _, c := range b.calls {
		if err := s.Send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_ToolCallRequest{ToolCallRequest: c}}); err != nil {
			return err
		}
	}
	for range b.calls {
		m, err := s.Recv()
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.results[m.GetToolResult().GetCallId()] = m.GetToolResult()
		b.mu.Unlock()
	}
	return s.Send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_End{End: &llmrelayv1.AgentEnd{
		FinishReason: llmrelayv1.FinishReason_FINISH_REASON_STOP, Meta: &llmrelayv1.AgentMeta{}}}})
}

func startBrokenArgs(t *testing.T, b *brokenArgsServer) *client.Client {
	t.Helper()
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	llmrelayv1.RegisterGatewayServiceServer(srv, b)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := client.New("passthrough:///broken", client.WithDialOptions(
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials())), client.WithTransportSecurity())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var brokenArgsCalls = []*llmrelayv1.AgentToolCallRequest{
	{Round: 1, CallId: "call_brk25_ok", Name: "get_weather", Arguments: `{"city":"Oslo"}`, ArgumentsValid: true},
	{Round: 1, CallId: "call_brk25_cut", Name: "get_weather", Arguments: `{"city":"Os`},
	{Round: 1, CallId: "call_brk25_arr", Name: "get_weather", Arguments: `["Oslo"]`},
	{Round: 1, CallId: "call_brk25_none", Name: "get_time", Arguments: ``},
	// A server older than arguments_valid: false for a good call.
	{Round: 1, CallId: "call_brk25_old", Name: "get_weather", Arguments: `{"city":"Bergen"}`},
}

// TestAgentArgumentsValid: Agent handed the model's broken arguments to the
// handler with nothing saying so, though the server sends arguments_valid.
// The handler reads it from its context (ArgumentsValid, ToolCall); a
// call whose arguments parse as an object is valid whatever an older
// server left unset.
func TestAgentArgumentsValid(t *testing.T) {
	t.Parallel()
	b := &brokenArgsServer{calls: brokenArgsCalls, results: map[string]*llmrelayv1.ToolResult{}}
	c := startBrokenArgs(t, b)
	var mu sync.Mutex
	valid := map[string]bool{}
	handler := func(ctx context.Context, args string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if client.ToolCall(ctx).GetArguments() != args {
			t.Errorf("ToolCall(ctx) %v for arguments %q", client.ToolCall(ctx), args)
		}
		valid[client.ToolCallID(ctx)] = client.ArgumentsValid(ctx)
		return "ran", nil
	}
	a := client.Agent{Client: c, Tools: map[string]client.ToolFunc{"get_weather": handler, "get_time": handler}}
	if _, err := a.Run(context.Background(), &llmrelayv1.AgentSetup{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"call_brk25_ok": true, "call_brk25_cut": false, "call_brk25_arr": false, "call_brk25_none": false, "call_brk25_old": true}
	for id, w := range want {
		if valid[id] != w {
			t.Errorf("%s: ArgumentsValid %v, want %v", id, valid[id], w)
		}
		if r := b.results[id]; r.GetContent() != "ran" || r.GetIsError() {
			t.Errorf("%s: result %v", id, r)
		}
	}
	if client.ArgumentsValid(context.Background()) != true || client.ToolCall(context.Background()) != nil {
		t.Error("outside a call")
	}
}

// TestAgentRefuseInvalidArguments: with RefuseInvalidArguments, a call
// whose arguments are not an object gets an error result saying what is
// wrong and its handler is not called; empty arguments (a tool without
// parameters) and good ones still run.
func TestAgentRefuseInvalidArguments(t *testing.T) {
	t.Parallel()
	b := &brokenArgsServer{calls: brokenArgsCalls, results: map[string]*llmrelayv1.ToolResult{}}
	c := startBrokenArgs(t, b)
	var mu sync.Mutex
	ran := map[string]bool{}
	handler := func(ctx context.Context, _ string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		ran[client.ToolCallID(ctx)] = true
		return "ran", nil
	}
	a := client.Agent{Client: c, RefuseInvalidArguments: true, Tools: map[string]client.ToolFunc{"get_weather": handler, "get_time": handler}}
	if _, err := a.Run(context.Background(), &llmrelayv1.AgentSetup{}); err != nil {
		t.Fatal(err)
	}
	for id, content := range map[string]string{
		"call_brk25_cut": "the arguments are not valid JSON: the call was not run; call get_weather again with valid arguments",
		"call_brk25_arr": "the arguments must be a JSON object of named parameters, not an array: the call was not run; call get_weather again with valid arguments",
	} {
		if r := b.results[id]; r.GetContent() != content || !r.GetIsError() || r.GetName() != "get_weather" {
			t.Errorf("%s: result %v", id, r)
		}
		if ran[id] {
			t.Errorf("%s: the handler ran", id)
		}
	}
	for _, id := range []string{"call_brk25_ok", "call_brk25_none", "call_brk25_old"} {
		if r := b.results[id]; !ran[id] || r.GetContent() != "ran" || r.GetIsError() {
			t.Errorf("%s: ran %v, result %v", id, ran[id], r)
		}
	}
}
