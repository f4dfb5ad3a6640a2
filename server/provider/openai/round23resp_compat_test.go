package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"google.golang.org/protobuf/proto"
)

// TestRound23OllamaResponsesTextThenCall: Ollama's /v1/responses stream
// for a model that thinks, says a sentence, then calls a tool, as
// ollama/ollama's ResponsesStreamConverter writes it (testdata/README.md):
// reasoning summary deltas with no summary_part events and the thinking
// again as encrypted_content; the message item and then the call item
// both at output_index 1 (the converter does not advance the index after
// text); no output_text.done nor output_item.done for the message, and a
// response.completed whose output has the reasoning and the call but not
// the message. The streamed sentence is the answer's all the same, before
// the call, and the call is whole and complete (no warning: nothing of
// the answer is in doubt).
func TestRound23OllamaResponsesTextThenCall(t *testing.T) {
	t.Parallel()
	req := r21Request("qwen3:8b", "What is the weather in Paris?")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a city",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	f := r21Stream(t, "ollama_responses_text_then_call_stream", req)
	const thought = "Okay, the user wants the weather in Paris. I should call get_weather."
	p := f.Message.GetParts()
	if len(p) != 3 {
		t.Fatalf("parts %v", p)
	}
	if r := p[0].GetReasoning(); r.GetText() != thought || r.GetSignature() != thought || r.GetId() != "rs_618402" {
		t.Errorf("reasoning %v", r)
	}
	if p[1].GetText() != "I'll check the weather in Paris for you." || p[1].GetItemId() != "msg_205917" {
		t.Errorf("text %v", p[1])
	}
	if c := p[2].GetToolCall(); c.GetCallId() != "call_q7wz3k1m" || c.GetName() != "get_weather" || c.GetArguments() != `{"city":"Paris"}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 164, OutputTokens: 58, TotalTokens: 222}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_731846" || m.GetResolvedModel() != "qwen3:8b" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}
