package jsonscan

import (
	"encoding/json"
	"testing"
)

// FuzzString: a string the scanner accepts is the string encoding/json
// decodes from the same token, and raw is that token; Bytes reads the
// same.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\n\"b\"\\\/\t\r\b\f"`, `"héllo ☃"`, `"\u00e9"`, "\"\xff\"", `"x`, ` "y" `, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := Scanner{B: b}
		scratch := []byte("stale")
		got, raw, ok := sc.String(&scratch, "prev")
		if !ok || !sc.End() {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("accepted %q, encoding/json: %v", b, err)
		}
		var fromRaw string
		if err := json.Unmarshal(raw, &fromRaw); err != nil || got != want || fromRaw != want {
			t.Fatalf("%q: got %q (raw %q), want %q", b, got, raw, want)
		}
		bs := Scanner{B: b}
		v, braw, ok := bs.Bytes(&scratch)
		if !ok || !bs.End() || string(v) != want || string(braw) != string(raw) {
			t.Fatalf("%q: Bytes %q (raw %q, ok %v), want %q", b, v, braw, ok, want)
		}
	})
}

// FuzzInt: an integer the scanner accepts is the int encoding/json
// decodes.
func FuzzInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "12", "007", "1.5", "1e3", "123456789", "1234567890", "-5", " 7 "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := Scanner{B: b}
		got, ok := sc.Int()
		if !ok || !sc.End() {
			return
		}
		var want int
		if err := json.Unmarshal(b, &want); err != nil || got != want {
			t.Fatalf("%q: got %d, encoding/json %d (%v)", b, got, want, err)
		}
	})
}

// TestRun: Run accepts the tokens written as run and, failing that, as
// Lits does, and consumes the same.
func TestRun(t *testing.T) {
	t.Parallel()
	lits := []string{`{`, `"a"`, `:`, `[`}
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"a": [1`, true}, {` {"a": [1`, true}, {`{"a":[1`, true}, {`{ "a" : [ 1`, true}, {`{"a": {1`, false}, {`{"b": [1`, false},
	} {
		r := Scanner{B: []byte(c.in)}
		l := Scanner{B: []byte(c.in)}
		ok, lok := r.Run(`{"a": [`, lits...), l.Lits(lits...)
		if ok != c.ok || lok != c.ok || (ok && r.I != l.I) {
			t.Errorf("%q: Run %v at %d, Lits %v at %d", c.in, ok, r.I, lok, l.I)
		}
	}
}
