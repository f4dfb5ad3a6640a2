package schema

import (
	"strings"
	"testing"
)

// TestCompileErrorsReadable: a misspelt type names the allowed ones
// without the meta-schema's other anyOf branch ("got string, want
// array"), and a refused $ref says why without the library's "failing
// loading" wrapping.
func TestCompileErrorsReadable(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type": "object", "properties": {"x": {"type": "strin"}}}`: "not a valid JSON Schema: /properties/x/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'",
		`{"type": "objekt"}`:               "not a valid JSON Schema: /type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'",
		`{"$ref": "http://example.com/x"}`: `not a valid JSON Schema: external $ref "http://example.com/x" is not allowed: inline it or use $defs`,
		// Other meta-schema problems keep their message.
		`{"type": "object", "required": "x"}`: "not a valid JSON Schema: /required: got string, want array",
	} {
		_, err := Compile(schema)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", schema, err, want)
		}
	}
	// An answer's violations are not narrowed: both branches of the
	// caller's anyOf are what the answer missed.
	s, err := Compile(`{"anyOf": [{"enum": ["a", "b"]}, {"type": "array"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Validate(`5`), "; "); !strings.Contains(got, "want array") || !strings.Contains(got, "must be one of") {
		t.Errorf("answer violations: %s", got)
	}
}
