package providertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Drain reads a stream to its end (io.EOF or an error), at most limit
// events, then reads once more: a stream that ended gives no event after
// its end (fuzz invariant). complete reports an io.EOF end.
func Drain(t testing.TB, s provider.Stream, limit int) (evs []*provider.Event, complete bool, err error) {
	t.Helper()
	for i := 0; ; i++ {
		if i > limit {
			t.Fatalf("more than %d events", limit)
		}
		ev, err := s.Recv()
		if err != nil {
			if again, err2 := s.Recv(); err2 == nil {
				t.Errorf("an event after the stream's end (%v): %+v", err, again)
			}
			if errors.Is(err, io.EOF) {
				return evs, true, nil
			}
			return evs, false, err
		}
		if ev == nil {
			t.Fatal("nil event without error")
		}
		evs = append(evs, ev)
	}
}

// CallLog is what a stream's events said about one tool call.
type CallLog struct {
	ID, Name  string
	Index     int
	Arguments strings.Builder
	// Ends counts the call's EventToolCallEnd and EventToolCallCut
	// events; Cut says the last was a cut.
	Ends int
	Cut  bool
	// Late: a fragment came after the call's end (EventCheck.LateFragments).
	Late bool
}

// EventCheck says what CheckEvents asks of an adapter beyond what every
// stream owes.
type EventCheck struct {
	// Complete: the stream ended with io.EOF.
	Complete bool
	// EndEveryCall: a complete stream ends each of its calls with
	// EventToolCallEnd or EventToolCallCut (the adapter does not leave
	// that to the gateway).
	EndEveryCall bool
	// LateFragments: the adapter relays a fragment the provider sent for
	// a call it had already ended, as sent; the gateway's fold then fails
	// the stream as the provider's protocol break (UPSTREAM_BAD_RESPONSE).
	// Such a fragment is noted (CallLog.Late), not reported.
	LateFragments bool
}

// CheckEvents checks the invariants every adapter's event stream keeps,
// whatever the provider sent, and returns the calls in the order they
// started:
//   - a tool call's events carry its CallID, and CallID and Index name
//     one call each (ids unique, one position per call); a new call's
//     index is the number of calls before it;
//   - a call is named at most once, has at most one end (complete or
//     cut), and no fragment after its end; an end names a call that
//     started; with EndEveryCall, a complete stream ends every call;
//   - usage counts are never negative; metas marshal; text, refusal and
//     reasoning events carry something; a provider item has a type and
//     is one JSON object; every string is valid UTF-8 (the
//     gateway's protobuf messages cannot carry anything else); only a
//     reasoning block's first piece may be empty.
func CheckEvents(t testing.TB, evs []*provider.Event, c EventCheck) []*CallLog {
	t.Helper()
	var calls []*CallLog
	byID := map[string]*CallLog{}
	byIndex := map[int]*CallLog{}
	reasoning := map[int]bool{}
	bad := func(i int, format string, args ...any) {
		t.Helper()
		t.Errorf("event %d: %s", i, fmt.Sprintf(format, args...))
	}
	for i, ev := range evs {
		switch ev.Kind {
		case provider.EventToolCall, provider.EventToolCallEnd, provider.EventToolCallCut:
			d := ev.ToolCall
			for _, s := range []string{d.CallID, d.Name, d.Arguments, d.Signature} {
				if !utf8.ValidString(s) {
					bad(i, "tool call field is not UTF-8: %q", s)
				}
			}
			if d.CallID == "" || d.Index < 0 {
				bad(i, "tool call event without CallID or with a negative index: %+v", d)
				continue
			}
			cl := byID[d.CallID]
			if cl == nil {
				if ev.Kind != provider.EventToolCall {
					bad(i, "end of call %s, which never started", d.CallID)
					continue
				}
				if other := byIndex[d.Index]; other != nil {
					bad(i, "index %d has calls %s and %s", d.Index, other.ID, d.CallID)
				}
				if d.Index != len(calls) {
					bad(i, "call %s starts at index %d after %d calls", d.CallID, d.Index, len(calls))
				}
				cl = &CallLog{ID: d.CallID, Index: d.Index}
				calls = append(calls, cl)
				byID[d.CallID] = cl
				byIndex[d.Index] = cl
			} else if cl.Index != d.Index {
				bad(i, "call %s has indexes %d and %d", d.CallID, cl.Index, d.Index)
			}
			if ev.Kind != provider.EventToolCall {
				cl.Ends++
				cl.Cut = ev.Kind == provider.EventToolCallCut
				if cl.Ends > 1 {
					bad(i, "call %s ends %d times", d.CallID, cl.Ends)
				}
				continue
			}
			if cl.Ends > 0 {
				cl.Late = true
				if !c.LateFragments {
					bad(i, "fragment of call %s after its end: %+v", d.CallID, d)
				}
			}
			if d.Name != "" {
				if cl.Name != "" {
					bad(i, "call %s named %q, then %q", d.CallID, cl.Name, d.Name)
				}
				cl.Name = d.Name
			}
			cl.Arguments.WriteString(d.Arguments)
		case provider.EventMeta:
			if ev.Meta == nil {
				bad(i, "meta event without meta")
			} else if _, err := proto.Marshal(ev.Meta); err != nil {
				bad(i, "meta does not marshal: %v", err)
			}
		case provider.EventUsage:
			u := ev.Usage
			if u == nil {
				bad(i, "usage event without usage")
				continue
			}
			if u.InputTokens < 0 || u.OutputTokens < 0 || u.TotalTokens < 0 || u.CachedInputTokens < 0 || u.ReasoningTokens < 0 || u.CacheCreationInputTokens < 0 {
				bad(i, "negative usage: %v", u)
			}
		case provider.EventText, provider.EventRefusal:
			if ev.Text == "" {
				bad(i, "empty text event")
			}
			if !utf8.ValidString(ev.Text) || !utf8.ValidString(ev.Phase) {
				bad(i, "text is not UTF-8: %q", ev.Text)
			}
		case provider.EventReasoning:
			r := ev.Reasoning
			if r.Text == "" && r.Signature == "" && r.ID == "" && !r.Redacted && reasoning[r.Index] {
				// A block's first piece may open it empty (a Responses
				// reasoning item without summary text), no later one.
				bad(i, "empty reasoning event")
			}
			reasoning[r.Index] = true
			if r.Index < 0 {
				bad(i, "reasoning index %d", r.Index)
			}
			for _, s := range []string{r.Text, r.Signature, r.ID, r.Format} {
				if !utf8.ValidString(s) {
					bad(i, "reasoning field is not UTF-8: %q", s)
				}
			}
		case provider.EventProviderItem:
			if ev.Item == nil {
				bad(i, "provider item event without its item")
				continue
			}
			it := ev.Item
			if it.Type == "" || !utf8.ValidString(it.Type) {
				bad(i, "provider item without a type or with one not UTF-8: %q", it.Type)
			}
			var obj map[string]json.RawMessage
			if !utf8.ValidString(it.JSON) || json.Unmarshal([]byte(it.JSON), &obj) != nil || obj == nil {
				bad(i, "provider item %s is not one JSON object in UTF-8: %q", it.Type, it.JSON)
			}
		default:
			bad(i, "unknown event kind %d", ev.Kind)
		}
	}
	if c.Complete && c.EndEveryCall {
		for _, cl := range calls {
			if cl.Ends == 0 {
				t.Errorf("call %s never ends in a complete stream", cl.ID)
			}
		}
	}
	return calls
}

// Text is the concatenation of a stream's EventText events.
func Text(evs []*provider.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// SplitInsensitive returns s without U+FFFD and the runes outside the
// BMP, and the weight of what it left out (1 per U+FFFD, 2 per
// supplementary rune, its UTF-16 length). Text that decodes a surrogate
// pair split across two JSON strings (one rune) and text that decodes
// each string alone (two U+FFFD) agree on both.
func SplitInsensitive(s string) (string, int) {
	var b strings.Builder
	w := 0
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			w++
		case r > 0xFFFF:
			w += 2
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), w
}

// SameSplitText reports whether two texts are the same up to how a
// surrogate pair split across two JSON strings decodes: joined (the
// adapters join them) or as two U+FFFD (a reference decoding each
// string alone).
func SameSplitText(a, b string) bool {
	as, aw := SplitInsensitive(a)
	bs, bw := SplitInsensitive(b)
	return as == bs && aw == bw
}

// StringPieces cuts s into JSON string literals of n tokens each, as a
// stream's deltas carry a text: each character its own token (an escape
// where JSON needs one, else its bytes), a character outside the BMP the
// two \u escapes of its surrogate pair (as a UTF-16 server writes them),
// so a cut can fall between the halves. escape, when not nil, says which
// other characters are written as a \u escape.
func StringPieces(s string, n int, escape func(rune) bool) []string {
	var toks []string
	for _, r := range s {
		switch {
		case r >= 0x10000:
			a, b := utf16.EncodeRune(r)
			toks = append(toks, fmt.Sprintf(`\u%04x`, a), fmt.Sprintf(`\u%04x`, b))
		case escape != nil && escape(r):
			toks = append(toks, fmt.Sprintf(`\u%04x`, r))
		case r > 0x7f:
			toks = append(toks, string(r))
		default:
			q := strconv.Quote(string(r))
			toks = append(toks, q[1:len(q)-1])
		}
	}
	var out []string
	for i := 0; i < len(toks); i += n {
		out = append(out, `"`+strings.Join(toks[i:min(i+n, len(toks))], "")+`"`)
	}
	return out
}

// MustJSON is v's JSON text; it panics on a value json cannot encode
// (a test's own literal).
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
