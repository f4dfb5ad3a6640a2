package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// structuredAnswer is the reply to a JSON response format: for a schema, a
// value filled from it with properties in schema order (the order strict
// structured output generates them in); for JSON_OBJECT, {"answer": text}.
// Members are separated by ", " and ": " so that the answer has words that
// max_tokens can cut, as a model's would be.
func structuredAnswer(rf *llmrelayv1.ResponseFormat, text string) (string, bool) {
	switch rf.GetType() {
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
		var b strings.Builder
		writeValue(&b, &node{kind: kindObject, keys: []string{"answer"}, vals: []*node{{kind: kindString, str: "You said: " + text}}})
		return b.String(), true
	case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
		s, err := parseOrdered(rf.GetSchema())
		if err != nil {
			return "{}", true // the server refuses such a schema before any provider sees it
		}
		var b strings.Builder
		writeValue(&b, instance(s, text, 0))
		return b.String(), true
	default:
		return "", false
	}
}

// maxDepth bounds the nesting of generated values (recursive schemas).
const maxDepth = 8

// instance builds a value for a schema: const, the first enum value, the
// first anyOf/oneOf branch, the first allOf branch with a type; objects get
// every property in schema order, arrays minItems items; strings are the
// text, numbers their minimum or 1, booleans true.
func instance(s *node, text string, depth int) *node {
	if s == nil || s.kind != kindObject || depth > maxDepth {
		return &node{kind: kindObject}
	}
	if c := s.get("const"); c != nil {
		return c
	}
	if e := s.get("enum"); e != nil && e.kind == kindArray && len(e.vals) > 0 {
		return e.vals[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if l := s.get(k); l != nil && l.kind == kindArray && len(l.vals) > 0 && s.get("type") == nil && s.get("properties") == nil {
			return instance(l.vals[0], text, depth+1)
		}
	}
	typ := ""
	switch t := s.get("type"); {
	case t == nil:
		if s.get("properties") != nil {
			typ = "object"
		}
	case t.kind == kindString:
		typ = t.str
	case t.kind == kindArray:
		for _, v := range t.vals {
			if v.kind == kindString && v.str != "null" {
				typ = v.str
				break
			}
		}
	}
	switch typ {
	case "object":
		out := &node{kind: kindObject}
		if props := s.get("properties"); props != nil && props.kind == kindObject {
			for i, k := range props.keys {
				out.keys = append(out.keys, k)
				out.vals = append(out.vals, instance(props.vals[i], text, depth+1))
			}
		}
		return out
	case "array":
		out := &node{kind: kindArray}
		if n := s.get("minItems"); n != nil && n.kind == kindNumber {
			count, _ := strconv.Atoi(n.str)
			for i := 0; i < min(count, 16); i++ {
				out.vals = append(out.vals, instance(s.get("items"), text, depth+1))
			}
		}
		return out
	case "integer", "number":
		if m := s.get("minimum"); m != nil && m.kind == kindNumber {
			return m
		}
		return &node{kind: kindNumber, str: "1"}
	case "boolean":
		return &node{kind: kindLiteral, str: "true"}
	case "null":
		return &node{kind: kindLiteral, str: "null"}
	case "string":
		if f := s.get("format"); f != nil && f.kind == kindString && formatExamples[f.str] != "" {
			// The server checks formats: the text is no date-time.
			return &node{kind: kindString, str: formatExamples[f.str]}
		}
		if text == "" {
			text = "example"
		}
		return &node{kind: kindString, str: text}
	default:
		return &node{kind: kindObject}
	}
}

// formatExamples are values of the string formats the server checks
// (santhosh-tekuri/jsonschema's), for the ones the providers' structured
// outputs list and a few more.
var formatExamples = map[string]string{
	"date-time":             "1970-01-01T00:00:00Z",
	"date":                  "1970-01-01",
	"time":                  "00:00:00Z",
	"duration":              "P1D",
	"email":                 "user@example.com",
	"idn-email":             "user@example.com",
	"hostname":              "example.com",
	"idn-hostname":          "example.com",
	"ipv4":                  "192.0.2.1",
	"ipv6":                  "2001:db8::1",
	"uuid":                  "00000000-0000-4000-8000-000000000000",
	"uri":                   "https://example.com/",
	"iri":                   "https://example.com/",
	"uri-reference":         "https://example.com/",
	"iri-reference":         "https://example.com/",
	"uri-template":          "https://example.com/{id}",
	"json-pointer":          "/a",
	"relative-json-pointer": "0",
	"regex":                 "^a$",
	"period":                "1970-01-01T00:00:00Z/P1D",
	"semver":                "1.0.0",
}

// node is a JSON value that keeps object member order (encoding/json maps
// do not).
type node struct {
	kind int
	str  string // string value, number literal, or true/false/null
	keys []string
	vals []*node // object member values (with keys) or array items
}

const (
	kindObject = iota
	kindArray
	kindString
	kindNumber
	kindLiteral
)

func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func parseOrdered(text string) (*node, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("text after the schema")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: kindArray}
		if t == '{' {
			n.kind = kindObject
		}
		for dec.More() {
			if n.kind == kindObject {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string) // object keys are strings
				n.keys = append(n.keys, key)
			}
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token() // the closing delimiter
		return n, err
	case string:
		return &node{kind: kindString, str: t}, nil
	case json.Number:
		return &node{kind: kindNumber, str: t.String()}, nil
	case bool:
		return &node{kind: kindLiteral, str: strconv.FormatBool(t)}, nil
	default:
		return &node{kind: kindLiteral, str: "null"}, nil
	}
}

func writeValue(b *strings.Builder, n *node) {
	switch n.kind {
	case kindObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, k)
			b.WriteString(": ")
			writeValue(b, n.vals[i])
		}
		b.WriteByte('}')
	case kindArray:
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, v)
		}
		b.WriteByte(']')
	case kindString:
		writeString(b, n.str)
	default:
		b.WriteString(n.str)
	}
}

func writeString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
