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

// formatThoughtSignature is the Reasoning.format of Gemini's thought
// signature given as a thought_signature key of the message (Venice's
// gemini-3-8-flash: testdata/real_venice_gemini38_tool_stream_2.http),
// which goes back as that key (request.go), where the same signature
// through Venice's OpenRouter-style models comes as a reasoning_details
// entry (formatGemini) and goes back so. Venice names no format for the
// key; this one names the key.
const formatThoughtSignature = "thought_signature"

// formatReasoningOpaque is the Reasoning.format of GitHub Copilot's
// reasoning state (reasoning_opaque on the message or the finish chunk's
// delta: testdata/real_talkcody_copilot_gemini3_stream.http), which goes
// back to Copilot as reasoning_opaque beside the block's text as
// reasoning_text, as anomalyco/opencode's Copilot provider sends them
// (packages/opencode/src/provider/sdk/copilot/chat/convert-to-openai-compatible-chat-messages.ts).
const formatReasoningOpaque = "reasoning_opaque"

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
	pieces, _, warnings = reasoningPiecesFrom(m)
	return pieces, warnings
}

// Where a reasoning piece's text came from (reasoningPiecesFrom), besides
// a reasoning_details entry's position.
const (
	fromField     = -1 // reasoning_content or reasoning
	fromThinking  = -2 // Mistral's thinking parts of content
	fromSignature = -3 // the message's thought_signature (Venice)
)

// reasoningPiecesFrom is reasoningPieces, with where each piece came from:
// the position of its reasoning_details entry, fromField or fromThinking.
func reasoningPiecesFrom(m *respMessage) (pieces []provider.ReasoningDelta, from []int, warnings []string) {
	pieces, from, warnings = reasoningTextPieces(m)
	if m.ThoughtSignature != "" {
		// The signature of the message's thought (block 0: Venice's
		// Gemini gives its thinking, if any, as reasoning_content), after
		// its text.
		pieces = append(pieces, provider.ReasoningDelta{Signature: m.ThoughtSignature, Format: formatThoughtSignature})
		from = append(from, fromSignature)
	}
	if m.ReasoningOpaque != "" {
		// Copilot's reasoning state, of the block its reasoning_text
		// gave (0), after the text.
		pieces = append(pieces, provider.ReasoningDelta{Signature: m.ReasoningOpaque, Format: formatReasoningOpaque})
		from = append(from, fromSignature)
	}
	return pieces, from, warnings
}

// reasoningTextPieces is reasoningPiecesFrom without the message's
// thought_signature.
func reasoningTextPieces(m *respMessage) (pieces []provider.ReasoningDelta, from []int, warnings []string) {
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
					from = append(from, i)
				}
			}
			return pieces, from, warnings
		}
	}
	text, src := deref(m.ReasoningContent), fromField
	if text == "" {
		text = deref(m.Reasoning)
	}
	if text == "" {
		// GitHub Copilot's reasoning_text (opencode's Copilot provider
		// reads it so); a surrogate pair cut between two chunks of it is
		// not joined (the reasoning_content and reasoning fields' are).
		text = deref(m.ReasoningText)
	}
	if text == "" {
		text, src = thinkingText(m.Content), fromThinking
	}
	if text != "" {
		pieces = append(pieces, provider.ReasoningDelta{Text: text})
		from = append(from, src)
	}
	return pieces, from, warnings
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

// mayHoldThinking reports whether content is an array that may hold
// reasoning parts (thinkingText): Mistral's "thinking" parts or the
// "reasoning" parts of Databricks' model serving.
func mayHoldThinking(content json.RawMessage) bool {
	return isContentArray(content) && (bytes.Contains(content, []byte(`"thinking"`)) || bytes.Contains(content, []byte(`"reasoning"`)))
}

// summaryTexts reads a "reasoning" content part's summary: the text of
// each of its entries ({"type":"summary_text","text":…}), in order.
func summaryTexts(summary json.RawMessage) []json.RawMessage {
	var entries []struct {
		Text json.RawMessage `json:"text"`
	}
	if json.Unmarshal(summary, &entries) != nil {
		return nil
	}
	texts := make([]json.RawMessage, 0, len(entries))
	for _, e := range entries {
		if len(e.Text) > 0 && e.Text[0] == '"' {
			texts = append(texts, e.Text)
		}
	}
	return texts
}

// thinkingText is the reasoning some servers put in content, an array of
// typed parts: Mistral's reasoning models a "thinking" part holding text
// chunks ({"type":"thinking","thinking":[{"type":"text","text":"..."}]})
// or a string; Databricks' model serving (gpt-oss) a "reasoning" part
// holding a summary ({"type":"reasoning","summary":[{"type":
// "summary_text","text":"..."}]}, one per stream delta and one before the
// text part in a unary answer: pydantic-ai's cassettes,
// testdata/real_pyd_databricks_*), its entries' texts joined as sent.
// contentText skips these parts.
func thinkingText(content json.RawMessage) string {
	if !mayHoldThinking(content) {
		return ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Thinking json.RawMessage `json:"thinking"`
		Summary  json.RawMessage `json:"summary"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "reasoning" {
			for _, t := range summaryTexts(p.Summary) {
				var s string
				if json.Unmarshal(t, &s) == nil {
					b.WriteString(s)
				}
			}
			continue
		}
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

// joinedToken is the quoted JSON string whose text is the texts of the
// quoted tokens toks one after another (each token's escapes are whole, so
// the inner parts concatenate to a valid string, and a surrogate pair cut
// between two of them is one pair again, a character's bytes cut between
// two of them one character); nil when none of them has a surrogate
// escape or bytes that are not UTF-8 (provider.SurrogateJoin then takes
// the decoded text).
func joinedToken(toks []json.RawMessage) []byte {
	var out []byte
	for _, t := range toks {
		if len(t) >= 2 && t[0] == '"' && provider.MayCutCharacter(t) {
			out = []byte{'"'}
			break
		}
	}
	if out == nil {
		return nil
	}
	for _, t := range toks {
		if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
			out = append(out, t[1:len(t)-1]...)
		}
	}
	return append(out, '"')
}

// contentTokens is the quoted token of a content array's text (what
// contentText reads: its parts' text strings, in order) and of its
// thinking text (what thinkingText reads), each nil when it has no
// surrogate escape and is valid UTF-8 (provider.MayCutCharacter), or
// content is not an array.
func contentTokens(content json.RawMessage) (text, thinking []byte) {
	if !isContentArray(content) || !provider.MayCutCharacter(content) {
		return nil, nil
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     json.RawMessage `json:"text"`
		Refusal  json.RawMessage `json:"refusal"`
		Thinking json.RawMessage `json:"thinking"`
		Summary  json.RawMessage `json:"summary"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return nil, nil
	}
	var texts, thoughts []json.RawMessage
	for _, p := range parts {
		switch {
		case p.Type == "reasoning":
			thoughts = append(thoughts, summaryTexts(p.Summary)...)
		case len(p.Text) > 0 && string(p.Text) != "null":
			texts = append(texts, p.Text)
		case len(p.Refusal) > 0 && string(p.Refusal) != "null":
		case p.Type == "thinking":
			if len(p.Thinking) > 0 && p.Thinking[0] == '"' {
				thoughts = append(thoughts, p.Thinking)
				continue
			}
			var chunks []struct {
				Text json.RawMessage `json:"text"`
			}
			if json.Unmarshal(p.Thinking, &chunks) == nil {
				for _, c := range chunks {
					thoughts = append(thoughts, c.Text)
				}
			}
		}
	}
	return joinedToken(texts), joinedToken(thoughts)
}

// detailTokens is the quoted tokens of the text (or summary) of each
// reasoning_details entry, by position; nil when it has no surrogate
// escape and is valid UTF-8 (provider.MayCutCharacter).
func detailTokens(details json.RawMessage) []json.RawMessage {
	if !provider.MayCutCharacter(details) {
		return nil
	}
	var v []struct {
		Type    string          `json:"type"`
		Text    json.RawMessage `json:"text"`
		Summary json.RawMessage `json:"summary"`
	}
	if json.Unmarshal(details, &v) != nil {
		return nil
	}
	out := make([]json.RawMessage, len(v))
	for i, d := range v {
		switch d.Type {
		case detailText:
			out[i] = d.Text
		case detailSummary:
			out[i] = d.Summary
		}
	}
	return out
}
