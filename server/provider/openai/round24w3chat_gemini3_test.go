package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceGemini3PreviewToolLoop: gemini-3-flash-preview through
// Venice (opencode's recording; OpenRouter-style gen- ids and
// native_finish_reason): no reasoning text, Gemini's thought signature as a
// reasoning.encrypted detail (format google-gemini-v1) whose id is the
// call's, the finish chunk twice (the second with service_tier); the
// follow-up Venice took sends that detail back on the tool-call turn.
func TestRound24VeniceGemini3PreviewToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_gemini3preview_tool_stream_", "gemini-3-flash-preview"
	req := veniceLoopRequest(model)
	evs1, f1, sent1 := mgbStream(t, name+"1", veniceBaseURL, "", req)
	if got, want := sent1["messages"], veniceRecordedMessages(t, name+"1"); !reflect.DeepEqual(got, want) {
		t.Errorf("turn 1 messages %v", got)
	}
	ends := 0
	for _, ev := range evs1 {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("turn 1 warnings %v", ev.Meta.GetWarnings())
		}
		if ev.Kind == provider.EventToolCallEnd {
			ends++
		}
	}
	if ends != 1 {
		t.Errorf("%d tool call ends for one call and two finish chunks", ends)
	}
	call, follow, f2 := veniceSecondTurn(t, name, model, req, f1)
	if call == nil || call.GetCallId() != "call_6246556" || call.GetArguments() != `{"code":"ZEBRA"}` {
		t.Fatalf("call %v", call)
	}
	if f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f1.Meta.GetUsage().GetReasoningTokens() != 118 {
		t.Errorf("meta %v", f1.Meta)
	}

	// The third request (its answer not replayed): the text turn's
	// signature (a reasoning.text detail with no text) goes back as it
	// came, as the recorded request Venice took.
	third := veniceThirdRequest(model, follow, f2)
	p, err := New(testKey, WithBaseURL(veniceBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := p.buildChatRequest(third, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r20Request(t, body)["messages"], veniceRecordedMessages(t, name+"3"); !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("third request's messages\n got %s\nwant %s", g, w)
	}
}
