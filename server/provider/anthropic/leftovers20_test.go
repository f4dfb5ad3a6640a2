package anthropic

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// l20Calls renders a message's tool calls as "id name args valid".
func l20Calls(m *llmrelayv1.Message) string {
	var out []string
	for _, p := range m.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			v := "invalid"
			if tc.GetArgumentsValid() {
				v = "valid"
			}
			out = append(out, tc.GetCallId()+" "+tc.GetName()+" "+tc.GetArguments()+" "+v)
		}
	}
	return strings.Join(out, " | ")
}

// TestToolUseWithoutIDLeftovers20: a tool_use block without an id (which
// Anthropic never sends; a compatible server or proxy may) is keyed by a
// made id with a warning, unary and streamed alike: the stream refused the
// whole answer as a bad response, the unary answer kept the call with an
// empty id, which no tool result can answer. A later block sent with the
// id made for an earlier one is keyed by another made id in both; two
// blocks sent with one id are still refused by both.
func TestToolUseWithoutIDLeftovers20(t *testing.T) {
	t.Parallel()
	type block struct{ id, name, input string }
	unary := func(bs ...block) string {
		var c []string
		for _, b := range bs {
			id := ""
			if b.id != "" {
				id = `"id":"` + b.id + `",`
			}
			c = append(c, `{"type":"tool_use",`+id+`"name":"`+b.name+`","input":`+b.input+`}`)
		}
		return `{"id":"msg_01L20NoIdUnary","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Checking."},` +
			strings.Join(c, ",") + `],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":5}}`
	}
	stream := func(bs ...block) string {
		var b strings.Builder
		b.WriteString(sseEv(`{"type":"message_start","message":{"id":"msg_01L20NoIdStream","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`))
		b.WriteString(textStart(0, ""))
		b.WriteString(textDelta(0, "Checking."))
		b.WriteString(blockStop(0))
		for i, bl := range bs {
			id := ""
			if bl.id != "" {
				id = `"id":"` + bl.id + `",`
			}
			n := string(rune('1' + i))
			b.WriteString(sseEv(`{"type":"content_block_start","index":` + n + `,"content_block":{"type":"tool_use",` + id + `"name":"` + bl.name + `","input":{}}}`))
			b.WriteString(sseEv(`{"type":"content_block_delta","index":` + n + `,"delta":{"type":"input_json_delta","partial_json":` + quote(t, bl.input) + `}}`))
			b.WriteString(blockStop(int(n[0] - '0')))
		}
		b.WriteString(sseEv(`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`))
		b.WriteString(sseEv(`{"type":"message_stop"}`))
		return b.String()
	}
	for _, tc := range []struct {
		name   string
		blocks []block
		calls  string
		warns  []string
	}{
		{"no id", []block{{"", "get_weather", `{"city":"Paris"}`}, {"toolu_01L20b", "get_time", `{"tz":"CET"}`}},
			`call_idx0 get_weather {"city":"Paris"} valid | toolu_01L20b get_time {"tz":"CET"} valid`,
			[]string{"content[1]: tool_use block without an id; keyed as call_idx0"}},
		{"sent id equal to a made one", []block{{"", "get_weather", `{"city":"Paris"}`}, {"call_idx0", "get_time", `{"tz":"CET"}`}},
			`call_idx0 get_weather {"city":"Paris"} valid | call_idx1 get_time {"tz":"CET"} valid`,
			[]string{"content[1]: tool_use block without an id; keyed as call_idx0",
				"content[2]: tool_use block repeats the id call_idx0 made for block 1; keyed as call_idx1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := parseResponse([]byte(unary(tc.blocks...)), http.Header{})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(streamFromBody([]byte(stream(tc.blocks...))))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			f := foldEvents(t, evs)
			for what, got := range map[string]*llmrelayv1.Message{"unary": res.Message, "stream": f.message} {
				if c := l20Calls(got); c != tc.calls {
					t.Errorf("%s calls %q, want %q", what, c, tc.calls)
				}
			}
			for what, m := range map[string]*llmrelayv1.ResponseMeta{"unary": res.Meta, "stream": f.meta} {
				if w := m.GetWarnings(); strings.Join(w, "\n") != strings.Join(tc.warns, "\n") {
					t.Errorf("%s warnings %q, want %q", what, w, tc.warns)
				}
				if m.GetToolCallCount() != 2 && what == "unary" {
					t.Errorf("unary tool_call_count %d", m.GetToolCallCount())
				}
			}
		})
	}
	t.Run("one id twice", func(t *testing.T) {
		t.Parallel()
		blocks := []block{{"toolu_01L20a", "get_weather", `{"city":"Paris"}`}, {"toolu_01L20a", "get_time", `{"tz":"CET"}`}}
		_, uerr := parseResponse([]byte(unary(blocks...)), http.Header{})
		_, serr := collect(streamFromBody([]byte(stream(blocks...))))
		for what, err := range map[string]error{"unary": uerr, "stream": serr} {
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "tool_use blocks 1 and 2 have the same id toolu_01L20a") {
				t.Errorf("%s: %v", what, err)
			}
		}
	})
}
