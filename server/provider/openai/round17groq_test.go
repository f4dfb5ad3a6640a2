package openai

import (
	"context"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound17GroqRequestTooLarge: Groq answers a request larger than a
// whole per-minute limit with 413 (testdata/dialect_groq_err_413_request_too_large.http).
// It was an invalid request; it is an exhausted quota that waiting cannot
// fix (as OpenAI's 429 of the same words): not retried, no retry delay
// although the answer has a Retry-After, the limit named.
func TestRound17GroqRequestTooLarge(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_groq_err_413_request_too_large.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("qwen/qwen3-32b"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindRateLimited || pe.Code != "rate_limit_exceeded" || pe.HTTPStatus != 413 ||
		pe.ShouldRetry != provider.RetryDiscouraged || pe.RetryAfter != 0 || pe.RequestID != "req_01llmrelay413q7w2e9r4t6y8u0" {
		t.Errorf("got %s (should retry %v, retry after %v)", renderErr(err), pe.ShouldRetry, pe.RetryAfter)
	}
	want := []*errdetails.QuotaFailure_Violation{{QuotaMetric: "tokens", QuotaId: "TPM", QuotaValue: 6000, Description: pe.Message}}
	if !violationsEqual(pe.Quota, want) {
		t.Errorf("quota %v, want %v", pe.Quota, want)
	}
}

// TestRound17GroqInputTokensLimit: Groq names its input-token limits
// "input tokens per minute (ITPM)": the violation's metric is input_tokens.
func TestRound17GroqInputTokensLimit(t *testing.T) {
	t.Parallel()
	e := &provider.Error{Kind: provider.KindRateLimited, Code: "rate_limit_exceeded",
		Message: "Request too large for model `qwen/qwen3.8-27b` in organization `org_x` service tier `on_demand` on input tokens per minute (ITPM): Limit 7000, Requested 12630, please reduce your message size and try again."}
	rateLimitQuota(e, "tokens") // Groq's type
	if got := e.Quota; len(got) != 1 || got[0].GetQuotaMetric() != "input_tokens" || got[0].GetQuotaId() != "ITPM" || got[0].GetQuotaValue() != 7000 {
		t.Errorf("type tokens: quota %v, want input_tokens ITPM 7000", got)
	}
	e = &provider.Error{Kind: provider.KindRateLimited, Code: "rate_limit_exceeded", Message: e.Message}
	rateLimitQuota(e, "")
	if got := e.Quota; len(got) != 1 || got[0].GetQuotaMetric() != "input_tokens" || got[0].GetQuotaId() != "ITPM" || got[0].GetQuotaValue() != 7000 {
		t.Errorf("without a type: quota %v, want input_tokens ITPM 7000", got)
	}
}
