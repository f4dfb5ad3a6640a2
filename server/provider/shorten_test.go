package provider

import (
	"testing"
	"unicode/utf8"
)

// TestShorten: a cut never splits a character and says it cut.
func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij…"},
		{"aé", 2, "a…"}, // é is two bytes: not split
		{"😀😀", 5, "😀…"},
		{"é", 0, "…"},
	} {
		got := Shorten(tc.in, tc.max)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
