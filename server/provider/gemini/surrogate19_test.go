package gemini

import (
	"context"
	"path/filepath"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// surrogate19Recordings are this file's fixtures (TestAllRecordingsUsed).
var surrogate19Recordings = []string{"surrogate19_split_stream", "surrogate19_split_call_stream"}

// A UTF-16 (JavaScript) proxy cuts thought and text parts between the
// halves of a surrogate pair, each JSON-escaped on its own (hand-written
// fixtures): a pair is one character, in its block; a held half before a
// part of another kind (text after thought, a function call), before a
// plain part that takes the fast decoder, and at the finish is U+FFFD in
// its own block.
func TestSurrogateSplitSurrogate19(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		want  []string
		calls int
	}{
		{"surrogate19_split_stream", []string{"r:Pondering 🤔 done \uFFFD", "t:Hi there 😀 Lone \uFFFD x Pair 😁 end \uFFFD"}, 0},
		{"surrogate19_split_call_stream", []string{"t:Look \uFFFD", "c:s19-call-a", "t:\uFFFDthen \uFFFD"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, tc.name)
			s, err := p.Stream(context.Background(), generateCases(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, end := drain(t, s)
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderStream(t, evs, end))
			var got []string
			for _, pt := range foldMessage(t, evs).GetParts() {
				switch {
				case pt.GetReasoning() != nil:
					got = append(got, "r:"+pt.GetReasoning().GetText())
				case pt.GetToolCall() != nil:
					got = append(got, "c:"+pt.GetToolCall().GetCallId())
				default:
					got = append(got, "t:"+pt.GetText())
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("parts %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("parts %q, want %q", got, tc.want)
				}
			}
			f := foldEvents(evs)
			wantFinish := llmrelayv1.FinishReason_FINISH_REASON_STOP
			if tc.calls > 0 {
				wantFinish = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
			}
			if f.meta.GetFinishReason() != wantFinish || f.meta.GetResponseId() == "" || len(f.meta.GetWarnings()) > 0 {
				t.Errorf("meta %v", f.meta)
			}
		})
	}
}
