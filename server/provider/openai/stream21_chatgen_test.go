package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"google.golang.org/protobuf/proto"

	foldpkg "github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// s21Call is one tool call of a generated chat answer.
type s21Call struct {
	id, name string
	args     *string // nil: the call has no "arguments" member
}

// s21Chat is a generated chat answer and how its stream is cut.
type s21Chat struct {
	text, reasoning string
	calls           []s21Call
	finish          string
	// per: JSON string tokens per delta; interleave: the calls'
	// fragments round robin; wholeFirst: each call whole in its first
	// fragment; idEvery: the id (and name) on every fragment, not only
	// the first; gap: indexes 0, 2, 4, …; oneByte: the body read a byte
	// at a time (a multi-byte character cut between reads).
	per                                  int
	interleave, wholeFirst, idEvery, gap bool
	oneByte                              bool
	noArgsMember                         bool
	textAfterCalls                       string
	noIndexes                            bool
}

func s21Str(s string) *string { return &s }

func (c *s21Chat) unary() string {
	msg := map[string]any{"role": "assistant", "content": nil}
	if c.text != "" || c.textAfterCalls != "" {
		msg["content"] = c.text + c.textAfterCalls
	}
	if c.reasoning != "" {
		msg["reasoning_content"] = c.reasoning
	}
	var tcs []any
	for _, tc := range c.calls {
		fn := map[string]any{"name": tc.name}
		if tc.args != nil {
			fn["arguments"] = *tc.args
		}
		tcs = append(tcs, map[string]any{"id": tc.id, "type": "function", "function": fn})
	}
	if tcs != nil {
		msg["tool_calls"] = tcs
	}
	return s21JSON(map[string]any{"id": "chatcmpl-s21", "object": "chat.completion", "created": 1700000000, "model": "m-1",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": c.finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}})
}

func (c *s21Chat) stream() string {
	var b strings.Builder
	chunk := func(delta map[string]any, finish any) {
		b.WriteString("data: " + s21JSON(map[string]any{"id": "chatcmpl-s21", "object": "chat.completion.chunk", "created": 1700000000, "model": "m-1",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}) + "\n\n")
	}
	per := max(c.per, 1)
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, d := range s21Deltas(c.reasoning, per) {
		chunk(map[string]any{"reasoning_content": json.RawMessage(d)}, nil)
	}
	for _, d := range s21Deltas(c.text, per) {
		chunk(map[string]any{"content": json.RawMessage(d)}, nil)
	}
	frags := make([][]map[string]any, len(c.calls))
	for i, tc := range c.calls {
		index := i
		if c.gap {
			index = 2 * i
		}
		var pieces []string
		switch {
		case tc.args == nil:
		case c.wholeFirst || *tc.args == "":
			pieces = []string{s21JSON(*tc.args)}
		default:
			pieces = s21Deltas(*tc.args, per)
		}
		first := map[string]any{"id": tc.id, "type": "function"}
		if !c.noIndexes {
			first["index"] = index
		}
		fn := map[string]any{"name": tc.name}
		if len(pieces) > 0 {
			fn["arguments"] = json.RawMessage(pieces[0])
			pieces = pieces[1:]
		} else if !c.noArgsMember {
			fn["arguments"] = ""
		}
		first["function"] = fn
		frags[i] = append(frags[i], first)
		for _, p := range pieces {
			f := map[string]any{"function": map[string]any{"arguments": json.RawMessage(p)}}
			if !c.noIndexes {
				f["index"] = index
			}
			if c.idEvery {
				f["id"], f["type"] = tc.id, "function"
				f["function"].(map[string]any)["name"] = tc.name
			}
			frags[i] = append(frags[i], f)
		}
	}
	if c.interleave {
		for more := true; more; {
			more = false
			for i := range frags {
				if len(frags[i]) > 0 {
					chunk(map[string]any{"tool_calls": []any{frags[i][0]}}, nil)
					frags[i] = frags[i][1:]
					more = true
				}
			}
		}
	} else {
		for i := range frags {
			for _, f := range frags[i] {
				chunk(map[string]any{"tool_calls": []any{f}}, nil)
			}
		}
	}
	for _, d := range s21Deltas(c.textAfterCalls, per) {
		chunk(map[string]any{"content": json.RawMessage(d)}, nil)
	}
	chunk(map[string]any{}, c.finish)
	b.WriteString(`data: {"id":"chatcmpl-s21","object":"chat.completion.chunk","created":1700000000,"model":"m-1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// TestChatStreamMatchesUnaryStream21: for generated answers (text,
// reasoning, parallel calls interleaved or one after another, arguments
// {} or "" or missing, whole in the first fragment, cut inside surrogate
// pairs, very long, the id only on the first fragment or on every one,
// indexes with gaps, the body read a byte at a time), the stream folds
// to the message the unary answer gives, call by call (id, name,
// arguments, validity), with the same finish reason, and a call the
// token limit stopped is cut, not complete.
func TestChatStreamMatchesUnaryStream21(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	long := `{"path":"/tmp/x","content":"` + strings.Repeat(`line é 😀 \"q\" \\ `, 2500) + `"}`
	calls := func() []s21Call {
		return []s21Call{
			{"call_a", "get_weather", s21Str(`{"city": "Zürich 😀", "days": [1, 2]}`)},
			{"call_b", "now", s21Str(`{}`)},
			{"call_c", "get_weather", s21Str(`{"city":"Oslo"}`)},
		}
	}
	base := s21Chat{text: "Let me check é 😀 \"both\".\n", reasoning: "User wants 😀 weather", calls: calls(), finish: "tool_calls"}
	type variant struct {
		name string
		mod  func(c *s21Chat)
	}
	variants := []variant{
		{"plain", func(*s21Chat) {}},
		{"interleaved", func(c *s21Chat) { c.interleave = true }},
		{"whole in first fragment", func(c *s21Chat) { c.wholeFirst = true }},
		{"id on every fragment", func(c *s21Chat) { c.idEvery = true }},
		{"id on every fragment interleaved", func(c *s21Chat) { c.idEvery, c.interleave = true, true }},
		{"index gaps", func(c *s21Chat) { c.gap = true }},
		{"index gaps interleaved", func(c *s21Chat) { c.gap, c.interleave = true, true }},
		{"one byte reads", func(c *s21Chat) { c.oneByte = true }},
		{"empty string arguments", func(c *s21Chat) { c.calls[1].args = s21Str("") }},
		{"no arguments member", func(c *s21Chat) { c.calls[1].args = nil; c.noArgsMember = true }},
		{"long arguments", func(c *s21Chat) { c.calls = append(c.calls, s21Call{"call_d", "write", s21Str(long)}) }},
		{"no indexes, one after another", func(c *s21Chat) { c.noIndexes = true }},
		{"text only", func(c *s21Chat) { c.calls, c.finish = nil, "stop" }},
		{"cut by the token limit in the last call", func(c *s21Chat) {
			c.finish = "length"
			c.calls[2].args = s21Str(`{"city":"Os`)
		}},
		{"cut by the token limit after a whole last call", func(c *s21Chat) { c.finish = "length" }},
		{"text after the calls, then the token limit", func(c *s21Chat) { c.finish, c.textAfterCalls = "length", "and then" }},
	}
	for _, v := range variants {
		for _, per := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/%d", v.name, per), func(t *testing.T) {
				t.Parallel()
				c := base
				c.calls = calls()
				c.per = per
				v.mod(&c)
				s21CheckChat(t, p, &c)
			})
		}
	}
}

func s21CheckChat(t *testing.T, p *Provider, c *s21Chat) {
	t.Helper()
	body := c.stream()
	var r io.Reader = strings.NewReader(body)
	if c.oneByte {
		r = iotest.OneByteReader(r)
	}
	resp := &http.Response{StatusCode: 200, Header: http.Header{"X-Request-Id": {"req_test"}}, Body: io.NopCloser(r)}
	evs, err := s21Collect(t, p.newStream(resp, "m", nil, secrets{testKey}))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	checkStreamInvariants(t, evs)
	msg, f, ended := s21Fold(t, evs)
	res, err := p.parseChatResponse([]byte(c.unary()))
	if err != nil {
		t.Fatal(err)
	}
	// The unary answer's content is one string: text the stream sent
	// after the calls is one part with the text before them there.
	got, want := s21Parts(s21JoinText(msg)), s21Parts(s21JoinText(res.Message))
	if c.finish == "length" && c.text != "" && c.textAfterCalls == "" && len(c.calls) > 0 && foldpkg.ValidArguments(*c.calls[len(c.calls)-1].args) {
		// The unary answer cannot tell whether its text came after the
		// last call (cutChatLastCall: a call with text and arguments
		// that parse is whole); the stream knows the call was the last
		// output, and cuts it.
		want[len(want)-1] = strings.Replace(want[len(want)-1], "valid=true", "valid=false", 1)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stream folds to\n%s\nunary\n%s\nbody\n%.2000s", strings.Join(got, "\n"), strings.Join(want, "\n"), body)
	}
	if f.Meta.GetFinishReason() != res.Meta.GetFinishReason() {
		t.Errorf("finish %v, unary %v", f.Meta.GetFinishReason(), res.Meta.GetFinishReason())
	}
	if c.finish == "length" && c.textAfterCalls == "" && len(c.calls) > 0 {
		// The call the token limit stopped in is cut, even when its
		// arguments parse, in both.
		last := c.calls[len(c.calls)-1].id
		if ended[last] != "cut" {
			t.Errorf("call %s ended %q, want cut", last, ended[last])
		}
		for _, pt := range res.Message.GetParts() {
			if tc := pt.GetToolCall(); tc != nil && tc.GetCallId() == last && tc.GetArgumentsValid() && c.text == "" {
				t.Errorf("unary: call %s valid", last)
			}
		}
	}
}

// s21Fold folds events as the gateway does (gatewayFold), reasoning and
// refusals included.
func s21Fold(t *testing.T, evs []*provider.Event) (*llmrelayv1.Message, folded, map[string]string) {
	t.Helper()
	var acc foldpkg.Accumulator
	ended := map[string]string{}
	for _, ev := range evs {
		var err error
		switch ev.Kind {
		case provider.EventText:
			acc.AddPhasedText(ev.Text, ev.Phase)
		case provider.EventRefusal:
			acc.AddRefusal(ev.Text)
		case provider.EventReasoning:
			r := ev.Reasoning
			err = acc.AddReasoning(r.Proto())
		case provider.EventToolCall:
			d := ev.ToolCall
			if ended[d.CallID] != "" {
				t.Fatalf("fragment of call %s after its end", d.CallID)
			}
			err = acc.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: d.CallID, Index: int32(d.Index), Name: d.Name,
				ArgumentsDelta: d.Arguments, Signature: d.Signature})
		case provider.EventToolCallEnd, provider.EventToolCallCut:
			id := ev.ToolCall.CallID
			if ended[id] != "" {
				t.Fatalf("call %s ended twice", id)
			}
			tc, idx := acc.ToolCall(id)
			if tc == nil {
				t.Fatalf("end of unknown call %s", id)
			}
			ended[id] = "end"
			if ev.Kind == provider.EventToolCallCut {
				ended[id] = "cut"
				tc.ArgumentsValid = false
			}
			err = acc.AddToolCallDone(&llmrelayv1.ToolCallDone{Index: idx, ToolCall: tc})
		}
		if err != nil {
			t.Fatalf("fold: %v", err)
		}
	}
	return acc.Message(), foldEvents(t, evs), ended
}

// s21Collect reads a stream to its end (at most a million events).
func s21Collect(t *testing.T, s provider.Stream) ([]*provider.Event, error) {
	t.Helper()
	defer s.Close()
	var evs []*provider.Event
	for range 1 << 20 {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatal("stream does not end")
	return nil, nil
}

// s21JoinText is m with its text parts joined into the first one's place.
func s21JoinText(m *llmrelayv1.Message) *llmrelayv1.Message {
	out := &llmrelayv1.Message{Role: m.GetRole()}
	var text *llmrelayv1.Part
	for _, p := range m.GetParts() {
		if _, ok := p.GetKind().(*llmrelayv1.Part_Text); ok {
			if text == nil {
				text = proto.Clone(p).(*llmrelayv1.Part)
				out.Parts = append(out.Parts, text)
			} else {
				text.Kind = &llmrelayv1.Part_Text{Text: text.GetText() + p.GetText()}
			}
			continue
		}
		out.Parts = append(out.Parts, p)
	}
	return out
}
