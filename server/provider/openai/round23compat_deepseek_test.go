package openai

import (
	"strings"
	"testing"
	"unicode/utf8"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// r23Reasoning is a reasoning part.
func r23Reasoning(s string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: s}}}
}

// TestRound23DeepSeekToolTurnAnswerReasoning: DeepSeek's Thinking Mode
// guide: between two user messages where the model called tools, the
// reasoning_content of the assistant messages between them must be passed
// back in every later request (400 "The `reasoning_content` in the
// thinking mode must be passed back to the API" otherwise, as
// MoonshotAI/kimi-cli#2141 and openclaw/openclaw#73417 quote it for the
// answer after the tool results); between two user messages without tool
// calls it is ignored. **Bug:** only the turns with calls got it: the
// answer after the results (user, call, result, answer, user) went
// without, which DeepSeek refuses. Now every assistant turn of a user
// turn with calls has it (its reasoning, or "" when it had none); the
// turns of a user turn without calls still leave it out, with the
// warning that says so.
func TestRound23DeepSeekToolTurnAnswerReasoning(t *testing.T) {
	t.Parallel()
	req := r22mgaTools("deepseek-v4-flash", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, false,
		msgOf(llmrelayv1.Role_ROLE_USER, text("Hi")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, r23Reasoning("greet back"), text("Hello")),
		msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion)),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, r23Reasoning("call the tool"), toolCallPart("call_00_r23a", "square_root", `{"number":132413}`)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_00_r23a", "363.89")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, r23Reasoning("the tool said 363.89"), text("363.89")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("And of 4?")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("call_00_r23b", "square_root", `{"number":4}`)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_00_r23b", "2")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("2")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Thanks")),
	)
	b, warns, err := newHostProvider(t, r22mgaDeepSeek, "http://unused").buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	body := r20Request(t, b)
	want := map[int]any{1: nil, 3: "call the tool", 5: "the tool said 363.89", 7: "", 9: ""}
	for i, w := range want {
		m := r22mgaSent(t, body, 11, i)
		got, ok := m["reasoning_content"]
		if (w == nil) != !ok || (ok && got != w) {
			t.Errorf("message %d: reasoning_content %v (present %v), want %v", i, got, ok, w)
		}
	}
	if len(warns) != 1 || warns[0] != "1 reasoning part(s) of earlier assistant turns not sent: reasoning_content is sent back on tool-call turns only" {
		t.Errorf("warnings %v", warns)
	}

	// Moonshot's replay is unchanged: the tool-call turns only.
	b, _, err = newHostProvider(t, "https://api.moonshot.ai/v1", "http://unused").buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if m := r22mgaSent(t, r20Request(t, b), 11, 5); m["reasoning_content"] != nil {
		t.Errorf("moonshot: %v", m)
	}
}

// TestRound23DeepSeekToolTokensStream: the text of
// real_maruel_deepseek_reasoner_sqrt_text_call (a JSON call, then
// <｜tool▁call▁end｜><｜tool▁calls▁end｜>) streamed in deltas cut at every
// character of the first token: one warning, whatever the cut, the text
// relayed whole; a text with no such token (a "<｜" alone, "<｜tool" at
// the end) has none.
func TestRound23DeepSeekToolTokensStream(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const call = "```json\n{\"function\":\"square_root\",\"arguments\":{\"number\":132413}}\n```"
	const answer = call + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
	chunk := func(s string) string {
		return "data: " + providertest.MustJSON(map[string]any{"id": "r23ds", "object": "chat.completion.chunk", "model": "deepseek-reasoner",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}, "finish_reason": nil}}}) + "\n\n"
	}
	end := "data: {\"id\":\"r23ds\",\"object\":\"chat.completion.chunk\",\"model\":\"deepseek-reasoner\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	run := func(pieces ...string) (string, []string) {
		var b strings.Builder
		for _, s := range pieces {
			b.WriteString(chunk(s))
		}
		evs, _, err := collect(t, streamFrom(p, b.String()+end))
		if err != nil {
			t.Fatal(err)
		}
		f := accFold(t, evs)
		var b2 strings.Builder
		for _, part := range f.Message.GetParts() {
			b2.WriteString(part.GetText())
		}
		return b2.String(), f.Meta.GetWarnings()
	}
	for cut := len(call); cut <= len(call)+len(dsToolToken); cut++ {
		if !utf8.RuneStart(answer[cut]) {
			continue // a delta holds whole characters
		}
		a, w := run(answer[:cut], answer[cut:])
		if a != answer || len(w) != 1 || w[0] != warnDeepSeekToolText {
			t.Fatalf("cut at %d: answer %q, warnings %v", cut, a, w)
		}
	}
	for _, plain := range [][]string{{"a <｜", "b"}, {"x", "<｜tool"}, {"<｜tool", " ▁"}} {
		if _, w := run(plain...); len(w) != 0 {
			t.Errorf("%q: warnings %v", plain, w)
		}
	}
}
