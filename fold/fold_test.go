package fold

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func TestInterleavedCallsKeyedByCallID(t *testing.T) {
	t.Parallel()
	var a Accumulator
	a.AddText("Let me check. ")
	steps := []*llmrelayv1.ToolCallDelta{
		{CallId: "call_a", Index: 0, Name: "get_weather", ArgumentsDelta: `{"ci`},
		{CallId: "call_b", Index: 1, Name: "get_time", ArgumentsDelta: `{"city"`},
		{CallId: "call_a", Index: 0, ArgumentsDelta: `ty":"Paris"}`},
		{CallId: "call_b", Index: 1, ArgumentsDelta: `:"London"`},
	}
	for _, d := range steps {
		if err := a.AddToolCallDelta(d); err != nil {
			t.Fatal(err)
		}
	}
	if open := a.Open(); len(open) != 2 {
		t.Fatalf("open = %v", open)
	}
	if err := a.AddToolCallDone(&llmrelayv1.ToolCallDone{Index: 0, ToolCall: &llmrelayv1.ToolCall{CallId: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`, ArgumentsValid: true}}); err != nil {
		t.Fatal(err)
	}
	calls := a.ToolCalls()
	if len(calls) != 2 || calls[0].GetArguments() != `{"city":"Paris"}` || !calls[0].GetArgumentsValid() ||
		calls[1].GetArguments() != `{"city":"London"` || calls[1].GetArgumentsValid() || calls[1].GetName() != "get_time" {
		t.Errorf("calls = %v", calls)
	}
	m := a.Message()
	if len(m.GetParts()) != 3 || m.GetParts()[0].GetText() != "Let me check. " || m.GetParts()[2].GetToolCall().GetCallId() != "call_b" {
		t.Errorf("message = %v", m)
	}
	if len(a.Open()) != 1 {
		t.Errorf("open after done = %v", a.Open())
	}
	a.AddRefusal("no. ")
	a.AddText("Done.")
	if a.Text() != "Let me check. Done." || a.ToolCallCount() != 2 {
		t.Errorf("text %q, %d calls", a.Text(), a.ToolCallCount())
	}
}

func TestRejects(t *testing.T) {
	t.Parallel()
	var a Accumulator
	if err := a.AddToolCallDelta(&llmrelayv1.ToolCallDelta{Index: 0, Name: "f"}); err == nil {
		t.Error("delta without call_id accepted")
	}
	if err := a.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: "c", ArgumentsDelta: "{}"}); err != nil {
		t.Fatal(err)
	}
	if err := a.AddToolCallDone(&llmrelayv1.ToolCallDone{ToolCall: &llmrelayv1.ToolCall{CallId: "c", Arguments: "{ }"}}); err == nil {
		t.Error("done with different arguments accepted")
	}
	var b Accumulator
	for i := 0; i < MaxToolCalls; i++ {
		if err := b.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: "c" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: "one-too-many"}); err == nil {
		t.Error("no bound on tool calls")
	}
}

func TestValidArguments(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{`{}`: true, ` {"a":1} `: true, `[]`: false, `"x"`: false, `{"a":`: false, ``: false, `null`: false} {
		if ValidArguments(s) != want {
			t.Errorf("ValidArguments(%q) != %v", s, want)
		}
	}
}

func TestReasoningBlocks(t *testing.T) {
	t.Parallel()
	var a Accumulator
	steps := []*llmrelayv1.ReasoningDelta{
		{Index: 0, Text: "Let me "},
		{Index: 0, Text: "think."},
		{Index: 0, Signature: "sig-A"},
		{Index: 1, Redacted: true, Signature: "opaque-B"},
	}
	for _, d := range steps {
		if err := a.AddReasoning(d); err != nil {
			t.Fatal(err)
		}
	}
	a.AddText("Answer")
	if err := a.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: "c1", Name: "f", ArgumentsDelta: "{}", Signature: "ts-1"}); err != nil {
		t.Fatal(err)
	}
	parts := a.Message().GetParts()
	if len(parts) != 4 {
		t.Fatalf("parts = %v", parts)
	}
	r0, r1 := parts[0].GetReasoning(), parts[1].GetReasoning()
	if r0.GetText() != "Let me think." || r0.GetSignature() != "sig-A" || r0.GetRedacted() || !r1.GetRedacted() || r1.GetSignature() != "opaque-B" {
		t.Errorf("reasoning = %v, %v", r0, r1)
	}
	if parts[2].GetText() != "Answer" || parts[3].GetToolCall().GetSignature() != "ts-1" {
		t.Errorf("parts = %v", parts)
	}
}

// TestReasoningSummaryWithEncrypted: a block whose text came with an
// encrypted piece at the same index (OpenRouter's reasoning.summary and
// reasoning.encrypted details) is a readable block with its opaque state,
// not a redacted one: redacted means the provider withheld the text.
func TestReasoningSummaryWithEncrypted(t *testing.T) {
	t.Parallel()
	var a Accumulator
	for _, d := range []*llmrelayv1.ReasoningDelta{
		{Index: 0, Text: "**Planning** the lookup."},
		{Index: 0, Redacted: true, Signature: "gAAAAB-enc", Id: "rs_0a1b", Format: "openai-responses-v1"},
	} {
		if err := a.AddReasoning(d); err != nil {
			t.Fatal(err)
		}
	}
	r := a.Message().GetParts()[0].GetReasoning()
	if r.GetText() != "**Planning** the lookup." || r.GetSignature() != "gAAAAB-enc" || r.GetRedacted() || r.GetId() != "rs_0a1b" ||
		r.GetFormat() != "openai-responses-v1" {
		t.Errorf("reasoning = %v", r)
	}
}

// TestCutCallStaysInvalid: a call the gateway flagged invalid on its done
// event (cut by the output limit, though its arguments parse: Gemini sends
// them parsed) stays invalid in the fold.
func TestCutCallStaysInvalid(t *testing.T) {
	var a Accumulator
	if err := a.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: "gcall_cut1", Name: "search", ArgumentsDelta: `{"q":"par"}`}); err != nil {
		t.Fatal(err)
	}
	if !a.ToolCalls()[0].GetArgumentsValid() {
		t.Fatal("an open call with parseable arguments reads invalid")
	}
	if err := a.AddToolCallDone(&llmrelayv1.ToolCallDone{ToolCall: &llmrelayv1.ToolCall{CallId: "gcall_cut1", Name: "search", Arguments: `{"q":"par"}`}}); err != nil {
		t.Fatal(err)
	}
	if a.ToolCalls()[0].GetArgumentsValid() || a.Message().GetParts()[0].GetToolCall().GetArgumentsValid() {
		t.Errorf("cut call folded as valid: %v", a.ToolCalls()[0])
	}
}

// TestFailedStreamOpenCallNotValid: once the stream failed (Fail), a call
// whose done event never came is not valid, even when its arguments so far
// parse: `{"city": "Paris"}` may be the start of `{"city": "Paris",
// "days": 3}`, and a client reading the partial message after the error
// must not run it. A call done before the failure stays valid.
func TestFailedStreamOpenCallNotValid(t *testing.T) {
	t.Parallel()
	var a Accumulator
	if err := a.AddToolCallDone(&llmrelayv1.ToolCallDone{ToolCall: &llmrelayv1.ToolCall{CallId: "call_0", Name: "get_time", Arguments: `{"city": "Lyon"}`, ArgumentsValid: true}}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{`{"city": `, `"Paris"}`} {
		if err := a.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: "call_1", Index: 1, Name: "get_weather", ArgumentsDelta: d}); err != nil {
			t.Fatal(err)
		}
	}
	a.Fail()
	tc, _ := a.ToolCall("call_1")
	if tc.GetArgumentsValid() || a.ToolCalls()[1].GetArgumentsValid() || a.Message().GetParts()[1].GetToolCall().GetArgumentsValid() {
		t.Errorf("open call of a failed stream folded as valid: %v", tc)
	}
	if got := a.Open(); len(got) != 1 || got[0] != "call_1" {
		t.Errorf("open = %v", got)
	}
	if !a.ToolCalls()[0].GetArgumentsValid() {
		t.Errorf("the call done before the failure folded as invalid: %v", a.ToolCalls()[0])
	}
}

// TestTextPhases: text deltas of one phase fold into one part carrying it;
// a delta of another phase (or none) begins a new part, so that an
// assistant's commentary and its final answer stay apart, as the unary
// answer has them.
func TestTextPhases(t *testing.T) {
	t.Parallel()
	var a Accumulator
	for _, ev := range []*llmrelayv1.StreamToolsResponse{
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Checking ", Phase: "commentary"}}},
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "the tool.", Phase: "commentary"}}},
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "It is ", Phase: "final_answer"}}},
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Paris.", Phase: "final_answer"}}},
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: " Unlabelled."}}},
	} {
		if err := a.AddTools(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct{ text, phase string }{{"Checking the tool.", "commentary"}, {"It is Paris.", "final_answer"}, {" Unlabelled.", ""}}
	parts := a.Message().GetParts()
	if len(parts) != len(want) {
		t.Fatalf("parts %v", parts)
	}
	for i, w := range want {
		if parts[i].GetText() != w.text || parts[i].GetPhase() != w.phase {
			t.Errorf("part %d: %v, want %q phase %q", i, parts[i], w.text, w.phase)
		}
	}
	if a.Text() != "Checking the tool.It is Paris. Unlabelled." {
		t.Errorf("text %q", a.Text())
	}
}
