package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22: system messages inside the conversation. Claude Opus 4.8 and
// Claude Fable 5 take a message of role "system" among the messages, right
// after a user turn (pydantic-ai's lazy-advertisement cassettes record the
// live API answering such requests on both); the adapter used to move
// every system message after the first turn into the system prompt, which
// changes what it applies to and the cached prefix.

// r22LazyTools is the tool list of the recorded requests (a client tool, a
// deferred one, the BM25 tool search; from turn 2 on the deferred tool the
// capability added), through extra_body: the contract has no deferred
// loading.
func r22LazyTools(t *testing.T, name string) string {
	t.Helper()
	b, err := json.Marshal(r22Recorded(t, name)["tools"])
	if err != nil {
		t.Fatal(err)
	}
	return `{"tool_choice":{"type":"auto"},"tools":` + string(b) + `}`
}

// r22LazyEdit writes the recorded request as ours sends it: the system
// prompt as the string, a tool result's one text block as the string, and
// the mid-conversation system message's tool_addition block (a tool change
// the contract cannot express) as the text our test sends in its place.
func r22LazyEdit(note string) func(m map[string]any) {
	return func(m map[string]any) {
		blocks, _ := m["system"].([]any)
		b, _ := blocks[0].(map[string]any)
		m["system"] = b["text"]
		msgs, _ := m["messages"].([]any)
		for _, rm := range msgs {
			msg, _ := rm.(map[string]any)
			content, _ := msg["content"].([]any)
			for _, rb := range content {
				b, _ := rb.(map[string]any)
				if inner, ok := b["content"].([]any); ok && b["type"] == "tool_result" && len(inner) == 1 {
					tb, _ := inner[0].(map[string]any)
					b["content"] = tb["text"]
				}
			}
			if msg["role"] == "system" {
				msg["content"] = []any{map[string]any{"type": "text", "text": note}}
			}
		}
	}
}

// r22LazyCase is one of pydantic-ai's lazy-advertisement cassettes: three
// turns of one conversation, each answer's id, calls and usage.
type r22LazyCase struct {
	prefix, model string
	// text1 is the text before the first call ("": none).
	text1                     string
	call1, call2, msg1, msg2  string
	msg3                      string
	in1, out1, in2, out2, in3 int32
}

// TestRound22SystemMessageInConversation: claude-opus-4-8 (May 2026) and
// claude-fable-5 (June 2026), unary, three turns of pydantic-ai's lazy tool
// advertisement each. Turn 1: load_capability {"id": "refunds"} (caller
// direct; Opus writes a text before it), 0 thinking tokens. Turn 2 adds,
// after the tool result, a message of role system at the end of the
// conversation (pydantic-ai's holds a tool_addition; the API took it and
// called the tool it added: lookup_refund_policy {"order_id": "A-4417"}).
// Turn 3 keeps that system message between the tool result and the
// assistant turn that followed it, then the second result; the answer
// "A-4417: refund allowed". Ours keeps a system message of the contract at
// the same place, as a system message holding its text: each request is
// the recorded one but for that message's content (text for the
// tool_addition), the system prompt as a string and the tool results' one
// text block as the string.
func TestRound22SystemMessageInConversation(t *testing.T) {
	t.Parallel()
	const q = "First load the refunds capability. Then call lookup_refund_policy for order A-4417. Return only the tool result."
	const note = "The refunds capability is loaded: lookup_refund_policy is available."
	extended := map[string]string{
		"service_tier":           `"standard"`,
		provider.ExtUsageDetails: `{"inference_geo":"global"}`,
	}
	for _, tc := range []r22LazyCase{
		{prefix: "real_pyd_anthropic_lazy_advertisement_live_", model: "claude-opus-4-8",
			text1: "I'll load the refunds capability first, then look up the refund policy.",
			call1: "toolu_01GqcuZ6yt7Xcywhp2ru46rB", call2: "toolu_019edAdThk36saBnqym8gYok",
			msg1: "msg_011Cdi3HLmA4aiXqDpT75zVk", msg2: "msg_011Cdi3HVqbx49ji3X2LzBk6", msg3: "msg_011Cdi3HckpwkuVWHCPm9oeU",
			in1: 920, out1: 72, in2: 1118, out2: 58, in3: 1191},
		{prefix: "real_pyd_anthropic_fable_5_lazy_advertisement_live_", model: "claude-fable-5",
			call1: "toolu_01XmJE8Wk2ZCjf7dBzXKKSpA", call2: "toolu_01G4mu99ugqimgJ2i7jZQ5xh",
			msg1: "msg_011CdgbYhPmSPPow1wRfkKj5", msg2: "msg_011CdgbYvRbSLRoFL4h3PPX4", msg3: "msg_011CdgbZE4FQRLGBeQRhkRAY",
			in1: 887, out1: 50, in2: 1063, out2: 58, in3: 1136},
	} {
		t.Run(tc.model, func(t *testing.T) {
			p := tc.prefix
			blocks, _ := r22Recorded(t, p+"1")["system"].([]any)
			sb, _ := blocks[0].(map[string]any)
			system, _ := sb["text"].(string)
			build := func(name string, more ...*llmrelayv1.Message) *provider.Request {
				req := r22System(r21Request(tc.model, q, 4096, 0), system)
				req.Messages = append(req.Messages, more...)
				req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: r22LazyTools(t, name)}
				return req
			}
			var parts1 []*llmrelayv1.Part
			if tc.text1 != "" {
				parts1 = append(parts1, text(tc.text1))
			}
			parts1 = append(parts1, toolCallValid(tc.call1, "load_capability", `{"id":"refunds"}`))
			res1, srv := r22Unary(t, p+"1", build(p+"1"))
			checkLLMWant(t, p+"1", res1.Message, res1.Meta, llmWant{
				parts: parts1, responseID: tc.msg1, model: tc.model,
				finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
				usage: usageOf(tc.in1, tc.out1, 0, 0, 0), extended: extended,
			})
			r22SameRequest(t, srv.Last(t).Body, p+"1", r22LazyEdit(note))

			loop := []*llmrelayv1.Message{
				res1.Message,
				msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(tc.call1, "{}", false)),
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(note)),
			}
			res2, srv := r22Unary(t, p+"2", build(p+"2", loop...))
			checkLLMWant(t, p+"2", res2.Message, res2.Meta, llmWant{
				parts:      []*llmrelayv1.Part{toolCallValid(tc.call2, "lookup_refund_policy", `{"order_id":"A-4417"}`)},
				responseID: tc.msg2, model: tc.model,
				finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
				usage: usageOf(tc.in2, tc.out2, 0, 0, 0), extended: extended,
			})
			r22SameRequest(t, srv.Last(t).Body, p+"2", r22LazyEdit(note))

			loop = append(loop, res2.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(tc.call2, "A-4417: refund allowed", false)))
			res3, srv := r22Unary(t, p+"3", build(p+"3", loop...))
			checkLLMWant(t, p+"3", res3.Message, res3.Meta, llmWant{
				parts:      []*llmrelayv1.Part{text("A-4417: refund allowed")},
				responseID: tc.msg3, model: tc.model,
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: usageOf(tc.in3, 12, 0, 0, 0), extended: extended,
			})
			r22SameRequest(t, srv.Last(t).Body, p+"3", r22LazyEdit(note))
		})
	}
}

// TestRound22SystemMessagePlacement: where the API takes a system message
// in the conversation (right after a user turn, before an assistant turn or
// at the end, never two in a row) it stays there on the models that take
// one; anywhere else, and on every other model, it goes to the system
// prompt with a warning, as before.
func TestRound22SystemMessagePlacement(t *testing.T) {
	t.Parallel()
	sys := func(s string) *llmrelayv1.Message { return msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(s)) }
	user := func(s string) *llmrelayv1.Message { return msgOf(llmrelayv1.Role_ROLE_USER, text(s)) }
	asst := func(s string) *llmrelayv1.Message { return msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text(s)) }
	for _, tc := range []struct {
		name, model string
		msgs        []*llmrelayv1.Message
		// want is the sent messages and system prompt, compact.
		wantMsgs, wantSystem string
		warn                 string
	}{
		{"after a user turn, at the end", "claude-opus-4-8", []*llmrelayv1.Message{sys("S0"), user("u1"), asst("a1"), user("u2"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"a1","type":"text"}],"role":"assistant"},` +
				`{"content":[{"text":"u2","type":"text"}],"role":"user"},{"content":[{"text":"S1","type":"text"}],"role":"system"}]`, `"S0"`, ""},
		{"two in a row are one", "claude-fable-5", []*llmrelayv1.Message{user("u1"), sys("S1"), sys("S2"), asst("a1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"S1","type":"text"},{"text":"S2","type":"text"}],"role":"system"},` +
				`{"content":[{"text":"a1","type":"text"}],"role":"assistant"}]`, `null`, ""},
		{"after an assistant turn", "claude-opus-4-8", []*llmrelayv1.Message{user("u1"), asst("a1"), sys("S1"), user("u2")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"a1","type":"text"}],"role":"assistant"},` +
				`{"content":[{"text":"u2","type":"text"}],"role":"user"}]`, `"S1"`, "messages[2]: a system message after an assistant turn"},
		{"followed by a user turn", "claude-opus-4-8-20260528", []*llmrelayv1.Message{user("u1"), sys("S1"), user("u2")},
			`[{"content":[{"text":"u1","type":"text"},{"text":"u2","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message followed by a user turn"},
		{"a model without it", "claude-opus-4-7", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message after the conversation began"},
		// Round 24: the Claude 5 models take it (LangChain's profiles; Sonnet
		// 5.5's live answer, real_do_system_update_sonnet55_stream).
		{"Fable 5.1", "claude-fable-5-1", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"S1","type":"text"}],"role":"system"}]`, `null`, ""},
		{"Sonnet 5", "claude-sonnet-5", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"S1","type":"text"}],"role":"system"}]`, `null`, ""},
		{"Opus 5 through a gateway", "anthropic/claude-opus-5", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"S1","type":"text"}],"role":"system"}]`, `null`, ""},
		{"Haiku 5.5", "claude-haiku-5-5", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"S1","type":"text"}],"role":"system"}]`, `null`, ""},
		{"Mythos 5", "claude-mythos-5", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"S1","type":"text"}],"role":"system"}]`, `null`, ""},
		{"Sonnet 4.6 has none", "claude-sonnet-4-6", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message after the conversation began"},
		{"Haiku 4.5 has none", "claude-haiku-4-5", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message after the conversation began"},
		{"an id without a version", "claude-mythos-preview", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message after the conversation began"},
		{"a model that is not Claude", "MiniMax-M3", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message after the conversation began"},
		{"a Vertex AI id", "claude-opus-4-8@20260528", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message after the conversation began"},
		{"a Bedrock id", "us.anthropic.claude-opus-4-8-v1:0", []*llmrelayv1.Message{user("u1"), sys("S1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"}]`, `"S1"`, "messages[1]: a system message after the conversation began"},
		{"white space only", "claude-opus-4-8", []*llmrelayv1.Message{user("u1"), sys(" \n"), asst("a1")},
			`[{"content":[{"text":"u1","type":"text"}],"role":"user"},{"content":[{"text":"a1","type":"text"}],"role":"assistant"}]`, `null`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: tc.model, Messages: tc.msgs}
			w, _, warns, err := build(t, req)
			if err != nil {
				t.Fatal(err)
			}
			msgs, _ := json.Marshal(w["messages"])
			system, _ := json.Marshal(w["system"])
			if !sameJSON(t, string(msgs), tc.wantMsgs) || string(system) != tc.wantSystem {
				t.Errorf("messages %s system %s\nwant %s system %s", msgs, system, tc.wantMsgs, tc.wantSystem)
			}
			switch {
			case tc.warn == "" && len(warns) != 0:
				t.Errorf("warnings %q, want none", warns)
			case tc.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.warn)):
				t.Errorf("warnings %q, want one saying %q", warns, tc.warn)
			}
		})
	}
}

// TestRound22SystemMessageEndsToolLoop: a system message ending a request
// that continues a tool loop leaves it a tool loop: with budget thinking
// (thinking_budget_tokens) and an assistant turn that does not begin with
// a thinking block, thinking is still turned off with its warning, as
// without the system message. Adaptive thinking (reasoning_effort on Opus
// 4.8) takes such a turn (real_vercelgw_claude_tool_stream_2) and is kept,
// without a warning. The system message stays last either way.
func TestRound22SystemMessageEndsToolLoop(t *testing.T) {
	t.Parallel()
	for _, budget := range []bool{true, false} {
		req := &provider.Request{
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-opus-4-8",
			Messages: []*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris?")),
				msgOf(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("toolu_01A", "get_weather", `{"city":"Paris"}`)),
				msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01A", "sunny", false)),
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Answer in French.")),
			},
			Tools:   []*llmrelayv1.Tool{weatherTool(t)},
			Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH},
		}
		if budget {
			req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED
			req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](2048)}}}
		}
		w, _, warns, err := build(t, req)
		if err != nil {
			t.Fatal(err)
		}
		th, sent := w["thinking"].(map[string]any)
		switch {
		case budget && (sent || len(warns) != 1 || !strings.Contains(warns[0], "thinking not enabled")):
			t.Errorf("budget: thinking %v warnings %q, want it left out with its warning", w["thinking"], warns)
		case !budget && (!sent || th["type"] != "adaptive" || len(warns) != 0):
			t.Errorf("adaptive: thinking %v warnings %q, want adaptive thinking kept, no warning", w["thinking"], warns)
		}
		msgs, _ := w["messages"].([]any)
		if last, _ := msgs[len(msgs)-1].(map[string]any); last["role"] != "system" {
			t.Errorf("last message %v, want the system message", last)
		}
	}
}
