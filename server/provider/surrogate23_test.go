package provider

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// rawEncode is a byte-level server's JSON string of b: its bytes as they
// are (a character's cut bytes too), quotes, backslashes and control
// characters escaped.
func rawEncode(b []byte) []byte {
	out := []byte{'"'}
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, []byte(`\u00`)...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// TestSurrogateJoinBytes23: a character's UTF-8 bytes cut between two
// deltas, raw in their JSON (a byte-level tokenizer's server), are the
// character again; bytes that never complete one are U+FFFD, once, where
// they were; valid text is untouched.
func TestSurrogateJoinBytes23(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		pieces []string
		want   string
	}{
		{"3-byte character cut after 2", []string{"x\xe4\xbd", "\xa0y"}, "x你y"},
		{"3-byte character cut after 1", []string{"x\xe4", "\xbd\xa0y"}, "x你y"},
		{"4-byte character in three deltas", []string{"a\xf0\x9f", "\x98", "\x80b"}, "a😀b"},
		{"cut character then valid text", []string{"x\xe4\xbd", "y"}, "x\uFFFDy"},
		{"cut character at the end", []string{"x", "y\xe4\xbd"}, "xy\uFFFD"},
		{"latin-1 byte", []string{"caf\xe9", " au lait"}, "caf\uFFFD au lait"},
		{"stray continuation bytes", []string{"a\xa0", "b"}, "a\uFFFDb"},
		{"valid", []string{"déjà", " vu"}, "déjà vu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var j SurrogateJoin
			var got strings.Builder
			for _, p := range tc.pieces {
				raw := rawEncode([]byte(p))
				var dec string
				if err := json.Unmarshal(raw, &dec); err != nil {
					t.Fatal(err)
				}
				got.WriteString(j.Text(dec, raw))
			}
			got.WriteString(j.Flush())
			if g := got.String(); g != tc.want {
				t.Errorf("got %q, want %q", g, tc.want)
			}
		})
	}
}

// FuzzSurrogateJoinBytes23: valid text cut into three deltas at any
// bytes, each written raw as a byte-level server writes it, is the text
// again once joined.
func FuzzSurrogateJoinBytes23(f *testing.F) {
	f.Add("x你y😀\"\\\n", uint8(2), uint8(5))
	f.Add("😀😁", uint8(1), uint8(6))
	f.Add("déjà", uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, s string, a, b uint8) {
		if !utf8.ValidString(s) {
			return
		}
		cuts := []int{int(a) % (len(s) + 1), int(b) % (len(s) + 1)}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		var j SurrogateJoin
		var got strings.Builder
		for _, p := range []string{s[:cuts[0]], s[cuts[0]:cuts[1]], s[cuts[1]:]} {
			if p == "" {
				continue // a server cutting by byte sends no empty delta
			}
			raw := rawEncode([]byte(p))
			var dec string
			if err := json.Unmarshal(raw, &dec); err != nil {
				t.Fatalf("%q: %v", raw, err)
			}
			got.WriteString(j.Text(dec, raw))
		}
		got.WriteString(j.Flush())
		if got.String() != s {
			t.Fatalf("cut at %v: got %q, want %q", cuts, got.String(), s)
		}
	})
}
