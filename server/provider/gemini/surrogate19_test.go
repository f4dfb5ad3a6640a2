package gemini

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
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

// The fast decoder and encoding/json agree: the fixture with every event
// forced onto the encoding/json path (a key the fast decoder does not
// take) gives the same text and reasoning events.
func TestSurrogateFastSlowAgreeSurrogate19(t *testing.T) {
	t.Parallel()
	body := string(providertest.Load(t, "testdata/surrogate19_split_stream.http").Body)
	slow := strings.ReplaceAll(body, `"index": 0}`, `"index": 0,"x_slow": 1}`)
	if slow == body {
		t.Fatal("no event changed")
	}
	events := func(b string) []string {
		var out []string
		s := (&Provider{apiKey: testKey}).newStream(&http.Response{Body: io.NopCloser(strings.NewReader(b))})
		defer s.Close()
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			switch ev.Kind {
			case provider.EventText:
				out = append(out, "t:"+ev.Text)
			case provider.EventReasoning:
				out = append(out, fmt.Sprintf("r%d:%s", ev.Reasoning.Index, ev.Reasoning.Text))
			}
		}
	}
	fast, want := events(body), events(slow)
	if !slices.Equal(fast, want) || len(fast) == 0 {
		t.Errorf("fast path %q, encoding/json %q", fast, want)
	}
}
