package fold

import (
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound26SummaryParts: reasoning deltas at increasing summary_index
// fold into Reasoning.summary_parts, each part's text without the blank
// line that begins its first delta (which stays in text); a block whose
// deltas are all at summary_index 0 has none; a block whose first text is
// at a later index begins its first part there (no empty part); pieces
// without text (id, signature) do not move the part.
func TestRound26SummaryParts(t *testing.T) {
	t.Parallel()
	type d = llmrelayv1.ReasoningDelta
	for _, tc := range []struct {
		name   string
		deltas []*d
		text   string
		parts  []string
	}{
		{"three parts", []*d{{Id: "rs_f26_1"}, {Text: "**A**\n\n"}, {Text: "one"}, {Text: "\n\n**B**\n\ntwo", SummaryIndex: 1},
			{Text: "\n\n", SummaryIndex: 2}, {Text: "**C**"}, {Signature: "sig_f26_1"}, {Text: "!", SummaryIndex: 2}},
			"**A**\n\none\n\n**B**\n\ntwo\n\n**C**!", []string{"**A**\n\none", "**B**\n\ntwo", "**C**!"}},
		{"one part", []*d{{Text: "a\n\n"}, {Text: "b"}}, "a\n\nb", nil},
		{"first text at a later index", []*d{{Text: "x", SummaryIndex: 1}, {Text: "\n\ny", SummaryIndex: 2}}, "x\n\ny", []string{"x", "y"}},
		{"no separator", []*d{{Text: "x"}, {Text: "y", SummaryIndex: 1}}, "xy", []string{"x", "y"}},
		{"index going back", []*d{{Text: "x"}, {Text: "\n\ny", SummaryIndex: 1}, {Text: "z"}}, "x\n\nyz", []string{"x", "yz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var a Accumulator
			for _, x := range tc.deltas {
				if err := a.AddReasoning(x); err != nil {
					t.Fatal(err)
				}
			}
			r := a.Message().GetParts()[0].GetReasoning()
			if r.GetText() != tc.text || !reflect.DeepEqual(r.GetSummaryParts(), tc.parts) {
				t.Errorf("reasoning %v, want %q %q", r, tc.text, tc.parts)
			}
		})
	}
}
