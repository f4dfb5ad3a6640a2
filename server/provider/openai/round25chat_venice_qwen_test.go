package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound25VeniceQwenToolLoop: qwen3-6-27b through Venice (opencode's
// recording, hand-built from it: the reasoning's one-token chunks merged
// into one chunk a line). Every chunk carries role (null after the first
// two), content "", reasoning_content and tool_calls (null when unused),
// logprobs and usage null; "\n\n" as content between the reasoning and the
// call, and before the answer; the call opened with its id and name and
// empty arguments, two chunks with id, name and type null and empty
// arguments, then the arguments whole; no usage key on the finish chunk;
// the usage with Venice's cost on a last chunk without choices. The
// follow-ups Venice took send the tool-call turn with content "\n\n" and
// its reasoning_content, and the text turn "\n\n400" with its
// reasoning_content (ours: on tool-call turns only, warned).
func TestRound25VeniceQwenToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_qwen36_tool_stream_", "qwen3-6-27b"
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
	var reasoning, content string
	for _, p := range f1.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			if call != nil {
				t.Errorf("second call %v", c)
			}
			call = c
		}
		reasoning += p.GetReasoning().GetText()
		content += p.GetText()
	}
	if call == nil || call.GetCallId() != "call_3e710340692544c9886c3d0a" || call.GetName() != "lookup_rate" || call.GetArguments() != `{"code": "ZEBRA"}` {
		t.Fatalf("call %v", call)
	}
	if !strings.HasPrefix(reasoning, "The user wants me to:\n1. Look up") || !strings.HasSuffix(reasoning, "Let's call the tool first.\n") || content != "\n\n" {
		t.Errorf("reasoning %q, content %q", reasoning, content)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 352 || u.GetOutputTokens() != 146 || u.GetTotalTokens() != 498 {
		t.Errorf("usage %v", u)
	}
	if f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("finish %v", f1.Meta.GetFinishReason())
	}

	follow := veniceFollowUp(model, req, f1.Message, call.GetCallId())
	evs2, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	// opencode re-serialized the call's arguments; ours go back as the
	// model streamed them, as for Kimi and Claude through Venice.
	want.([]any)[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = `{"code": "ZEBRA"}`
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
	var answer, reasoning2 string
	for _, p := range f2.Message.GetParts() {
		answer += p.GetText()
		reasoning2 += p.GetReasoning().GetText()
	}
	if answer != "\n\n400" || !strings.HasSuffix(reasoning2, "I must provide only the number.\n") {
		t.Errorf("answer %q, reasoning %q", answer, reasoning2)
	}
	if u := f2.Meta.GetUsage(); u.GetInputTokens() != 130 || u.GetOutputTokens() != 144 {
		t.Errorf("usage %v", u)
	}

	// The third request (its answer not replayed): opencode also sent the
	// answered text turn's reasoning_content, which Venice took; ours
	// leaves it out with the warning (reasoning goes back on tool-call
	// turns only: Qwen3's template drops the reasoning of turns before
	// the last user message). The rest is the recorded messages.
	third := r22Ask(model, "Add 7 to your previous final answer. Reply with just the number.")
	third.Protocol, third.Tools, third.Options.ToolChoice = follow.Protocol, follow.Tools, follow.Options.ToolChoice
	third.Messages = append(append(follow.Messages, f2.Message), third.Messages...)
	p, err := New(testKey, WithBaseURL(veniceBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err := p.buildChatRequest(third, true)
	if err != nil {
		t.Fatal(err)
	}
	want3 := veniceRecordedMessages(t, name+"3").([]any)
	want3[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = `{"code": "ZEBRA"}`
	delete(want3[4].(map[string]any), "reasoning_content")
	if got := r20Request(t, body)["messages"]; !reflect.DeepEqual(got, any(want3)) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want3)
		t.Errorf("third request's messages\n got %s\nwant %s", g, w)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "reasoning") {
		t.Errorf("third request warnings %v", warns)
	}
}
