package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// streamedCall is a function call whose arguments Gemini streams as
// partialArgs pieces (Vertex AI's streamFunctionCallArguments): it is
// converted into one whole tool call when its closing part arrives.
type streamedCall struct {
	id, name, signature string
	args                argNode
	held                heldHalf
}

// heldHalf is the high half of a surrogate pair a UTF-16 server cut off
// the end of a string piece (its escape, provider.SurrogateJoin), held for
// the next piece, and the leaf it belongs to. The next piece joins it when
// it continues the same string with the low half; any other piece, or the
// call's end, releases it into its string as U+FFFD.
type heldHalf struct {
	leaf *argNode
	join provider.SurrogateJoin
}

// flush releases a held half into its string as U+FFFD.
func (h *heldHalf) flush() {
	if t := h.join.Flush(); t != "" && h.leaf != nil && h.leaf.str != nil {
		h.leaf.str.WriteString(t)
	}
	h.leaf = nil
}

// add applies one partialArgs piece to the call's arguments.
func (c *streamedCall) add(pa partialArg) error {
	return c.args.apply(pa, &c.held)
}

// text returns the call's assembled arguments, a half still held released
// as U+FFFD.
func (c *streamedCall) text() string {
	c.held.flush()
	return c.args.text()
}

// argNode is a node of the arguments being assembled: an object (keys in
// the order they first came), an array, or a leaf (a string being
// concatenated, or a raw JSON value).
type argNode struct {
	keys  []string
	obj   map[string]*argNode
	arr   []*argNode
	str   *strings.Builder
	raw   json.RawMessage
	isObj bool
	isArr bool
}

// pathStep is one step of a jsonPath: an object key or an array index.
type pathStep struct {
	key   string
	index int
	isKey bool
}

// parseArgPath parses the jsonPath forms Gemini sends: "$" followed by
// ".key", "['key']" or "[n]" steps.
func parseArgPath(p string) ([]pathStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("partial argument path %q does not start with $", p)
	}
	rest := p[1:]
	var steps []pathStep
	for rest != "" {
		switch {
		case rest[0] == '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("partial argument path %q has an empty key", p)
			}
			steps = append(steps, pathStep{key: rest[:end], isKey: true})
			rest = rest[end:]
		case strings.HasPrefix(rest, "['"):
			end := strings.Index(rest, "']")
			if end < 0 {
				return nil, fmt.Errorf("partial argument path %q has an unclosed key", p)
			}
			steps = append(steps, pathStep{key: rest[2:end], isKey: true})
			rest = rest[end+2:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("partial argument path %q has an unclosed index", p)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("partial argument path %q has a bad index", p)
			}
			steps = append(steps, pathStep{index: n})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("partial argument path %q not understood", p)
		}
	}
	return steps, nil
}

// apply sets (or, for a string, extends) the value at the piece's path. h
// (nil: none) holds a high half cut off the end of a string piece for the
// next piece: only a string piece at the same path continues it.
func (n *argNode) apply(pa partialArg, h *heldHalf) error {
	cur, err := n.at(pa.JSONPath)
	if h != nil && (err != nil || pa.StringValue == nil || cur != h.leaf) {
		h.flush()
	}
	if err != nil {
		return err
	}
	switch {
	case pa.StringValue != nil:
		if cur.str == nil {
			if cur.isObj || cur.isArr || cur.raw != nil {
				return fmt.Errorf("partial argument path %q: a string after another value", pa.JSONPath)
			}
			cur.str = &strings.Builder{}
		}
		text := *pa.StringValue
		if h != nil {
			text = h.join.Text(text, pa.rawString)
			h.leaf = nil
			if h.join.Held() {
				h.leaf = cur
			}
		}
		cur.str.WriteString(text)
	case present(pa.NumberValue):
		cur.raw = pa.NumberValue
	case present(pa.BoolValue):
		cur.raw = pa.BoolValue
	case pa.NullValue != nil:
		cur.raw = json.RawMessage("null")
	default:
		return fmt.Errorf("partial argument path %q has no value", pa.JSONPath)
	}
	return nil
}

// at returns the node at path, creating the nodes on the way.
func (n *argNode) at(path string) (*argNode, error) {
	steps, err := parseArgPath(path)
	if err != nil {
		return nil, err
	}
	cur := n
	for _, st := range steps {
		cur, err = cur.child(st, path)
		if err != nil {
			return nil, err
		}
	}
	return cur, nil
}

// child returns the node one step below n, creating it (and making n an
// object or array) as needed.
func (n *argNode) child(st pathStep, path string) (*argNode, error) {
	if st.isKey {
		if n.isArr || n.str != nil || n.raw != nil {
			return nil, fmt.Errorf("partial argument path %q: key %q under a non-object", path, st.key)
		}
		if !n.isObj {
			n.isObj, n.obj = true, map[string]*argNode{}
		}
		c := n.obj[st.key]
		if c == nil {
			c = &argNode{}
			n.obj[st.key] = c
			n.keys = append(n.keys, st.key)
		}
		return c, nil
	}
	if n.isObj || n.str != nil || n.raw != nil {
		return nil, fmt.Errorf("partial argument path %q: index under a non-array", path)
	}
	n.isArr = true
	if st.index > len(n.arr) {
		return nil, fmt.Errorf("partial argument path %q: index %d skips elements", path, st.index)
	}
	if st.index == len(n.arr) {
		n.arr = append(n.arr, &argNode{})
	}
	return n.arr[st.index], nil
}

// encode writes the node as compact JSON; an untouched root is {}.
func (n *argNode) encode(b *bytes.Buffer) {
	switch {
	case n.isArr:
		b.WriteByte('[')
		for i, c := range n.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			c.encode(b)
		}
		b.WriteByte(']')
	case n.str != nil:
		writeJSONString(b, n.str.String())
	case n.raw != nil:
		b.Write(n.raw)
	default: // an object, or a root no piece touched
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			n.obj[k].encode(b)
		}
		b.WriteByte('}')
	}
}

// text returns the assembled arguments.
func (n *argNode) text() string {
	var b bytes.Buffer
	n.encode(&b)
	return b.String()
}

// writeJSONString writes s as a JSON string, leaving <, > and & as they
// are (the model's text, not HTML).
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes; Buffer writes do not fail
	b.Truncate(b.Len() - 1) // Encode's newline
}
