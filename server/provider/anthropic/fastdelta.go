package anthropic

import (
	"bytes"
	"unicode/utf8"
)

// decodeTextDeltaFast decodes the event that carries an answer's text, in
// the shape the API sends it,
//
//	{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
//
// without reflection: it is most of the events of a stream, and
// encoding/json's decoding of it was the largest cost per relayed chunk.
// It accepts only input that json.Unmarshal decodes to the same
// streamEvent (FuzzDecodeTextDeltaFast): these keys in this order,
// whitespace between tokens, an integer index, a text with the escapes
// \" \\ \/ \b \f \n \r \t and valid UTF-8. Anything else (\u escapes,
// other keys, other delta types) returns false for the encoding/json
// path. The index and delta are written to idx and delta, which the
// caller owns (a stream reuses them: blockDelta keeps neither); scratch
// holds the unescaped text between calls.
func decodeTextDeltaFast(data []byte, ev *streamEvent, idx *int, delta *streamDelta, scratch *[]byte) bool {
	p := fastParser{b: data}
	if !p.lit(`{`) || !p.lit(`"type"`) || !p.lit(`:`) || !p.lit(`"content_block_delta"`) || !p.lit(`,`) ||
		!p.lit(`"index"`) || !p.lit(`:`) {
		return false
	}
	n, ok := p.integer()
	if !ok || !p.lit(`,`) || !p.lit(`"delta"`) || !p.lit(`:`) || !p.lit(`{`) || !p.lit(`"type"`) || !p.lit(`:`) ||
		!p.lit(`"text_delta"`) || !p.lit(`,`) || !p.lit(`"text"`) || !p.lit(`:`) {
		return false
	}
	text, ok := p.text(scratch)
	if !ok || !p.lit(`}`) || !p.lit(`}`) {
		return false
	}
	p.ws()
	if p.i != len(p.b) {
		return false
	}
	*idx = n
	*delta = streamDelta{Type: "text_delta", Text: text}
	*ev = streamEvent{Type: "content_block_delta", Index: idx, Delta: delta}
	return true
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// lit consumes s after optional whitespace.
func (p *fastParser) lit(s string) bool {
	p.ws()
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

// integer reads an integer JSON number of at most 9 digits (no fraction or
// exponent, no leading zero), as json.Unmarshal decodes into an int.
func (p *fastParser) integer() (int, bool) {
	p.ws()
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	start, n := p.i, 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' && p.i-start < 10 {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 9 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// text reads a string with the simple escapes and valid UTF-8.
func (p *fastParser) text(scratch *[]byte) (string, bool) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	p.i++
	start, ascii := p.i, true
	out := (*scratch)[:0]
	escaped := false
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			if escaped {
				s = append(out, s...)
				*scratch = s
			}
			p.i++
			if !ascii && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
			p.i++
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			var r byte
			switch p.b[p.i+1] {
			case '"', '\\', '/':
				r = p.b[p.i+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				return "", false // \u escapes and invalid ones: encoding/json
			}
			out = append(out, p.b[start:p.i]...)
			out = append(out, r)
			escaped = true
			p.i += 2
			start = p.i
		default:
			p.i++
		}
	}
	return "", false
}
