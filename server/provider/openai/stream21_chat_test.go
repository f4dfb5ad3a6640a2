package openai

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// s21Frag is one tool-call fragment of a chat.completion.chunk delta:
// index < 0 leaves the index out, id and name "" leave them out.
func s21Frag(index int, id, name, args string) string {
	f := `{"arguments":` + strconv.Quote(args) + `}`
	if name != "" {
		f = `{"name":"` + name + `","arguments":` + strconv.Quote(args) + `}`
	}
	out := `{`
	if index >= 0 {
		out += `"index":` + strconv.Itoa(index) + `,`
	}
	if id != "" {
		out += `"id":"` + id + `","type":"function",`
	}
	return out + `"function":` + f + `}`
}

func s21ToolChunk(frags ...string) string {
	d := `{"tool_calls":[`
	for i, f := range frags {
		if i > 0 {
			d += ","
		}
		d += f
	}
	return review20Chunk(d+`]}`, "")
}

// TestNamelessWholeRepeatStream21: a server that sends a streamed call
// again whole in a later chunk, without its name (with or without the
// id, at its index or with none), repeats it: the repeat is dropped with
// the warning the named repeat gets, not joined to the call's arguments
// (`{"city":"Paris"}{"city":"Paris"}`, not valid). White space after a
// whole object, and a fragment that is not the same JSON, still continue
// the call as sent.
func TestNamelessWholeRepeatStream21(t *testing.T) {
	t.Parallel()
	end := review20Chunk(`{}`, "tool_calls") + "data: [DONE]\n\n"
	const args = `{"city": "Paris"}`
	for _, tc := range []struct {
		name string
		body string
		want []wantCall
		warn string
	}{
		{"id and index, no name",
			s21ToolChunk(s21Frag(0, "call_a", "get_weather", "")) + s21ToolChunk(s21Frag(0, "", "", `{"city": `)) +
				s21ToolChunk(s21Frag(0, "", "", `"Paris"}`)) + s21ToolChunk(s21Frag(0, "call_a", "", args)) + end,
			[]wantCall{{"call_a", "get_weather", args, true, "end"}}, "tool call call_a was sent again whole; the repeat was dropped"},
		{"index only, reformatted",
			s21ToolChunk(s21Frag(0, "call_a", "get_weather", args)) + s21ToolChunk(s21Frag(0, "", "", `{"city":"Paris"}`)) + end,
			[]wantCall{{"call_a", "get_weather", args, true, "end"}}, "tool call call_a was sent again whole; the repeat was dropped"},
		{"neither id nor index",
			s21ToolChunk(s21Frag(-1, "call_a", "get_weather", args)) + s21ToolChunk(s21Frag(-1, "", "", args)) + end,
			[]wantCall{{"call_a", "get_weather", args, true, "end"}}, "tool call call_a was sent again whole; the repeat was dropped"},
		{"id only, second of two calls repeated",
			s21ToolChunk(s21Frag(0, "call_a", "get_weather", args), s21Frag(1, "call_b", "get_time", `{}`)) +
				s21ToolChunk(s21Frag(-1, "call_a", "", args)) + end,
			[]wantCall{{"call_a", "get_weather", args, true, "end"}, {"call_b", "get_time", `{}`, true, "end"}},
			"tool call call_a was sent again whole; the repeat was dropped"},
		{"at another index, no id",
			s21ToolChunk(s21Frag(0, "call_a", "get_weather", args), s21Frag(1, "call_b", "get_time", `{}`)) +
				s21ToolChunk(s21Frag(2, "", "", `{"city":"Paris"}`)) + end,
			[]wantCall{{"call_a", "get_weather", args, true, "end"}, {"call_b", "get_time", `{}`, true, "end"}},
			"tool call call_a was sent again whole; the repeat was dropped"},
		{"white space after the whole object continues it",
			s21ToolChunk(s21Frag(0, "call_a", "get_weather", args)) + s21ToolChunk(s21Frag(0, "", "", "\n")) + end,
			[]wantCall{{"call_a", "get_weather", args + "\n", true, "end"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs := review20Events(t, tc.body)
			checkStreamInvariants(t, evs)
			msg, f, ended := gatewayFold(t, evs)
			checkCalls(t, msg, ended, tc.want)
			if tc.warn != "" && !hasWarning(f.Meta, tc.warn) {
				t.Errorf("no warning %q in %q", tc.warn, f.Meta.GetWarnings())
			}
		})
	}
}

// TestLogprobsKeptOnErrorStream21: the token logprobs that arrived
// before a stream failed (an error chunk, an error event, a finish
// reason that breaks the answer off, a body cut short) are relayed, in
// the unary answer's shape, before the error: the server merges the
// stream's meta events into the failure's meta (FailedCallMeta), so they
// reach the client with the text they belong to. They were gathered for
// the finish and dropped with the error.
func TestLogprobsKeptOnErrorStream21(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	lp := func(tok string) string { return `{"token":"` + tok + `","logprob":-0.5,"bytes":[1],"top_logprobs":[]}` }
	chunk := func(tok, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"chatcmpl-s21","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + tok +
			`"},"logprobs":{"content":[` + lp(tok) + `]},"finish_reason":` + f + `}]}` + "\n\n"
	}
	want := `{"content":[` + lp("a") + `,` + lp("b") + `]}`
	var v any
	if err := json.Unmarshal([]byte(want), &v); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(v)
	for _, tc := range []struct{ name, body string }{
		{"error chunk", chunk("a", "") + chunk("b", "") + `data: {"error":{"message":"boom","type":"server_error"}}` + "\n\n"},
		{"error event", chunk("a", "") + chunk("b", "") + "event: error\ndata: {\"code\":500,\"message\":\"boom\"}\n\n"},
		{"body cut", chunk("a", "") + chunk("b", "")},
		{"finish error", chunk("a", "") + chunk("b", "error")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, _, err := collect(t, streamFrom(p, tc.body))
			if err == nil {
				t.Fatal("no error")
			}
			providerError(t, err)
			checkStreamInvariants(t, evs)
			f := accFold(t, evs)
			if got := extendedJSON(t, f.Meta, extLogprobs); got != string(wantJSON) {
				t.Errorf("logprobs\n%s\nwant\n%s", got, wantJSON)
			}
			if txt := s21Text(f.Message); txt != "ab" {
				t.Errorf("text %q", txt)
			}
		})
	}
	t.Run("responses error event", func(t *testing.T) {
		t.Parallel()
		body := `data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_a","type":"message","status":"in_progress","role":"assistant","content":[]}}` + "\n\n" +
			`data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":0,"delta":"a","logprobs":[` + lp("a") + `]}` + "\n\n" +
			`data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":0,"delta":"b","logprobs":[` + lp("b") + `]}` + "\n\n" +
			`data: {"type":"error","code":"server_error","message":"boom"}` + "\n\n"
		evs, _, err := collect(t, respStreamFrom(p, body))
		if err == nil {
			t.Fatal("no error")
		}
		f := accFold(t, evs)
		want := `[[` + lp("a") + `,` + lp("b") + `]]`
		var v any
		if err := json.Unmarshal([]byte(want), &v); err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(v)
		if got := extendedJSON(t, f.Meta, extLogprobs); got != string(wantJSON) {
			t.Errorf("logprobs\n%s\nwant\n%s", got, wantJSON)
		}
	})
}

func s21Text(m *llmrelayv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		b.WriteString(p.GetText())
	}
	return b.String()
}

// TestHeldTextKeptOnErrorStream21: text a chat stream held back when it
// failed (white space or a tag that might open a <think> block, the high
// half of a surrogate pair) is relayed before the error, as an
// interrupted finish relays it; it was dropped.
func TestHeldTextKeptOnErrorStream21(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"white space", review20Chunk(`{"content":"Hi"}`, "") + review20Chunk(`{"content":"\n"}`, ""), "Hi\n"},
		{"a tag's start", review20Chunk(`{"content":"<thi"}`, ""), "<thi"},
		{"a surrogate half", review20Chunk(`{"content":"Hi \ud83d"}`, ""), "Hi \uFFFD"},
		{"before an error chunk", review20Chunk(`{"content":"\n"}`, "") + `data: {"error":{"message":"boom","type":"server_error"}}` + "\n\n", "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, _, err := collect(t, streamFrom(p, tc.body))
			if err == nil {
				t.Fatal("no error")
			}
			checkStreamInvariants(t, evs)
			if got := s21Text(accFold(t, evs).Message); got != tc.want {
				t.Errorf("text %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("responses surrogate half", func(t *testing.T) {
		t.Parallel()
		body := `data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":0,"delta":"Hi \ud83d"}` + "\n\n"
		evs, _, err := collect(t, respStreamFrom(p, body))
		if err == nil {
			t.Fatal("no error")
		}
		if got := s21Text(accFold(t, evs).Message); got != "Hi \uFFFD" {
			t.Errorf("text %q", got)
		}
	})
}
