package openai

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 23 (compat): the Chat Completions adapter as OpenAI-compatible
// servers speak it (testdata/README.md, "Round 23 (compat)"). Every
// expectation is read off the recording by hand.

// r23TextEvents counts the stream's text events.
func r23TextEvents(evs []*provider.Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			n++
		}
	}
	return n
}

// TestRound23TogetherPrefilledStream: Qwen3-235B-A22B-Thinking-2507 on
// Together streamed as Together streams it unparsed (hand-built from the
// unary recording's content, real_maruel_together_qwen_thinking_sqrt_1,
// in the chunk shape of the streamed recording): the reasoning as content
// with no opening tag, "</think>" as a delta of its own, "\n\n", then the
// call. **Bug:** the reasoning and the tag were relayed as the answer's
// text, where the unary answer of the same content has a reasoning part.
// Now held until "</think>" and relayed as reasoning: the fold is the
// unary answer's (reasoning, "\n\n", the call).
func TestRound23TogetherPrefilledStream(t *testing.T) {
	t.Parallel()
	const model = "Qwen/Qwen3-235B-A22B-Thinking-2507"
	evs, f, _ := mgbStream(t, "dialect_together_qwen_thinking_prefilled_stream", mgbTogether, "Tue, 16 Dec 2025 18:52:25 GMT", mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	parts := f.Message.GetParts()
	if len(parts) != 3 || parts[1].GetText() != "\n\n" {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning().GetText()
	if !strings.HasPrefix(r, "Okay, the user wants me to calculate the square root of 132413 using the square_root tool.") ||
		!strings.HasSuffix(r, "I'll generate the tool call as specified.\n") || strings.Contains(r, "think>") {
		t.Errorf("reasoning %q", r)
	}
	if c := parts[2].GetToolCall(); c.GetCallId() != "call_rieia71q8ppw5oy99g6mzius" || c.GetArguments() != `{"number":132413}` {
		t.Errorf("call %v", c)
	}
	if n := r23TextEvents(evs); n != 1 {
		t.Errorf("%d text events, want the one after the tag", n)
	}
	// The unary answer of the same content (the recording the stream was
	// built from) has the same parts.
	res, _ := mgbUnary(t, "real_maruel_together_qwen_thinking_sqrt_1", mgbTogether, "Mon, 15 Dec 2025 23:04:53 GMT", mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if u := res.Message.GetParts(); len(u) != 3 || u[0].GetReasoning().GetText() != r || u[1].GetText() != "\n\n" {
		t.Errorf("unary parts %v", u)
	}
	r22Meta(t, f.Meta, "oPQa7Zt-zqrih-c119906b18e7667e", "", model, 1765912345,
		&llmrelayv1.Usage{InputTokens: 212, OutputTokens: 250, TotalTokens: 462}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
}

// TestRound23TogetherThinkingToolInReasoning: the same model, square_root
// required, streamed (maruel/genai's GenStream-Tools-SquareRoot-1
// cassette): Together's tool parser cut a call out of the middle of the
// unparsed reasoning ("…the argument is", then the call
// call_pb7lcurlt7gd9p3qfippu8re {"number":132413} with finish
// "tool_calls"), and the content went on after that finish (" {\"number\":
// 132413}. So the tool_call JSON should be …that should do it.\n</think>\n\n")
// to a second finish "stop" (stop token 151645) and the usage (212 in,
// 364 out, Together's top-level reasoning_tokens 0). **Bug (round 23
// chat2):** the held reasoning was released as text when the call came,
// and the rest after the call was text, "</think>" included: text, call,
// text, where the unary answer of the same content (prefilledThink) is
// reasoning, "\n\n", call. Now the call's events are held with the
// content (beforeCalls), the first finish does not end the block, and the
// call comes at the second finish: the fold is the unary answer's.
func TestRound23TogetherThinkingToolInReasoning(t *testing.T) {
	t.Parallel()
	const model = "Qwen/Qwen3-235B-A22B-Thinking-2507"
	const date = "Mon, 15 Dec 2025 23:04:50 GMT"
	evs, f, body := mgbStream(t, "real_maruel_together_qwen_thinking_sqrt_stream_1", mgbTogether, date, mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if body["stream"] != true || body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 3 {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning().GetText()
	if !strings.HasPrefix(r, "Okay, let me see. The user wants me") || !strings.Contains(r, `the function name is square_root, the argument is {"number": 132413}. So the tool_call JSON`) ||
		!strings.HasSuffix(r, "Alright, that should do it.\n") || strings.Contains(r, "think>") {
		t.Errorf("reasoning %q", r)
	}
	if txt := parts[1].GetText(); txt != "\n\n" {
		t.Errorf("text %q", txt)
	}
	if c := parts[2].GetToolCall(); c.GetCallId() != "call_pb7lcurlt7gd9p3qfippu8re" || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` {
		t.Errorf("call %v", c)
	}
	// Nothing of the block is relayed as text, and the call comes after
	// the text that follows the block.
	if n := r23TextEvents(evs); n != 1 {
		t.Errorf("%d text events, want the one after the tag", n)
	}
	for i, ev := range evs {
		if ev.Kind == provider.EventToolCall && (i == 0 || evs[i-1].Kind == provider.EventReasoning) {
			t.Errorf("the call before the text after the block: %v", evs)
			break
		}
	}
	// The unary rule (prefilledThink, then the think split) on the
	// stream's whole content, read off the recording: the same reasoning
	// and text.
	var content strings.Builder
	for _, line := range strings.Split(string(providertest.Load(t, td("real_maruel_together_qwen_thinking_sqrt_stream_1.http")).Body), "\n") {
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(d), &c) == nil && len(c.Choices) > 0 {
			content.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if ur, ut, _ := provider.SplitThinkDialect(prefilledThink(model, content.String(), false), provider.ThinkDefault); ur != r || ut != "\n\n" {
		t.Errorf("unary rule: %q, %q", ur, ut)
	}
	r22Meta(t, f.Meta, "oPNE1Bw-zqrih-9ae995098d79a2ea", "", model, 1765839889,
		&llmrelayv1.Usage{InputTokens: 212, OutputTokens: 364, TotalTokens: 576}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "stop")
	mgbTogetherRateLimit(t, f.Meta.GetRateLimit(), date, 19, 2*time.Second)
}

// TestRound23TogetherThinkingStopStream: the same model asked to talk
// about Canada with stop ["is"] (maruel/genai's GenStream-Stop cassette):
// an empty first delta, then "Okay, the user wants me to talk about Canada
// in great detail, starting with \"Canada " (the reasoning, unparsed, cut
// by the stop string before any "</think>"), finish stop, the usage alone
// (22 in, 19 out), "reasoning": null on every delta. Held, then released
// at the finish as text, as the unary answer has it: one text event
// before the finish.
func TestRound23TogetherThinkingStopStream(t *testing.T) {
	t.Parallel()
	const model = "Qwen/Qwen3-235B-A22B-Thinking-2507"
	req := r22Ask(model, "Talk about Canada in great details. Start with: Canada is")
	req.Options.Stop = []string{"is"}
	evs, f, body := mgbStream(t, "real_maruel_together_qwen_thinking_stop_stream", mgbTogether, "Mon, 15 Dec 2025 21:19:05 GMT", req)
	if s, _ := body["stop"].([]any); len(s) != 1 || s[0] != "is" {
		t.Errorf("request %v", body)
	}
	if p := f.Message.GetParts(); len(p) != 1 || p[0].GetText() != `Okay, the user wants me to talk about Canada in great detail, starting with "Canada ` {
		t.Errorf("parts %v", p)
	}
	if n := r23TextEvents(evs); n != 1 {
		t.Errorf("%d text events, want one", n)
	}
	for i, ev := range evs {
		if ev.Kind == provider.EventText && (i+1 >= len(evs) || evs[i+1].Kind != provider.EventMeta || evs[i+1].Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP) {
			t.Errorf("the text is not released right before the finish: %v", evs[i+1:])
		}
	}
	r22Meta(t, f.Meta, "oPMfVMN-zqrih-9ae8fa2ade13a2f0", "", model, 1765833545,
		&llmrelayv1.Usage{InputTokens: 22, OutputTokens: 19, TotalTokens: 41}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
}
