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
	thinkOpen      = "<think>"
	thinkClose     = "</think>"
	reasoningOpen  = "<reasoning>"
	reasoningClose = "</reasoning>"
	thinkSpace     = " \t\r\n"
)

// ThinkDialect is the inline reasoning markup a server writes.
type ThinkDialect uint8

const (
	// ThinkDefault: one "<think>" block opening the content.
	ThinkDefault ThinkDialect = iota
	// ThinkBlocks: one or more blocks opening the content, each
	// "<reasoning>…</reasoning>" or "<think>…</think>", with only
	// whitespace between them. AWS Bedrock's OpenAI-compatible endpoint
	// writes gpt-oss's reasoning so (CherryHQ/cherry-studio#10225: "in
	// multiple <reasoning> labels"; testdata/dialect_bedrock_* of the
	// openai package). The blocks' texts are the reasoning, joined
	// unchanged; the whitespace between two blocks is markup and dropped;
	// what follows the last block is the text, unchanged.
	ThinkBlocks
)

// openTag matches s against the dialect's opening tags: the tag it opens
// with and its closing tag, or partial when s may still grow into one.
func openTag(s string, multi bool) (open, closing string, partial bool) {
	if strings.HasPrefix(s, thinkOpen) {
		return thinkOpen, thinkClose, false
	}
	partial = len(s) < len(thinkOpen) && strings.HasPrefix(thinkOpen, s)
	if multi {
		if strings.HasPrefix(s, reasoningOpen) {
			return reasoningOpen, reasoningClose, false
		}
		partial = partial || len(s) < len(reasoningOpen) && strings.HasPrefix(reasoningOpen, s)
	}
	return "", "", partial
}

// SplitThink splits a message's content into its leading think block and
// the text after it; ok is false when the content does not open with one.
func SplitThink(content string) (reasoning, text string, ok bool) {
	return SplitThinkDialect(content, ThinkDefault)
}

// SplitThinkDialect is SplitThink for the dialect's markup.
func SplitThinkDialect(content string, d ThinkDialect) (reasoning, text string, ok bool) {
	multi := d == ThinkBlocks
	rest := content
	for {
		trimmed := strings.TrimLeft(rest, thinkSpace)
		open, closing, _ := openTag(trimmed, multi)
		if open == "" {
			if !ok {
				return "", content, false
			}
			return reasoning, rest, true
		}
		ok = true
		body := trimmed[len(open):]
		i := strings.Index(body, closing)
		if i < 0 {
			return reasoning + body, "", true
		}
		reasoning += body[:i]
		rest = body[i+len(closing):]
		if !multi {
			return reasoning, rest, true
		}
	}
}

// ThinkParts is the unary form: the content's Reasoning part (if
// it opens with a think block) and its Text part.
func ThinkParts(content string) []*llmrelayv1.Part {
	return ThinkPartsDialect(content, ThinkDefault)
}

// ThinkPartsDialect is ThinkParts for the dialect's markup.
func ThinkPartsDialect(content string, d ThinkDialect) []*llmrelayv1.Part {
	reasoning, text, ok := SplitThinkDialect(content, d)
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
// still be an opening tag (or, inside a block, its closing tag split
// across deltas), so that what it emits matches SplitThinkDialect of the
// whole. The zero value is ready for ThinkDefault; NewThinkSplitter makes
// one for another dialect.
// Its state is one pointer (a stream struct stays in its size class): nil
// before any content, the shared thinkPlain once the content is plain
// text, and a thinkHeld of its own while something is held back.
type ThinkSplitter struct {
	held *thinkHeld
}

// NewThinkSplitter returns a splitter for the dialect's markup.
func NewThinkSplitter(d ThinkDialect) ThinkSplitter {
	if d == ThinkBlocks {
		return ThinkSplitter{held: &thinkHeld{multi: true}}
	}
	return ThinkSplitter{}
}

type thinkHeld struct {
	state   thinkState
	multi   bool   // ThinkBlocks
	closing string // inside a block: its closing tag
	pending string
}

type thinkState uint8

const (
	thinkUndecided thinkState = iota // nothing but whitespace or a prefix of an opening tag since the start or the last block
	thinkInside                      // inside a block
	thinkText                        // plain text from here on
)

// thinkPlain is the state of every stream whose content is plain text;
// it is never written.
var thinkPlain = &thinkHeld{state: thinkText}

// set records the state and the held-back content.
func (t *ThinkSplitter) set(state thinkState, closing, pending string) {
	switch {
	case state == thinkText:
		t.held = thinkPlain // nothing is held back in plain text
	case t.held == nil || t.held == thinkPlain:
		t.held = &thinkHeld{state: state, closing: closing, pending: pending}
	default:
		t.held.state, t.held.closing, t.held.pending = state, closing, pending
	}
}

// Content takes one content delta and returns the reasoning and text it
// releases, in that order (reasoning comes first in the content too).
func (t *ThinkSplitter) Content(delta string) (reasoning, text string) {
	if t.held == thinkPlain {
		return "", delta
	}
	state, p, multi, closing := thinkUndecided, delta, false, ""
	if h := t.held; h != nil {
		state, p, multi, closing = h.state, h.pending+delta, h.multi, h.closing
	}
	for {
		if state == thinkUndecided {
			trimmed := strings.TrimLeft(p, thinkSpace)
			open, c, partial := openTag(trimmed, multi)
			switch {
			case open != "":
				p, closing, state = trimmed[len(open):], c, thinkInside
			case partial:
				t.set(thinkUndecided, "", p) // still undecided
				return reasoning, ""
			default:
				t.set(thinkText, "", "")
				return reasoning, p
			}
		}
		i := strings.Index(p, closing)
		if i < 0 {
			keep := len(p) - partialSuffix(p, closing)
			t.set(thinkInside, closing, p[keep:])
			return reasoning + p[:keep], ""
		}
		reasoning += p[:i]
		p = p[i+len(closing):]
		if !multi {
			t.set(thinkText, "", "")
			return reasoning, p
		}
		state = thinkUndecided // another block may follow
	}
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
