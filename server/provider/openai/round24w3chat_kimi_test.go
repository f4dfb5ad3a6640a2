package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceKimiToolLoop: kimi-k2-6 through Venice (opencode's
// recording): reasoning_content pieces, a call whose id is Kimi's
// "functions.lookup_rate:0" with its arguments padded by spaces, a usage
// chunk that gives the cached tokens twice (prompt_tokens_details and
// cache_read_input_tokens); then the follow-up Venice took.
func TestRound24VeniceKimiToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_kimi_k26_tool_stream_", "kimi-k2-6"
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
	if call == nil || call.GetCallId() != "functions.lookup_rate:0" || call.GetName() != "lookup_rate" {
		t.Fatalf("call %v", call)
	}
	if want := " The user wants me to look up the conversion rate for code ZEBRA using the lookup_rate tool, then multiply that rate by 17 and add 9.\n\nI need to:\n1. Call lookup_rate with code=\"ZEBRA\"\n2. Wait for the result\n3. Multiply the returned rate by 17 and add 9\n4. Give only the requested number (the final result)\n\nLet me make the tool call first."; reasoning != want {
		t.Errorf("reasoning %q", reasoning)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 133 || u.GetOutputTokens() != 109 || u.GetCachedInputTokens() != 96 {
		t.Errorf("usage %v", u)
	}
	if f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("finish %v", f1.Meta.GetFinishReason())
	}

	follow := veniceFollowUp(model, req, f1.Message, call.GetCallId())
	_, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	// opencode trimmed the call's arguments; ours go back as the model
	// streamed them (padded with spaces), as for Claude through Venice.
	want.([]any)[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = ` {"code":"ZEBRA"} `
	if got := sent2["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	if sent2["tool_choice"] != "none" {
		t.Errorf("tool_choice %v", sent2["tool_choice"])
	}
	var answer, reasoning2 string
	for _, p := range f2.Message.GetParts() {
		answer += p.GetText()
		reasoning2 += p.GetReasoning().GetText()
	}
	if answer != " 400" || reasoning2 != "  The tool returned a rate of 23 for code ZEBRA.\n\nNow I need to calculate: 23 * 17 + 9\n\n23 * 17 = 391\n391 + 9 = 400\n\nThe user asked me to give only the requested number after receiving the result, and not to call the tool again. So I should output just \"400\"." {
		t.Errorf("answer %q, reasoning %q", answer, reasoning2)
	}
}
