package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Answer renders what two calls that gave the same answer share, for
// unary/stream parity tests over two recordings: the parts in order with
// their text, refusal and reasoning text (and whether the reasoning is
// redacted or signed), tool names, arguments (as compact JSON when they
// parse) and their validity. It leaves out call ids, reasoning ids and
// signature values, which two real calls never share.
func Answer(m *llmrelayv1.Message) string {
	var b strings.Builder
	for i, p := range m.GetParts() {
		if i > 0 {
			b.WriteString("\n")
		}
		switch k := p.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			b.WriteString("text " + strconv.Quote(k.Text))
		case *llmrelayv1.Part_Refusal:
			b.WriteString("refusal " + strconv.Quote(k.Refusal))
		case *llmrelayv1.Part_Reasoning:
			r := k.Reasoning
			fmt.Fprintf(&b, "reasoning %q redacted=%v signed=%v", r.GetText(), r.GetRedacted(), r.GetSignature() != "")
		case *llmrelayv1.Part_ToolCall:
			c := k.ToolCall
			args := c.GetArguments()
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(args)) == nil {
				args = compact.String()
			}
			fmt.Fprintf(&b, "call %s %s valid=%v signed=%v", c.GetName(), args, c.GetArgumentsValid(), c.GetSignature() != "")
		case *llmrelayv1.Part_ProviderItem:
			// The type only: the JSON holds ids and opaque state two
			// calls never share.
			fmt.Fprintf(&b, "item %s", k.ProviderItem.GetType())
		default:
			fmt.Fprintf(&b, "part %T", k)
		}
	}
	return b.String()
}
