package provider

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestSig25CarriesReasoningState: what a refusal of reasoning state can
// be about, and so what the retry policy repairs: signed, identified or
// redacted reasoning, a signed call, a Gemini item with its signature;
// not reasoning text alone, an unsigned call or an item without one.
func TestSig25CarriesReasoningState(t *testing.T) {
	t.Parallel()
	part := func(p *llmrelayv1.Part) []*llmrelayv1.Message {
		return []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{p}}}
	}
	reasoning := func(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
	}
	item := func(j string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Provider: "gemini", Type: "toolCall", Json: j}}}
	}
	call := func(sig string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "c", Name: "f", Signature: sig}}}
	}
	for _, c := range []struct {
		name string
		msgs []*llmrelayv1.Message
		want bool
	}{
		{"signed reasoning", part(reasoning(&llmrelayv1.Reasoning{Text: "t", Signature: "s"})), true},
		{"reasoning item id", part(reasoning(&llmrelayv1.Reasoning{Id: "rs_1"})), true},
		{"redacted", part(reasoning(&llmrelayv1.Reasoning{Redacted: true})), true},
		{"signed call", part(call("s")), true},
		{"signed item", part(item(`{"toolCall":{"toolType":"URL_CONTEXT","id":"u"},"thoughtSignature":"dGM="}`)), true},
		{"text only", part(reasoning(&llmrelayv1.Reasoning{Text: "t"})), false},
		{"unsigned call", part(call("")), false},
		{"unsigned item", part(item(`{"toolCall":{"toolType":"URL_CONTEXT","id":"u"}}`)), false},
	} {
		if got := CarriesReasoningState(c.msgs); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSig25WrapRefusalWords: the words the refusals come in, as relays
// pass them through: Gemini's "Corrupted thought signature."
// (OpenRouterTeam/ai-sdk-provider#418), Vertex AI's "Unable to submit
// request because Thought signature is not valid.. Learn more: …"
// (NoeFabris/opencode-antigravity-auth#368's logged body, RooCodeInc/
// Roo-Code#11716), both INVALID_ARGUMENT only; Anthropic's with and
// Bedrock's without backticks (anthropics/claude-code#10627,
// linanwx/nagobot#21). A missing signature, or another status, is not a
// refusal of one sent.
func TestSig25WrapRefusalWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, msg string
		want        bool
	}{
		{"INVALID_ARGUMENT", "Corrupted thought signature.", true},
		{"INVALID_ARGUMENT", "Unable to submit request because Thought signature is not valid.. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini", true},
		{"FAILED_PRECONDITION", "Unable to submit request because Thought signature is not valid.", false},
		{"INVALID_ARGUMENT", "Function call is missing a thought_signature in functionCall parts.", false},
	} {
		if got := GoogleSignatureRefused(c.status, c.msg); got != c.want {
			t.Errorf("GoogleSignatureRefused(%q, %q) = %v", c.status, c.msg, got)
		}
	}
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{"messages.1.content.0: Invalid `signature` in `thinking` block", true},
		{"messages.7.content.2: Invalid signature in thinking block", true},
		{"messages.1.content.0.thinking.signature: Field required", false},
	} {
		if got := AnthropicSignatureRefused(c.msg); got != c.want {
			t.Errorf("AnthropicSignatureRefused(%q) = %v", c.msg, got)
		}
	}
}
