package extract

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// ArgumentsForm says which rule normalized a tool call's arguments.
type ArgumentsForm int

const (
	// ArgumentsMissing: no arguments, or JSON null. Input is {}.
	ArgumentsMissing ArgumentsForm = iota + 1
	// ArgumentsObject: a JSON object, kept as is.
	ArgumentsObject
	// ArgumentsString: a JSON string holding a JSON object (OpenAI), parsed.
	ArgumentsString
	// ArgumentsBlank: an empty or whitespace-only string. Input is {}.
	ArgumentsBlank
	// ArgumentsWrapped: any other value v (array, number, bool, or a string
	// holding such JSON), wrapped as {"value": v}.
	ArgumentsWrapped
	// ArgumentsMalformed: a string that is not JSON. Input is nil and Raw
	// holds the string verbatim.
	ArgumentsMalformed
)

var formNames = map[ArgumentsForm]string{
	ArgumentsMissing:   "missing",
	ArgumentsObject:    "object",
	ArgumentsString:    "string",
	ArgumentsBlank:     "blank",
	ArgumentsWrapped:   "wrapped",
	ArgumentsMalformed: "malformed",
}

func (f ArgumentsForm) String() string {
	if s, ok := formNames[f]; ok {
		return s
	}
	return "unknown"
}

// Arguments is a tool call's arguments, normalized by the rules every part
// of the gateway shares (see ParseArguments).
type Arguments struct {
	// Form is the rule that applied.
	Form ArgumentsForm
	// Input is the arguments as a JSON object; nil only when Malformed.
	Input *structpb.Struct
	// Raw is the string verbatim when the arguments are a string that is
	// not JSON (Form == ArgumentsMalformed).
	Raw string
	// Text is the arguments as JSON text, as the model produced them: the
	// string's contents when the arguments are a JSON string (possibly
	// malformed), else the compact JSON of the value with members in their
	// order and number literals as written; "{}" when missing. Adapters use
	// it for ToolCall.arguments.
	Text string
	// Valid reports whether Text is a JSON object (ToolCall.arguments_valid).
	Valid bool
	// DepthLimitReached: Input nests deeper than 512 levels; the deepest
	// parts are given as JSON text strings.
	DepthLimitReached bool
}

// Malformed reports whether the arguments were a string that is not JSON.
func (a Arguments) Malformed() bool { return a.Form == ArgumentsMalformed }

// ParseArguments normalizes raw tool-call arguments, the JSON value of an
// `input`, `arguments`, `args` or `parameters` member:
//
//   - an object is kept;
//   - a JSON string holding a JSON object (OpenAI) is parsed;
//   - a string that is not JSON is malformed: Raw and Text hold it verbatim;
//   - an empty or whitespace-only string, null, or nothing gives {};
//   - any other value v, direct or inside a string, gives {"value": v}.
//
// Bytes in raw that are not JSON at all are treated as malformed arguments
// text, never as an error: provider output must not fail a call.
func ParseArguments(raw json.RawMessage) Arguments {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		a := parseArgumentsNode(nil)
		a.Text, a.Valid = "{}", true
		return a
	}
	n, err := parseJSON(trimmed)
	if err != nil {
		text := string(raw)
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		return Arguments{Form: ArgumentsMalformed, Raw: text, Text: text}
	}
	a := parseArgumentsNode(&n)
	switch {
	case n.kind == kindString:
		a.Text = n.str
		a.Valid = a.Form == ArgumentsString
	case a.Form == ArgumentsMissing:
		a.Text, a.Valid = "{}", true
	default:
		var b bytes.Buffer
		if err := json.Compact(&b, trimmed); err != nil {
			// Unreachable: trimmed was validated. Fall back to the node.
			a.Text = string(appendJSON(nil, &n))
		} else {
			a.Text = b.String()
		}
		a.Valid = n.kind == kindObject
	}
	return a
}

// parseArgumentsNode applies the rules to a decoded value (nil: absent).
// Text and Valid are left to ParseArguments.
func parseArgumentsNode(n *node) Arguments {
	var c converter
	a := Arguments{}
	switch {
	case n == nil || n.kind == kindNull:
		a.Form, a.Input = ArgumentsMissing, &structpb.Struct{Fields: map[string]*structpb.Value{}}
	case n.kind == kindObject:
		a.Form, a.Input = ArgumentsObject, c.object(n, 0)
	case n.kind == kindString:
		if strings.TrimSpace(n.str) == "" {
			a.Form, a.Input = ArgumentsBlank, &structpb.Struct{Fields: map[string]*structpb.Value{}}
			break
		}
		inner, err := parseJSON([]byte(n.str))
		switch {
		case err != nil:
			a.Form, a.Raw = ArgumentsMalformed, n.str
		case inner.kind == kindObject:
			a.Form, a.Input = ArgumentsString, c.object(&inner, 0)
		default:
			a.Form, a.Input = ArgumentsWrapped, wrapValue(c.value(&inner, 1))
		}
	default:
		a.Form, a.Input = ArgumentsWrapped, wrapValue(c.value(n, 1))
	}
	a.DepthLimitReached = c.depthLimited
	return a
}

func wrapValue(v *structpb.Value) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{"value": v}}
}
