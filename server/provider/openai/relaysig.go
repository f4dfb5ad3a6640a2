package openai

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// relaysReasoningState reports whether the deployment is a relay that
// carries the upstream's reasoning state back on Chat Completions:
// reasoning_details (OpenRouter, the Vercel AI Gateway, or as configured)
// or Venice's forms (reasoning_details, the message's and the calls'
// thought_signature). Only there is an upstream's refusal of that state
// one the request can be repaired for (relayWithoutSignatures).
func (p *Provider) relaysReasoningState() bool {
	return !p.googleCompat && (p.replay == replayReasoningDetails || p.venice)
}

// relayWithoutSignatures is the conversation a relay's upstream refused
// for reasoning state it did not sign (provider.Request.DropSignatures),
// as each upstream documents history it did not produce: Gemini's thought
// signatures (format google-gemini-v1, Venice's thought_signature key and
// its calls' signatures) become Google's placeholder
// (provider.GoogleSkipSignature), which Gemini 3 takes where it requires
// a signature on a call (OpenRouter answers a Gemini call without one
// with "Gemini models require OpenRouter reasoning details to be
// preserved", massgen/MassGen#624; RooCodeInc/Roo-Code#10640 and #10759
// send the placeholder as the reasoning.encrypted entry's data through
// OpenRouter); every other Reasoning part is left out (Anthropic: thinking
// blocks of earlier turns may be omitted; the Responses API: a reasoning
// item may be removed), as provider.WithoutReasoning does for the
// anthropic adapter and the Responses API. The warning, "" when nothing
// changed, says what went. The input is not modified.
func relayWithoutSignatures(msgs []*llmrelayv1.Message, name string) ([]*llmrelayv1.Message, string) {
	out := make([]*llmrelayv1.Message, 0, len(msgs))
	dropped, placeheld := 0, 0
	for _, m := range msgs {
		var parts []*llmrelayv1.Part
		changed := false
		for _, p := range m.GetParts() {
			r := p.GetReasoning()
			if r == nil {
				parts = append(parts, p)
				continue
			}
			changed = true
			if f := r.GetFormat(); (f == formatGemini || f == formatThoughtSignature) && r.GetSignature() != "" {
				c := proto.CloneOf(r)
				c.Signature = provider.GoogleSkipSignature
				parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: c}})
				placeheld++
				continue
			}
			dropped++
		}
		if !changed {
			out = append(out, m)
			continue
		}
		c := proto.CloneOf(m)
		c.Parts = parts
		out = append(out, c)
	}
	out, calls := provider.PlaceholderCallSignatures(out, provider.GoogleSkipSignature)
	if dropped == 0 && placeheld == 0 && calls == 0 {
		return msgs, ""
	}
	return out, fmt.Sprintf("%s's upstream refused the conversation's reasoning state as another account's or platform's (%s); "+
		"this attempt left out %d reasoning part(s) and sent %d Gemini thought signature(s) and %d tool call signature(s) as Google's placeholder (%s), "+
		"so the model does not see its earlier reasoning", name, provider.SignatureRetryNote, dropped, placeheld, calls, provider.GoogleSkipSignature)
}

// warnRelayThinkingOff is the warning of a repaired request that turned
// the relay's reasoning off for Claude (relayLoopLostThinking).
const warnRelayThinkingOff = "reasoning off for this attempt (reasoning.enabled false): the tool loop's assistant turn went without its Claude thinking, " +
	"which anthropic requires at the start of that turn while thinking is on"

// relayLoopLostThinking reports whether the repaired conversation (after,
// relayWithoutSignatures' output for before, message for message) sent to
// a Claude model continues a tool loop whose first assistant message began
// with reasoning before the repair and does not after it. Anthropic
// refuses such a request while thinking is on: "messages.1.content.0.type:
// Expected `thinking` or `redacted_thinking`, but found `tool_use`. When
// `thinking` is enabled, a final `assistant` message must start with a
// thinking block (preceeding the lastmost set of `tool_use` and
// `tool_result` blocks). … To avoid this requirement, disable `thinking`."
// (Kilo-Org/kilocode#5219 through Vertex AI, anomalyco/opencode#3077);
// the anthropic adapter turns thinking off for such a turn the same way
// (thinkingForTurn). The loop is the messages after the last user message
// without tool results, when the conversation ends with tool results.
func relayLoopLostThinking(model string, before, after []*llmrelayv1.Message) bool {
	if !strings.Contains(strings.ToLower(model), "claude") || len(before) != len(after) {
		return false
	}
	n := len(before)
	for n > 0 && before[n-1].GetRole() == llmrelayv1.Role_ROLE_SYSTEM {
		n--
	}
	if n == 0 || !holdsToolResults(before[n-1]) {
		return false
	}
	start := 0
	for i := n - 2; i >= 0; i-- {
		if before[i].GetRole() == llmrelayv1.Role_ROLE_USER && !holdsToolResults(before[i]) {
			start = i + 1
			break
		}
	}
	for i := start; i < n; i++ {
		if before[i].GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
			continue
		}
		beganWith := func(m *llmrelayv1.Message) bool {
			ps := m.GetParts()
			return len(ps) > 0 && ps[0].GetReasoning() != nil
		}
		return beganWith(before[i]) && !beganWith(after[i])
	}
	return false
}

// holdsToolResults reports whether m carries tool results (a tool message,
// or a user message holding them).
func holdsToolResults(m *llmrelayv1.Message) bool {
	if m.GetRole() == llmrelayv1.Role_ROLE_TOOL {
		return true
	}
	for _, p := range m.GetParts() {
		if p.GetToolResult() != nil {
			return true
		}
	}
	return false
}
