package openai

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// round12Unary: Chat Completions answers not replayed before
// (testdata/README.md, "Round 12"); every expectation below was checked by
// hand against the recorded body.
var round12Unary = []recordedUnary{
	// gpt-4o-audio-preview answering a question about an mp3 input: the
	// prompt's 64 tokens are 44 audio and 20 text tokens, the completion's 9
	// all text; no counter holds audio or text tokens, so the non-zero ones
	// are in usage_details (the zero counts are not).
	{"real_pyd_openai_audio_as_binary_content_input", "chat_plain", kOpenAI, func(t *testing.T, res *provider.Result) {
		if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "The name mentioned in the audio is Marcelo." {
			t.Fatalf("parts %v", parts)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 64, OutputTokens: 9, TotalTokens: 73}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		want := map[string]any{"prompt_tokens_details.audio_tokens": float64(44), "prompt_tokens_details.text_tokens": float64(20),
			"completion_tokens_details.text_tokens": float64(9)}
		if d := res.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap(); !reflect.DeepEqual(d, want) {
			t.Errorf("usage_details %v, want %v", d, want)
		}
		if res.Meta.GetResponseId() != "chatcmpl-B4T2pf07aQydY6rACSYxY6YxRiUnR" || res.Meta.GetResolvedModel() != "gpt-4o-audio-preview-2024-12-17" {
			t.Errorf("meta %v", res.Meta)
		}
		if len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("warnings %v", res.Meta.GetWarnings())
		}
	}},
}

func TestRound12Unary(t *testing.T) { runRecordedUnary(t, round12Unary) }
