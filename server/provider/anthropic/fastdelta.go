package anthropic

import "github.com/llmrelay/llmrelay/internal/jsonscan"

// decodeTextDeltaFast decodes the event that carries an answer's text, in
// the shape the API sends it,
//
//	{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
//
// without reflection: it is most of the events of a stream, and
// encoding/json's decoding of it was the largest cost per relayed chunk.
// It accepts only input that json.Unmarshal decodes to the same
// streamEvent (FuzzDecodeTextDeltaFast): these keys in this order,
// whitespace between tokens, an integer index, a text jsonscan accepts.
// Anything else returns false for the encoding/json path. The index and
// delta are written to idx and delta, which the caller owns (a stream
// reuses them: blockDelta keeps neither); scratch holds the unescaped
// text between calls.
func decodeTextDeltaFast(data []byte, ev *streamEvent, idx *int, delta *streamDelta, scratch *[]byte) bool {
	s := jsonscan.Scanner{B: data}
	if !s.Lits(`{`, `"type"`, `:`, `"content_block_delta"`, `,`, `"index"`, `:`) {
		return false
	}
	n, ok := s.Int()
	if !ok || !s.Lits(`,`, `"delta"`, `:`, `{`, `"type"`, `:`, `"text_delta"`, `,`, `"text"`, `:`) {
		return false
	}
	text, _, ok := s.String(scratch, "")
	if !ok || !s.Lits(`}`, `}`) || !s.End() {
		return false
	}
	*idx = n
	*delta = streamDelta{Type: "text_delta", Text: text}
	*ev = streamEvent{Type: "content_block_delta", Index: idx, Delta: delta}
	return true
}
