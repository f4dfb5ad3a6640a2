package provider

import (
	"bytes"
	"encoding/json"
)

// RefSiblings moves the keywords that stand beside a "$ref" and that
// allowed refuses into that schema's description, at every depth (as
// RelocatedConstraints moves constraints): a schema {"$ref": "#/$defs/X",
// "title": "X", "description": "d"} becomes {"$ref": "#/$defs/X",
// "description": "d\n\n{title: \"X\"}"}, the rest in its bytes and key
// order. A schema without "$ref" is left as it is. moved lists the
// keywords moved, once each, in the order met. allowed must take
// "description", where the keywords go.
func RefSiblings(schema json.RawMessage, allowed func(key string) bool) (out json.RawMessage, moved []string) {
	depth := 0
	var node func(fields []jsonField) ([]jsonField, bool)
	node = func(fields []jsonField) ([]jsonField, bool) {
		changed := false
		ref := false
		for i, f := range fields {
			if f.key == "$ref" {
				ref = true
			}
			// rewriteSchema does not walk a schema-valued
			// additionalProperties, which may hold a $ref too.
			if f.key == "additionalProperties" && depth < maxClosedDepth {
				depth++
				if nv := rewriteSchema(bytes.TrimSpace(f.value), 0, node); !bytes.Equal(nv, bytes.TrimSpace(f.value)) {
					fields[i].value = nv
					changed = true
				}
				depth--
			}
		}
		if !ref {
			return fields, changed
		}
		kept, moves := movedToDescription(fields, func(f jsonField) bool { return !allowed(f.key) }, &moved)
		return kept, changed || moves
	}
	out = rewriteSchema(bytes.TrimSpace(schema), 0, node)
	return out, moved
}
