package provider

import (
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Reasoning models served without a reasoning parser (DeepSeek-R1 or Qwen3
// on vLLM, Nebius, Together, Hugging Face's router, or Ollama before 0.12.5
// without "think") put their reasoning in the content, as a block that
// opens the answer: "<think>…</think>text".
// Only a block that opens the content (after whitespace) is reasoning; a
// "<think>" later in the text is text. The bytes between the tags are the
// reasoning and the bytes after "</think>" the text, both unchanged; an
// answer cut before "</think>" is all reasoning.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// SplitThink splits a message's content into its leading think block and
// the text after it; ok is false when the content does not open with one.
func SplitThink(content string) (reasoning, text string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeft(content, " \t\r\n"), thinkOpen)
	if !found {
		return "", content, false
	}
	if i := strings.Index(rest, thinkClose); i >= 0 {
		return rest[:i], rest[i+len(thinkClose):], true
	}
	return rest, "", true
}

// ThinkParts is the unary form: the content's Reasoning part (if
// it opens with a think block) and its Text part.
func ThinkParts(content string) []*llmrelayv1.Part {
	reasoning, text, ok := SplitThink(content)
	var parts []*llmrelayv1.Part
	if ok && reasoning != "" {
		parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: reasoning}}})
	}
	if text != "" {
		parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: text}})
	}
	return parts
}

// ThinkSplitter is the streamed form: it holds back content while it may
// still be the opening "<think>" (or, inside the block, a "</think>" split
// across deltas), so that what it emits matches SplitThink of the whole. The zero value is ready.
// Its state is one pointer (a stream struct stays in its size class): nil
// before any content, the shared thinkPlain once the content is plain
// text, and a thinkHeld of its own while something is held back.
type ThinkSplitter struct {
	held *thinkHeld
}

type thinkHeld struct {
	state   thinkState
	pending string
}

type thinkState uint8

const (
	thinkUndecided thinkState = iota // nothing but whitespace or a prefix of "<think>" so far
	thinkInside                      // inside the opening think block
	thinkText                        // plain text from here on
)

// thinkPlain is the state of every stream whose content is plain text;
// it is never written.
var thinkPlain = &thinkHeld{state: thinkText}

// set records the state and the held-back content.
func (t *ThinkSplitter) set(state thinkState, pending string) {
	switch {
	case state == thinkText:
		t.held = thinkPlain // nothing is held back in plain text
	case t.held == nil || t.held == thinkPlain:
		t.held = &thinkHeld{state: state, pending: pending}
	default:
		t.held.state, t.held.pending = state, pending
	}
}

// Content takes one content delta and returns the reasoning and text it
// releases, in that order (reasoning comes first in the content too).
func (t *ThinkSplitter) Content(delta string) (reasoning, text string) {
	if t.held == thinkPlain {
		return "", delta
	}
	state, p := thinkUndecided, delta
	if t.held != nil {
		state, p = t.held.state, t.held.pending+delta
	}
	if state == thinkUndecided {
		trimmed := strings.TrimLeft(p, " \t\r\n")
		switch {
		case len(trimmed) < len(thinkOpen) && strings.HasPrefix(thinkOpen, trimmed):
			t.set(thinkUndecided, p) // still undecided
			return "", ""
		case strings.HasPrefix(trimmed, thinkOpen):
			p = trimmed[len(thinkOpen):]
		default:
			t.set(thinkText, "")
			return "", p
		}
	}
	if i := strings.Index(p, thinkClose); i >= 0 {
		t.set(thinkText, "")
		return p[:i], p[i+len(thinkClose):]
	}
	keep := len(p) - partialSuffix(p, thinkClose)
	t.set(thinkInside, p[keep:])
	return p[:keep], ""
}

// Flush releases what is held back at the end of the content: inside the
// block it is reasoning, before a decision it is text.
func (t *ThinkSplitter) Flush() (reasoning, text string) {
	h := t.held
	if h == nil || h == thinkPlain || h.pending == "" {
		return "", ""
	}
	p := h.pending
	h.pending = ""
	if h.state == thinkInside {
		return p, ""
	}
	return "", p
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
