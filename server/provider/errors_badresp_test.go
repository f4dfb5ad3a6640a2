package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

// A JSON type mismatch in a bad response is said in the wire's words,
// without the adapter's Go type names.
func TestBadResponseJSONTypeWords(t *testing.T) {
	t.Parallel()
	type block struct{ Text string }
	type msg struct {
		Content []block `json:"content"`
		N       int     `json:"n"`
	}
	for raw, want := range map[string]string{
		`[]`:               "decode: the body is a JSON array where an object belongs",
		`"ok"`:             "decode: the body is a JSON string where an object belongs",
		`{"content":"hi"}`: "decode: content is a JSON string where an array belongs",
		`{"n":"5"}`:        "decode: n is a JSON string where an integer belongs",
	} {
		var m msg
		err := json.Unmarshal([]byte(raw), &m)
		if err == nil {
			t.Fatalf("%s decoded", raw)
		}
		e := BadResponse("test", "decode: %v", err)
		if e.Message != want {
			t.Errorf("%s: %q, want %q", raw, e.Message, want)
		}
		if strings.Contains(e.Message, "Go ") || strings.Contains(e.Message, "provider.") {
			t.Errorf("%s: Go type names in %q", raw, e.Message)
		}
	}
}
