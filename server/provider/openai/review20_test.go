package openai

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/fold"
	"github.com/llmrelay/llmrelay/server/provider"
)

// review20Chunk is one chat.completion.chunk SSE event with delta d of
// choice 0 (and finish, when not "").
func review20Chunk(d, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"chatcmpl-r20","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + d + `,"finish_reason":` + f + `}]}` + "\n\n"
}

func review20Events(t *testing.T, body string) []*provider.Event {
	t.Helper()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := collect(t, streamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestRestatedCallFragmentsReview20: a fragment naming its function
// with an id and no arguments (or white space only) opens a call when
// it is at another index than the call sent with that id (a server that
// reuses ids: each call's first fragment names its function with empty
// arguments, as OpenAI sends them), and adds nothing when it restates
// the id and name of the call at its own index, whose arguments are
// whole; naming another function there opens a call. The first two
// joined the calls into one (`{"city":"Paris"}{"city":"Rome"}`) or
// opened a call of "\n" after round 20's repeat handling.
func TestRestatedCallFragmentsReview20(t *testing.T) {
	t.Parallel()
	frag := func(index int, id, name, args string) string {
		f := `{"arguments":` + strconv.Quote(args) + `}`
		if name != "" {
			f = `{"name":"` + name + `","arguments":` + strconv.Quote(args) + `}`
		}
		idf := ""
		if id != "" {
			idf = `"id":"` + id + `","type":"function",`
		}
		return review20Chunk(`{"tool_calls":[{"index":`+strconv.Itoa(index)+`,`+idf+`"function":`+f+`}]}`, "")
	}
	end := review20Chunk(`{}`, "tool_calls") + "data: [DONE]\n\n"
	for _, tc := range []struct {
		name string
		body string
		want []wantCall
	}{
		{"reused id at another index",
			frag(0, "call_same", "get_weather", "") + frag(0, "", "", `{"city":"Paris"}`) +
				frag(1, "call_same", "get_weather", "") + frag(1, "", "", `{"city":"Rome"}`) + end,
			[]wantCall{{"call_same", "get_weather", `{"city":"Paris"}`, true, "end"}, {"call_idx1", "get_weather", `{"city":"Rome"}`, true, "end"}}},
		{"id and name on every fragment, a trailing newline",
			frag(0, "call_a", "get_weather", `{"city":`) + frag(0, "call_a", "get_weather", `"Paris"}`) +
				frag(0, "call_a", "get_weather", "\n") + end,
			[]wantCall{{"call_a", "get_weather", "{\"city\":\"Paris\"}\n", true, "end"}}},
		{"id and name restated with empty arguments",
			frag(0, "call_a", "get_weather", `{"city":"Paris"}`) + frag(0, "call_a", "get_weather", "") + end,
			[]wantCall{{"call_a", "get_weather", `{"city":"Paris"}`, true, "end"}}},
		{"another function at the index with the id",
			frag(0, "call_a", "get_weather", `{"city":"Paris"}`) + frag(0, "call_a", "get_time", "") +
				frag(0, "", "", `{"tz":"CET"}`) + end,
			[]wantCall{{"call_a", "get_weather", `{"city":"Paris"}`, true, "end"}, {"call_idx1", "get_time", `{"tz":"CET"}`, true, "end"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msg, _, ended := gatewayFold(t, review20Events(t, tc.body))
			checkCalls(t, msg, ended, tc.want)
		})
	}
}

// TestResponsesLogprobsDeltaWithoutOutputIndexReview20: output_text
// deltas that name their item but give no output_index carry the part's
// logprobs once: they were kept under output index -1 and the same
// part's list from the item and the final response (at index 0) was
// added beside them, so every token's logprobs were relayed twice.
func TestResponsesLogprobsDeltaWithoutOutputIndexReview20(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	lp := func(tok string) string { return `{"token":"` + tok + `","logprob":-1,"bytes":[],"top_logprobs":[]}` }
	item := `{"id":"msg_a","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[` + lp("a") + `,` + lp("b") + `],"text":"ab"}]}`
	body := `data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_a","type":"message","status":"in_progress","role":"assistant","content":[]}}` + "\n\n" +
		`data: {"type":"response.output_text.delta","item_id":"msg_a","content_index":0,"delta":"a","logprobs":[` + lp("a") + `]}` + "\n\n" +
		`data: {"type":"response.output_text.delta","item_id":"msg_a","content_index":0,"delta":"b","logprobs":[` + lp("b") + `]}` + "\n\n" +
		`data: {"type":"response.output_item.done","output_index":0,"item":` + item + `}` + "\n\n" +
		`data: {"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[` + item + `]}}` + "\n\n"
	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	want := `[[` + lp("a") + `,` + lp("b") + `]]`
	var v any
	if err := json.Unmarshal([]byte(want), &v); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(v)
	if got := extendedJSON(t, accFold(t, evs).Meta, extLogprobs); got != string(wantJSON) {
		t.Errorf("logprobs\n%s\nwant\n%s", got, wantJSON)
	}
}

// TestChatStreamLogprobsJoinedReview20: choice 0's logprobs lists are
// joined across chunks (a chunk in another shape dropped with one
// warning, choice 1's ignored) and reported whole, in the unary answer's
// shape, with the finish.
func TestChatStreamLogprobsJoinedReview20(t *testing.T) {
	t.Parallel()
	lp := func(tok string) string { return `{"token":"` + tok + `","logprob":-0.5,"bytes":[1],"top_logprobs":[]}` }
	chunk := func(choices string) string {
		return `data: {"id":"chatcmpl-r20","object":"chat.completion.chunk","choices":[` + choices + `]}` + "\n\n"
	}
	body := chunk(`{"index":0,"delta":{"content":"a"},"logprobs":{"content":[`+lp("a")+`]},"finish_reason":null},{"index":1,"delta":{"content":"z"},"logprobs":{"content":[`+lp("z")+`]},"finish_reason":null}`) +
		chunk(`{"index":0,"delta":{"content":"?"},"logprobs":{"tokens":["?"]},"finish_reason":null}`) +
		chunk(`{"index":0,"delta":{"content":"b"},"logprobs":{"content":[ `+lp("b")+` ],"refusal":null},"finish_reason":null}`) +
		chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`) + "data: [DONE]\n\n"
	evs := review20Events(t, body)
	m := accFold(t, evs).Meta
	want := `{"content":[` + lp("a") + `,` + lp("b") + `],"refusal":null}`
	var v any
	if err := json.Unmarshal([]byte(want), &v); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(v)
	if got := extendedJSON(t, m, extLogprobs); got != string(wantJSON) {
		t.Errorf("logprobs\n%s\nwant\n%s", got, wantJSON)
	}
	n := 0
	for _, w := range m.GetWarnings() {
		if strings.Contains(w, "logprobs") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %q, want one about the logprobs shape", m.GetWarnings())
	}
}

// namedEveryFragmentBody is a stream of one call sent with its id and
// name on every fragment, its arguments n objects of a list, each
// fragment ending in "}".
func namedEveryFragmentBody(n int) string {
	var sb strings.Builder
	frag := func(args string) {
		sb.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write","arguments":` + strconv.Quote(args) + `}}]}}]}` + "\n\n")
	}
	frag(`{"items":[{"a":0}`)
	for i := 1; i < n; i++ {
		frag(`,{"a":` + strconv.Itoa(i) + `}`)
	}
	frag(`]}`)
	sb.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	return sb.String()
}

// BenchmarkNamedEveryFragmentReview20: ns per fragment of a call whose
// every fragment repeats its id and name and ends in "}", at two sizes:
// flat when reading is linear.
func BenchmarkNamedEveryFragmentReview20(b *testing.B) {
	p, err := New(testKey)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 10000} {
		body := namedEveryFragmentBody(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				s := streamFrom(p, body)
				for {
					if _, err := s.Recv(); err != nil {
						if !errors.Is(err, io.EOF) {
							b.Fatal(err)
						}
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/fragment")
		})
	}
}

// TestNamedEveryFragmentLinearReview20: a call whose every fragment
// names its id and function and ends in "}" has its arguments parsed
// (callState.whole) only once they are closed, not at every fragment:
// round 20's repeat handling asked whole at each such fragment, twice,
// and reading 10,000 of them (100 KB) took 4.6 s.
func TestNamedEveryFragmentLinearReview20(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	s := streamFrom(p, namedEveryFragmentBody(n))
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for i := range n {
		items = append(items, `{"a":`+strconv.Itoa(i)+`}`)
	}
	msg, _, ended := gatewayFold(t, evs)
	checkCalls(t, msg, ended, []wantCall{{"call_1", "write", `{"items":[` + strings.Join(items, ",") + `]}`, true, "end"}})
	if len(s.order) != 1 || s.order[0].parses > 2 {
		t.Errorf("arguments parsed %d times for %d fragments", s.order[0].parses, n)
	}
}

// FuzzArgsScanReview20: argsScan only filters: every text that parses as
// a JSON object is closed, fed whole or in two pieces alike.
func FuzzArgsScanReview20(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":"}"}`, `{"a":"\"}"}`, `{"a":[{"b":"\\"}]}`, ` {} `, `{"a":1}}`, `]{}`, `{"é":"日本"}`} {
		f.Add(s, len(s)/2)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		var whole, split argsScan
		whole.feed(s)
		if cut < 0 || cut > len(s) {
			cut = len(s)
		}
		split.feed(s[:cut])
		split.feed(s[cut:])
		if whole != split {
			t.Fatalf("%q fed whole %+v, in two at %d %+v", s, whole, cut, split)
		}
		if fold.ValidArguments(s) && !whole.closed() {
			t.Fatalf("%q parses but is not closed: %+v", s, whole)
		}
	})
}
