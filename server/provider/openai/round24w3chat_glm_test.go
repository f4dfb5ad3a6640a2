package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceGLM53FlashToolLoop: openai-gpt-oss-120b through Venice
// (opencode's recording): role on every chunk, reasoning_content pieces,
// the call whole (pretty-printed arguments) on the finish chunk, usage
// without details; the follow-up Venice took sends the reasoning back as
// reasoning_content on the tool-call turn.
func TestRound24VeniceGLM53FlashToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_glm53flash_tool_stream_", "z-ai-glm-5-3-flash"
	req := veniceLoopRequest(model)
	evs1, f1, sent1 := mgbStream(t, name+"1", veniceBaseURL, "", req)
	if got, want := sent1["messages"], veniceRecordedMessages(t, name+"1"); !reflect.DeepEqual(got, want) {
		t.Errorf("turn 1 messages %v", got)
	}
	for _, ev := range evs1 {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("turn 1 warnings %v", ev.Meta.GetWarnings())
		}
	}
	var call *llmrelayv1.ToolCall
	var reasoning string
	for _, p := range f1.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			call = c
		}
		reasoning += p.GetReasoning().GetText()
	}
	if call == nil || call.GetCallId() != "chatcmpl-tool-82592603d2b81c26" || call.GetArguments() != `{"code": "ZEBRA"}` {
		t.Fatalf("call %v", call)
	}
	if reasoning != "" {
		t.Errorf("reasoning %q", reasoning)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 238 || u.GetOutputTokens() != 14 || f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("meta %v", f1.Meta)
	}

	follow := veniceFollowUp(model, req, f1.Message, call.GetCallId())
	_, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	// opencode re-serialized the call's arguments; ours go back as the
	// model streamed them.
	want.([]any)[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = `{"code": "ZEBRA"}`
	if got := sent2["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	var answer, reasoning2 string
	for _, p := range f2.Message.GetParts() {
		answer += p.GetText()
		reasoning2 += p.GetReasoning().GetText()
	}
	if answer != "400" || reasoning2 != "23 * 17 = 391, + 9 = 400." || f2.Meta.GetUsage().GetReasoningTokens() != 16 {
		t.Errorf("answer %q, reasoning %q, meta %v", answer, reasoning2, f2.Meta)
	}
}
