package gemini

import (
	"bytes"
	"encoding/json"

	"github.com/llmrelay/llmrelay/internal/jsonscan"
)

// fastChunk is the storage decodeChunkFast decodes into, reused between
// the chunks of one stream: a text chunk is then decoded without
// allocating anything but its text (and its usage when that changed).
// What it returns is valid until the next call; only usage outlives it.
type fastChunk struct {
	w       generateContentResponse
	cand    [1]candidate
	content respContent
	part    [1]respPart
	text    string
	// usage is the last usageMetadata decoded; it is never modified, so
	// a chunk whose usage has the same bytes shares it.
	usage *usageMetadata
	// version and id are the previous chunk's modelVersion and responseId,
	// shared when equal (the stream sets them after every chunk).
	version, id string
	scratch     []byte
}

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
// false for the encoding/json path. The chunk is decoded into f's storage.
func decodeChunkFast(data []byte, f *fastChunk) (*generateContentResponse, bool) {
	scratch := &f.scratch
	s := jsonscan.Scanner{B: data}
	if !s.Run(`{"candidates": [{"content": {"parts": [{"text": `, `{`, `"candidates"`, `:`, `[`, `{`, `"content"`, `:`, `{`, `"parts"`, `:`, `[`, `{`, `"text"`, `:`) {
		return nil, false
	}
	text, _, ok := s.String(scratch, "")
	if !ok || !s.Run(`}],"role": `, `}`, `]`, `,`, `"role"`, `:`) {
		return nil, false
	}
	role, _, ok := s.String(scratch, "model")
	if !ok || !s.Lits(`}`, `,`) {
		return nil, false
	}
	var finish string
	if s.Lit(`"finishReason"`) {
		if !s.Lit(`:`) {
			return nil, false
		}
		if finish, _, ok = s.String(scratch, "STOP"); !ok || !s.Lit(`,`) {
			return nil, false
		}
	}
	if !s.Lits(`"index"`, `:`) {
		return nil, false
	}
	index, ok := s.Int()
	if !ok || !s.Run(`}],"usageMetadata": `, `}`, `]`, `,`, `"usageMetadata"`, `:`) {
		return nil, false
	}
	for s.I < len(s.B) && (s.B[s.I] == ' ' || s.B[s.I] == '\t' || s.B[s.I] == '\r' || s.B[s.I] == '\n') {
		s.I++
	}
	usage := f.usage
	if usage != nil && bytes.HasPrefix(s.B[s.I:], usage.Raw) {
		// The same bytes as the last usage decoded, which was a whole
		// object: the same counts, shared.
		s.I += len(usage.Raw)
	} else {
		var u usageMetadata
		start := s.I
		if !usageFast(&s, &u, scratch) {
			return nil, false
		}
		// The object's bytes, as encoding/json hands them to
		// UnmarshalJSON: the details no counter holds are read from them.
		usage = new(usageMetadata)
		*usage = u
		usage.Raw = append(json.RawMessage(nil), s.B[start:s.I]...)
	}
	if !s.Run(`,"modelVersion": `, `,`, `"modelVersion"`, `:`) {
		return nil, false
	}
	version, _, ok := s.String(scratch, f.version)
	if !ok || !s.Run(`,"responseId": `, `,`, `"responseId"`, `:`) {
		return nil, false
	}
	id, _, ok := s.String(scratch, f.id)
	if !ok || !s.Lit(`}`) || !s.End() {
		return nil, false
	}
	if f.w.Candidates == nil {
		// The links between the parts of the storage, made once: only
		// the values below change between chunks (assigning whole
		// structs costs bulk write barriers while the GC runs).
		f.part[0].Text = &f.text
		f.content.Parts = f.part[:]
		f.cand[0].Content = &f.content
		f.w.Candidates = f.cand[:]
	}
	f.usage = usage
	f.text = text
	f.content.Role = role
	f.cand[0].FinishReason, f.cand[0].Index = finishReasonName(finish), index
	f.w.UsageMetadata, f.w.ModelVersion, f.w.ResponseID = usage, version, id
	return &f.w, true
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
