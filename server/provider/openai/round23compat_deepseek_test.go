package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
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
