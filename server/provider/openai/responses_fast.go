package openai

import (
	"encoding/json"

	"github.com/llmrelay/llmrelay/internal/jsonscan"
)

// respDeltaScratch is what decodeRespTextDeltaFast reuses between the
// events of one stream, and the event's fields it read.
type respDeltaScratch struct {
	seq, output flexInt
	content     flexInt // content_index
	buf         []byte
	itemID      string          // the previous event's, shared when equal
	delta       json.RawMessage // the quoted token within the event's data
}

// decodeRespTextDeltaFast decodes a Responses API text delta in the shape
// OpenAI sends it,
//
//	{"type":"response.output_text.delta","sequence_number":N,"item_id":"...","output_index":N,
//	 "content_index":N,"delta":"...","logprobs":[][,"obfuscation":"..."]}
//
// without reflection (encoding/json's decoding of it was the largest cost
// per relayed chunk), allocating only the text. It accepts only input
// that decodeLenient decodes to the same respEvent
// (FuzzDecodeRespTextDeltaFast): these keys in this order, whitespace
// between tokens, integers and strings jsonscan accepts. Anything else
// returns false for the encoding/json path. The event's sequence_number,
// item_id, output_index, content_index and delta are left in sc; text is the delta's
// text, what deltaText reads from it.
func decodeRespTextDeltaFast(data []byte, sc *respDeltaScratch) (text string, ok bool) {
	s := jsonscan.Scanner{B: data}
	if !s.Run(`{"type":"response.output_text.delta","sequence_number":`, `{`, `"type"`, `:`, `"response.output_text.delta"`, `,`, `"sequence_number"`, `:`) {
		return "", false
	}
	seq, ok := s.Int()
	if !ok || !s.Run(`,"item_id":`, `,`, `"item_id"`, `:`) {
		return "", false
	}
	item, _, ok := s.String(&sc.buf, sc.itemID)
	if !ok || !s.Run(`,"output_index":`, `,`, `"output_index"`, `:`) {
		return "", false
	}
	out, ok := s.Int()
	if !ok || !s.Run(`,"content_index":`, `,`, `"content_index"`, `:`) {
		return "", false
	}
	content, ok := s.Int()
	if !ok || !s.Run(`,"delta":`, `,`, `"delta"`, `:`) {
		return "", false
	}
	text, delta, ok := s.String(&sc.buf, "")
	if !ok || !s.Run(`,"logprobs":[]`, `,`, `"logprobs"`, `:`, `[`, `]`) {
		return "", false
	}
	if s.Lit(`,`) {
		if !s.Run(`"obfuscation":`, `"obfuscation"`, `:`) {
			return "", false
		}
		if _, _, ok := s.Bytes(&sc.buf); !ok {
			return "", false
		}
	}
	if !s.Lit(`}`) || !s.End() {
		return "", false
	}
	sc.seq, sc.output, sc.content, sc.itemID, sc.delta = flexInt(seq), flexInt(out), flexInt(content), item, delta
	return text, true
}
