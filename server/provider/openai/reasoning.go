package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// OpenRouter's reasoning_details entry types.
const (
	detailText      = "reasoning.text"
	detailSummary   = "reasoning.summary"
	detailEncrypted = "reasoning.encrypted"
)

// OpenRouter's reasoning_details formats whose signature is opaque state of
// its own (reasoning.encrypted), not a signature of the text.
const (
	formatOpenAI = "openai-responses-v1"
	formatGemini = "google-gemini-v1"
)

// reasoningDetail is one entry of OpenRouter's reasoning_details: a text
// block (text, signature), a summary, or encrypted reasoning (data). Index
// is the block's position in the answer (stream pieces of one block share
// it).
type reasoningDetail struct {
	Type      string   `json:"type"`
	Text      *string  `json:"text"`
	Summary   *string  `json:"summary"`
	Data      *string  `json:"data"`
	Signature *string  `json:"signature"`
	ID        *string  `json:"id"`
	Format    *string  `json:"format"`
	Index     *flexInt `json:"index"`
}

// The inline reasoning markup a server's content opens with (the
// provider package's ThinkDefault dialect), for sending a think block back
// where it came from (replayThinkTags).
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// textChunk and thinkingChunk are Mistral's content chunks of an assistant
// turn sent back with its reasoning (replayThinkingChunks): the shape its
// answers have ({"type":"thinking","thinking":[{"type":"text","text":…}],
// "closed":true}, read by thinkingText).
type textChunk struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinkingChunk struct {
	Type     string      `json:"type"`
	Thinking []textChunk `json:"thinking"`
	Closed   bool        `json:"closed"`
}

// maxReasoningIndex bounds a provider's reasoning block index.
const maxReasoningIndex = 1023

// reasoningPieces reads the reasoning of a message or delta. OpenRouter
// sends its reasoning twice, as plain text in reasoning and as typed
// blocks in reasoning_details: the blocks win, because they carry the
// signatures. Otherwise reasoning_content (DeepSeek, vLLM) or reasoning
// (Ollama's /v1, newer vLLM, which may send both with the same text) is
// one unsigned block, index 0. Empty pieces are left out.
func reasoningPieces(m *respMessage) (pieces []provider.ReasoningDelta, warnings []string) {
	if isPresent(m.ReasoningDetails) {
		var details []reasoningDetail
		if err := json.Unmarshal(m.ReasoningDetails, &details); err != nil {
			warnings = append(warnings, "reasoning_details is not an array of reasoning blocks; ignored")
		} else {
			for i, d := range details {
				p := provider.ReasoningDelta{Index: i, ID: deref(d.ID), Signature: deref(d.Signature), Format: deref(d.Format)}
				if d.Index != nil {
					if *d.Index < 0 || *d.Index > maxReasoningIndex {
						warnings = append(warnings, fmt.Sprintf("reasoning_details[%d]: index %d out of range; ignored", i, *d.Index))
						continue
					}
					p.Index = int(*d.Index)
				}
				switch d.Type {
				case detailText:
					p.Text = deref(d.Text)
				case detailSummary:
					p.Text = deref(d.Summary)
				case detailEncrypted:
					p.Redacted, p.Signature = true, deref(d.Data)
				default:
					warnings = append(warnings, fmt.Sprintf("reasoning_details[%d]: type %q not supported; ignored", i, d.Type))
					continue
				}
				if p.Text != "" || p.Signature != "" || p.ID != "" || p.Redacted {
					pieces = append(pieces, p)
				}
			}
			return pieces, warnings
		}
	}
	text := deref(m.ReasoningContent)
	if text == "" {
		text = deref(m.Reasoning)
	}
	if text == "" {
		text = thinkingText(m.Content)
	}
	if text != "" {
		pieces = append(pieces, provider.ReasoningDelta{Text: text})
	}
	return pieces, warnings
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// reasoningParts merges the pieces of a unary answer into Reasoning parts,
// one per block index, in order of first appearance.
func reasoningParts(pieces []provider.ReasoningDelta) []*llmrelayv1.Part {
	var parts []*llmrelayv1.Part
	byIndex := map[int]*llmrelayv1.Reasoning{}
	for _, p := range pieces {
		r := byIndex[p.Index]
		if r == nil {
			r = &llmrelayv1.Reasoning{}
			byIndex[p.Index] = r
			parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}})
		}
		r.Text += p.Text
		r.Signature += p.Signature
		r.Redacted = r.Redacted || p.Redacted
		if p.ID != "" {
			r.Id = p.ID
		}
		if p.Format != "" {
			r.Format = p.Format
		}
	}
	for _, part := range parts {
		// A summary with encrypted reasoning at its index is readable:
		// redacted means the provider withheld the text (as fold does).
		if r := part.GetReasoning(); r.Text != "" {
			r.Redacted = false
		}
	}
	return parts
}

// thinkingText is the reasoning Mistral's reasoning models put in
// content: an array whose "thinking" parts hold text chunks
// ({"type":"thinking","thinking":[{"type":"text","text":"..."}]}) or a
// string. contentText skips these parts.
func thinkingText(content json.RawMessage) string {
	if !isContentArray(content) || !bytes.Contains(content, []byte(`"thinking"`)) {
		return ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "thinking" {
			continue
		}
		var s string
		if json.Unmarshal(p.Thinking, &s) == nil {
			b.WriteString(s)
			continue
		}
		var chunks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(p.Thinking, &chunks) == nil {
			for _, c := range chunks {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

// isContentArray reports whether content is a JSON array (typed parts).
func isContentArray(content json.RawMessage) bool {
	t := bytes.TrimSpace(content)
	return len(t) > 0 && t[0] == '['
}
