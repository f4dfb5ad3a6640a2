package provider

import (
	"bytes"
	"encoding/json"
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
	out = closeSchema(bytes.TrimSpace(schema), 0, &replaced)
	return out, replaced
}

func closeSchema(raw json.RawMessage, depth int, replaced *int) json.RawMessage {
	fields, ok := objectFieldsOf(raw)
	if !ok || depth > maxClosedDepth {
		return raw
	}
	object, hasProps, closedAt := false, false, -1
	for i, f := range fields {
		switch {
		case f.key == "type":
			object = typeAllowsObject(f.value)
		case f.key == "properties":
			hasProps = true
		case f.key == "additionalProperties":
			closedAt = i
		}
	}
	if !object && !hasProps {
		// Not an object schema: its subschemas may be.
		return rewriteSubschemas(fields, raw, depth, replaced)
	}
	if typed := hasKey(fields, "type"); typed && !object {
		return rewriteSubschemas(fields, raw, depth, replaced)
	}
	out := rewriteSubschemas(fields, raw, depth, replaced) // fields take the rewritten subschemas
	switch {
	case closedAt < 0:
		fields = append(fields, jsonField{"additionalProperties", json.RawMessage("false")})
	case string(bytes.TrimSpace(fields[closedAt].value)) != "false":
		fields[closedAt].value = json.RawMessage("false")
		*replaced++
	default:
		return out
	}
	return writeObject(fields)
}

// rewriteSubschemas closes the object schemas among a schema's subschemas;
// it returns orig (when not nil) if none changed.
func rewriteSubschemas(fields []jsonField, orig json.RawMessage, depth int, replaced *int) json.RawMessage {
	changed := false
	for i, f := range fields {
		var nv json.RawMessage
		switch {
		case subschemaMaps[f.key]:
			nv = rewriteMap(f.value, depth, replaced)
		case subschemaValues[f.key]:
			nv = rewriteValue(f.value, depth, replaced)
		default:
			continue
		}
		if !bytes.Equal(nv, f.value) {
			fields[i].value = nv
			changed = true
		}
	}
	if !changed && orig != nil {
		return orig
	}
	return writeObject(fields)
}

// rewriteMap closes the schemas that are the values of a name → schema map.
func rewriteMap(raw json.RawMessage, depth int, replaced *int) json.RawMessage {
	fields, ok := objectFieldsOf(raw)
	if !ok {
		return raw
	}
	changed := false
	for i, f := range fields {
		if nv := closeSchema(f.value, depth+1, replaced); !bytes.Equal(nv, f.value) {
			fields[i].value = nv
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return writeObject(fields)
}

// rewriteValue closes a schema, or each schema of a list.
func rewriteValue(raw json.RawMessage, depth int, replaced *int) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return closeSchema(t, depth+1, replaced)
	}
	var list []json.RawMessage
	if json.Unmarshal(t, &list) != nil {
		return raw
	}
	changed := false
	for i, s := range list {
		if nv := closeSchema(bytes.TrimSpace(s), depth+1, replaced); !bytes.Equal(nv, s) {
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

func hasKey(fields []jsonField, key string) bool {
	for _, f := range fields {
		if f.key == key {
			return true
		}
	}
	return false
}
