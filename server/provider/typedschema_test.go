package provider

import (
	"encoding/json"
	"testing"
)

// TestTypedObjectSchema: the type is added to a schema object without one, and
// nothing else changes.
func TestTypedObjectSchema(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"properties":{},"additionalProperties":false}`: `{"type":"object","properties":{},"additionalProperties":false}`,
		`{}`:                         `{"type":"object"}`,
		" { } ":                      `{"type":"object"}`,
		"{\n  \"properties\": {}\n}": "{\"type\":\"object\",\"properties\": {}\n}",
		`{"type":"object"}`:          `{"type":"object"}`,
		`{"type":["object","null"],"properties":{}}`: `{"type":["object","null"],"properties":{}}`,
		`{"anyOf":[{"type":"object"}]}`:              `{"type":"object","anyOf":[{"type":"object"}]}`,
		`{"properties":{"type":{"type":"string"}}}`:  `{"type":"object","properties":{"type":{"type":"string"}}}`,
		`true`: `true`,
		``:     ``,
	} {
		got := string(TypedObjectSchema(json.RawMessage(in)))
		if got != want {
			t.Errorf("TypedObjectSchema(%q) = %q, want %q", in, got, want)
		}
		if in != "" && !json.Valid([]byte(got)) {
			t.Errorf("TypedObjectSchema(%q) = %q, not JSON", in, got)
		}
	}
}
