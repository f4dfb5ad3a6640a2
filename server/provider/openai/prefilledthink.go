package openai

import "strings"

// prefilledThink gives back content whose think block's opening tag the
// chat template wrote instead of the model. Qwen3's "Thinking" models
// (Qwen3-235B-A22B-Thinking-2507 and its siblings) are served with a
// template that ends the prompt with "<think>\n", so a server without a
// reasoning parser answers "reasoning…\n</think>\n\ntext": a closing tag
// and no opening one (Together, maruel/genai's cassette,
// testdata/real_maruel_together_qwen_thinking_sqrt_1.http). The missing
// tag is put back when the model's name says Thinking, the answer has no
// reasoning of its own (no reasoning field) and its content holds a
// "</think>" with no "<think>" before it; the think splitter then reads
// it as any other leading block. An answer cut before "</think>" is left
// as text: without the tag nothing tells it from an answer of a server
// that parses the reasoning out.
func prefilledThink(model, content string, hasReasoning bool) string {
	if hasReasoning || !strings.Contains(strings.ToLower(model), "thinking") {
		return content
	}
	i := strings.Index(content, thinkClose)
	if i < 0 || strings.Contains(content[:i], thinkOpen) {
		return content
	}
	return thinkOpen + content
}
