package server_test

import (
	"context"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestAgentToolCallRequestArgumentsValid: a client tool's call request
// says whether its arguments parse (AgentToolCallRequest.arguments_valid,
// as ToolCall.arguments_valid does), so that a client does not hand a
// model's broken JSON to its tool as if it were arguments: the model
// wrote one call broken in an answer that ended normally (finish
// tool_calls, not the output limit), and the gateway still asks for it
// (a tool may take it), saying so.
func TestAgentToolCallRequestArgumentsValid(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t,
		chatStream("chatcmpl-ArgsValid1", "", []chatCall{{"call_ok", "get_weather", `{"city":"Nantes"}`}, {"call_bad", "get_time", `{"city": "Nan`}}, 40, 10),
		chatStream("chatcmpl-ArgsValid2", "Rainy.", nil, 90, 5))
	c, _ := startWith(t, pricedChatYAML("http://127.0.0.1:9/mcp"), up.URL) // no run names the MCP server
	valid := map[string]bool{}
	_, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Nantes")},
		Tools: agentTools(t)}, func(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
		valid[r.GetCallId()] = r.GetArgumentsValid()
		return answerAll(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(valid) != 2 || !valid["call_ok"] || valid["call_bad"] {
		t.Errorf("arguments_valid by call %v, want call_ok true, call_bad false", valid)
	}
}
