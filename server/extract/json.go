package extract

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// maxValueDepth bounds how deep a value passed on in the response (tool
// input, result content, schema) is converted to google.protobuf.Value.
// Each JSON level costs up to three protobuf levels and protobuf refuses to
// marshal beyond 10000; deeper parts are given as their JSON text.
const maxValueDepth = 512

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is a decoded JSON value that keeps object members in document order
// and numbers as their literal text.
type node struct {
	kind kind
	// str is the string value, the number literal, or "true"/"false".
	str string
	// keys are the object member names, parallel to elems.
	keys []string
	// elems are the array elements or the object member values.
	elems []node
}

// get returns the value of the last member named key (as encoding/json and
// JavaScript do with duplicate names), or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return &n.elems[i]
		}
	}
	return nil
}

// has reports whether the object has a member named key (any value).
func (n *node) has(key string) bool { return n.get(key) != nil }

// object returns the member key when it is an object.
func (n *node) object(key string) *node {
	if v := n.get(key); v != nil && v.kind == kindObject {
		return v
	}
	return nil
}

// array returns the member key when it is an array.
func (n *node) array(key string) *node {
	if v := n.get(key); v != nil && v.kind == kindArray {
		return v
	}
	return nil
}

// stringMember returns the member key when it is a string.
func (n *node) stringMember(key string) (string, bool) {
	if v := n.get(key); v != nil && v.kind == kindString {
		return v.str, true
	}
	return "", false
}

// scalar returns the member key as text when it is a string or a number
// (ids are sometimes numbers).
func (n *node) scalar(key string) string {
	if v := n.get(key); v != nil && (v.kind == kindString || v.kind == kindNumber) {
		return v.str
	}
	return ""
}

// boolTrue reports whether the member key is the literal true.
func (n *node) boolTrue(key string) bool {
	v := n.get(key)
	return v != nil && v.kind == kindBool && v.str == "true"
}

// parseJSON decodes data, reporting invalid JSON as a *SyntaxError.
func parseJSON(data []byte) (node, error) {
	if !json.Valid(data) {
		return node{}, syntaxError(data)
	}
	// One copy of the input; unescaped strings are substrings of it.
	p := parser{src: string(data)}
	n, err := p.value()
	if err != nil {
		return node{}, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return node{}, errors.New("extract: internal error: trailing data after a valid JSON value")
	}
	return n, nil
}

// syntaxError returns the *SyntaxError encoding/json reports for data,
// known to be invalid.
func syntaxError(data []byte) error {
	var raw json.RawMessage
	err := json.Unmarshal(data, &raw)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// encoding/json counts the offending byte as read; report its
		// index instead, or the length when the input ends early. At the
		// end encoding/json either says so or feeds a virtual space.
		msg, off := se.Error(), se.Offset-1
		if se.Offset >= int64(len(data)) && (strings.HasPrefix(msg, "unexpected end") ||
			strings.Contains(msg, "character ' '") && data[len(data)-1] != ' ') {
			off = int64(len(data))
		}
		return &SyntaxError{Offset: min(max(off, 0), int64(len(data))), Msg: msg}
	case err != nil:
		return &SyntaxError{Offset: 0, Msg: err.Error()}
	default:
		return &SyntaxError{Offset: 0, Msg: "invalid JSON"}
	}
}

var errInternal = errors.New("extract: internal error: JSON parser out of step with validation")

// parser builds a node tree from JSON already checked by json.Valid. It
// still checks its bounds so a bug cannot turn into a panic. Children are
// collected on shared stacks and copied out at exact size.
type parser struct {
	src   string
	pos   int
	nodes []node
	keys  []string
	buf   []byte
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (node, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return node{}, errInternal
	}
	switch c := p.src[p.pos]; c {
	case '{':
		return p.objectValue()
	case '[':
		return p.arrayValue()
	case '"':
		s, err := p.stringValue()
		return node{kind: kindString, str: s}, err
	case 't':
		return p.literal("true", node{kind: kindBool, str: "true"})
	case 'f':
		return p.literal("false", node{kind: kindBool, str: "false"})
	case 'n':
		return p.literal("null", node{kind: kindNull})
	default:
		start := p.pos
		for p.pos < len(p.src) && isNumberByte(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == start {
			return node{}, errInternal
		}
		return node{kind: kindNumber, str: p.src[start:p.pos]}, nil
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func (p *parser) literal(word string, n node) (node, error) {
	if !strings.HasPrefix(p.src[p.pos:], word) {
		return node{}, errInternal
	}
	p.pos += len(word)
	return n, nil
}

func (p *parser) stringValue() (string, error) {
	start := p.pos + 1 // after the opening quote
	i := start
	for i < len(p.src) {
		c := p.src[i]
		if c == '"' {
			p.pos = i + 1
			return p.src[start:i], nil
		}
		if c == '\\' || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	// Escapes or non-ASCII: decode like encoding/json (invalid UTF-8 and
	// lone surrogates become U+FFFD).
	b := p.buf[:0]
	b = append(b, p.src[start:i]...)
	for i < len(p.src) {
		c := p.src[i]
		switch {
		case c == '"':
			p.pos = i + 1
			p.buf = b
			return string(b), nil
		case c == '\\':
			if i+1 >= len(p.src) {
				return "", errInternal
			}
			switch e := p.src[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := p.hex4(i + 2)
				if !ok {
					return "", errInternal
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := p.hex4(i + 2); ok && p.src[i] == '\\' && p.src[i+1] == 'u' {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							b = utf8.AppendRune(b, d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", errInternal
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(p.src[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, p.src[i:i+size]...)
			}
			i += size
		}
	}
	return "", errInternal
}

// hex4 decodes the four hex digits at i, if there are four.
func (p *parser) hex4(i int) (rune, bool) {
	if i < 0 || i+4 > len(p.src) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.src[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *parser) arrayValue() (node, error) {
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		return node{kind: kindArray}, nil
	}
	base := len(p.nodes)
	for {
		v, err := p.value()
		if err != nil {
			return node{}, err
		}
		p.nodes = append(p.nodes, v)
		p.skipSpace()
		if p.pos >= len(p.src) {
			return node{}, errInternal
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n := node{kind: kindArray, elems: slices.Clone(p.nodes[base:])}
			clear(p.nodes[base:])
			p.nodes = p.nodes[:base]
			return n, nil
		default:
			return node{}, errInternal
		}
	}
}

func (p *parser) objectValue() (node, error) {
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		return node{kind: kindObject}, nil
	}
	base, kbase := len(p.nodes), len(p.keys)
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return node{}, errInternal
		}
		k, err := p.stringValue()
		if err != nil {
			return node{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return node{}, errInternal
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return node{}, err
		}
		p.keys = append(p.keys, k)
		p.nodes = append(p.nodes, v)
		p.skipSpace()
		if p.pos >= len(p.src) {
			return node{}, errInternal
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n := node{kind: kindObject, keys: slices.Clone(p.keys[kbase:]), elems: slices.Clone(p.nodes[base:])}
			clear(p.nodes[base:])
			p.nodes = p.nodes[:base]
			p.keys = p.keys[:kbase]
			return n, nil
		default:
			return node{}, errInternal
		}
	}
}

// appendJSON appends n as compact JSON: members in document order, number
// literals as written.
func appendJSON(b []byte, n *node) []byte {
	switch n.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool, kindNumber:
		return append(b, n.str...)
	case kindString:
		return appendString(b, n.str)
	case kindArray:
		b = append(b, '[')
		for i := range n.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, &n.elems[i])
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i := range n.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, n.keys[i])
			b = append(b, ':')
			b = appendJSON(b, &n.elems[i])
		}
		return append(b, '}')
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s (valid UTF-8) as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// converter turns nodes into google.protobuf.Value, recording whether the
// depth bound was hit.
type converter struct {
	depthLimited bool
}

// value converts n. Numbers become doubles; a literal outside the double
// range stays a string with its literal text. Below maxValueDepth levels a
// container is given as a string holding its compact JSON.
func (c *converter) value(n *node, depth int) *structpb.Value {
	switch n.kind {
	case kindNull:
		return structpb.NewNullValue()
	case kindBool:
		return structpb.NewBoolValue(n.str == "true")
	case kindNumber:
		f, err := strconv.ParseFloat(n.str, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return structpb.NewStringValue(n.str)
		}
		return structpb.NewNumberValue(f)
	case kindString:
		return structpb.NewStringValue(n.str)
	}
	if depth >= maxValueDepth {
		c.depthLimited = true
		return structpb.NewStringValue(string(appendJSON(nil, n)))
	}
	if n.kind == kindArray {
		l := &structpb.ListValue{Values: make([]*structpb.Value, len(n.elems))}
		for i := range n.elems {
			l.Values[i] = c.value(&n.elems[i], depth+1)
		}
		return structpb.NewListValue(l)
	}
	return structpb.NewStructValue(c.object(n, depth))
}

// object converts an object node (depth = its own level).
func (c *converter) object(n *node, depth int) *structpb.Struct {
	s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(n.keys))}
	for i, k := range n.keys {
		s.Fields[k] = c.value(&n.elems[i], depth+1)
	}
	return s
}

// nodeFromValue converts a google.protobuf.Value into a node. Struct members
// are taken in key order (a Struct keeps none). Strings are made valid
// UTF-8; non-finite numbers (not JSON) become strings such as "NaN".
func nodeFromValue(v *structpb.Value) node {
	switch k := v.GetKind().(type) {
	case *structpb.Value_BoolValue:
		if k.BoolValue {
			return node{kind: kindBool, str: "true"}
		}
		return node{kind: kindBool, str: "false"}
	case *structpb.Value_NumberValue:
		f := k.NumberValue
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return node{kind: kindString, str: strconv.FormatFloat(f, 'g', -1, 64)}
		}
		return node{kind: kindNumber, str: strconv.FormatFloat(f, 'g', -1, 64)}
	case *structpb.Value_StringValue:
		return node{kind: kindString, str: strings.ToValidUTF8(k.StringValue, "\uFFFD")}
	case *structpb.Value_ListValue:
		vals := k.ListValue.GetValues()
		n := node{kind: kindArray, elems: make([]node, len(vals))}
		for i, e := range vals {
			n.elems[i] = nodeFromValue(e)
		}
		return n
	case *structpb.Value_StructValue:
		fields := k.StructValue.GetFields()
		keys := make([]string, 0, len(fields))
		for key := range fields {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		n := node{kind: kindObject, keys: make([]string, len(keys)), elems: make([]node, len(keys))}
		for i, key := range keys {
			n.keys[i] = strings.ToValidUTF8(key, "\uFFFD")
			n.elems[i] = nodeFromValue(fields[key])
		}
		return n
	default: // null, or no kind set
		return node{kind: kindNull}
	}
}
