package openai

import (
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRequestTooLarge: OpenAI's 429 for a request larger than the whole
// per-minute token limit (testdata/err_429_request_too_large.http) can
// never succeed at that deployment: it was retried like any 429. Now it
// is not (RetryDiscouraged, no retry delay), still an exhausted quota
// with the code kept (so the route falls back to a deployment with a
// higher tier), and names the limit that refused it: tokens per minute,
// 30000, which its headers (30000 of 30000 remaining) do not show
// exhausted.
func TestRequestTooLarge(t *testing.T) {
	t.Parallel()
	const msg = "Request too large for gpt-4o in organization org-Qz8kR2mV4nL6pT1wX9yB3cD5 on tokens per min (TPM): Limit 30000, Requested 36278. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more."
	want := []*errdetails.QuotaFailure_Violation{{QuotaMetric: "tokens", QuotaId: "TPM", QuotaValue: 30000, Description: msg}}
	rec := providertest.Load(t, td("err_429_request_too_large.http"))
	for _, tc := range []struct {
		name  string
		extra http.Header
	}{
		{"as recorded", nil},
		// A Retry-After (a proxy's) would still say that waiting helps.
		{"with retry-after", http.Header{"Retry-After": {"20"}}},
	} {
		for _, streaming := range []bool{false, true} {
			h := rec.Header.Clone()
			for k, v := range tc.extra {
				h[k] = v
			}
			srv := providertest.Replay(t, providertest.Recording{Status: rec.Status, Header: h, Body: rec.Body})
			p := newTestProvider(t, kOpenAI, srv.URL)
			var err error
			if streaming {
				_, err = p.Stream(context.Background(), simpleRequest("gpt-4o"))
			} else {
				_, err = p.Generate(context.Background(), simpleRequest("gpt-4o"))
			}
			pe := providerError(t, err)
			if pe.Kind != provider.KindRateLimited || pe.Code != "rate_limit_exceeded" || pe.HTTPStatus != 429 || pe.Message != msg ||
				pe.RetryAfter != 0 || pe.ShouldRetry != provider.RetryDiscouraged || pe.RequestID != "req_920702c02b6531c264a4c221377a8dd3" {
				t.Errorf("%s, stream %v: got %s (should retry %v)", tc.name, streaming, renderErr(err), pe.ShouldRetry)
			}
			if !violationsEqual(pe.Quota, want) {
				t.Errorf("%s, stream %v: quota %v, want %v", tc.name, streaming, pe.Quota, want)
			}
			if rl := pe.Meta.GetRateLimit(); rl.GetTokensLimit() != 30000 || rl.GetTokensRemaining() != 30000 {
				t.Errorf("%s, stream %v: rate limit %v", tc.name, streaming, rl)
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s, stream %v: retryable %v, fallback %v; want false, true", tc.name, streaming, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
}

// TestRequestTooLargeInStream: the same refusal as a Responses stream's
// response.failed (vercel/ai's fixture,
// testdata/real_responses_failed_only_stream.http): an error inside a 200,
// which the retry policy read by its kind alone and retried.
func TestRequestTooLargeInStream(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_responses_failed_only_stream.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = collect(t, s)
	pe := providerError(t, err)
	const msg = "Request too large for gpt-4o-mini in organization on tokens per min (TPM): Limit 30000, Requested 35364."
	want := []*errdetails.QuotaFailure_Violation{{QuotaMetric: "tokens", QuotaId: "TPM", QuotaValue: 30000, Description: msg}}
	if pe.Kind != provider.KindRateLimited || pe.Code != "rate_limit_exceeded" || pe.ShouldRetry != provider.RetryDiscouraged || pe.RetryAfter != 0 || !violationsEqual(pe.Quota, want) {
		t.Errorf("got %s, should retry %v, quota %v", renderErr(err), pe.ShouldRetry, pe.Quota)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
}

// TestRateLimitType: the type of a rate-limit error names the limit that
// refused it even beside a code (rate_limit_exceeded, which does not):
// the violation's metric, with the limit and window the message states;
// an ordinary rate limit stays retryable with its delay.
func TestRateLimitType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       []*errdetails.QuotaFailure_Violation
		retryAfter time.Duration
	}{
		{"openai tokens", "", []*errdetails.QuotaFailure_Violation{{QuotaMetric: "tokens", QuotaId: "TPM", QuotaValue: 200000,
			Description: "Rate limit reached for gpt-4o-mini in organization org-Qz8kR2mV4nL6pT1wX9yB3cD5 on tokens per min (TPM): Limit 200000, Used 199312, Requested 1402. Please try again in 214ms. Visit https://platform.openai.com/account/rate-limits to learn more."}},
			214 * time.Millisecond},
		// The daily limit, which no header shows (they are per minute).
		{"requests per day", `{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-x on requests per day (RPD): Limit 10000, Used 10000, Requested 1. Please try again in 8.64s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			[]*errdetails.QuotaFailure_Violation{{QuotaMetric: "requests", QuotaId: "RPD", QuotaValue: 10000,
				Description: "Rate limit reached for gpt-4o-mini in organization org-x on requests per day (RPD): Limit 10000, Used 10000, Requested 1. Please try again in 8.64s."}},
			8640 * time.Millisecond},
		// The older name of the tokens limit, no window abbreviation.
		{"tokens_usage_based", `{"error":{"message":"Rate limit reached for gpt-3.5-turbo-16k in organization org-x on tokens_usage_based per min: Limit 60000, Used 22947, Requested 45463. Please try again in 8.41s.","type":"tokens_usage_based","param":null,"code":"rate_limit_exceeded"}}`,
			[]*errdetails.QuotaFailure_Violation{{QuotaMetric: "tokens", QuotaValue: 60000,
				Description: "Rate limit reached for gpt-3.5-turbo-16k in organization org-x on tokens_usage_based per min: Limit 60000, Used 22947, Requested 45463. Please try again in 8.41s."}},
			8410 * time.Millisecond},
		// The type alone: the metric, the value left to the headers.
		{"type only", `{"error":{"message":"Rate limit reached.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			[]*errdetails.QuotaFailure_Violation{{QuotaMetric: "requests", Description: "Rate limit reached."}}, 0},
		// No type (Groq's daily limit as some clients quote it): the
		// message names the limit.
		{"message only", `{"error":{"message":"Rate limit reached for model ` + "`openai/gpt-oss-120b`" + ` in organization ` + "`org_x`" + ` service tier ` + "`on_demand`" + ` on tokens per day (TPD): Limit 200000, Used 197494, Requested 4035. Please try again in 11m0.528s.","code":"rate_limit_exceeded"}}`,
			[]*errdetails.QuotaFailure_Violation{{QuotaMetric: "tokens", QuotaId: "TPD", QuotaValue: 200000,
				Description: "Rate limit reached for model `openai/gpt-oss-120b` in organization `org_x` service tier `on_demand` on tokens per day (TPD): Limit 200000, Used 197494, Requested 4035. Please try again in 11m0.528s."}},
			11*time.Minute + 528*time.Millisecond},
		// A spent quota names no limit of these.
		{"insufficient_quota", `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, nil, 0},
	} {
		rec := providertest.Load(t, td("err_429_rate_limit.http"))
		if tc.body != "" {
			rec.Body = []byte(tc.body)
			rec.Header.Del("Content-Length")
		}
		srv := providertest.Replay(t, rec)
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("gpt-4o-mini"))
		pe := providerError(t, err)
		if pe.Kind != provider.KindRateLimited || pe.ShouldRetry != provider.RetryUnsaid || pe.RetryAfter != tc.retryAfter {
			t.Errorf("%s: got %s", tc.name, renderErr(err))
		}
		if !violationsEqual(pe.Quota, tc.want) {
			t.Errorf("%s: quota %v, want %v", tc.name, pe.Quota, tc.want)
		}
		if pipeline.Retryable(err) == provider.QuotaSpent(pe.Code) {
			t.Errorf("%s: retryable %v", tc.name, pipeline.Retryable(err))
		}
	}
}

func violationsEqual(a, b []*errdetails.QuotaFailure_Violation) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
