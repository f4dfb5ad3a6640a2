package provider

import (
	"encoding/json"
	"testing"
)

// TestClosedObjectSchemas: every object schema, at every depth a schema
// nests schemas, gets "additionalProperties": false (Anthropic's
// structured outputs refuse any other); the rest keeps its bytes and key
// order; a value other than false is replaced and counted.
func TestClosedObjectSchemas(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		replaced       int
	}{
		{"flat", `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta"]}`,
			`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta"],"additionalProperties":false}`, 0},
		{"already closed, spacing kept", `{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}`,
			`{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}`, 0},
		{"nested, arrays, defs, anyOf", `{"type":"object","properties":{"user":{"type":"object","properties":{"n":{"type":"string"}}},` +
			`"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":false}},` +
			`"alt":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/P"}]}},"additionalProperties":false,"$defs":{"P":{"properties":{"x":{"type":["object","null"]}}}}}`,
			`{"type":"object","properties":{"user":{"type":"object","properties":{"n":{"type":"string"}},"additionalProperties":false},` +
				`"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":false}},` +
				`"alt":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/P"}]}},"additionalProperties":false,"$defs":{"P":{"properties":{"x":{"type":["object","null"],"additionalProperties":false}},"additionalProperties":false}}}`, 0},
		{"open values replaced in place", `{"type":"object","additionalProperties":true,"properties":{"m":{"type":"object","additionalProperties":{"type":"string"},"description":"d"}}}`,
			`{"type":"object","additionalProperties":false,"properties":{"m":{"type":"object","additionalProperties":false,"description":"d"}}}`, 2},
		// A property named like a keyword is a name; a string schema is
		// left as it is.
		{"names and scalars", `{"type":"object","properties":{"properties":{"type":"string"},"type":{"type":"string"}},"additionalProperties":false}`,
			`{"type":"object","properties":{"properties":{"type":"string"},"type":{"type":"string"}},"additionalProperties":false}`, 0},
		{"not an object schema", `{"type":"string","maxLength":3}`, `{"type":"string","maxLength":3}`, 0},
		{"boolean schema", `true`, `true`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, replaced := ClosedObjectSchemas(json.RawMessage(tc.in))
			if string(got) != tc.want || replaced != tc.replaced {
				t.Errorf("got %s (%d replaced)\nwant %s (%d)", got, replaced, tc.want, tc.replaced)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}

// FuzzClosedObjectSchemas: whatever the JSON, the result is JSON, and
// closing twice changes nothing more.
func FuzzClosedObjectSchemas(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"object"}}}`, `{"anyOf":[{"type":"object"},true]}`,
		`{"items":[{"properties":{}}],"additionalProperties":{"type":"object"}}`, `[1]`, `{"properties":{"n":{"minimum":1,"description":"d"}}}`, `{"type":["object"],"$defs":{"x":{"type":"object"}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		once, _ := ClosedObjectSchemas(json.RawMessage(s))
		if !json.Valid(once) {
			t.Fatalf("%s → not JSON %s", s, once)
		}
		twice, replaced := ClosedObjectSchemas(once)
		if string(twice) != string(once) || replaced != 0 {
			t.Fatalf("%s → %s → %s (%d)", s, once, twice, replaced)
		}
		minimum := func(key string, _ json.RawMessage, _ string) bool { return key == "minimum" }
		moved1, _ := RelocatedConstraints(json.RawMessage(s), minimum)
		if !json.Valid(moved1) {
			t.Fatalf("%s → not JSON %s", s, moved1)
		}
		if moved2, again := RelocatedConstraints(moved1, minimum); string(moved2) != string(moved1) || again != nil {
			t.Fatalf("%s → %s → %s (%q)", s, moved1, moved2, again)
		}
	})
}

// TestRelocatedConstraints: the keywords asked for leave every schema they
// are in for its description (appended after a blank line, or a new last
// key), values compacted; enum and const values are not schemas.
func TestRelocatedConstraints(t *testing.T) {
	t.Parallel()
	numeric := func(key string, _ json.RawMessage, typ string) bool {
		return (key == "minimum" || key == "maximum") && typ != "string"
	}
	in := `{"type":"object","properties":{"n":{"type":"integer","description":"count","minimum":1,"maximum": 10},` +
		`"m":{"anyOf":[{"type":"number","minimum":0.5}]},"e":{"enum":[{"minimum":1}]}},"minimum":3}`
	want := `{"type":"object","properties":{"n":{"type":"integer","description":"count\n\n{minimum: 1, maximum: 10}"},` +
		`"m":{"anyOf":[{"type":"number","description":"{minimum: 0.5}"}]},"e":{"enum":[{"minimum":1}]}},"description":"{minimum: 3}"}`
	for in, want := range map[string]string{
		`{"type":"integer","minimum":1,"description":""}`:          `{"type":"integer","description":"{minimum: 1}"}`,
		`{"type":"integer","description":"a < b & c","maximum":2}`: `{"type":"integer","description":"a < b & c\n\n{maximum: 2}"}`,
	} {
		if got, _ := RelocatedConstraints(json.RawMessage(in), numeric); string(got) != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
	got, moved := RelocatedConstraints(json.RawMessage(in), numeric)
	if string(got) != want || len(moved) != 2 || moved[0] != "minimum" || moved[1] != "maximum" {
		t.Errorf("got %s %q\nwant %s", got, moved, want)
	}
}
