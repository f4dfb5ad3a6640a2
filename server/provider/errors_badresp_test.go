package provider

import (
	"encoding/json"
	"fmt"
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

// A number that does not fit its field is named as such (it read "n is a
// JSON number 1.5 where an integer belongs", and for a float out of range
// "a JSON number 1e400 where a number belongs"); an error wrapping the
// mismatch keeps its own words; the caller's arguments are not rewritten.
func TestBadResponseJSONNumbersAndWrapping(t *testing.T) {
	t.Parallel()
	type usage struct {
		N     int     `json:"n"`
		Count uint32  `json:"count"`
		Score float64 `json:"score"`
	}
	for raw, want := range map[string]string{
		`{"n":1.5}`:                  "n is a JSON number 1.5, not a 64-bit integer",
		`{"n":99999999999999999999}`: "n is a JSON number 99999999999999999999, not a 64-bit integer",
		`{"count":-1}`:               "count is a JSON number -1, not a 32-bit unsigned integer",
		`{"score":1e400}`:            "score is a JSON number 1e400, not a 64-bit floating-point number",
		`{"score":"high"}`:           "score is a JSON string where a number belongs",
		`{"count":true}`:             "count is a JSON bool where an integer belongs",
	} {
		var u usage
		err := json.Unmarshal([]byte(raw), &u)
		if err == nil {
			t.Fatalf("%s decoded", raw)
		}
		if got := BadResponse("test", "%v", err).Message; got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}

	var m struct{ Content []string }
	err := json.Unmarshal([]byte(`{"content":"hi"}`), &m)
	wrapped := fmt.Errorf("chunk 3: %w", err)
	args := []any{wrapped}
	if got, want := BadResponse("test", "decode: %v", args...).Message, "decode: chunk 3: Content is a JSON string where an array belongs"; got != want {
		t.Errorf("wrapped: %q, want %q", got, want)
	}
	if args[0] != wrapped {
		t.Errorf("the caller's argument was replaced by %v", args[0])
	}
}
