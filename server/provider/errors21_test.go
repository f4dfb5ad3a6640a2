package provider

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCloseTruncatedJSON: an object cut short keeps what was complete up
// to the cut, closed; a number at the very end may be cut inside and is
// dropped; what is not an object cut short is returned unchanged.
func TestCloseTruncatedJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"error":{"message":"Rate limit","type":"requests","par`, `{"error":{"message":"Rate limit","type":"requests"}}`},
		{`{"error":{"message":"Rate lim`, `{"error":{}}`},
		{`{"a":[1,2,{"b":"c"`, `{"a":[1,2,{"b":"c"}]}`},
		{`{"a":1,`, `{"a":1}`},
		{`{"a":1,"b"`, `{"a":1}`},
		{`{"a":1,"b":`, `{"a":1}`},
		{`{"a":{"x":1},"b":[`, `{"a":{"x":1},"b":[]}`},
		{`{"error":{"code":429,"message":"x","status":"RESOURCE_EXHAUSTED","details":[{"@type":"t","retryDelay":"3`,
			`{"error":{"code":429,"message":"x","status":"RESOURCE_EXHAUSTED","details":[{"@type":"t"}]}}`},
		{`{"error":{"code":42`, `{"error":{}}`},
		{`{"error":{"code":429,`, `{"error":{"code":429}}`},
		{"  {\"a\":true,\"b\":nu", `{"a":true}`},
	} {
		out, ok := CloseTruncatedJSON([]byte(tc.in))
		if !ok || string(out) != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.in, out, ok, tc.want)
		}
	}
	for _, in := range []string{`{"a":1}`, `{"a":1} x`, `{"a":1}}`, `[1,2`, `{"a" 1`, ``, `   `, `<html>`, `{"error":"the input`[:0], `"str`} {
		if out, ok := CloseTruncatedJSON([]byte(in)); ok || string(out) != in {
			t.Errorf("%q: %q %v, want it unchanged", in, out, ok)
		}
	}
}

// FuzzCloseTruncatedJSON: a repaired body is valid JSON, an object,
// whose text before its closing brackets is a prefix of the input (the
// blanks around it trimmed); valid JSON is never repaired.
func FuzzCloseTruncatedJSON(f *testing.F) {
	for _, s := range []string{`{"error":{"message":"Rate limit","type":"requests","par`, `{"a":[1,2,{"b":"c"`, `{"a":1}`, `{"a":"\u00`, `{"a":[{"b":[[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, ok := CloseTruncatedJSON(b)
		if !ok {
			if !bytes.Equal(out, b) {
				t.Fatalf("not repaired but changed: %q -> %q", b, out)
			}
			return
		}
		if json.Valid(bytes.TrimSpace(b)) || !json.Valid(out) || out[0] != '{' {
			t.Fatalf("%q -> %q", b, out)
		}
		body := strings.TrimRight(string(out), "}]")
		if !strings.HasPrefix(string(bytes.TrimSpace(b)), body) {
			t.Fatalf("%q -> %q: not a prefix of the input", b, out)
		}
	})
}

// TestRedactMaskedSecret: a masked form of the secret (its visible ends,
// four characters at least, around four asterisks or more) is redacted;
// a mask of another key, Markdown emphasis and ends that show all of it
// are not.
func TestRedactMaskedSecret(t *testing.T) {
	t.Parallel()
	const key = "sk-e2e-test-key-000000000000"
	for _, tc := range []struct{ in, want string }{
		{"Incorrect API key provided: sk-e2e-te********************0000. You can", "Incorrect API key provided: [REDACTED]. You can"},
		{"key sk-e2e****", "key [REDACTED]"},
		{"key ****0000 and ****", "key [REDACTED] and ****"},
		{"Incorrect API key provided: sk-proj-********************wxyz.", "Incorrect API key provided: sk-proj-********************wxyz."},
		{"**** bold ****", "**** bold ****"},
		{"sk-e2e-test-key-0000****00000000", "sk-e2e-test-key-0000****00000000"}, // shows it all (and more): not a mask of it
		{"no asterisks sk-e2e-te 0000", "no asterisks sk-e2e-te 0000"},
	} {
		if got := RedactMaskedSecret(tc.in, key, "[REDACTED]"); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}
