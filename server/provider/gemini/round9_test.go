package gemini

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 9: real failure answers and unusual ends from sources not replayed
// before (see testdata/README.md, "Round 9"): the Vercel AI SDK's error
// fixtures and live captures. Each is checked against what the recording
// says, written out by hand.

// round9Recordings are the recordings the tests below replay.
var round9Recordings = []string{
	"real_issue_8943_gemini_2_5_pro_error", "real_thinking_level_minimal_unsupported_error",
	"real_structured_output_with_tools_error", "real_issue_10023_output_with_tools_error",
	"real_issue_19758_image_prompt_block", "real_image_no_image_live",
}

// TestRound9Errors: real 400 INVALID_ARGUMENT bodies with no details. An
// invalid request whatever the message says ("Please retry with other
// thinking level" is no invitation to retry the same request): no
// retry-after, no rate-limit state, the message whole; unary and streamed
// (an error status returns no stream).
func TestRound9Errors(t *testing.T) {
	t.Parallel()
	cases := []struct{ file, message string }{
		{"real_issue_8943_gemini_2_5_pro_error", "Penalty is not enabled for models/gemini-2.5-pro"},
		{"real_thinking_level_minimal_unsupported_error",
			"Thinking level MINIMAL is not supported for this model. Please retry with other thinking level."},
		{"real_structured_output_with_tools_error",
			"Forced function calling (ANY mode) with a response mime type: 'application/json' is unsupported"},
		{"real_issue_10023_output_with_tools_error",
			"Function calling with a response mime type: 'application/json' is unsupported"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			for _, streaming := range []bool{false, true} {
				p, _ := replay(t, tc.file)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), generateCases(t)["plain"])
					if s != nil {
						t.Fatal("Stream returned a stream with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), generateCases(t)["plain"])
				}
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("stream=%v: err = %v, want *provider.Error", streaming, err)
				}
				if pe.Provider != "gemini" || pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 ||
					pe.Code != "INVALID_ARGUMENT" || pe.Message != tc.message || pe.RetryAfter != 0 ||
					pe.ShouldRetry != provider.RetryUnsaid || pe.Param != "" || pe.Meta != nil {
					t.Errorf("stream=%v: got %+v", streaming, pe)
				}
				if !strings.Contains(err.Error(), tc.message) {
					t.Errorf("stream=%v: error text %q lost the provider's message", streaming, err)
				}
			}
		})
	}
}

// TestRound9ImagePromptBlock: gemini-3.1-flash-image-preview refusing the
// prompt (no candidates, promptFeedback.blockReason PROHIBITED_CONTENT, no
// blockReasonMessage): a content-filter error naming the reason, its meta
// with the response id, the model version, the 9 prompt tokens counted and
// the service tier.
func TestRound9ImagePromptBlock(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "real_issue_19758_image_prompt_block")
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *provider.Error", err)
	}
	if pe.Provider != "gemini" || pe.Kind != provider.KindContentFilter || pe.Code != "PROHIBITED_CONTENT" ||
		pe.Message != "prompt blocked by Gemini: PROHIBITED_CONTENT" || pe.RetryAfter != 0 {
		t.Errorf("error %+v", pe)
	}
	if got := pe.Extended[extBlockReason]; got != "PROHIBITED_CONTENT" {
		t.Errorf("extended block reason %v", got)
	}
	m := pe.Meta
	if m.GetResponseId() != "FHGPatmJMfqI1MkP28uN-Qg" || m.GetResolvedModel() != "gemini-3.1-flash-image-preview" ||
		m.GetServiceTier() != "standard" {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 9, TotalTokens: 9}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
}

// TestRound9NoImage: gemini-3.1-flash-image-preview that made no image
// (finishReason NO_IMAGE, an empty content object): an empty answer, not an
// error, whose finish is "other" with the provider's reason kept, and
// whose usage is the 9 prompt tokens and nothing out.
func TestRound9NoImage(t *testing.T) {
	t.Parallel()
	const name = "real_image_no_image_live"
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), generateCases(t)["plain"])
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if !proto.Equal(res.Message, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}) {
		t.Errorf("message %v, want an empty answer", res.Message)
	}
	m := res.Meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || m.GetProviderFinishReason() != "NO_IMAGE" ||
		m.GetResponseId() != "yzOraue2AfW1_PUPqru3sQY" || m.GetResolvedModel() != "gemini-3.1-flash-image-preview" ||
		m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 9, TotalTokens: 9}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
}
