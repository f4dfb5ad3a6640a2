package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// OpenRouter's reasoning_details text cut between the halves of a
// surrogate pair by a UTF-16 server, each piece JSON-escaped on its own
// (testdata/surr19b_openrouter_details_stream.http, hand-written): the
// entries' texts of one block are joined as its plain reasoning is; a
// held half before an entry that does not continue it, and before the
// block's last entry (its signature, no text), is U+FFFD in its block.
func TestOpenRouterDetailsSurrogateSurr19b(t *testing.T) {
	runRecordedStreams(t, []recordedStream{{name: "surr19b_openrouter_details_stream", req: "chat_plain", k: kOpenAI, check: func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		r := parts[0].GetReasoning()
		if r.GetText() != "Mulling 🤔 over \uFFFD morex \uFFFD" || r.GetSignature() != "c2lnLXMxOWItb3I=" || r.GetFormat() != "anthropic-claude-v1" || r.GetRedacted() {
			t.Errorf("reasoning %v", r)
		}
		if parts[1].GetText() != "Done." {
			t.Errorf("text part %v", parts[1])
		}
		if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || f.Meta.GetResponseId() != "gen-s19b-or-0001" {
			t.Errorf("meta %v", f.Meta)
		}
	}}})
}

// Mistral's thinking chunks in a content array cut the same way
// (testdata/surr19b_mistral_thinking_stream.http, hand-written): joined
// across deltas and between two chunks of one delta; the held half at the
// end of the thinking is U+FFFD before the answer's text. The answer's
// text in a content array continues the string content before it.
func TestMistralThinkingSurrogateSurr19b(t *testing.T) {
	runRecordedStreams(t, []recordedStream{{name: "surr19b_mistral_thinking_stream", req: "chat_plain", k: kOpenAI, check: func(t *testing.T, f folded) {
		wantParts(t, f.Message, "r:Okay 🤔 hmm 😀 ok cut 😁 in one end \uFFFD", "t:Answer is 😀 fin")
		if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || f.Meta.GetResponseId() != "s19bmistral0001" {
			t.Errorf("meta %v", f.Meta)
		}
	}}})
}
