package schema

import (
	"strings"
	"testing"
)

func TestCompile(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`: "",
		`true`: "",
		`{"$defs":{"x":{"type":"string"}},"$ref":"#/$defs/x"}`: "",
		`{"type": 12}`: "/type: value must be one of",
		`{"type":"object","properties":{"a":{"type":"strin"}}}`: "/properties/a/type: value must be one of",
		`{"type":`:                              "not valid JSON",
		`[1,2]`:                                 "a JSON Schema is an object",
		`"string"`:                              "a JSON Schema is an object",
		`{"$ref":"https://example.com/s.json"}`: "is not allowed",
		`{"$ref":"file:///etc/passwd"}`:         "is not allowed",
		`{"type":"string","pattern":"("}`:       "not a valid JSON Schema",
		// A $schema naming no built-in draft is said to be that, not an
		// "external $ref" the schema does not have.
		`{"$schema":"https://spec.openapis.org/oas/3.1/dialect/base","type":"object"}`:                   `"$schema" "https://spec.openapis.org/oas/3.1/dialect/base" names no JSON Schema draft the server validates with`,
		`{"$schema":"","type":"object"}`:                                                                 `"$schema" "" names no JSON Schema draft`,
		`{"$schema":"https://json-schema.org/draft-07/schema","type":"object"}`:                          "",
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`:                          "",
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"https://example.com/s.json"}`: `external $ref "https://example.com/s.json" is not allowed`,
	} {
		_, err := Compile(text)
		switch {
		case want == "" && err != nil:
			t.Errorf("Compile(%s) = %v, want nil", text, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("Compile(%s) = %v, want an error saying %q", text, err, want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	s, err := Compile(`{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"integer"}},"required":["reasoning","answer"],"additionalProperties":false}`)
	if err != nil {
		t.Fatal(err)
	}
	if errs := s.Validate(`{"reasoning":"6*7","answer":42}`); errs != nil {
		t.Errorf("valid answer: %v", errs)
	}
	errs := s.Validate(`{"reasoning":"6*7","answer":"42","extra":1}`)
	joined := strings.Join(errs, "\n")
	if len(errs) != 2 || !strings.Contains(joined, "/answer: got string, want integer") || !strings.Contains(joined, "additional properties 'extra' not allowed") {
		t.Errorf("violations = %q", errs)
	}
	if errs := s.Validate(`{"reasoning":"cut`); len(errs) != 1 || !strings.Contains(errs[0], "not valid JSON") {
		t.Errorf("truncated answer: %q", errs)
	}
	if errs := s.Validate(`{"reasoning":"x"}`); len(errs) != 1 || !strings.Contains(errs[0], "missing property 'answer'") {
		t.Errorf("missing property: %q", errs)
	}
}

func TestValidateBoundsErrors(t *testing.T) {
	t.Parallel()
	s, err := Compile(`{"type":"array","items":{"type":"string"}}`)
	if err != nil {
		t.Fatal(err)
	}
	errs := s.Validate("[" + strings.Repeat("1,", 99) + "1]")
	if len(errs) != MaxErrors+1 || !strings.Contains(errs[MaxErrors], "and 80 more") {
		t.Errorf("got %d errors, last %q", len(errs), errs[len(errs)-1])
	}
}

func TestIsJSONObject(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{`{"a":1}`: true, ` {} `: true, `[1]`: false, `{"a":`: false, `"x"`: false, ``: false, `{"a":1} x`: false} {
		if IsJSONObject(text) != want {
			t.Errorf("IsJSONObject(%q) = %v", text, !want)
		}
	}
}

// A "format" is checked under every draft: under 2020-12 (the default)
// it was an annotation, so a date-time "yesterday" passed while the same
// schema with draft-07's $schema refused it.
func TestValidateAssertsFormats(t *testing.T) {
	t.Parallel()
	for _, draft := range []string{``, `"$schema":"https://json-schema.org/draft/2020-12/schema",`, `"$schema":"http://json-schema.org/draft-07/schema#",`} {
		s, err := Compile(`{` + draft + `"type":"object","properties":{"when":{"type":"string","format":"date-time"},"who":{"type":"string","format":"email"},"shade":{"type":"string","format":"colour"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		if errs := s.Validate(`{"when":"2026-11-25T03:09:08Z","who":"a@example.com","shade":"teal"}`); errs != nil {
			t.Errorf("%s valid answer: %q", draft, errs)
		}
		errs := s.Validate(`{"when":"yesterday","who":"nobody","shade":"teal"}`)
		joined := strings.Join(errs, "\n")
		if len(errs) != 2 || !strings.Contains(joined, "/when: 'yesterday' is not valid date-time") || !strings.Contains(joined, "/who: 'nobody' is not valid email") {
			t.Errorf("%s violations = %q", draft, errs)
		}
	}
}

// Patterns are ECMA-262: lookaround and backreferences, which RE2 cannot
// run, are valid and were refused as "not valid regex" (the whole request
// failed for a tool schema its provider takes); they are accepted and
// listed as unchecked. ECMA's \uXXXX escapes are checked. A pattern
// invalid in both dialects is still refused.
func TestPatternsBeyondRE2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern   string // as JSON string content
		unchecked bool
	}{
		{`^(?!.*\\.\\.).*$`, true},
		{`^(?=.*[A-Z]).{8,}$`, true},
		{`(?<=\\$)\\d+`, true},
		{`(?<!-)\\d+`, true},
		{`^(a)\\1$`, true},
		{`^(?<q>['\"]).*\\k<q>$`, true},
		{`^[\\u0041-\\u005A]+$`, false},
		{`^\\d{3}$`, false},
	} {
		s, err := Compile(`{"type":"object","properties":{"a":{"type":"string","pattern":"` + tc.pattern + `"}},"patternProperties":{"` + tc.pattern + `":{}}}`)
		if err != nil {
			t.Errorf("%s: %v", tc.pattern, err)
			continue
		}
		if got := len(s.Unchecked()) > 0; got != tc.unchecked {
			t.Errorf("%s: unchecked %q", tc.pattern, s.Unchecked())
		}
		if tc.unchecked && len(s.Unchecked()) != 1 {
			t.Errorf("%s: unchecked %q, want the pattern once", tc.pattern, s.Unchecked())
		}
	}
	s, err := Compile(`{"type":"string","pattern":"^[\\u0041-\\u005A]+$"}`)
	if err != nil {
		t.Fatal(err)
	}
	if errs := s.Validate(`"ABC"`); errs != nil {
		t.Errorf("ABC: %q", errs)
	}
	if errs := s.Validate(`"abc"`); len(errs) != 1 {
		t.Errorf("abc: %q", errs)
	}
	for _, bad := range []string{`[`, `(?P<x`, `\\`, `a{2,1}`} {
		if _, err := Compile(`{"type":"string","pattern":"` + bad + `"}`); err == nil || !strings.Contains(err.Error(), "is not valid regex") {
			t.Errorf("%s: %v, want refused", bad, err)
		}
	}
}
