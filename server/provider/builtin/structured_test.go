package builtin

import (
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/schema"
)

// TestStructuredAnswer: the reply to a JSON schema is filled in schema
// order and validates against the schema it came from.
func TestStructuredAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"schema order", `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"},"mid":{"type":"boolean"}}}`,
			`{"zeta": "say \"hi\" <now>", "alpha": 1, "mid": true}`},
		{"nested, enum, const, minimum, minItems",
			`{"type":"object","properties":{"kind":{"enum":["b","a"]},"v":{"const":{"x":[1,2]}},"n":{"type":"number","minimum":2.5},` +
				`"list":{"type":"array","minItems":2,"items":{"type":"object","properties":{"ok":{"type":["null","boolean"]}}}},` +
				`"any":{"anyOf":[{"type":"null"},{"type":"string"}]}},"required":["kind"]}`,
			`{"kind": "b", "v": {"x": [1, 2]}, "n": 2.5, "list": [{"ok": true}, {"ok": true}], "any": null}`},
		// The server checks formats: a string with one is a value of it.
		{"formats", `{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"to":{"type":"string","format":"email"},` +
			`"id":{"type":"string","format":"uuid"},"ip":{"type":"string","format":"ipv6"},"free":{"type":"string","format":"colour"}}}`,
			`{"at": "1970-01-01T00:00:00Z", "to": "user@example.com", "id": "00000000-0000-4000-8000-000000000000", "ip": "2001:db8::1", "free": "say \"hi\" <now>"}`},
		{"top-level array", `{"type":"array","items":{"type":"string"}}`, `[]`},
		{"boolean schema", `true`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := structuredAnswer(&llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: tc.schema}, `say "hi" <now>`)
			if !ok || got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			s, err := schema.Compile(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			if errs := s.Validate(got); errs != nil {
				t.Errorf("the answer does not match its schema: %v", errs)
			}
		})
	}
	if _, ok := structuredAnswer(&llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_TEXT}, "x"); ok {
		t.Error("a text format gave a structured answer")
	}
}

// FuzzStructuredAnswer: whatever schema the server accepts, the built-in
// answer is valid JSON (it need not meet every keyword: it is not a model).
func FuzzStructuredAnswer(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string"}}}`, `true`, `{"enum":[1,"x"]}`,
		`{"type":["null","array"],"minItems":3,"items":{"const":{"k":[{}]}}}`, `{"anyOf":[{"properties":{"x":{"type":"integer","minimum":-2e3}}}]}`} {
		f.Add(s, "text")
	}
	f.Fuzz(func(t *testing.T, schemaText, text string) {
		if _, err := schema.Compile(schemaText); err != nil {
			return
		}
		got, ok := structuredAnswer(&llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schemaText}, text)
		if !ok || !json.Valid([]byte(got)) {
			t.Fatalf("schema %s: answer %q is not JSON", schemaText, got)
		}
	})
}

// TestFormatExamplesValid: each format's example is a value of it, as the
// server checks it.
func TestFormatExamplesValid(t *testing.T) {
	t.Parallel()
	for f, v := range formatExamples {
		s, err := schema.Compile(`{"type":"string","format":"` + f + `"}`)
		if err != nil {
			t.Fatal(err)
		}
		if errs := s.Validate(`"` + v + `"`); errs != nil {
			t.Errorf("%s example %q: %v", f, v, errs)
		}
	}
}
