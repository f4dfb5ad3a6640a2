package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceMiniMaxM27ToolLoop: minimax-m27 through Venice
// (opencode's recording): the reasoning as reasoning_content (not MiniMax's
// own <think> blocks), the call whole, the usage chunk's created a second
// before the others'. The follow-up Venice took sends the reasoning as
// reasoning_content on the tool-call turn.
func TestRound24VeniceMiniMaxM27ToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_minimax_m27_tool_stream_", "minimax-m27"
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
	for _, p := range f1.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			call = c
		}
	}
	if call == nil || call.GetCallId() != "chatcmpl-tool-a1e304682d7c07c8" {
		t.Fatalf("call %v", call)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 475 || u.GetOutputTokens() != 61 || u.GetCachedInputTokens() != 384 {
		t.Errorf("usage %v", u)
	}

	follow := veniceFollowUp(model, req, f1.Message, call.GetCallId())
	p, err := New(testKey, WithBaseURL(veniceBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err := p.buildChatRequest(follow, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("follow-up warnings %v", warns)
	}
	want := veniceRecordedMessages(t, name+"2")
	if got := r20Request(t, body)["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
}
