package provider

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// maxClosedDepth bounds how deep ClosedObjectSchemas rewrites nested
// schemas (the server's JSON decoding allows 10000 levels).
const maxClosedDepth = 32

// subschemaMaps are the keywords whose value maps names to schemas, and
// subschemaValues those whose value is a schema or a list of schemas.
var (
	subschemaMaps   = map[string]bool{"properties": true, "$defs": true, "definitions": true, "patternProperties": true, "dependentSchemas": true}
	subschemaValues = map[string]bool{"items": true, "prefixItems": true, "anyOf": true, "oneOf": true, "allOf": true, "not": true,
		"if": true, "then": true, "else": true, "contains": true}
)

// ClosedObjectSchemas gives every object-typed schema of a JSON Schema
// "additionalProperties": false, at every depth, the rest byte for byte and
// in the caller's key order: Anthropic's structured outputs refuse any other
// (400 "output_config.format.schema: For 'object' type,
// 'additionalProperties' must be explicitly set to false", and for an
// explicit true "'additionalProperties: true' is not supported"), which is
// what Anthropic's SDKs send for the caller (transform_schema). An absent
// value is added as the object's last key; a value other than false is
// replaced in place and counted in replaced, for a warning. A schema that
// is not one JSON object is returned as it is.
func ClosedObjectSchemas(schema json.RawMessage) (out json.RawMessage, replaced int) {
	out = rewriteSchema(bytes.TrimSpace(schema), 0, func(fields []jsonField) ([]jsonField, bool) {
		return closeNode(fields, &replaced)
	})
	return out, replaced
}

// RelocatedConstraints moves the keywords of every schema (at every depth)
// that unsupported reports into the schema's description, as Anthropic's
// SDKs do for its structured outputs, which refuse them with a 400 ("For
// 'integer' type, property 'minimum' is not supported"): the keyword is
// removed, and "{minimum: 1, maximum: 10}" is appended to the description
// (after a blank line) or becomes it, as the schema's last key. The rest
// keeps its bytes and key order. moved lists the keywords moved, once
// each, in the order met.
//
// unsupported is asked about each keyword with the schema's "type" (""
// when it is not one string).
func RelocatedConstraints(schema json.RawMessage, unsupported func(key string, value json.RawMessage, typ string) bool) (out json.RawMessage, moved []string) {
	out = rewriteSchema(bytes.TrimSpace(schema), 0, func(fields []jsonField) ([]jsonField, bool) {
		typ := ""
		for _, f := range fields {
			if f.key == "type" {
				_ = json.Unmarshal(f.value, &typ) // a list of types leaves ""
			}
		}
		return movedToDescription(fields, func(f jsonField) bool { return unsupported(f.key, f.value, typ) }, &moved)
	})
	return out, moved
}

// movedToDescription is fields without those move picks, each written
// into the description as "key: value" ("{minimum: 1, maximum: 10}",
// after a blank line; it becomes the description, as the last key, when
// there is none or it is empty or not a string), the keys added to
// *moved once each in the order met; fields and false when none is
// picked.
func movedToDescription(fields []jsonField, move func(jsonField) bool, moved *[]string) ([]jsonField, bool) {
	var kept []jsonField
	var notes []string
	descAt := -1
	for _, f := range fields {
		if move(f) {
			notes = append(notes, f.key+": "+string(compactJSON(f.value)))
			if !slices.Contains(*moved, f.key) {
				*moved = append(*moved, f.key)
			}
			continue
		}
		if f.key == "description" {
			descAt = len(kept)
		}
		kept = append(kept, f)
	}
	if len(notes) == 0 {
		return fields, false
	}
	note := "{" + strings.Join(notes, ", ") + "}"
	var desc string
	switch {
	case descAt >= 0 && json.Unmarshal(kept[descAt].value, &desc) == nil && desc != "":
		kept[descAt].value = jsonString(desc + "\n\n" + note)
	case descAt >= 0:
		kept[descAt].value = jsonString(note) // empty, or no string
	default:
		kept = append(kept, jsonField{"description", jsonString(note)})
	}
	return kept, true
}

// jsonString encodes s as a JSON string, <, > and & as they are.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// compactJSON is a JSON value without insignificant space.
func compactJSON(v json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// closeNode gives an object schema "additionalProperties": false.
func closeNode(fields []jsonField, replaced *int) ([]jsonField, bool) {
	object, hasProps, typed, closedAt := false, false, false, -1
	for i, f := range fields {
		switch f.key {
		case "type":
			typed, object = true, typeAllowsObject(f.value)
		case "properties":
			hasProps = true
		case "additionalProperties":
			closedAt = i
		}
	}
	if typed && !object || !typed && !hasProps {
		return fields, false
	}
	switch {
	case closedAt < 0:
		return append(fields, jsonField{"additionalProperties", json.RawMessage("false")}), true
	case string(bytes.TrimSpace(fields[closedAt].value)) != "false":
		fields[closedAt].value = json.RawMessage("false")
		*replaced++
		return fields, true
	}
	return fields, false
}

// rewriteSchema applies node to a schema object and, first, to each of its
// subschemas at every depth (up to maxClosedDepth); node returns the
// schema's fields and whether it changed them. What is unchanged keeps its
// bytes.
func rewriteSchema(raw json.RawMessage, depth int, node func([]jsonField) ([]jsonField, bool)) json.RawMessage {
	fields, ok := objectFieldsOf(raw)
	if !ok || depth > maxClosedDepth {
		return raw
	}
	changed := false
	for i, f := range fields {
		var nv json.RawMessage
		switch {
		case subschemaMaps[f.key]:
			nv = rewriteMap(f.value, depth, node)
		case subschemaValues[f.key]:
			nv = rewriteValue(f.value, depth, node)
		default:
			continue
		}
		if !bytes.Equal(nv, f.value) {
			fields[i].value = nv
			changed = true
		}
	}
	fields, nodeChanged := node(fields)
	if !changed && !nodeChanged {
		return raw
	}
	return writeObject(fields)
}

// rewriteMap rewrites the schemas that are the values of a name → schema
// map.
func rewriteMap(raw json.RawMessage, depth int, node func([]jsonField) ([]jsonField, bool)) json.RawMessage {
	fields, ok := objectFieldsOf(raw)
	if !ok {
		return raw
	}
	changed := false
	for i, f := range fields {
		if nv := rewriteSchema(f.value, depth+1, node); !bytes.Equal(nv, f.value) {
			fields[i].value = nv
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return writeObject(fields)
}

// rewriteValue rewrites a schema, or each schema of a list.
func rewriteValue(raw json.RawMessage, depth int, node func([]jsonField) ([]jsonField, bool)) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return rewriteSchema(t, depth+1, node)
	}
	var list []json.RawMessage
	if json.Unmarshal(t, &list) != nil {
		return raw
	}
	changed := false
	for i, s := range list {
		if nv := rewriteSchema(bytes.TrimSpace(s), depth+1, node); !bytes.Equal(nv, s) {
			list[i] = nv
			changed = true
		}
	}
	if !changed {
		return raw
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(s)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// typeAllowsObject reports whether a "type" value is "object" or a list
// holding it.
func typeAllowsObject(v json.RawMessage) bool {
	var one string
	if json.Unmarshal(v, &one) == nil {
		return one == "object"
	}
	var many []string
	if json.Unmarshal(v, &many) == nil {
		for _, t := range many {
			if t == "object" {
				return true
			}
		}
	}
	return false
}
