package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// MergeExtraBody sets the top-level fields of extra (ProviderOptions.
// extra_body: a JSON object as text) in a JSON object body: a field the body
// has is replaced in place, a new one is appended in extra's order, and the
// body's key order is kept. reserved fields are the adapter's own (stream,
// stream_options, model...): overriding them would break how the answer is
// read, so they are left alone with a warning. A field the body has with
// another value is replaced with a warning (ExtraFields).
func MergeExtraBody(body []byte, extra string, reserved ...string) ([]byte, []string, error) {
	return MergeExtra(body, extra, ExtraFields{Reserved: reserved})
}

// ExtraFields says how MergeExtra treats extra_body's fields that the
// body the adapter built already has.
//
// extra_body is the caller's way to send what the contract has no place
// for, and to override what the adapter chose on its own; it is not meant
// to undo the request. So a field the adapter built from the request
// (messages, temperature, tools, an Ollama "options" object holding
// num_predict...) that extra_body replaces with another value is replaced
// as asked, with a warning naming it (meta.warnings): the typed field
// said one thing, the request sent another. A field the adapter set on
// its own (Defaults: Ollama's truncate and shift, Anthropic's max_tokens
// when the request has none) is the caller's to override: no warning.
// Reserved fields are never overridden.
type ExtraFields struct {
	// Reserved are the fields the answer's reading depends on (model,
	// stream, stream_options...): extra_body's value is ignored, with a
	// warning.
	Reserved []string
	// Defaults are the fields the adapter set without the request asking
	// (its defaults): extra_body replaces them silently.
	Defaults []string
}

// ReplacedWarning is the warning for extra_body.<path> replacing a value
// the gateway built from the request.
func ReplacedWarning(path string) string {
	return fmt.Sprintf("extra_body.%s replaced the value the gateway built from the request", path)
}

// SameJSON reports whether a and b are the same JSON text but for
// insignificant white space (a caller repeating the value the request
// already gives replaces nothing).
func SameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// MergeExtra is MergeExtraBody with the adapter's reserved and default
// fields (ExtraFields).
func MergeExtra(body []byte, extra string, f ExtraFields) ([]byte, []string, error) {
	if extra == "" {
		return body, nil, nil
	}
	fields, err := objectFields(extra)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	set := map[string]json.RawMessage{}
	var order []string
	for _, fl := range fields {
		if slices.Contains(f.Reserved, fl.key) {
			warnings = append(warnings, fmt.Sprintf("extra_body.%s ignored: the gateway sets it", fl.key))
			continue
		}
		set[fl.key] = fl.value
		order = append(order, fl.key)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("extra_body: the request body is not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	write := func(k string, v json.RawMessage) {
		if n > 0 {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(k) // a string always encodes
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
		n++
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("extra_body: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("extra_body: unexpected token %v", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("extra_body: %w", err)
		}
		if ev, ok := set[key]; ok {
			if !slices.Contains(f.Defaults, key) && !SameJSON(v, ev) {
				warnings = append(warnings, ReplacedWarning(key))
			}
			v = ev
			delete(set, key)
		}
		write(key, v)
	}
	for _, k := range order {
		if v, ok := set[k]; ok {
			write(k, v)
		}
	}
	out.WriteByte('}')
	return out.Bytes(), warnings, nil
}

// CheckExtraBody reports what is wrong with an extra_body text (not a JSON
// object, a duplicate key, text after the object), as MergeExtraBody would;
// nil for an empty one. The server checks it before any adapter runs.
func CheckExtraBody(extra string) error {
	if extra == "" {
		return nil
	}
	_, err := objectFields(extra)
	return err
}

type field struct {
	key   string
	value json.RawMessage
}

// objectFields splits a JSON object text into its fields, in order. A
// duplicate key is an error: which copy a provider would read is undefined.
func objectFields(text string) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("extra_body: not a JSON object")
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("extra_body: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("extra_body: unexpected token %v", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("extra_body.%s: %w", key, err)
		}
		for _, f := range out {
			if f.key == key {
				return nil, fmt.Errorf("extra_body: duplicate field %q", key)
			}
		}
		out = append(out, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("extra_body: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra_body: text after the object")
	}
	return out, nil
}

// SchemaJSON is a JSON Schema sent as text (Tool.parameters,
// ResponseFormat.schema) as the raw JSON an adapter embeds in its request:
// the caller's bytes, key order kept; nil when empty. The server has
// checked the schema already; this only refuses text that is not JSON, so
// that an adapter used on its own fails clearly.
func SchemaJSON(text string) (json.RawMessage, error) {
	if text == "" {
		return nil, nil
	}
	if !json.Valid([]byte(text)) {
		return nil, fmt.Errorf("not valid JSON")
	}
	return json.RawMessage(text), nil
}

// TypedObjectSchema gives a tool schema object without a root "type" the
// type "object", as its first key, the rest byte for byte. OpenAI refuses a
// function whose parameters have no type ("schema must be a JSON Schema of
// 'type: \"object\"', got 'type: \"None\"'": the Vercel AI SDK's
// parameterless tool, openai/testdata/real_oljs_aisdk_responses_err_400_tool_schema.http)
// and Anthropic requires input_schema.type "object"; a function's arguments
// are always one object, so the type says nothing the call did not. A
// schema with a type (the server refuses one without "object") or that is
// not an object is left as it is.
func TypedObjectSchema(schema json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(schema)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return schema
	}
	var root map[string]json.RawMessage
	if json.Unmarshal(trimmed, &root) != nil {
		return schema
	}
	if _, ok := root["type"]; ok {
		return schema
	}
	rest := bytes.TrimSpace(trimmed[1:])
	out := make(json.RawMessage, 0, len(rest)+18)
	out = append(out, `{"type":"object"`...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// jsonField is one field of a JSON object, its value as written.
type jsonField struct {
	key   string
	value json.RawMessage
}

// objectFieldsOf splits a JSON object into its fields, in order. ok is false
// when raw is not one object or repeats a key (extra_body's own check,
// MergeExtra then reports it).
func objectFieldsOf(raw []byte) (fields []jsonField, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, isKey := tok.(string)
		if !isKey || seen[key] {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		seen[key] = true
		fields = append(fields, jsonField{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return fields, true
}

// writeObject renders fields as a JSON object, in order.
func writeObject(fields []jsonField) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key) // a string always encodes
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// mergeObjects merges over into base when both are JSON objects: base's
// fields keep their place, a field both have takes over's value (the two
// merged in turn when both are objects, except the fields named in whole), the fields only
// over has follow in its order. Otherwise over replaces base. path is
// base's place in the body ("generationConfig"); each value of base that
// over replaced with another adds a warning (ReplacedWarning).
func mergeObjects(base, over json.RawMessage, path string, whole []string, warnings *[]string) json.RawMessage {
	bf, ok := objectFieldsOf(base)
	if !ok {
		replaced(base, over, path, warnings)
		return over
	}
	of, ok := objectFieldsOf(over)
	if !ok {
		replaced(base, over, path, warnings)
		return over
	}
	at := make(map[string]int, len(of))
	for i, f := range of {
		at[f.key] = i
	}
	used := make([]bool, len(of))
	out := make([]jsonField, 0, len(bf)+len(of))
	for _, f := range bf {
		if i, both := at[f.key]; both {
			if slices.Contains(whole, f.key) {
				replaced(f.value, of[i].value, path+"."+f.key, warnings)
				f.value = of[i].value
			} else {
				f.value = mergeObjects(f.value, of[i].value, path+"."+f.key, whole, warnings)
			}
			used[i] = true
		}
		out = append(out, f)
	}
	for i, f := range of {
		if !used[i] {
			out = append(out, f)
		}
	}
	return writeObject(out)
}

// replaced adds the warning for the request's value at path that
// extra_body replaced with another.
func replaced(base, over json.RawMessage, path string, warnings *[]string) {
	if !SameJSON(base, over) {
		*warnings = append(*warnings, ReplacedWarning(path))
	}
}

// mergeExtraObjects returns extra_body with each top-level object the body
// also has as an object merged into the body's (mergeObjects), for
// MergeExtra to set in its place, the names of those objects and
// the warnings for the values the merge replaced. extra comes back
// unchanged when nothing merges, or when it is not a well-formed object
// (which MergeExtra then refuses).
func MergeExtraObjects(body []byte, extra string, merge func(key string) bool, whole []string) (merged string, objects, warnings []string) {
	if extra == "" {
		return extra, nil, nil
	}
	ef, ok := objectFieldsOf([]byte(extra))
	if !ok {
		return extra, nil, nil
	}
	bf, ok := objectFieldsOf(body)
	if !ok {
		return extra, nil, nil
	}
	ours := make(map[string]json.RawMessage, len(bf))
	for _, f := range bf {
		ours[f.key] = f.value
	}
	for i, f := range ef {
		if b, has := ours[f.key]; has && (merge == nil || merge(f.key)) && isJSONObject(b) && isJSONObject(f.value) {
			ef[i].value = mergeObjects(b, f.value, f.key, whole, &warnings)
			objects = append(objects, f.key)
		}
	}
	if len(objects) == 0 {
		return extra, nil, nil
	}
	return string(writeObject(ef)), objects, warnings
}

// isJSONObject reports whether raw is a JSON object (by its first byte).
func isJSONObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
