package fold

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestReasoningAfterLaterPartsStream21: a reasoning block that gets more
// text (or its signature) after other parts began — a Responses stream's
// reasoning item interleaved with a message, a signature sent after the
// text that followed the thinking — folds into its block. The segments
// were held by value: a later part's append moved the block's
// strings.Builder and the next write panicked ("illegal use of non-zero
// Builder copied by value"), in the gateway and in every client.
func TestReasoningAfterLaterPartsStream21(t *testing.T) {
	t.Parallel()
	var a Accumulator
	if err := a.AddReasoning(&llmrelayv1.ReasoningDelta{Index: 0, Text: "think "}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		a.AddText("t")
		a.AddRefusal("r")
	}
	if err := a.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: "c1", Name: "f", ArgumentsDelta: "{}"}); err != nil {
		t.Fatal(err)
	}
	if err := a.AddReasoning(&llmrelayv1.ReasoningDelta{Index: 0, Text: "more", Signature: "sig"}); err != nil {
		t.Fatal(err)
	}
	r := a.Message().GetParts()[0].GetReasoning()
	if r.GetText() != "think more" || r.GetSignature() != "sig" {
		t.Errorf("reasoning %v", r)
	}
	if n := len(a.Message().GetParts()); n != 82 {
		t.Errorf("%d parts", n)
	}
}
