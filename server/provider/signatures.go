package provider

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// CarriesReasoningState reports whether a conversation sends reasoning
// state back: a Reasoning part with a signature, an item id or redacted
// data, a tool call with a signature, or a Gemini part kept as a provider
// item with its thoughtSignature. Only such a conversation can be
// refused for it (Error.SignatureRefused), and only it changes when sent
// without it (Request.DropSignatures).
func CarriesReasoningState(msgs []*llmrelayv1.Message) bool {
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			if r := p.GetReasoning(); r != nil && (r.GetSignature() != "" || r.GetId() != "" || r.GetRedacted()) {
				return true
			}
			if tc := p.GetToolCall(); tc != nil && tc.GetSignature() != "" {
				return true
			}
			if it := p.GetProviderItem(); it != nil && strings.Contains(it.GetJson(), `"thoughtSignature"`) {
				// A Gemini part kept whole (a built-in tool's call, code
				// execution) with its signature.
				return true
			}
		}
	}
	return false
}

// WithoutReasoning returns the conversation without its Reasoning parts
// and without tool call signatures, for a provider that refused them as
// another account's (Request.DropSignatures) and that documents leaving
// earlier reasoning out (Anthropic: thinking blocks of earlier turns may
// be omitted; the Responses API: a reasoning item may be removed from the
// input). The warning, "" when nothing changed, names how many parts went
// and why; name is the provider as the warning names it. The input is not
// modified; unchanged messages are shared.
func WithoutReasoning(msgs []*llmrelayv1.Message, name string) ([]*llmrelayv1.Message, string) {
	out := make([]*llmrelayv1.Message, 0, len(msgs))
	dropped, unsigned := 0, 0
	for _, m := range msgs {
		var parts []*llmrelayv1.Part
		changed := false
		for _, p := range m.GetParts() {
			switch {
			case p.GetReasoning() != nil:
				dropped++
				changed = true
				continue
			case p.GetToolCall().GetSignature() != "":
				tc := proto.CloneOf(p.GetToolCall())
				tc.Signature = ""
				unsigned++
				changed = true
				parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: tc}})
				continue
			}
			parts = append(parts, p)
		}
		if !changed {
			out = append(out, m)
			continue
		}
		c := proto.CloneOf(m)
		c.Parts = parts
		out = append(out, c)
	}
	if dropped == 0 && unsigned == 0 {
		return msgs, ""
	}
	return out, fmt.Sprintf("%s refused the conversation's reasoning state as another account's or platform's (%s); "+
		"this attempt left out %d reasoning part(s) and %d tool call signature(s), so the model does not see its earlier reasoning", name, SignatureRetryNote, dropped, unsigned)
}

// SignatureRetryNote names, in warnings, the retry that sends a refused
// conversation again without its reasoning state.
const SignatureRetryNote = "retried once without it, meta.retry_reasons: reasoning_signature_refused"

// GoogleSignatureRefused reports Gemini's refusal of a thought signature
// it did not produce: a 400 INVALID_ARGUMENT "Corrupted thought
// signature." when a conversation moves between accounts (Google account
// to API key: google-gemini/gemini-cli#13467; an OpenRouter or proxy
// account pool: charmbracelet/crush#1698, massgen/MassGen#665,
// lbjlaq/Antigravity-Manager#970) and "Invalid thought signature." for a
// stale one (lbjlaq/Antigravity-Manager#3342). Not "Function call is
// missing a thought_signature": that one names no signature sent. The
// Gemini adapter and the OpenAI-compatible endpoint's (Google's host)
// read it.
//
// Vertex AI words it "Unable to submit request because Thought signature
// is not valid" (RooCodeInc/Roo-Code#10759, Gemini 3 through OpenRouter's
// Google route).
func GoogleSignatureRefused(status, msg string) bool {
	if status != "INVALID_ARGUMENT" {
		return false
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "corrupted thought signature") || strings.Contains(m, "invalid thought signature") ||
		strings.Contains(m, "thought signature is not valid")
}

// AnthropicSignatureRefused reports Anthropic's refusal of a thinking
// block signed elsewhere: "messages.1.content.0: Invalid `signature` in
// `thinking` block" (a 400 invalid_request_error,
// anthropics/claude-code#10627; a conversation moved between the Claude
// API, Bedrock and Vertex AI or between accounts:
// ding113/claude-code-hub#518, caozhiyuan/copilot-api#73), the same words
// for a block bound to another conversation ("… Remove the block, or set
// …"), and without the backticks as Bedrock words it
// (linanwx/nagobot#21, relayed by OpenRouter) and some clients relay it
// (arojunior/handle-failed-requests-js#8). The anthropic adapter and the
// openai adapter's relays (OpenRouter's metadata.raw) read it.
func AnthropicSignatureRefused(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "invalid `signature` in `thinking` block") ||
		strings.Contains(m, "invalid signature in thinking block")
}

// GoogleSkipSignature is Google's documented placeholder thoughtSignature
// for history Gemini did not produce: "You can set the following dummy
// signatures of either \"context_engineering_is_the_way_to_go\" or
// \"skip_thought_signature_validator\"" (ai.google.dev/gemini-api/docs/
// thought-signatures, FAQs); Vertex AI's page names the second, which
// both take.
const GoogleSkipSignature = "skip_thought_signature_validator"

// PlaceholderCallSignatures returns the conversation with every tool
// call signature replaced by placeholder, and how many were; the input
// is not modified, unchanged messages are shared.
func PlaceholderCallSignatures(msgs []*llmrelayv1.Message, placeholder string) ([]*llmrelayv1.Message, int) {
	out := make([]*llmrelayv1.Message, 0, len(msgs))
	n := 0
	for _, m := range msgs {
		var parts []*llmrelayv1.Part
		for j, p := range m.GetParts() {
			tc := p.GetToolCall()
			if tc.GetSignature() == "" || tc.GetSignature() == placeholder {
				if parts != nil {
					parts = append(parts, p)
				}
				continue
			}
			if parts == nil {
				parts = append(make([]*llmrelayv1.Part, 0, len(m.GetParts())), m.GetParts()[:j]...)
			}
			c := proto.CloneOf(tc)
			c.Signature = placeholder
			parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: c}})
			n++
		}
		if parts == nil {
			out = append(out, m)
			continue
		}
		c := proto.CloneOf(m)
		c.Parts = parts
		out = append(out, c)
	}
	return out, n
}
