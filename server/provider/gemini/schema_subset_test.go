package gemini

import (
	"encoding/json"
	"slices"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestResponseSchemaSubsetWarned: responseJsonSchema holds the answer to
// the keywords its API reference lists only; a schema with others
// (pydantic's constr and Literal, Zod's regex and length checks) is sent
// whole, and the answer carries a warning naming what Gemini does not
// enforce, found at every depth the schema nests schemas. A schema within
// the subset gets none.
func TestResponseSchemaSubsetWarned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema string
		want         string // "" no warning
	}{
		{"subset only", `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":5},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1}},"required":["n"],"additionalProperties":false,"propertyOrdering":["n","tags"],"$defs":{"x":{"type":"string","format":"date","description":"d"}}}`, ""},
		{"nested constraints", `{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$","minLength":3},"kind":{"const":"order"},` +
			`"lines":{"type":"array","uniqueItems":true,"items":{"type":"object","properties":{"qty":{"type":"integer","exclusiveMinimum":0}}}}},` +
			`"$defs":{"d":{"allOf":[{"$ref":"#/$defs/e"}]},"e":{"type":"string","maxLength":9}}}`,
			"options.response_format.schema: Gemini's responseJsonSchema supports a subset of JSON Schema and does not hold the answer to allOf, const, exclusiveMinimum, maxLength, minLength, pattern, uniqueItems; the schema is sent whole and the server checks the answer against all of it"},
		{"oneOf", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer","multipleOf":2}]}}}`,
			"options.response_format.schema: Gemini's responseJsonSchema supports a subset of JSON Schema and does not hold the answer to multipleOf and reads oneOf as anyOf; the schema is sent whole and the server checks the answer against all of it"},
		{"draft-04 items list", `{"type":"array","items":[{"type":"string","pattern":"x"},{"type":"integer"}]}`,
			"options.response_format.schema: Gemini's responseJsonSchema supports a subset of JSON Schema and does not hold the answer to pattern; the schema is sent whole and the server checks the answer against all of it"},
		// A property named like a keyword is a name, not a keyword.
		{"property names", `{"type":"object","properties":{"pattern":{"type":"string"},"const":{"type":"integer"}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := &provider.Request{Model: "gemini-2.5-flash",
				Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "Give an order."}}}}},
				Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
					Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: tc.schema}}}
			out, warnings, err := buildRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(out.GenerationConfig.ResponseJSONSchema); got != tc.schema {
				t.Errorf("responseJsonSchema %s, want the caller's bytes", got)
			}
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(warnings, want) {
				t.Errorf("warnings %q, want %q", warnings, want)
			}
		})
	}
	if k, oneOf := unsupportedKeywords(json.RawMessage(`true`)); k != nil || oneOf {
		t.Errorf("boolean schema: %q %v", k, oneOf)
	}
}
