package anthropic

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 24: opencode's recordings of DigitalOcean's Anthropic-compatible
// Messages endpoint (inference.do-ai.run/v1/messages, Claude behind it,
// keys in alphabetical order, "diagnostics": null in the message).

// r24DOEdit writes the recorded request as ours sends it: the system prompt
// as the string (the contract has one text), without the cache_control
// marks opencode put on it and on the last message (the contract has none),
// and without opencode's adaptive thinking on Sonnet 5.5 (its
// block_binding has no place in the contract; no reasoning effort is
// asked here).
func r24DOEdit(m map[string]any) {
	blocks, _ := m["system"].([]any)
	b, _ := blocks[0].(map[string]any)
	m["system"] = b["text"]
	delete(m, "thinking")
	msgs, _ := m["messages"].([]any)
	for _, rm := range msgs {
		msg, _ := rm.(map[string]any)
		content, _ := msg["content"].([]any)
		for _, rb := range content {
			b, _ := rb.(map[string]any)
			delete(b, "cache_control")
		}
	}
}

// TestRound24SystemUpdateSonnet55: opencode's "delivers chronological
// system update text" recording (October 2026), twice the same
// conversation ending in a message of role system after the user's
// question: to claude-sonnet-5-5 (DigitalOcean's anthropic-claude-sonnet-5.5)
// and to claude-opus-4-8. Both answered 200 with the system message in
// place. Bug: ours moved it into the system prompt on Sonnet 5.5 (only Opus
// 4.8 and Fable 5 kept it); the request is now the recorded one on both.
// The answers: Sonnet 5.5 thinks (an empty thinking_delta, then only a
// signature: the thinking is omitted from the stream, 251 thinking tokens
// of 338) and answers; Opus 4.8 answers without thinking.
func TestRound24SystemUpdateSonnet55(t *testing.T) {
	t.Parallel()
	const system = "Answer questions about the conversation contents concisely."
	const question = "What reference word was just provided? Include the word in your answer."
	const update = "The session reference word is VIOLET."
	extended := map[string]string{"service_tier": `"standard"`, provider.ExtUsageDetails: `{"inference_geo":"global"}`}
	for _, tc := range []struct {
		name, model, resolved, id string
		parts                     []*llmrelayv1.Part
		usage                     *llmrelayv1.Usage
	}{
		{"real_do_system_update_sonnet55_stream", "anthropic-claude-sonnet-5.5", "claude-sonnet-5-5", "msg_011CfcDirvAEqLLPKzfRdGyL", nil, usageOf(66, 338, 0, 0, 251)},
		{"real_do_system_update_opus48_stream", "anthropic-claude-opus-4.8", "claude-opus-4-8", "msg_011CfcDjAQcoGtK2YwUchK2o",
			[]*llmrelayv1.Part{text(`The reference word provided was "VIOLET."`)}, usageOf(65, 16, 0, 0, 0)},
	} {
		t.Run(tc.model, func(t *testing.T) {
			req := r22System(r21Request(tc.model, "Hello", 1024, 0), system)
			req.Messages = append(req.Messages,
				msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Hi")),
				msgOf(llmrelayv1.Role_ROLE_USER, text(question)),
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(update)))
			_, f, srv := r21Stream(t, tc.name, req)
			parts := tc.parts
			if parts == nil {
				sig := r24Signature(t, f.message)
				parts = []*llmrelayv1.Part{
					reasoningPart(&llmrelayv1.Reasoning{Signature: sig}),
					text(`No reference word was provided in this conversation. The only messages were "Hello," "Hi," and your question. My last message naming "VIOLET" was a mistake, since nothing in the conversation supplied that word. If you meant to give me a word, please send it and I'll note it.`),
				}
			}
			checkLLMWant(t, tc.name, f.message, f.meta, llmWant{
				parts: parts, responseID: tc.id, model: tc.resolved,
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: tc.usage, extended: extended,
			})
			r22SameRequest(t, srv.Last(t).Body, tc.name, r24DOEdit)
		})
	}
}

// r24Signature is the signature of a message's first part, a reasoning
// part (read from the answer rather than copied into the test; the golden
// file holds it).
func r24Signature(t *testing.T, m *llmrelayv1.Message) string {
	t.Helper()
	if len(m.GetParts()) == 0 || m.GetParts()[0].GetReasoning().GetSignature() == "" {
		t.Fatalf("first part %v is not a signed reasoning part", m.GetParts())
	}
	return m.GetParts()[0].GetReasoning().GetSignature()
}
