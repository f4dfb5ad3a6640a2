package ollama

import (
	"encoding/json"

	"github.com/llmrelay/llmrelay/internal/jsonscan"
)

// decodeLineFast decodes a stream line that carries text, in the shape
// Ollama sends it,
//
//	{"model":"...","created_at":"...","message":{"role":"...","content":"..."},"done":false}
//
// without reflection (encoding/json's decoding of it was the largest cost
// per relayed chunk). It accepts only input that json.Unmarshal decodes to
// the same chatResponse (FuzzDecodeLineFast): these keys in this order,
// whitespace between tokens, strings jsonscan accepts. Anything else
// returns false for the encoding/json path. The message is written to
// msg, which the caller owns (handleLine keeps nothing of it); its Content
// is the quoted token within line.
func decodeLineFast(line []byte, c *chatResponse, msg *respMessage) bool {
	s := jsonscan.Scanner{B: line}
	var scratch []byte
	if !s.Lits(`{`, `"model"`, `:`) {
		return false
	}
	model, _, ok := s.String(&scratch, "")
	if !ok || !s.Lits(`,`, `"created_at"`, `:`) {
		return false
	}
	created, _, ok := s.String(&scratch, "")
	if !ok || !s.Lits(`,`, `"message"`, `:`, `{`, `"role"`, `:`) {
		return false
	}
	role, _, ok := s.String(&scratch, "assistant")
	if !ok || !s.Lits(`,`, `"content"`, `:`) {
		return false
	}
	_, raw, ok := s.String(&scratch, "")
	if !ok || !s.Lits(`}`, `,`, `"done"`, `:`, `false`, `}`) || !s.End() {
		return false
	}
	*msg = respMessage{Role: role, Content: json.RawMessage(raw)}
	*c = chatResponse{Model: model, CreatedAt: created, Message: msg}
	return true
}
