package openai

import (
	"context"
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

// A UTF-16 (JavaScript) server cuts text and reasoning deltas between the
// halves of a surrogate pair, each JSON-escaped on its own
// (testdata/surrogate19_chat_split_stream.http, hand-written): a pair is
// one character, whether the chunk with the low half takes the fast
// decoder (content with escapes) or encoding/json (reasoning_content, and
// a content chunk with logprobs); a high half with no low half after it
// (another field, a plain string, the finish) is U+FFFD, in its place; an
// escaped backslash before "ud83d" is text.
func TestChatSurrogateSplitSurrogate19(t *testing.T) {
	runRecordedStreams(t, []recordedStream{{name: "surrogate19_chat_split_stream", req: "chat_plain", k: kOpenAI, check: func(t *testing.T, f folded) {
		wantParts(t, f.Message, "r:Thinking 🤔 of a face \uFFFD", "t:Here it is: 😀! Two: 😀😁. Lone: \uFFFDx. C:\\ud83d\uFFFD end \uFFFD")
		if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || f.Meta.GetResponseId() != "chatcmpl-s19-0001" {
			t.Errorf("meta %v", f.Meta)
		}
	}}})
}

// The Responses API's text and reasoning summary deltas cut the same way
// (testdata/surrogate19_responses_split_stream.http, hand-written): pairs
// joined, the fast decoder's plain delta after a held half gets U+FFFD
// before it, a held half before a done event is released in its own text;
// the done events' text (a lone half, U+FFFD) then matches the deltas', so
// nothing is caught up twice.
func TestResponsesSurrogateSplitSurrogate19(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("surrogate19_responses_split_stream.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td("surrogate19_responses_split_stream.golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	f := accFold(t, evs)
	var got []string
	for _, p := range f.Message.GetParts() {
		if r := p.GetReasoning(); r != nil {
			got = append(got, "r:"+r.GetText()+" id="+r.GetId())
		} else {
			got = append(got, "t:"+p.GetText())
		}
	}
	want := []string{"r:Pondering 🤔 done \uFFFD id=rs_s19sur01", "t:Hi 😀 there. Lone \uFFFD x Pair 😁 end \uFFFD"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("parts %q, want %q", got, want)
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	// The request's stop and seed are reported as not sent; nothing else.
	if len(f.Meta.GetWarnings()) != 2 || f.Meta.GetResponseId() != "resp_s19surrogate0001" || f.Meta.GetUsage().GetReasoningTokens() != 9 {
		t.Errorf("meta %v", f.Meta)
	}
}

// textEvents are a stream's text, reasoning and refusal events, in order.
func textEvents(t *testing.T, s provider.Stream) []string {
	t.Helper()
	defer s.Close()
	var out []string
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
		case provider.EventRefusal:
			out = append(out, "f:"+ev.Text)
		case provider.EventReasoning:
			out = append(out, fmt.Sprintf("r%d:%s", ev.Reasoning.Index, ev.Reasoning.Text))
		}
	}
}

// The fast decoders and encoding/json agree: the fixtures with every
// chunk forced onto the encoding/json path (a key the fast decoder does
// not take) give the same text and reasoning events.
func TestSurrogateFastSlowAgreeSurrogate19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	chat := string(providertest.Load(t, td("surrogate19_chat_split_stream.http")).Body)
	slow := strings.ReplaceAll(chat, `,"finish_reason":`, `,"logprobs":{"content":[]},"finish_reason":`)
	if slow == chat {
		t.Fatal("no chunk changed")
	}
	fast, want := textEvents(t, streamFrom(p, chat)), textEvents(t, streamFrom(p, slow))
	if !slices.Equal(fast, want) {
		t.Errorf("chat: fast path %q, encoding/json %q", fast, want)
	}
	resp := string(providertest.Load(t, td("surrogate19_responses_split_stream.http")).Body)
	slow = strings.ReplaceAll(resp, `"logprobs":[]`, `"logprobs":[],"x_slow":1`)
	if slow == resp {
		t.Fatal("no event changed")
	}
	fast, want = textEvents(t, respStreamFrom(p, resp)), textEvents(t, respStreamFrom(p, slow))
	if !slices.Equal(fast, want) {
		t.Errorf("responses: fast path %q, encoding/json %q", fast, want)
	}
}

// Refusal deltas are joined the same way: a pair cut between two is one
// character, a high half before the finish is U+FFFD.
func TestChatRefusalSplitSurrogate19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(delta, finish string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	body := chunk(`{"role":"assistant","refusal":"No \ud83d"}`, "null") + chunk(`{"refusal":"\ude45 sorry \ud83d"}`, "null") +
		chunk(`{}`, `"stop"`) + "data: [DONE]\n\n"
	got := textEvents(t, streamFrom(p, body))
	want := []string{"f:No ", "f:🙅 sorry ", "f:\uFFFD"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// A Responses API text delta's held half is its content part's: a delta
// of another content part, or a reasoning delta, does not continue it.
func TestResponsesSurrogatePartsSurrogate19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	delta := func(part int, d string) string {
		return sseEvent("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":%d,"delta":"%s"}`, part, d))
	}
	body := sseEvent("response.reasoning_text.delta", `{"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":"a\ud83d"}`) +
		delta(0, `\ude00b\ud83d`) + delta(1, `\ude00c\ud83d`) + delta(1, `\ude00`) + sseEvent("response.completed", respCompleted)
	got := textEvents(t, respStreamFrom(p, body))
	want := []string{"r0:", "r0:a", "r0:\uFFFD", "t:\uFFFDb", "t:\uFFFD", "t:\uFFFDc", "t:😀"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
