package provider

import (
	"bytes"
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
	thoughtOpen    = "<thought>"
	thoughtClose   = "</thought>"
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
	// ThinkThought: one block opening the content, "<thought>…</thought>"
	// or "<think>…</think>". Google's OpenAI-compatible endpoint asked for
	// thought summaries (extra_body google.thinking_config
	// include_thoughts) writes them so: the first thought delta opens
	// with "<thought>", the answer's first delta with "</thought>"
	// (testdata/dialect_gemini_compat_thought_stream.http of the openai
	// package).
	ThinkThought
)

// openTag matches s against the dialect's opening tags: the tag it opens
// with and its closing tag, or partial when s may still grow into one.
func openTag(s string, d ThinkDialect) (open, closing string, partial bool) {
	if strings.HasPrefix(s, thinkOpen) {
		return thinkOpen, thinkClose, false
	}
	partial = len(s) < len(thinkOpen) && strings.HasPrefix(thinkOpen, s)
	var o, c string
	switch d {
	case ThinkBlocks:
		o, c = reasoningOpen, reasoningClose
	case ThinkThought:
		o, c = thoughtOpen, thoughtClose
	default:
		return "", "", partial
	}
	if strings.HasPrefix(s, o) {
		return o, c, false
	}
	return "", "", partial || len(s) < len(o) && strings.HasPrefix(o, s)
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
		open, closing, _ := openTag(trimmed, d)
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
	if d != ThinkDefault {
		return ThinkSplitter{held: &thinkHeld{dialect: d}}
	}
	return ThinkSplitter{}
}

type thinkHeld struct {
	state   thinkState
	dialect ThinkDialect
	closing string // inside a block: its closing tag
	pending string
	// prefilled (Prefill): the content held, the bytes of it already
	// looked at for a tag, and the most it holds before it gives up.
	buf            []byte
	scanned, bound int
}

type thinkState uint8

const (
	thinkUndecided thinkState = iota // nothing but whitespace or a prefix of an opening tag since the start or the last block
	thinkInside                      // inside a block
	thinkText                        // plain text from here on
	thinkPrefilled                   // all held since the start: a prefilled block's reasoning until its "</think>" (Prefill)
)

// thinkPlain is the state of every stream whose content is plain text;
// it is never written.
var thinkPlain = &thinkHeld{state: thinkText}

// thinkPlainBound is thinkPlain after a prefilled hold passed its bound
// (Prefill), until PrefillBoundPassed reports it; never written either.
var thinkPlainBound = &thinkHeld{state: thinkText}

// set records the state and the held-back content.
func (t *ThinkSplitter) set(state thinkState, closing, pending string) {
	switch {
	case state == thinkText:
		t.held = thinkPlain // nothing is held back in plain text
	case t.held == nil || t.held == thinkPlain || t.held == thinkPlainBound:
		t.held = &thinkHeld{state: state, closing: closing, pending: pending}
	default:
		t.held.state, t.held.closing, t.held.pending = state, closing, pending
	}
}

// PrefilledThink gives back content whose think block's opening tag the
// chat template wrote instead of the model: a "</think>" with no
// "<think>" before it gets the missing tag in front, so that
// SplitThinkDialect reads the bytes before it as reasoning. Content
// without "</think>" is returned as it is: nothing in it tells a block
// that was never closed from an answer of a server that parses the
// reasoning out. Which answers may have a prefilled block is the
// caller's (openai's prefilledThink: the model's name says Thinking and
// the answer has no reasoning of its own).
func PrefilledThink(content string) string {
	i := strings.Index(content, thinkClose)
	if i < 0 || strings.Contains(content[:i], thinkOpen) {
		return content
	}
	return thinkOpen + content
}

// Prefill makes the splitter, before any content, read the content as
// PrefilledThink does: it holds all of it until it sees "</think>", then
// releases the bytes before the tag as reasoning and goes on as after any
// block. Content where "<think>" comes first is read as without Prefill;
// content that ends (FlushPrefilled, then Flush) or grows past bound bytes
// without "</think>" is released as text, and the content after it is
// plain text. So the
// stream agrees with the unary answer for every content shorter than
// bound, at the cost of relaying nothing of a prefilled block until it
// closes.
func (t *ThinkSplitter) Prefill(bound int) {
	d := ThinkDefault
	if t.held != nil {
		d = t.held.dialect
	}
	t.held = &thinkHeld{state: thinkPrefilled, dialect: d, bound: bound}
}

// prefilled takes a delta in the thinkPrefilled state. The held bytes
// grow in place and only those not looked at yet (and a tag's length
// before them) are searched, so a long block held in many small deltas
// costs its length, not its square. Apart from Content, which every
// content delta of every stream goes through: its frame stays small.
//
//go:noinline
func (t *ThinkSplitter) prefilled(delta string) (reasoning, text string) {
	h := t.held
	h.buf = append(h.buf, delta...)
	from := max(0, h.scanned-(len(thinkClose)-1))
	iOpen := bytes.Index(h.buf[from:], []byte(thinkOpen))
	iClose := bytes.Index(h.buf[from:], []byte(thinkClose))
	switch {
	case iOpen >= 0 && (iClose < 0 || iOpen < iClose):
		// Not a prefilled block: read as the dialect reads any content.
		p := string(h.buf)
		h.state, h.buf, h.scanned = thinkUndecided, nil, 0
		return t.Content(p)
	case iClose >= 0:
		// The block's end: what came before it is its reasoning.
		p := string(h.buf)
		h.state, h.closing, h.buf, h.scanned = thinkInside, thinkClose, nil, 0
		return t.Content(p)
	case len(h.buf) > h.bound:
		p := string(h.buf)
		t.held = thinkPlainBound // plain text, the bound's passing to report
		return "", p
	}
	h.scanned = len(h.buf)
	return "", ""
}

// Content takes one content delta and returns the reasoning and text it
// releases, in that order (reasoning comes first in the content too).
func (t *ThinkSplitter) Content(delta string) (reasoning, text string) {
	if t.held == thinkPlain || t.held == thinkPlainBound {
		return "", delta
	}
	if t.held != nil && t.held.state == thinkPrefilled {
		return t.prefilled(delta)
	}
	state, p, d, closing := thinkUndecided, delta, ThinkDefault, ""
	if h := t.held; h != nil {
		state, p, d, closing = h.state, h.pending+delta, h.dialect, h.closing
	}
	multi := d == ThinkBlocks
	for {
		if state == thinkUndecided {
			trimmed := strings.TrimLeft(p, thinkSpace)
			open, c, partial := openTag(trimmed, d)
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
// block it is reasoning, before a decision it is text. A prefilled block
// (Prefill) is released by FlushPrefilled, not here.
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

// FlushPrefilled releases what a splitter told to Prefill holds at the end
// of the content (or before a tool call, or reasoning the server parsed):
// a prefilled block never closed is text, and the content after it plain
// text. "" when it holds none. Apart from Flush, which the adapters inline
// into frames an idle stream's stack keeps (server's TestIdleStreamStack).
//
//go:noinline
func (t *ThinkSplitter) FlushPrefilled() string {
	h := t.held
	if h == nil || h.state != thinkPrefilled || len(h.buf) == 0 {
		return ""
	}
	p := string(h.buf)
	t.set(thinkText, "", "")
	return p
}

// Prefilling reports whether the splitter holds content as a possible
// prefilled think block (Prefill), its "</think>" not seen yet.
func (t *ThinkSplitter) Prefilling() bool {
	return t.held != nil && t.held.state == thinkPrefilled && len(t.held.buf) > 0
}

// PrefillBoundPassed reports, once, that a prefilled hold grew past its
// bound without "</think>" (Prefill) and was released as text: the
// caller warns, since the unary answer of the same content would read a
// block closed later as reasoning.
func (t *ThinkSplitter) PrefillBoundPassed() bool {
	if t.held != thinkPlainBound {
		return false
	}
	t.held = thinkPlain
	return true
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
