package gemini

import (
	"bytes"
	"encoding/json"

	"github.com/llmrelay/llmrelay/internal/jsonscan"
)

// decodeChunkFast decodes a stream chunk that carries text, in the shape
// Gemini sends it,
//
//	{"candidates": [{"content": {"parts": [{"text": "..."}],"role": "model"},["finishReason": "...",]"index": N}],
//	 "usageMetadata": {COUNTS},"modelVersion": "...","responseId": "..."}
//
// where COUNTS are the integer token counts the adapter reads and
// promptTokensDetails' modality counts, without reflection (encoding/json's
// decoding of it was the largest cost per relayed chunk). It accepts only
// input that json.Unmarshal decodes to the same generateContentResponse
// (FuzzDecodeChunkFast): these keys in this order, whitespace between
// tokens, integers and strings jsonscan accepts. Anything else returns
// false for the encoding/json path. The model version and response id are
// shared with prev's (the previous chunk; may be nil) when equal.
func decodeChunkFast(data []byte, w, prev *generateContentResponse, scratch *[]byte) bool {
	var prevVersion, prevID string
	if prev != nil {
		prevVersion, prevID = prev.ModelVersion, prev.ResponseID
	}
	s := jsonscan.Scanner{B: data}
	if !s.Lits(`{`, `"candidates"`, `:`, `[`, `{`, `"content"`, `:`, `{`, `"parts"`, `:`, `[`, `{`, `"text"`, `:`) {
		return false
	}
	text, _, ok := s.String(scratch, "")
	if !ok || !s.Lits(`}`, `]`, `,`, `"role"`, `:`) {
		return false
	}
	role, _, ok := s.String(scratch, "model")
	if !ok || !s.Lits(`}`, `,`) {
		return false
	}
	var c candidate
	if s.Lit(`"finishReason"`) {
		if !s.Lit(`:`) {
			return false
		}
		if c.FinishReason, _, ok = s.String(scratch, "STOP"); !ok || !s.Lit(`,`) {
			return false
		}
	}
	if !s.Lits(`"index"`, `:`) {
		return false
	}
	if c.Index, ok = s.Int(); !ok || !s.Lits(`}`, `]`, `,`, `"usageMetadata"`, `:`) {
		return false
	}
	var u usageMetadata
	start := s.I
	if !usageFast(&s, &u, scratch) {
		return false
	}
	// The object's bytes, as encoding/json hands them to UnmarshalJSON:
	// the details no counter holds are read from them.
	u.Raw = append(json.RawMessage(nil), bytes.TrimLeft(s.B[start:s.I], " \t\r\n")...)
	if !s.Lits(`,`, `"modelVersion"`, `:`) {
		return false
	}
	version, _, ok := s.String(scratch, prevVersion)
	if !ok || !s.Lits(`,`, `"responseId"`, `:`) {
		return false
	}
	id, _, ok := s.String(scratch, prevID)
	if !ok || !s.Lit(`}`) || !s.End() {
		return false
	}
	c.Content = &respContent{Role: role, Parts: []respPart{{Text: &text}}}
	*w = generateContentResponse{Candidates: []candidate{c}, UsageMetadata: &u, ModelVersion: version, ResponseID: id}
	return true
}

// usageFast reads a usageMetadata object: the counts the adapter reads,
// and promptTokensDetails / candidatesTokensDetails as arrays of
// {"modality": "...","tokenCount": N} (which it does not read).
func usageFast(s *jsonscan.Scanner, u *usageMetadata, scratch *[]byte) bool {
	if !s.Lit(`{`) {
		return false
	}
	if s.Lit(`}`) {
		return true
	}
	for {
		// Keys are matched as written (no escapes, exact case), without
		// allocating them.
		var dst *int64
		switch {
		case s.Lit(`"promptTokenCount"`):
			dst = &u.PromptTokenCount
		case s.Lit(`"candidatesTokenCount"`):
			dst = &u.CandidatesTokenCount
		case s.Lit(`"thoughtsTokenCount"`):
			dst = &u.ThoughtsTokenCount
		case s.Lit(`"cachedContentTokenCount"`):
			dst = &u.CachedContentTokenCount
		case s.Lit(`"toolUsePromptTokenCount"`):
			dst = &u.ToolUsePromptTokenCount
		case s.Lit(`"totalTokenCount"`):
			dst = &u.TotalTokenCount
		case s.Lit(`"promptTokensDetails"`), s.Lit(`"candidatesTokensDetails"`):
			if !s.Lit(`:`) || !modalityCounts(s, scratch) {
				return false
			}
			if s.Lit(`}`) {
				return true
			}
			if !s.Lit(`,`) {
				return false
			}
			continue
		default:
			return false
		}
		if !s.Lit(`:`) {
			return false
		}
		n, ok := s.Int()
		if !ok {
			return false
		}
		*dst = int64(n)
		if s.Lit(`}`) {
			return true
		}
		if !s.Lit(`,`) {
			return false
		}
	}
}

// modalityCounts reads [{"modality": "...","tokenCount": N}, ...].
func modalityCounts(s *jsonscan.Scanner, scratch *[]byte) bool {
	if !s.Lit(`[`) {
		return false
	}
	if s.Lit(`]`) {
		return true
	}
	for {
		if !s.Lits(`{`, `"modality"`, `:`) {
			return false
		}
		if _, _, ok := s.String(scratch, "TEXT"); !ok || !s.Lits(`,`, `"tokenCount"`, `:`) {
			return false
		}
		if _, ok := s.Int(); !ok || !s.Lit(`}`) {
			return false
		}
		if s.Lit(`]`) {
			return true
		}
		if !s.Lit(`,`) {
			return false
		}
	}
}
