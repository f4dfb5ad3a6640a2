package anthropic

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound23SDKPythonMaxTokensOpenTool: anthropic-sdk-python's recorded
// stream (claude-3-7-sonnet-20250219, its incomplete_partial_json fixture):
// text, then make_file's tool_use whose input_json_delta pieces stop inside
// a string ("\n\"Filing taxes") when max_tokens ends the answer; no
// content_block_stop for the call, then message_delta max_tokens and
// message_stop, the file's last line without a line break. The call is
// never complete: it ends as cut (arguments_valid false) with the warning
// naming the token limit; the finish is LENGTH, never TOOL_CALLS; the text
// is whole; 450 in, 124 out.
func TestRound23SDKPythonMaxTokensOpenTool(t *testing.T) {
	t.Parallel()
	const name = "real_sdkpy_max_tokens_open_tool_stream"
	req := r21Request("claude-3-7-sonnet-20250219", "Make a tax guide and save it in taxes.txt.", 124, 0)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "make_file", Parameters: `{"type":"object","properties":{"filename":{"type":"string"},"lines_of_text":{"type":"array","items":{"type":"string"}}}}`}}
	evs, f, _ := r21Stream(t, name, req)
	const args = "{\"filename\": \"taxes.txt\", \"lines_of_text\": [\n\"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\",\n\"\",\n\"## INTRODUCTION\",\n\"\",\n\"Filing taxes"
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called taxes.txt. Let me do that for you now."),
			{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "toolu_01EKqbqmZrGRXy18eN7m9kvY", Name: "make_file", Arguments: args}}},
		},
		responseID: "msg_01UdjYBBipA9omjYhicnevgq", model: "claude-3-7-sonnet-20250219",
		finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
		usage:    usageOf(450, 124, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
		warnings: []string{"tool call toolu_01EKqbqmZrGRXy18eN7m9kvY was cut by the token limit"},
	})
	cut, ended := 0, 0
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventToolCallCut:
			cut++
		case provider.EventToolCallEnd:
			ended++
		}
	}
	if cut != 1 || ended != 0 {
		t.Errorf("%d cut and %d ended tool-call events, want the call cut once and never ended whole", cut, ended)
	}
}
