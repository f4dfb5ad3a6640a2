package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func agentSetup() *llmrelayv1.AgentSetup {
	return &llmrelayv1.AgentSetup{
		Model:    "builtin/echo",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("Oslo")}}},
		Tools:    []*llmrelayv1.Tool{{Name: "get_weather"}, {Name: "get_time"}},
	}
}

// TestAgentHandlerError: a handler's error goes to the model as an error
// result keyed by the call's id; the run goes on.
func TestAgentHandlerError(t *testing.T) {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := client.Agent{Client: c, Tools: map[string]client.ToolFunc{
		"get_weather": func(context.Context, string) (string, error) { return "", errors.New("weather service down") },
		"get_time":    func(context.Context, string) (string, error) { return "12:00", nil },
	}}
	res, err := a.Run(context.Background(), agentSetup())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 4 {
		t.Fatalf("%d messages", len(res.Messages))
	}
	calls := map[string]string{}
	for _, p := range res.Messages[1].GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			calls[tc.GetCallId()] = tc.GetName()
		}
	}
	for _, p := range res.Messages[2].GetParts() {
		r := p.GetToolResult()
		name := calls[r.GetCallId()]
		if (name == "get_weather") != r.GetIsError() || (name == "get_weather" && r.GetContent() != "weather service down") ||
			(name == "get_time" && r.GetContent() != "12:00") {
			t.Errorf("result %v for %s", r, name)
		}
	}
}

// TestAgentMissingHandler: a setup tool without a handler is an error
// before anything is sent.
func TestAgentMissingHandler(t *testing.T) {
	a := client.Agent{Tools: map[string]client.ToolFunc{"get_weather": func(context.Context, string) (string, error) { return "", nil }}}
	_, err := a.Run(context.Background(), agentSetup())
	if err == nil || !strings.Contains(err.Error(), `"get_time"`) {
		t.Fatalf("error %v", err)
	}
}

// TestAgentFailure: a run that fails (here a result missing past
// tool_timeout) returns its error and the failure event's conversation, to
// retry from.
func TestAgentFailure(t *testing.T) {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := client.Agent{Client: c, Tools: map[string]client.ToolFunc{
		"get_weather": func(context.Context, string) (string, error) { return "sunny", nil },
		"get_time": func(ctx context.Context, _ string) (string, error) {
			<-ctx.Done() // never answers in time
			return "", ctx.Err()
		},
	}}
	setup := agentSetup()
	setup.ToolTimeout = durationpb.New(50 * time.Millisecond)
	res, err := a.Run(context.Background(), setup)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("error %v", err)
	}
	if res.GetFailure().GetRound() != 1 || len(res.Messages) != 1 || res.Messages[0].GetParts()[0].GetText() != "Oslo" ||
		res.Meta.GetModelCalls() != 1 {
		t.Fatalf("result %v", res)
	}
}

// TestAgentToolCallCancellation: when the server gives up on a call
// (tool_timeout with ERROR_RESULT) and says so, the handler's context ends
// with ErrToolCallCancelled while the run goes on, and the model has the
// server's error result, not a late one from the handler.
func TestAgentToolCallCancellation(t *testing.T) {
	addr, stop := startServer()
	defer stop()
	c, err := client.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cause := make(chan error, 1)
	a := client.Agent{Client: c, Tools: map[string]client.ToolFunc{
		"get_weather": func(context.Context, string) (string, error) { return "sunny", nil },
		"get_time": func(ctx context.Context, _ string) (string, error) {
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return "too late", nil
		},
	}}
	setup := agentSetup()
	setup.ToolTimeout = durationpb.New(50 * time.Millisecond)
	setup.OnToolTimeout = llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT
	res, err := a.Run(context.Background(), setup)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-cause; !errors.Is(err, client.ErrToolCallCancelled) || !strings.Contains(err.Error(), "tool_timeout") {
		t.Errorf("handler context cause %v", err)
	}
	if res.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(res.Messages) != 4 {
		t.Fatalf("result %v", res)
	}
	for _, p := range res.Messages[2].GetParts() {
		if r := p.GetToolResult(); r.GetName() == "get_time" && (!r.GetIsError() || strings.Contains(r.GetContent(), "too late")) {
			t.Errorf("get_time result %v", r)
		}
	}
}
