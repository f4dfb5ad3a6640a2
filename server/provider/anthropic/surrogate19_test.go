package anthropic

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// A UTF-16 (JavaScript) proxy cuts thinking and text deltas between the
// halves of a surrogate pair, each JSON-escaped on its own
// (testdata/surrogate19_split_stream.http, hand-written): a pair is one
// character; a held half before a signature_delta, before a plain delta
// (which takes the fast decoder) and before content_block_stop is
// U+FFFD in its own block.
func TestSurrogateSplitSurrogate19(t *testing.T) {
	t.Parallel()
	evs, err := r14Stream(t, "surrogate19_split_stream", plainRequest())
	providertest.Golden(t, "testdata/surrogate19_split_stream.golden", renderEvents(t, evs, err))
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	var got []string
	for _, p := range f.message.GetParts() {
		if r := p.GetReasoning(); r != nil {
			got = append(got, "r:"+r.GetText()+" sig="+r.GetSignature())
		} else {
			got = append(got, "t:"+p.GetText())
		}
	}
	want := []string{"r:Pondering 🤔 done \uFFFD sig=c2lnLXMxOS1zdXJyb2dhdGU=", "t:Hi 😀 there. Lone \uFFFD x Pair 😁 end \uFFFD"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("parts %q, want %q", got, want)
	}
	if f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || f.meta.GetResponseId() != "msg_s19anthSurrogate01" ||
		f.meta.GetProviderRequestId() != "req_s19anthSurrogate01" || len(f.meta.GetWarnings()) > 0 {
		t.Errorf("meta %v", f.meta)
	}
}

// The fast decoder and encoding/json agree: the fixture with every event
// forced onto the encoding/json path (a key the fast decoder does not
// take) gives the same text and reasoning events.
func TestSurrogateFastSlowAgreeSurrogate19(t *testing.T) {
	t.Parallel()
	body := string(providertest.Load(t, "testdata/surrogate19_split_stream.http").Body)
	slow := strings.ReplaceAll(body, `{"type":"content_block_delta",`, `{"type":"content_block_delta","x_slow":1,`)
	if slow == body {
		t.Fatal("no event changed")
	}
	events := func(b string) []string {
		var out []string
		s := streamFromBody([]byte(b))
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
