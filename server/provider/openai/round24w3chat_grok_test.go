package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceGrokEncryptedReasoning: grok-4-3 through Venice
// (opencode's recording): reasoning_content pieces, the call, then, after
// the call, a chunk whose reasoning_content is
// "\n\n__ENCRYPTED_REASONING__<data>" with reasoning_encrypted and
// reasoning_details [reasoning.encrypted, format xai-responses-v1, id
// rs_<response id>, the data]; the follow-up Venice took sends the
// encrypted entry back as reasoning_details.
func TestRound24VeniceGrokEncryptedReasoning(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_grok43_tool_stream_", "grok-4-3"
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
	var rs []*llmrelayv1.Reasoning
	for _, p := range f1.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			call = c
		}
		if r := p.GetReasoning(); r != nil {
			rs = append(rs, r)
		}
	}
	if call == nil || call.GetCallId() != "call-847455ca-a128-4b41-a8e6-1c5ff21ab6e3-0" {
		t.Fatalf("call %v", call)
	}
	var reasoning string
	for _, r := range rs {
		reasoning += r.GetText()
		if strings.Contains(r.GetText(), "__ENCRYPTED_REASONING__") {
			t.Errorf("the marker reached the reasoning text: %q", r.GetText())
		}
	}
	if reasoning != "I need to look up the conversion rate for code ZEBRA." {
		t.Errorf("reasoning %q", reasoning)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 354 || u.GetCachedInputTokens() != 320 || u.GetReasoningTokens() != 146 {
		t.Errorf("usage %v", u)
	}

	follow := veniceFollowUp(model, req, f1.Message, call.GetCallId())
	evs2, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	// opencode also sent reasoning_content with Venice's in-band marker
	// and the encrypted data after the text (the chunk's scalar, which the
	// details replace); ours sends the text, the encrypted item going in
	// reasoning_details where Venice gave it.
	turn := want.([]any)[2].(map[string]any)
	rc := turn["reasoning_content"].(string)
	if i := strings.Index(rc, "\n\n__ENCRYPTED_REASONING__"); i < 0 {
		t.Fatalf("recorded reasoning_content %q", rc)
	} else {
		turn["reasoning_content"] = rc[:i]
	}
	if got := sent2["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	for _, ev := range evs2 {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("turn 2 warnings %v", ev.Meta.GetWarnings())
		}
	}
	var answer string
	for _, p := range f2.Message.GetParts() {
		answer += p.GetText()
	}
	if answer != "400" {
		t.Errorf("answer %q", answer)
	}
}
