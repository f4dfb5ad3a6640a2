package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceKimiK3ToolLoop: kimi-k3 through Venice (opencode's
// recording): reasoning_content, then text, then the call (id
// lookup_rate_0_930cd19c) whole; usage with speculative-decoding counts
// (accepted and rejected prediction tokens). The follow-up Venice took
// sends the text, the call and the reasoning as reasoning_content.
func TestRound24VeniceKimiK3ToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_kimi_k3_tool_stream_", "kimi-k3"
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
	if call == nil || call.GetCallId() != "lookup_rate_0_930cd19c" {
		t.Fatalf("call %v", call)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 256 || u.GetOutputTokens() != 96 || u.GetCachedInputTokens() != 256 || u.GetReasoningTokens() != 34 {
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
	// opencode re-serialized the call's arguments; ours go back as the
	// model streamed them.
	want.([]any)[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = `{"code": "ZEBRA"}`
	if got := r20Request(t, body)["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
}
