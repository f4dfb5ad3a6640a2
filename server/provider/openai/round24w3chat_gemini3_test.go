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
	system := "Use the provided tool for private data. After receiving the result, give only the requested number; do not call the tool again."
	req := r22Ask(model, "Look up conversion rate for code ZEBRA. Then multiply that rate by 17 and add 9. You must use lookup_rate before answering.")
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, req.Messages...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{veniceRateTool}
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
	var call *llmrelayv1.ToolCall
	for _, p := range f1.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			call = c
		}
	}
	if call == nil || call.GetCallId() != "call_6246556" || call.GetArguments() != `{"code":"ZEBRA"}` {
		t.Fatalf("call %v", call)
	}
	if f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f1.Meta.GetUsage().GetReasoningTokens() != 118 {
		t.Errorf("meta %v", f1.Meta)
	}

	follow := r22Ask(model, req.Messages[1].GetParts()[0].GetText())
	follow.Messages = append([]*llmrelayv1.Message{req.Messages[0]}, follow.Messages...)
	follow.Protocol, follow.Tools = req.Protocol, req.Tools
	follow.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	follow.Messages = append(follow.Messages, f1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: call.GetCallId(), Content: `{"code":"ZEBRA","rate":23}`}}}))
	evs2, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	if got, want := sent2["messages"], veniceRecordedMessages(t, name+"2"); !reflect.DeepEqual(got, want) {
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

	// The third request (its answer not replayed): the text turn's
	// signature (a reasoning.text detail with no text) goes back as it
	// came, as the recorded request Venice took.
	third := r22Ask(model, "Add 7 to your previous final answer. Reply with just the number.")
	third.Protocol, third.Tools, third.Options.ToolChoice = follow.Protocol, follow.Tools, follow.Options.ToolChoice
	third.Messages = append(append(follow.Messages, f2.Message), third.Messages...)
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
