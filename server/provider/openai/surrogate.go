package openai

import "encoding/json"

// UTF-16 servers (JavaScript proxies) may cut a string between the two
// halves of a surrogate pair, each fragment JSON-encoded on its own: a
// fragment of arguments ending in "\ud83d" and the next beginning with
// "\ude00". Decoded apart, each half is U+FFFD and the character is lost;
// a call's fragments hold the high half back (callState.high) and decode
// it with the low half that follows.

// cutHighSurrogate splits off the escape of a high surrogate that ends
// the JSON string raw: raw without it, and the escape ("" when raw does
// not end with one).
func cutHighSurrogate(raw json.RawMessage) (json.RawMessage, string) {
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

// withHighSurrogate puts a held high surrogate's escape before the JSON
// string raw. Unpaired (raw does not begin with a low one), it decodes to
// U+FFFD as it would have alone.
func withHighSurrogate(high string, raw json.RawMessage) json.RawMessage {
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
