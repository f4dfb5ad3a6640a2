package anthropic

import (
	"fmt"
	"strings"
	"unicode"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// callPairs checks, as convertMessages builds the wire messages, what the
// Messages API requires of tool use: "Each tool_result block must have a
// corresponding tool_use block in the previous message" and each tool_use
// block a tool_result in the next message ("tool_use ids were found
// without tool_result blocks immediately after"). The API answers either
// with a 400 that names its own message index (messages.N, after merging
// and with system messages taken out); here the request's part is named.
// An assistant turn with calls that ends the conversation needs no
// results.
type callPairs struct {
	// calls are the tool_use ids of the last assistant wire message, with
	// the field of each; answered, those the user wire message after it
	// answered so far.
	calls    []callRef
	answered map[string]bool
	// lastRole is the role of the last wire message ("" before the first).
	lastRole string
}

type callRef struct{ id, field string }

// add records message i (already converted, to a wire message of role,
// merged or new) and returns the first pairing the API refuses.
func (c *callPairs) add(i int, m *llmrelayv1.Message, role string) error {
	if role == "assistant" {
		if c.lastRole != "assistant" {
			if err := c.unanswered(); err != nil {
				return err
			}
			c.calls, c.answered = nil, map[string]bool{}
		}
		for j, p := range m.GetParts() {
			if tc := p.GetToolCall(); tc != nil {
				c.calls = append(c.calls, callRef{tc.GetCallId(), fmt.Sprintf("messages[%d].parts[%d].tool_call.call_id", i, j)})
			}
		}
		c.lastRole = role
		return nil
	}
	for j, p := range m.GetParts() {
		tr := p.GetToolResult()
		if tr == nil {
			continue
		}
		known := false
		for _, call := range c.calls {
			known = known || call.id == tr.GetCallId()
		}
		if !known {
			return invalid(fmt.Sprintf("messages[%d].parts[%d].tool_result.call_id", i, j),
				"%q answers no tool call of the assistant turn just before it: anthropic takes a tool result only in the user turn after its call", tr.GetCallId())
		}
		c.answered[tr.GetCallId()] = true
	}
	c.lastRole = role
	return nil
}

// unanswered is the error for the first call of the last assistant turn
// that the user turn after it did not answer; nil when the conversation
// ends with that assistant turn.
func (c *callPairs) unanswered() error {
	if c.lastRole != "user" {
		return nil
	}
	for _, call := range c.calls {
		if !c.answered[call.id] {
			return invalid(call.field, "tool call %q has no tool_result in the turn after it: anthropic requires the result of every call of an assistant turn in the next user turn", call.id)
		}
	}
	return nil
}

// checkPrefill refuses, naming the part, an assistant turn that ends the
// conversation (a prefill) with text ending in whitespace: the API answers
// it with a 400 "messages: final assistant content cannot end with
// trailing whitespace" that names no message.
func checkPrefill(in []*llmrelayv1.Message, out []wireMessage) error {
	if len(out) == 0 || out[len(out)-1].Role != "assistant" {
		return nil
	}
	blocks := out[len(out)-1].Content
	last := blocks[len(blocks)-1]
	if last.Type != "text" || strings.TrimRightFunc(last.Text, unicode.IsSpace) == last.Text {
		return nil
	}
	// The block is the last non-empty text or refusal of the last
	// assistant message (system messages go elsewhere, empty ones nowhere).
	for i := len(in) - 1; i >= 0; i-- {
		if in[i].GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
			continue
		}
		parts := in[i].GetParts()
		for j := len(parts) - 1; j >= 0; j-- {
			field := ""
			switch {
			case parts[j].GetText() != "":
				field = "text"
			case parts[j].GetRefusal() != "":
				field = "refusal"
			default:
				continue
			}
			return invalid(fmt.Sprintf("messages[%d].parts[%d].%s", i, j, field),
				"the assistant turn that ends the conversation (a prefill) ends in whitespace, which anthropic refuses: trim it")
		}
	}
	return nil
}
