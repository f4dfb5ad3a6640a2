package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestThinkingForTurn: with thinking on, Anthropic refuses a request that
// continues a tool loop whose assistant turn began without a thinking
// block ("a final `assistant` message must start with a thinking block");
// such a turn came from another provider (a fallback mid-loop) or lost its
// reasoning. The request goes without thinking, with a warning, and
// thinking's refusals (a temperature other than 1) no longer apply. A turn
// that began with signed thinking keeps it, later steps of the turn
// without it included, and a new question needs none.
func TestThinkingForTurn(t *testing.T) {
	p := newTestProvider(t, "http://unused.invalid")
	signed := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: "Weather first.", Signature: "EqQBCkYIBxgCKkC-turn", Provider: "anthropic"}}}
	foreign := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Id: "rs_turn1", Signature: "gAAAA-turn", Provider: "openai"}}}
	user := func(s string) *llmrelayv1.Message { return msgOf(llmrelayv1.Role_ROLE_USER, text(s)) }
	asst := func(parts ...*llmrelayv1.Part) *llmrelayv1.Message {
		return msgOf(llmrelayv1.Role_ROLE_ASSISTANT, parts...)
	}
	result := func(id string) *llmrelayv1.Message {
		return msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(id, "18 °C", false))
	}
	cases := []struct {
		name     string
		msgs     []*llmrelayv1.Message
		thinking bool
	}{
		{"a turn from another provider", []*llmrelayv1.Message{user("Weather in Paris?"), asst(foreign, toolCallPart("call_t1", "get_weather", `{"city":"Paris"}`)), result("call_t1")}, false},
		{"a turn without its reasoning", []*llmrelayv1.Message{user("Weather in Paris?"), asst(text("Checking."), toolCallPart("toolu_t2", "get_weather", `{"city":"Paris"}`)), result("toolu_t2")}, false},
		{"a turn that began with signed thinking", []*llmrelayv1.Message{user("Weather in Paris?"), asst(signed, toolCallPart("toolu_t3", "get_weather", `{"city":"Paris"}`)), result("toolu_t3")}, true},
		{"a later step of a turn that began with it", []*llmrelayv1.Message{user("Weather in Paris and Rome?"),
			asst(signed, toolCallPart("toolu_t4", "get_weather", `{"city":"Paris"}`)), result("toolu_t4"),
			asst(toolCallPart("toolu_t5", "get_weather", `{"city":"Rome"}`)), result("toolu_t5")}, true},
		{"a new question after a turn without thinking", []*llmrelayv1.Message{user("Weather in Paris?"),
			asst(toolCallPart("toolu_t6", "get_weather", `{"city":"Paris"}`)), result("toolu_t6"), asst(text("18 °C.")), user("And Rome?")}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			temp := 0.2
			if tc.thinking {
				temp = 1
			}
			req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-sonnet-4-5", Messages: tc.msgs, Tools: []*llmrelayv1.Tool{weatherTool(t)},
				Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM, Temperature: &temp}}
			body, _, warnings, err := p.buildRequest(req, false)
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Thinking  json.RawMessage `json:"thinking"`
				MaxTokens int32           `json:"max_tokens"`
			}
			if err := json.Unmarshal(body, &w); err != nil {
				t.Fatal(err)
			}
			warned := false
			for _, s := range warnings {
				warned = warned || strings.HasPrefix(s, "thinking not enabled: the request continues a tool loop")
			}
			if got := w.Thinking != nil; got != tc.thinking || warned == tc.thinking {
				t.Errorf("thinking %s, warnings %q", w.Thinking, warnings)
			}
			if !tc.thinking && w.MaxTokens != p.defaultMaxTokens {
				t.Errorf("max_tokens %d, want the default %d (no thinking budget added)", w.MaxTokens, p.defaultMaxTokens)
			}
		})
	}
}

// TestWhitespaceTextLeftOut: Anthropic refuses a message whose text is
// only whitespace ("messages: text content blocks must contain
// non-whitespace text"; LibreChat-AI/agents#124 measured it: [" "] and
// ["\n"] refused, [" ", "real"] taken). A web search answer whose only text
// block was "\n", sent back, wedged every later turn. Whitespace-only text
// and refusal parts, and system text, are left out; a message left with
// nothing is not sent (its warning), and text with other characters is
// sent as it is, white space included.
func TestWhitespaceTextLeftOut(t *testing.T) {
	p := newTestProvider(t, "http://unused.invalid")
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-sonnet-4-5", Tools: []*llmrelayv1.Tool{weatherTool(t)},
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(" \n")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("\n"), toolCallPart("toolu_ws1", "get_weather", `{"city":"Paris"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_ws1", "18 °C", false)),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("\t ")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("  Thanks.\n")),
		}}
	body, _, warnings, err := p.buildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	if w.System != nil {
		t.Errorf("system %s sent", w.System)
	}
	var got []string
	for _, m := range w.Messages {
		for _, c := range m.Content {
			got = append(got, m.Role+":"+c.Type+":"+c.Text)
		}
	}
	if want := "user:text:Weather in Paris?|assistant:tool_use:|user:tool_result:|user:text:  Thanks.\n"; strings.Join(got, "|") != want {
		t.Errorf("blocks %q, want %q", strings.Join(got, "|"), want)
	}
	found := false
	for _, s := range warnings {
		found = found || strings.HasPrefix(s, "messages[4]: empty message not sent")
	}
	if !found {
		t.Errorf("warnings %q: the whitespace-only assistant message not reported", warnings)
	}
}

// TestPlainTextErrorEvent: a proxy in front of Anthropic (Envoy) ends a
// stream with an error event whose data is plain text. Its text is the
// error's message and the error is Unavailable (retried before the first
// byte, as a reset is); it was lost to "last error event incomplete", or
// to "decode error event" when more followed. A JSON error event cut short
// is still a cut stream. Hand-built from the text Envoy writes.
func TestPlainTextErrorEvent(t *testing.T) {
	const envoy = "upstream connect error or disconnect/reset before headers. reset reason: overflow"
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01PlainTextErr\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n"
	for _, tc := range []struct {
		name, body, want string
		kind             provider.Kind
	}{
		{"last", start + "event: error\ndata: " + envoy + "\n\n", envoy, provider.KindUnavailable},
		{"last, without its blank line", start + "event: error\ndata: " + envoy, envoy, provider.KindUnavailable},
		{"followed by more", start + "event: error\ndata: " + envoy + "\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n", envoy, provider.KindUnavailable},
		{"a JSON error event cut short", start + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_er", "last error event incomplete", provider.KindUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := streamFromBody([]byte(tc.body))
			var err error
			for err == nil {
				_, err = s.Recv()
			}
			var pe *provider.Error
			if !errors.As(err, &pe) || !strings.Contains(pe.Message, tc.want) || (tc.kind != provider.KindUnknown && pe.Kind != tc.kind) {
				t.Errorf("error %v (%T), want %s containing %q", err, err, tc.kind, tc.want)
			}
		})
	}
}
