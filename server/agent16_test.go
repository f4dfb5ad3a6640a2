package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// startBoundedAgent is startBuiltinAgent with agent.max_tool_timeout set.
func startBoundedAgent(t *testing.T, maxToolTimeout string) llmrelayv1.GatewayServiceClient {
	t.Helper()
	return startBoundedAgentMCP(t, "http://127.0.0.1:1", maxToolTimeout)
}

func startBoundedAgentMCP(t *testing.T, mcpURL, maxToolTimeout string) llmrelayv1.GatewayServiceClient {
	t.Helper()
	yaml := strings.ReplaceAll(builtinAgentYAML, "{{MCP}}", mcpURL) + "  max_tool_timeout: " + maxToolTimeout + "\n"
	c, logs := startWith(t, yaml, "")
	t.Cleanup(func() { t.Log(logs.String()) })
	return c
}

// answerWeatherOnly leaves the echo model's get_time call unanswered: a
// client that stays connected and never sends the result.
func answerWeatherOnly(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
	if r.GetName() == "get_weather" {
		return answerAll(r)
	}
	return nil
}

// runFailure returns the run's failure event (the last), or fails.
func runFailure(t *testing.T, evs []*llmrelayv1.AgentResponse) *llmrelayv1.AgentFailure {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].GetFailure() == nil {
		t.Fatalf("no failure event in %v", evs)
	}
	return evs[len(evs)-1].GetFailure()
}

func hasWarning(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// TestAgentMaxToolTimeoutWithoutSetupTimeout: a setup without tool_timeout
// no longer waits forever for a silent client: agent.max_tool_timeout ends
// the wait the way tool_timeout does (DeadlineExceeded naming the call by
// default, an error result and a tool_call_cancellation with ERROR_RESULT),
// well before the client's own deadline.
func TestAgentMaxToolTimeoutWithoutSetupTimeout(t *testing.T) {
	t.Parallel()
	c := startBoundedAgent(t, "60ms")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	evs, err := agentRun(ctx, t, c, echoSetup(t), answerWeatherOnly)
	wantCode(t, err, codes.DeadlineExceeded, "tool_result")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run waited %v", d)
	}
	var timeID string
	for _, ev := range evs {
		if r := ev.GetToolCallRequest(); r.GetName() == "get_time" {
			timeID = r.GetCallId()
		}
	}
	if timeID == "" || !strings.Contains(err.Error(), "no result within agent.max_tool_timeout 60ms for call ids "+timeID) {
		t.Errorf("error %v does not name the bound and the missing call %s", err, timeID)
	}
	if f := runFailure(t, evs); f.GetRound() != 1 || hasWarning(f.GetMeta().GetWarnings(), "capped") {
		t.Errorf("failure %v", f)
	}

	setup := echoSetup(t)
	setup.OnToolTimeout = llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT
	evs, err = agentRun(ctx, t, c, setup, answerWeatherOnly)
	if err != nil {
		t.Fatal(err)
	}
	var cancelled *llmrelayv1.AgentToolCallCancellation
	var end *llmrelayv1.AgentEnd
	for _, ev := range evs {
		if x := ev.GetToolCallCancellation(); x != nil {
			cancelled = x
		}
		if ev.GetEnd() != nil {
			end = ev.GetEnd()
		}
	}
	if cancelled == nil || len(cancelled.GetCallIds()) != 1 || cancelled.GetReason() != "tool_timeout" || end == nil {
		t.Fatalf("cancellation %v, end %v", cancelled, end)
	}
	found := false
	for _, p := range end.GetMessages()[2].GetParts() {
		if tr := p.GetToolResult(); tr.GetCallId() == cancelled.GetCallIds()[0] {
			found = tr.GetIsError() && tr.GetContent() == "the tool did not answer within 60ms"
		}
	}
	if !found {
		t.Errorf("no error result for %v in %v", cancelled.GetCallIds(), end.GetMessages()[2])
	}
}

// TestAgentToolTimeoutCapped: a setup asking for more than
// agent.max_tool_timeout waits only the bound, and the run says so in a
// warning naming the key; one asking for less keeps its own, unwarned.
func TestAgentToolTimeoutCapped(t *testing.T) {
	t.Parallel()
	c := startBoundedAgent(t, "60ms")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	setup := echoSetup(t)
	setup.ToolTimeout = durationpb.New(time.Hour)
	evs, err := agentRun(ctx, t, c, setup, answerWeatherOnly)
	wantCode(t, err, codes.DeadlineExceeded, "tool_result")
	if !strings.Contains(err.Error(), "no result within agent.max_tool_timeout 60ms") {
		t.Errorf("error %v", err)
	}
	if ws := runFailure(t, evs).GetMeta().GetWarnings(); !hasWarning(ws, "setup.tool_timeout 1h0m0s capped to 60ms (the server's agent.max_tool_timeout)") {
		t.Errorf("warnings %q", ws)
	}

	// Below the bound: the setup's own tool_timeout, no warning.
	c = startBoundedAgent(t, "1h")
	setup.ToolTimeout = durationpb.New(40 * time.Millisecond)
	evs, err = agentRun(ctx, t, c, setup, answerWeatherOnly)
	wantCode(t, err, codes.DeadlineExceeded, "tool_result")
	if !strings.Contains(err.Error(), "no result within tool_timeout 40ms") {
		t.Errorf("error %v", err)
	}
	if ws := runFailure(t, evs).GetMeta().GetWarnings(); hasWarning(ws, "max_tool_timeout") {
		t.Errorf("warnings %q", ws)
	}

	// Equal to the bound: not capped either.
	c = startBoundedAgent(t, "50ms")
	setup.ToolTimeout = durationpb.New(50 * time.Millisecond)
	evs, err = agentRun(ctx, t, c, setup, answerWeatherOnly)
	wantCode(t, err, codes.DeadlineExceeded, "tool_result")
	if !strings.Contains(err.Error(), "no result within tool_timeout 50ms") || hasWarning(runFailure(t, evs).GetMeta().GetWarnings(), "capped") {
		t.Errorf("error %v, events %v", err, evs[len(evs)-1])
	}
}

// TestAgentMaxToolTimeoutBoundsMCP: a gateway-executed MCP call without a
// setup tool_timeout is bounded by agent.max_tool_timeout too: the call is
// cancelled and the model gets the error result, as with tool_timeout.
func TestAgentMaxToolTimeoutBoundsMCP(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan struct{}, 4), make(chan struct{}, 4)
	c := startBoundedAgentMCP(t, blockingMCP(t, started, cancelled).URL, "80ms")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	setup := &llmrelayv1.AgentSetup{Model: "echo", Messages: []*llmrelayv1.Message{user("Lyon")},
		McpServers: []*llmrelayv1.AgentMcpServer{{Name: "pop"}}}
	evs, err := agentRun(ctx, t, c, setup, nil)
	if err != nil {
		t.Fatalf("error %v (events %v)", err, evs)
	}
	var ex *llmrelayv1.AgentMcpToolExecution
	for _, ev := range evs {
		if x := ev.GetMcpToolExecution(); x != nil {
			ex = x
		}
	}
	if want := "mcp server pop: call wait_here: no answer within agent.max_tool_timeout 80ms"; ex == nil || ex.GetError() != want || !ex.GetResult().GetIsError() {
		t.Fatalf("MCP execution %v, want error %q", ex, want)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the MCP call was not cancelled at the bound")
	}
	if evs[len(evs)-1].GetEnd() == nil {
		t.Errorf("last event %v", evs[len(evs)-1])
	}
}
