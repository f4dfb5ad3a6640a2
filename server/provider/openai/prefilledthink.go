package openai

import (
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

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
	if hasReasoning || !thinkingModel(model) {
		return content
	}
	return provider.PrefilledThink(content)
}

// thinkingModel reports whether the model's name says Thinking (in any
// case). It allocates nothing and keeps a small frame: a stream asks it
// at its first content, at the deepest point of its goroutine.
func thinkingModel(model string) bool {
	const word = "thinking"
	for i := 0; i+len(word) <= len(model); i++ {
		if strings.EqualFold(model[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// maxPrefilledHold bounds what a stream of a Thinking model holds back
// while its content may still be a prefilled think block (the splitter's
// Prefill): past it, the content is relayed as text. 256 KiB is some
// 60,000 tokens of English: a stream holds at most that much more than
// any other.
const maxPrefilledHold = 256 << 10

// warnPrefillBound says a Thinking model's content passed maxPrefilledHold
// while it was held as a possible prefilled think block: it was relayed
// as text from there, where the unary answer of the same content reads a
// block that closes later as reasoning.
const warnPrefillBound = "a Thinking model's content passed 256 KiB with no </think>: the content held as a possible think block is relayed as text, though a </think> later would make it reasoning in a unary answer"
