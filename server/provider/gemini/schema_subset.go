package gemini

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// unenforced are the JSON Schema keywords that constrain a value and that
// responseJsonSchema does not support: the API reference lists what it
// supports (GenerationConfig.responseJsonSchema: "While the full JSON
// Schema may be sent, not all features are supported. Specifically, only
// the following properties are supported: $id, $defs, $ref, $anchor, type,
// format, title, description, enum (for strings and numbers), items,
// prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf
// (interpreted the same as anyOf), properties, additionalProperties,
// required. The non-standard propertyOrdering property may also be
// set."). Annotations and vendor keywords constrain nothing and are not
// named.
var unenforced = map[string]bool{
	"pattern": true, "minLength": true, "maxLength": true, "const": true, "allOf": true, "not": true,
	"if": true, "then": true, "else": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"uniqueItems": true, "contains": true, "minContains": true, "maxContains": true, "minProperties": true,
	"maxProperties": true, "patternProperties": true, "propertyNames": true, "dependentRequired": true,
	"dependentSchemas": true, "dependencies": true, "unevaluatedProperties": true, "unevaluatedItems": true,
	"additionalItems": true, "$dynamicRef": true, "$recursiveRef": true,
}

// maxSchemaWalk bounds the nodes unsupportedKeywords visits.
const maxSchemaWalk = 10000

// unsupportedKeywords lists, sorted and once each, the keywords of a
// response schema that Gemini does not constrain its answer to (pattern,
// minLength, const, allOf, ...), and whether a oneOf is read as anyOf. The
// schema is sent whole; the server still checks the answer against every
// keyword, so the warning says why a Gemini answer can fail that check.
func unsupportedKeywords(schema json.RawMessage) (keywords []string, oneOf bool) {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return nil, false
	}
	seen := map[string]bool{}
	visited := 0
	var walk func(v any)
	walkAll := func(v any) {
		switch c := v.(type) {
		case []any:
			for _, s := range c {
				walk(s)
			}
		case map[string]any:
			for _, s := range c {
				walk(s)
			}
		}
	}
	walk = func(v any) {
		node, ok := v.(map[string]any)
		if !ok || visited >= maxSchemaWalk {
			return
		}
		visited++
		for k, sub := range node {
			switch k {
			case "properties", "$defs", "definitions", "anyOf", "oneOf", "prefixItems":
				walkAll(sub) // a map or a list of schemas
				if k == "oneOf" {
					oneOf = true
				}
			case "items", "additionalProperties":
				if list, isList := sub.([]any); isList {
					walkAll(list) // draft-04 items as a list
				} else {
					walk(sub)
				}
			default:
				if unenforced[k] && !seen[k] {
					seen[k] = true
					keywords = append(keywords, k)
				}
			}
		}
	}
	walk(root)
	slices.Sort(keywords)
	return keywords, oneOf
}

// schemaSubsetWarning is the warning for a response schema with keywords
// Gemini does not enforce, "" when it has none.
func schemaSubsetWarning(schema json.RawMessage) string {
	keywords, oneOf := unsupportedKeywords(schema)
	var parts []string
	if len(keywords) > 0 {
		parts = append(parts, "does not hold the answer to "+strings.Join(keywords, ", "))
	}
	if oneOf {
		parts = append(parts, "reads oneOf as anyOf")
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("options.response_format.schema: Gemini's responseJsonSchema supports a subset of JSON Schema and %s; "+
		"the schema is sent whole and the server checks the answer against all of it", strings.Join(parts, " and "))
}
