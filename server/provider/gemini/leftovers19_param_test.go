package gemini

import (
	"context"
	"errors"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
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

// TestLeftovers19ExtraBodyReplacedWarned: extra_body objects merge into
// the request's field by field (TestExtraBodyMergesObjects); a value the
// request gave that extra_body replaces with another is warned by its
// path, at any depth, a schema replaced whole and a top-level value too.
// Added fields and a repeated value are not. All were silent.
func TestLeftovers19ExtraBodyReplacedWarned(t *testing.T) {
	t.Parallel()
	temp, maxTok, budget := 0.5, int32(64), int32(128)
	req := func(extra string) *provider.Request {
		return &provider.Request{
			Model:    "gemini-2.5-flash",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("hi"))},
			Options: &llmrelayv1.GenerationOptions{Temperature: &temp, MaxTokens: &maxTok,
				ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: `{"type":"object"}`}},
			ProviderOptions: &llmrelayv1.ProviderOptions{
				Provider:  &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{ThinkingBudget: &budget}},
				ExtraBody: extra,
			},
		}
	}
	for _, tc := range []struct {
		extra string
		want  []string
	}{
		{`{"generationConfig": {"candidateCount": 1, "maxOutputTokens": 64}, "cachedContent": "cachedContents/x"}`, nil},
		{`{"generationConfig": {"temperature": 0.9, "thinkingConfig": {"thinkingBudget": 256}, "responseJsonSchema": {"type": "string"}}}`,
			[]string{"generationConfig.responseJsonSchema", "generationConfig.temperature", "generationConfig.thinkingConfig.thinkingBudget"}}, // in the body's order
		{`{"generationConfig": {"thinkingConfig": null}}`, []string{"generationConfig.thinkingConfig"}},
		{`{"contents": []}`, []string{"contents"}},
	} {
		_, warnings, err := (&Provider{apiKey: testKey}).encodeRequestWarn(req(tc.extra))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range tc.want {
			want = append(want, provider.ReplacedWarning(p))
		}
		if strings.Join(warnings, "|") != strings.Join(want, "|") {
			t.Errorf("%s: warnings %q, want %q", tc.extra, warnings, want)
		}
	}
}
