package gemini

import (
	"strings"
	"testing"
)

// TestArrayPrefix: the whole chunks of an array the input ends inside of;
// nil for an array malformed before its end (a bad answer, not a cut).
func TestArrayPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"[\n{\"a\":1},\n{\"b\":2},\n": `{"a":1} {"b":2}`,
		"[{\"a\":1},{\"b\":":          `{"a":1}`,
		"[":                           ``,
		"[{\"a\":1}]]":                "<nil>",
		"[{\"a\":1} x":                "<nil>",
		"{\"a\":1}":                   "<nil>",
	} {
		got := arrayPrefix([]byte(in))
		s := "<nil>"
		if got != nil {
			var parts []string
			for _, c := range got {
				parts = append(parts, string(c))
			}
			s = strings.Join(parts, " ")
		}
		if s != want {
			t.Errorf("arrayPrefix(%q) = %s, want %s", in, s, want)
		}
	}
}
