package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// A UTF-16 (JavaScript) server cuts text and reasoning deltas between the
// halves of a surrogate pair, each JSON-escaped on its own
// (testdata/surrogate19_chat_split_stream.http, hand-written): a pair is
// one character, whether the chunk with the low half takes the fast
// decoder (content with escapes) or encoding/json (reasoning_content, and
// a content chunk with logprobs); a high half with no low half after it
// (another field, a plain string, the finish) is U+FFFD, in its place; an
// escaped backslash before "ud83d" is text.
func TestChatSurrogateSplitSurrogate19(t *testing.T) {
	runRecordedStreams(t, []recordedStream{{name: "surrogate19_chat_split_stream", req: "chat_plain", k: kOpenAI, check: func(t *testing.T, f folded) {
		wantParts(t, f.Message, "r:Thinking 🤔 of a face \uFFFD", "t:Here it is: 😀! Two: 😀😁. Lone: \uFFFDx. C:\\ud83d\uFFFD end \uFFFD")
		if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || f.Meta.GetResponseId() != "chatcmpl-s19-0001" {
			t.Errorf("meta %v", f.Meta)
		}
	}}})
}
