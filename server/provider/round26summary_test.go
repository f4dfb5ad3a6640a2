package provider

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound26ResultStreamSummaryParts: a whole answer relayed on a stream
// (ResultStream) gives a reasoning part with summary_parts one piece per
// part (the first with the block's id and signature, the next beginning
// with the blank line at the next summary_index), so its fold
// (FoldStream, the gateway's relay) is the answer again; parts that no
// longer join to the text (a changed text) go as the text alone.
func TestRound26ResultStreamSummaryParts(t *testing.T) {
	t.Parallel()
	parts := []string{"**A**\n\none", "**B**\n\ntwo", "**C**\n\nthree"}
	for _, tc := range []struct {
		name string
		r    *llmrelayv1.Reasoning
		want *llmrelayv1.Reasoning
	}{
		{"parts", &llmrelayv1.Reasoning{Id: "rs_rs26_1", Signature: "sig_rs26_1", Text: "**A**\n\none\n\n**B**\n\ntwo\n\n**C**\n\nthree", SummaryParts: parts}, nil},
		{"text changed", &llmrelayv1.Reasoning{Id: "rs_rs26_2", Text: "changed", SummaryParts: parts}, &llmrelayv1.Reasoning{Id: "rs_rs26_2", Text: "changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := &Result{Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
				{Kind: &llmrelayv1.Part_Reasoning{Reasoning: tc.r}}, {Kind: &llmrelayv1.Part_Text{Text: "ok"}}}},
				Meta: &llmrelayv1.ResponseMeta{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_STOP}}
			got, err := FoldStream(ResultStream("openai", res))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = tc.r
			}
			if !proto.Equal(got.Message.GetParts()[0].GetReasoning(), want) || got.Message.GetParts()[1].GetText() != "ok" {
				t.Errorf("folded %v, want %v", got.Message, want)
			}
		})
	}
}
