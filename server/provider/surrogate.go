package provider

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// UTF-16 servers (JavaScript proxies, OpenAI-compatible servers written in
// JS/TS) may cut a string between the two halves of a surrogate pair, each
// fragment JSON-encoded on its own: one delta ending in "\ud83d" and the
// next beginning with "\ude00". Decoded apart, each half is U+FFFD and the
// character is lost. The escapes are still in the deltas' JSON: the high
// half's is held back and decoded with the low half that follows.

// CutHighSurrogate splits off the escape of a high surrogate that ends
// the JSON string raw: raw without it, and the escape ("" when raw does
// not end with one).
func CutHighSurrogate(raw json.RawMessage) (json.RawMessage, string) {
	n := len(raw)
	if n < 8 || raw[0] != '"' || raw[n-1] != '"' || raw[n-7] != '\\' || raw[n-6] != 'u' {
		return raw, ""
	}
	if v, ok := hex4(raw[n-5 : n-1]); !ok || v < 0xD800 || v > 0xDBFF {
		return raw, ""
	}
	// The backslash must start the escape, not end an escaped backslash:
	// an odd run of backslashes ends at it.
	run := 0
	for i := n - 7; i > 0 && raw[i] == '\\'; i-- {
		run++
	}
	if run%2 == 0 {
		return raw, ""
	}
	out := make(json.RawMessage, 0, n-6)
	out = append(append(out, raw[:n-7]...), '"')
	return out, string(raw[n-7 : n-1])
}

// WithHighSurrogate puts a held high surrogate's escape before the JSON
// string raw. Unpaired (raw does not begin with a low one), it decodes to
// U+FFFD as it would have alone. raw that is not a string is returned as
// it is.
func WithHighSurrogate(high string, raw json.RawMessage) json.RawMessage {
	if high == "" {
		return raw
	}
	if len(raw) < 2 || raw[0] != '"' {
		// Not a string (a server switching shapes mid-call): the half
		// is what it decodes to alone.
		return raw
	}
	out := make(json.RawMessage, 0, len(raw)+len(high))
	out = append(append(append(out, '"'), high...), raw[1:]...)
	return out
}

func hex4(b []byte) (rune, bool) {
	var v rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// HasSurrogateEscape reports whether the JSON text b holds the escape of a
// UTF-16 surrogate (\ud800 to \udfff, either case): only then can one of
// its strings carry half of a pair. The adapters' fast decoders refuse \u
// escapes, so a chunk for which this is true is on the encoding/json
// path, where the adapter looks up its text's quoted token (a second
// decode, only for such chunks).
func HasSurrogateEscape(b []byte) bool {
	for {
		// A backslash first (one vectorized byte search: most deltas have
		// none, and this runs on every streamed delta), then its "u".
		i := bytes.IndexByte(b, '\\')
		if i < 0 || i+3 >= len(b) {
			return false
		}
		if b[i+1] == 'u' {
			if c := b[i+2] | 0x20; c == 'd' {
				switch b[i+3] | 0x20 {
				case '8', '9', 'a', 'b', 'c', 'd', 'e', 'f':
					return true
				}
			}
		}
		b = b[i+1:]
	}
}

// SurrogateJoin joins the surrogate pairs a UTF-16 server cut between the
// consecutive string deltas of one text (a content block's, a reasoning
// block's). The zero value holds nothing.
//
// A held high half is joined with the low half that begins the next
// delta; any other next delta, or the text's end (Flush), makes it what it
// decodes to alone: U+FFFD. It is never held beyond the next delta.
type SurrogateJoin struct {
	// high is a held high half's escape, or the raw first bytes of a
	// character cut at a token's end.
	high string
}

// Held reports whether a high half waits for the next delta.
func (j *SurrogateJoin) Held() bool { return j.high != "" }

// Text is the text of the next string delta of the text. decoded is the
// delta as decoded; raw is its quoted JSON token, or nil when the chunk
// had no surrogate escape (HasSurrogateEscape) or the token is not at
// hand (a fast decoder, which refuses \u escapes, decoded it). With a raw
// token that has a surrogate escape, a high half held before is put
// before it, and a high half that ends it is held back from the text
// returned; otherwise (an empty string too) a held half is U+FFFD before
// decoded.
//
// A byte-level server (a byte-level tokenizer's, writing the token's bytes
// as they are) may cut a character's UTF-8 bytes the same way, raw in
// the JSON: one delta ending in "x\xe4\xbd", the next beginning with
// "\xa0y". Given raw tokens that are not valid UTF-8, the first bytes of a
// character that ends one are held back and joined with the rest that
// begins the next, as a surrogate's high half is; what never completes
// is U+FFFD.
func (j *SurrogateJoin) Text(decoded string, raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' || (!HasSurrogateEscape(raw) && utf8.Valid(raw)) {
		return j.Flush() + decoded
	}
	held := j.high != ""
	joined, high := CutHighSurrogate(WithHighSurrogate(j.high, raw))
	if high == "" {
		joined, high = cutPartialRune(joined)
	}
	j.high = high
	if len(joined) == 2 {
		return ""
	}
	if in := joined[1 : len(joined)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in)
	}
	var s string
	if err := json.Unmarshal(joined, &s); err != nil {
		// raw was decoded once already (decoded): cutting a whole
		// escape off its end or putting one before it keeps it a
		// valid string, so this does not happen; decoded is what the
		// delta says, after what a held half decodes to alone.
		j.high = ""
		if held {
			return "\uFFFD" + decoded
		}
		return decoded
	}
	return s
}

// Flush ends the text: a held high half is released as U+FFFD, what it
// decodes to alone ("" when none is held).
func (j *SurrogateJoin) Flush() string {
	if j.high == "" {
		return ""
	}
	j.high = ""
	return "\uFFFD"
}

// cutPartialRune splits off the first bytes of a UTF-8 character that a
// JSON string token raw ends with, cut before its last bytes: raw without
// them, and the bytes ("" when raw ends otherwise). Bytes that cannot
// begin a character (or cannot be followed by what would complete one)
// are left: they are U+FFFD whatever follows.
func cutPartialRune(raw json.RawMessage) (json.RawMessage, string) {
	n := len(raw)
	if n < 3 || raw[n-1] != '"' || raw[n-2] < utf8.RuneSelf {
		return raw, ""
	}
	in := raw[1 : n-1]
	// The character's first byte: at most utf8.UTFMax-1 bytes back.
	i := len(in) - 1
	for i > 0 && len(in)-i < utf8.UTFMax-1 && !utf8.RuneStart(in[i]) {
		i--
	}
	if !utf8.RuneStart(in[i]) || in[i] < 0xC2 || utf8.FullRune(in[i:]) {
		// No character's start, an ASCII byte or one that starts none
		// (a continuation byte, C0, C1, F5 and above), or a whole
		// (or an invalid) one: nothing to wait for.
		return raw, ""
	}
	out := make(json.RawMessage, 0, 1+i+1)
	out = append(append(append(out, '"'), in[:i]...), '"')
	return out, string(in[i:])
}

// MayCutCharacter reports whether the JSON text b may hold part of a
// character cut at a delta's edge: a surrogate's escape
// (HasSurrogateEscape), or bytes that are not valid UTF-8 (a byte-level
// server's character cut raw). An adapter hands SurrogateJoin the raw
// text tokens of such a chunk; its fast decoder refuses both, so it asks
// only for the chunks that fast decoder refused.
func MayCutCharacter(b []byte) bool { return HasSurrogateEscape(b) || !utf8.Valid(b) }
