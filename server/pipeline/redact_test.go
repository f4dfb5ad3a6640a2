package pipeline

import (
	"bytes"
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

// containsCases are inputs with and without secrets in every form Bytes
// redacts, for TestRedactContains and as the seed of FuzzRedactContains.
func containsCases(key string) []string {
	return []string{
		"", key, "x" + key + "y", jsonEscape(key, `\`), jsonEscape(key, `\\`), jsonEscape(key, `\\\\`),
		"sk\\u002dproj\\/AB%43def123", "%73%6b-proj%2FABCdef123", `sk-proj\u002FABCdef123`,
		"sk-proj/ABCdef12", `sk\u002eproj/ABCdef123`, `\u0073k-proj/ABCdef12 3`, "100% \\n",
		"sk-proj/ABCdef12" + `\u0033`, "sk-proj%2", "sk-proj\\", "%%%%\\\\\\\\", "sk-sk-proj/ABC%64ef123",
		"\x00\x01\x12sk-proj\x0a/ABCdef123", "other-secret-valu%65", `other\u002dsecret-value`,
	}
}

// TestRedactContains: Contains says exactly whether Bytes changes its
// input, and a secret in a part is found in any whole the part is copied
// into (the guarantee server/redact.go's fast path relies on).
func TestRedactContains(t *testing.T) {
	t.Parallel()
	r := NewRedactor("sk-proj/ABCdef123", "other-secret-value")
	cases := containsCases("sk-proj/ABCdef123")
	for _, a := range cases {
		checkContains(t, r, []byte(a))
		for _, b := range cases {
			checkContains(t, r, []byte(a+"\x0a\x12"+b))
			if r.String(a) != a && !r.Contains([]byte(b+a+b)) {
				t.Errorf("%q: not found inside %q", a, b+a+b)
			}
		}
	}
	if (*Redactor)(nil).Contains([]byte("x")) || NewRedactor().Contains([]byte("x")) {
		t.Error("no secrets: Contains must be false")
	}
}

func checkContains(t *testing.T, r *Redactor, p []byte) {
	t.Helper()
	changed := string(r.Bytes(append([]byte(nil), p...))) != string(p)
	// Exact but where p has a run of four asterisks (a masked form may be
	// there): then it may say true for what Bytes keeps, never false for
	// what Bytes changes.
	if got := r.Contains(p); got != changed && (!got || !bytes.Contains(p, []byte("****"))) {
		t.Errorf("Contains(%q) = %v, Bytes changes it: %v", p, got, changed)
	}
}

func FuzzRedactContains(f *testing.F) {
	for _, c := range containsCases("sk-proj/ABCdef123") {
		f.Add([]byte(c), []byte("%2f"))
	}
	r := NewRedactor("sk-proj/ABCdef123", "other-secret-value", "a%b\\c")
	f.Fuzz(func(t *testing.T, a, b []byte) {
		checkContains(t, r, a)
		whole := append(append(append([]byte(nil), b...), a...), b...)
		if string(r.Bytes(append([]byte(nil), a...))) != string(a) && !r.Contains(whole) {
			t.Errorf("%q: not found inside %q", a, whole)
		}
	})
}
