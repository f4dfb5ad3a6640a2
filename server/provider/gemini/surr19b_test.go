package gemini

import (
	"context"
	"path/filepath"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// surr19bRecordings are this file's fixtures (TestAllRecordingsUsed).
var surr19bRecordings = []string{"surr19b_partial_args_stream"}

// A UTF-16 (JavaScript) proxy cuts a partialArgs stringValue between the
// halves of a surrogate pair, each piece JSON-escaped on its own
// (testdata/surr19b_partial_args_stream.http, hand-written): the pair is
// one character of its string; a held half before a piece at another
// path, before a number piece and at the call's end is U+FFFD at the end
// of its own string, and a low half that continues nothing is U+FFFD.
func TestPartialArgsSurrogateSurr19b(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "surr19b_partial_args_stream")
	s, err := p.Stream(context.Background(), generateCases(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	providertest.Golden(t, filepath.Join("testdata", "surr19b_partial_args_stream.golden"), renderStream(t, evs, end))
	var calls []*llmrelayv1.ToolCall
	for _, pt := range foldMessage(t, evs).GetParts() {
		if tc := pt.GetToolCall(); tc != nil {
			calls = append(calls, tc)
		}
	}
	want := "{\"note\":\"smile 😀 ok \uFFFD lone\",\"tag\":\"x\uFFFD\uFFFD\",\"count\":2,\"tail\":\"end \uFFFD\"}"
	if len(calls) != 1 || calls[0].GetCallId() != "s19b-call-a" || calls[0].GetName() != "saveNote" || calls[0].GetArguments() != want || !calls[0].GetArgumentsValid() {
		t.Fatalf("calls %v, want one saveNote with %q", calls, want)
	}
	f := foldEvents(evs)
	if f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f.meta.GetResponseId() != "s19bGemPartial01" || len(f.meta.GetWarnings()) > 0 {
		t.Errorf("meta %v", f.meta)
	}
}
