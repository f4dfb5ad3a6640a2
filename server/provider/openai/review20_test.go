package openai

import (
	"errors"
	"io"
	"strconv"
	"testing"

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
	s := streamFrom(p, body)
	var evs []*provider.Event
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
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
