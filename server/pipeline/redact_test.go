package pipeline

import (
	"fmt"
	"strings"
	"testing"
)

// jsonEscape writes every byte of s as \u00XX behind the given backslashes.
func jsonEscape(s, backslashes string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, "%su%04x", backslashes, s[i])
	}
	return b.String()
}

func TestRedactEncodedSecrets(t *testing.T) {
	t.Parallel()
	const key = "sk-proj/ABCdef123"
	r := NewRedactor(key, "other-secret-value")
	mixed := "sk\\u002dproj\\/AB%43def123" // escapes and percent-encoding in one
	for _, in := range []string{
		key,
		jsonEscape(key, `\`),
		jsonEscape(key, `\\`),    // JSON in a JSON string
		`sk-proj\u002FABCdef123`, // upper-case hex digits
		mixed,
		"%73%6b-proj%2FABCdef123",
	} {
		got := r.String(`{"error": "bad key ` + in + `", "n": "\n"}`)
		if got != `{"error": "bad key [REDACTED]", "n": "\n"}` {
			t.Errorf("%s: %s", in, got)
		}
		if b := string(r.Bytes([]byte("x" + in + "y" + in))); b != "x[REDACTED]y[REDACTED]" {
			t.Errorf("bytes %s: %s", in, b)
		}
	}
	// Near misses stay: not the key, or a non-ASCII decoded byte.
	for _, in := range []string{"sk-proj/ABCdef12", `sk\u002eproj/ABCdef123`, `\u0073k-proj/ABCdef12 3`, "100% \\n"} {
		if got := r.String(in); got != in {
			t.Errorf("%q changed to %q", in, got)
		}
	}
	// Nothing to replace: the same slice back, no copy.
	p := []byte(`{"a": "\n%"}`)
	if q := r.Bytes(p); &q[0] != &p[0] {
		t.Error("copied without a match")
	}
}
