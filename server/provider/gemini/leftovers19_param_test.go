package gemini

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestLeftovers19FieldFromMessage: Gemini's request validation names the
// refused field in its message's first line when no BadRequest detail
// comes with the 400 ("* BatchEmbedContentsRequest.requests: at most 100
// requests can be in one batch", the real answer of
// testdata/real_issue_16101_batch_embed_150_error.http): that path is the
// error's Param, the BadRequest field violation of the gRPC status, as a
// fieldViolations detail's field is (error_400). Messages in prose name
// none (the other real 400s).
func TestLeftovers19FieldFromMessage(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, param string }{
		{"real_issue_16101_batch_embed_150_error", "requests"},
		{"error_400", "generation_config"},
		{"real_issue_22372_thinking_level_and_budget_error", ""},
		{"real_logfire_adk_gemini_3_refuses_zero_budget_error", ""},
		{"real_issue_8943_gemini_2_5_flash_error", ""},
		{"error_context_length", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, tc.name)
			_, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"a", "b"}})
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *provider.Error", err)
			}
			if pe.Param != tc.param {
				t.Errorf("param %q, want %q (%v)", pe.Param, tc.param, pe)
			}
		})
	}
}
