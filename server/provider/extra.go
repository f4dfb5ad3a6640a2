package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
)

// MergeExtraBody sets the top-level fields of extra (ProviderOptions.
// extra_body) in a JSON object body: a field the body has is replaced in
// place, a new one is appended (new fields sorted), and the body's key
// order is kept. reserved fields are the adapter's own (stream,
// stream_options, model...): overriding them would break how the answer is
// read, so they are left alone with a warning.
func MergeExtraBody(body []byte, extra *structpb.Struct, reserved ...string) ([]byte, []string, error) {
	if len(extra.GetFields()) == 0 {
		return body, nil, nil
	}
	var warnings []string
	set := map[string]json.RawMessage{}
	for _, k := range slices.Sorted(maps.Keys(extra.GetFields())) {
		if slices.Contains(reserved, k) {
			warnings = append(warnings, fmt.Sprintf("extra_body.%s ignored: the gateway sets it", k))
			continue
		}
		v, err := json.Marshal(extra.GetFields()[k].AsInterface())
		if err != nil {
			return nil, nil, fmt.Errorf("extra_body.%s: %w", k, err)
		}
		set[k] = v
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
			v = ev
			delete(set, key)
		}
		write(key, v)
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		write(k, set[k])
	}
	out.WriteByte('}')
	return out.Bytes(), warnings, nil
}
