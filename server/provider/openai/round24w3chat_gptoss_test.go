package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceGptOss120bToolLoop: openai-gpt-oss-120b through Venice
// (opencode's recording): role on every chunk, reasoning_content pieces,
// the call whole (pretty-printed arguments) on the finish chunk, usage
// without details; the follow-up Venice took sends the reasoning back as
// reasoning_content on the tool-call turn.
func TestRound24VeniceGptOss120bToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_gptoss120b_tool_stream_", "openai-gpt-oss-120b"
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
	if call == nil || call.GetCallId() != "chatcmpl-tool-edea3a0715ef4b4294b5cc475e0c7293" || call.GetArguments() != "{\n  \"code\": \"ZEBRA\"\n}" {
		t.Fatalf("call %v", call)
	}
	if reasoning != `We need to call lookup_rate with code "ZEBRA".` {
		t.Errorf("reasoning %q", reasoning)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 185 || u.GetOutputTokens() != 45 || f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("meta %v", f1.Meta)
	}

	follow := veniceFollowUp(model, req, f1.Message, call.GetCallId())
	_, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	// opencode re-serialized the call's arguments; ours go back as the
	// model wrote them.
	want.([]any)[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = "{\n  \"code\": \"ZEBRA\"\n}"
	if got := sent2["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	var answer string
	for _, p := range f2.Message.GetParts() {
		answer += p.GetText()
	}
	if answer != "23 * 17 + 9 = 400." || f2.Meta.GetUsage().GetOutputTokens() != 15 {
		t.Errorf("answer %q, meta %v", answer, f2.Meta)
	}
}
