package anthropic

import (
	"fmt"

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
