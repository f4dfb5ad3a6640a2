package ollama

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// s21 stream generators cut texts as providertest.StringPieces does.
func s21Pieces(s string, n int) []string { return providertest.StringPieces(s, n, nil) }

func s21JSON(v any) string { return providertest.MustJSON(v) }

type s21Call struct{ name, args string }

// s21Ollama is a generated /api/chat answer: the NDJSON stream (thinking
// and content cut every n characters, each call whole on a line of its
// own) and the unary body.
func s21Ollama(thinking, content string, calls []s21Call, reason string, n int) (stream, unary string) {
	var b strings.Builder
	line := func(msg map[string]any) {
		msg["role"] = "assistant"
		b.WriteString(s21JSON(map[string]any{"model": "qwen3:s21", "created_at": "2025-01-01T00:00:00Z", "message": msg, "done": false}) + "\n")
	}
	for _, d := range s21Pieces(thinking, n) {
		line(map[string]any{"content": "", "thinking": json.RawMessage(d)})
	}
	for _, d := range s21Pieces(content, n) {
		line(map[string]any{"content": json.RawMessage(d)})
	}
	var tcs []any
	for _, c := range calls {
		tc := map[string]any{"function": map[string]any{"name": c.name, "arguments": json.RawMessage(c.args)}}
		line(map[string]any{"content": "", "tool_calls": []any{tc}})
		tcs = append(tcs, tc)
	}
	end := map[string]any{"model": "qwen3:s21", "created_at": "2025-01-01T00:00:01Z", "message": map[string]any{"role": "assistant", "content": ""},
		"done": true, "done_reason": reason, "prompt_eval_count": 10, "eval_count": 20}
	b.WriteString(s21JSON(end) + "\n")
	msg := map[string]any{"role": "assistant", "content": content}
	if thinking != "" {
		msg["thinking"] = thinking
	}
	if tcs != nil {
		msg["tool_calls"] = tcs
	}
	end["message"] = msg
	end["created_at"] = "2025-01-01T00:00:01Z"
	return b.String(), s21JSON(end)
}

// TestStreamMatchesUnaryStream21: generated /api/chat streams (thinking,
// content cut inside surrogate pairs, parallel calls, empty and long
// arguments; the body read a byte at a time) fold, as the gateway folds
// them, to the unary answer's message, with its finish reason.
func TestStreamMatchesUnaryStream21(t *testing.T) {
	t.Parallel()
	long := s21JSON(map[string]any{"content": strings.Repeat("é 😀 \"q\" \\ ", 3000)})
	calls := []s21Call{{"get_weather", `{"city":"Zürich 😀","days":[1,2]}`}, {"now", `{}`}, {"get_weather", `{"city":"Oslo"}`}}
	for _, v := range []struct {
		name              string
		thinking, content string
		calls             []s21Call
		reason            string
	}{
		{"all", "User wants 😀 weather", "Checking é 😀 \"both\".\n", calls, "stop"},
		{"long args", "", "", append(calls[:1:1], s21Call{"write", long}), "stop"},
		{"text only", "", "Hi é 😀", nil, "stop"},
		{"length", "Think", "Cut here", nil, "length"},
	} {
		for _, n := range []int{1, 3, 8} {
			for _, oneByte := range []bool{false, true} {
				if oneByte && n != 3 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%d/onebyte=%v", v.name, n, oneByte), func(t *testing.T) {
					t.Parallel()
					body, unary := s21Ollama(v.thinking, v.content, v.calls, v.reason, n)
					var r io.Reader = strings.NewReader(body)
					if oneByte {
						r = iotest.OneByteReader(r)
					}
					evs, err := s21Drain(fakeStream(r))
					if err != nil {
						t.Fatalf("stream: %v", err)
					}
					res, err := parseChatResponse([]byte(unary), "salt", window{})
					if err != nil {
						t.Fatal(err)
					}
					if got, want := providertest.Answer(accumulate(t, evs)), providertest.Answer(res.Message); got != want {
						t.Errorf("stream folds to\n%s\nunary\n%s", got, want)
					}
					meta := &llmrelayv1.ResponseMeta{}
					for _, ev := range evs {
						if ev.Kind == provider.EventMeta {
							proto.Merge(meta, ev.Meta)
						}
					}
					if meta.GetFinishReason() != res.Meta.GetFinishReason() {
						t.Errorf("finish %v, unary %v", meta.GetFinishReason(), res.Meta.GetFinishReason())
					}
				})
			}
		}
	}
}

func s21Drain(s provider.Stream) ([]*provider.Event, error) {
	defer s.Close()
	var evs []*provider.Event
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// TestLogprobsKeptOnErrorStream21: the logprobs of the lines before a
// failure (an error line, a body cut short) are relayed before the
// error, with the text they belong to: the server merges a stream's meta
// events into the failure's meta (FailedCallMeta). They were gathered for
// the done line and dropped with the error.
func TestLogprobsKeptOnErrorStream21(t *testing.T) {
	t.Parallel()
	line := func(tok string) string {
		return `{"model":"m","message":{"role":"assistant","content":"` + tok + `"},"logprobs":[{"token":"` + tok + `","logprob":-0.5}],"done":false}` + "\n"
	}
	for _, tc := range []struct{ name, body string }{
		{"error line", line("a") + line("b") + `{"error":"model runner crashed"}` + "\n"},
		{"body cut", line("a") + line("b")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, err := s21Drain(fakeStream(strings.NewReader(tc.body)))
			if err == nil {
				t.Fatal("no error")
			}
			var got []any
			var text strings.Builder
			for _, ev := range evs {
				switch ev.Kind {
				case provider.EventMeta:
					if v, ok := ev.Meta.GetExtended().AsMap()[extLogprobs]; ok {
						got = append(got, v.([]any)...)
					}
				case provider.EventText:
					text.WriteString(ev.Text)
				}
			}
			if s := s21JSON(got); s != `[{"logprob":-0.5,"token":"a"},{"logprob":-0.5,"token":"b"}]` {
				t.Errorf("logprobs %s", s)
			}
			if text.String() != "ab" {
				t.Errorf("text %q", text.String())
			}
		})
	}
}
