package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// s21 stream generators cut texts as providertest.StringPieces does.
func s21Deltas(s string, n int) []string { return providertest.StringPieces(s, n, nil) }

func s21JSON(v any) string { return providertest.MustJSON(v) }

type s21Block struct {
	typ            string // "thinking", "text", "tool_use"
	text, sig      string // thinking text and signature; text; tool input JSON text
	id, name       string
	inputInStart   bool // the whole input in content_block_start, no deltas
	emptyDeltaOnly bool // one input_json_delta with "" (the input is {})
	inputTwice     bool // the whole input in content_block_start and again in deltas
}

// s21Messages is a generated Messages API answer: the SSE stream (n
// characters per delta) and the unary body.
func s21Messages(blocks []s21Block, stop string, n int) (stream, unary string) {
	var b strings.Builder
	ev := func(typ string, m map[string]any) {
		m["type"] = typ
		b.WriteString("event: " + typ + "\ndata: " + s21JSON(m) + "\n\n")
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": "msg_s21", "type": "message", "role": "assistant", "model": "claude-s21",
		"content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	var content []any
	for i, bl := range blocks {
		switch bl.typ {
		case "thinking":
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, d := range s21Deltas(bl.text, n) {
				ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": json.RawMessage(d)}})
			}
			ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "signature_delta", "signature": bl.sig}})
			content = append(content, map[string]any{"type": "thinking", "thinking": bl.text, "signature": bl.sig})
		case "text":
			ev("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, d := range s21Deltas(bl.text, n) {
				ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": json.RawMessage(d)}})
			}
			content = append(content, map[string]any{"type": "text", "text": bl.text})
		case "tool_use":
			start := map[string]any{"type": "tool_use", "id": bl.id, "name": bl.name, "input": map[string]any{}}
			if bl.inputInStart || bl.inputTwice {
				start["input"] = json.RawMessage(bl.text)
			}
			ev("content_block_start", map[string]any{"index": i, "content_block": start})
			switch {
			case bl.inputInStart:
			case bl.emptyDeltaOnly:
				ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
			default:
				for _, d := range s21Deltas(bl.text, n) {
					ev("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": json.RawMessage(d)}})
				}
			}
			content = append(content, map[string]any{"type": "tool_use", "id": bl.id, "name": bl.name, "input": json.RawMessage(bl.text)})
		}
		ev("content_block_stop", map[string]any{"index": i})
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	ev("message_stop", map[string]any{})
	unary = s21JSON(map[string]any{"id": "msg_s21", "type": "message", "role": "assistant", "model": "claude-s21", "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 20}})
	return b.String(), unary
}

// TestStreamMatchesUnaryStream21: generated Messages streams (thinking
// with its signature, text, several tool_use blocks; inputs {} with no
// delta or an empty one, whole in content_block_start, cut inside
// surrogate pairs, very long; the body read a byte at a time) fold, as
// the gateway folds them, to the unary answer's message, with its finish
// reason; at max_tokens the last call is cut in both.
func TestStreamMatchesUnaryStream21(t *testing.T) {
	t.Parallel()
	long := `{"content": "` + strings.Repeat(`é 😀 \"q\" \\ `, 3000) + `"}`
	base := func() []s21Block {
		return []s21Block{
			{typ: "thinking", text: "User wants 😀 weather", sig: "EqQBCkYIBxgCKkB"},
			{typ: "text", text: "Checking é 😀 \"both\".\n"},
			{typ: "tool_use", id: "toolu_a", name: "get_weather", text: `{"city": "Zürich 😀", "days": [1, 2]}`},
			{typ: "tool_use", id: "toolu_b", name: "now", text: `{}`},
			{typ: "tool_use", id: "toolu_c", name: "get_weather", text: `{"city":"Oslo"}`},
		}
	}
	for _, v := range []struct {
		name string
		mod  func(bl []s21Block) []s21Block
		stop string
	}{
		{"plain", func(bl []s21Block) []s21Block { return bl }, "tool_use"},
		{"empty input delta", func(bl []s21Block) []s21Block { bl[3].emptyDeltaOnly = true; return bl }, "tool_use"},
		{"input whole in the start", func(bl []s21Block) []s21Block {
			for i := range bl {
				bl[i].inputInStart = true
			}
			return bl
		}, "tool_use"},
		// A proxy that writes the whole input in content_block_start
		// and streams it again: the deltas are the input (the Anthropic
		// SDKs read a tool_use's input from its deltas once any came),
		// not joined to the start's (`{"a":1}{"a":1}`).
		{"input in the start and again in deltas", func(bl []s21Block) []s21Block {
			for i := range bl {
				bl[i].inputTwice = true
			}
			return bl
		}, "tool_use"},
		{"long input", func(bl []s21Block) []s21Block {
			return append(bl, s21Block{typ: "tool_use", id: "toolu_d", name: "write", text: long})
		}, "tool_use"},
		{"max_tokens after the last call", func(bl []s21Block) []s21Block { return bl }, "max_tokens"},
		{"text only", func(bl []s21Block) []s21Block { return bl[:2] }, "end_turn"},
	} {
		for _, n := range []int{1, 3, 8} {
			for _, oneByte := range []bool{false, true} {
				if oneByte && n != 3 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d/onebyte=%v", v.name, n, oneByte), func(t *testing.T) {
					t.Parallel()
					body, unary := s21Messages(v.mod(base()), v.stop, n)
					var r io.Reader = strings.NewReader(body)
					if oneByte {
						r = iotest.OneByteReader(r)
					}
					s := newStream(&http.Response{StatusCode: 200, Header: http.Header{"Request-Id": {"req_test"}}, Body: io.NopCloser(r)}, nil)
					evs, err := collect(s)
					if err != nil {
						t.Fatalf("stream: %v", err)
					}
					res, err := parseResponse([]byte(unary), http.Header{})
					if err != nil {
						t.Fatal(err)
					}
					if got, want := providertest.Answer(accumulate(t, evs)), providertest.Answer(res.Message); got != want {
						t.Errorf("stream folds to\n%s\nunary\n%s", got, want)
					}
					f := foldEvents(t, evs)
					if f.meta.GetFinishReason() != res.Meta.GetFinishReason() {
						t.Errorf("finish %v, unary %v", f.meta.GetFinishReason(), res.Meta.GetFinishReason())
					}
				})
			}
		}
	}
}

// TestStartInputStream21: a tool_use block's input in content_block_start
// is the call's arguments when no input_json_delta follows (relayed with
// the name, in one fragment, also before the error of a stream cut before
// the block's stop); fragments that follow are the arguments instead,
// with a warning when they differ from the start's input.
func TestStartInputStream21(t *testing.T) {
	t.Parallel()
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{\"a\":1}}}\n\n"
	delta := func(pj string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" + strconv.Quote(pj) + "}}\n\n"
	}
	end := "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	const warn = "tool call toolu_1: the input of its content_block_start was dropped; its input_json_delta fragments are the input"
	for _, tc := range []struct {
		name, body, args, warn string
		fails                  bool
	}{
		{"start only", start + end, `{"a":1}`, "", false},
		{"start and the same again", start + delta(`{"a": `) + delta(`1}`) + end, `{"a": 1}`, "", false},
		{"start and other fragments", start + delta(`{"a":2}`) + end, `{"a":2}`, warn, false},
		{"cut before the stop", start, `{"a":1}`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, err := collect(streamFromBody([]byte(tc.body)))
			if (err != nil) != tc.fails {
				t.Fatalf("err %v", err)
			}
			var args string
			n := 0
			for _, ev := range evs {
				if ev.Kind == provider.EventToolCall {
					if n == 0 && ev.ToolCall.Name != "f" {
						t.Errorf("first fragment %+v without the name", ev.ToolCall)
					}
					n++
					args += ev.ToolCall.Arguments
				}
			}
			if args != tc.args {
				t.Errorf("arguments %q, want %q", args, tc.args)
			}
			warned := false
			for _, w := range foldEvents(t, evs).meta.GetWarnings() {
				warned = warned || w == warn
			}
			if warned != (tc.warn != "") {
				t.Errorf("warning %v, want %v", warned, tc.warn != "")
			}
		})
	}
}
