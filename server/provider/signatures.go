package provider

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// CarriesReasoningState reports whether a conversation sends reasoning
// state back: a Reasoning part with a signature, an item id or redacted
// data, or a tool call with a signature. Only such a conversation can be
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
