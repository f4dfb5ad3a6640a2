package openai

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25bBillingCodeKept: OpenAI's billing refusals come as a 429 of
// type insufficient_quota whose code says which credit or limit is spent
// (help.openai.com, "Troubleshooting API usage and spend limits": "Check
// error.code in the API response. A billing-related error may still use the
// broader error.type value insufficient_quota."): credit_balance_exhausted,
// organization_spend_limit_exceeded, project_spend_limit_exceeded,
// organization_usage_limit_exceeded (testdata/err_429_project_spend_limit.http,
// hand-built from err_429_quota). **Bug:** the code became
// insufficient_quota, so the caller (ErrorInfo's upstreamCode, the
// QuotaFailure's quota id) could not tell a project's limit from the
// organization's credits. The code is kept; the error stays a spent quota:
// a rate limit, not retried, a reason to fall back; unary, before a stream
// and as a stream's error event. Under another type (a client's
// rate_limit_error) the code still says it.
func TestRound25bBillingCodeKept(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, what string, err error, code string) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %v", what, err)
		}
		if pe.Kind != provider.KindRateLimited || pe.Code != code {
			t.Errorf("%s: kind %v code %q, want rate_limited %q", what, pe.Kind, pe.Code, code)
		}
		if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
			t.Errorf("%s: retryable %v, fallback-worthy %v", what, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
	}
	srv := providertest.ReplayFile(t, td("err_429_project_spend_limit.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("gpt-4o-mini"))
	check(t, "fixture", err, "project_spend_limit_exceeded")
	var pe *provider.Error
	if errors.As(err, &pe) && (pe.HTTPStatus != 429 || pe.RequestID != "req_9b1e04c7a35d4f2e8c60d7a2b5f1e394") {
		t.Errorf("fixture: status %d request id %q", pe.HTTPStatus, pe.RequestID)
	}
	srv = providertest.ReplayFile(t, td("err_429_project_spend_limit.http"))
	_, err = newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), simpleRequest("gpt-4o-mini"))
	check(t, "fixture stream", err, "project_spend_limit_exceeded")

	for _, tc := range []struct{ typ, code, want string }{
		{"insufficient_quota", "credit_balance_exhausted", "credit_balance_exhausted"},
		{"insufficient_quota", "organization_spend_limit_exceeded", "organization_spend_limit_exceeded"},
		{"insufficient_quota", "organization_usage_limit_exceeded", "organization_usage_limit_exceeded"},
		{"rate_limit_error", "project_spend_limit_exceeded", "project_spend_limit_exceeded"},
		{"insufficient_quota", "insufficient_quota", "insufficient_quota"},
		{"insufficient_quota", "", "insufficient_quota"},
		{"insufficient_quota", "some_other_code", "insufficient_quota"},
	} {
		errObj := map[string]any{"message": "You exceeded your current quota, please check your plan and billing details.", "type": tc.typ, "param": nil, "code": nil}
		if tc.code != "" {
			errObj["code"] = tc.code
		}
		body := providertest.MustJSON(map[string]any{"error": errObj})
		srv := providertest.Replay(t, providertest.Recording{Status: 429, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("gpt-4o-mini"))
		check(t, tc.typ+"/"+tc.code, err, tc.want)

		// A stream's error event (a 200 answer): no status to go by.
		srv = providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte("data: " + body + "\n\n")})
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), simpleRequest("gpt-4o-mini"))
		if err == nil {
			for err == nil {
				_, err = s.Recv()
			}
			s.Close()
		}
		check(t, tc.typ+"/"+tc.code+" event", err, tc.want)
	}
}
