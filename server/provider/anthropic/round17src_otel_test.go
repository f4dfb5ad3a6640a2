package anthropic

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17 (sources): open-telemetry/opentelemetry-python-contrib's VCR
// cassettes of its Anthropic instrumentation (testdata/README.md, "Round
// 17: opentelemetry-python-contrib's cassettes").

// TestRound17OtelCreditBalanceTooLow: the live API's answer to an account
// out of credit, the shape error_400_credit_balance.http was built from:
// status 400, error type invalid_request_error, "Your credit balance is
// too low ...", x-should-retry false, the request id in the request-id
// header and in the body, no rate-limit header. It is a quota error
// (KindRateLimited, as decided for the hand-built fixture), without a
// retry delay, unary and streamed alike.
func TestRound17OtelCreditBalanceTooLow(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, "testdata/real_otel_credit_balance_too_low.http")
		p := newTestProvider(t, srv.URL)
		var err error
		if streaming {
			var s provider.Stream
			s, err = p.Stream(context.Background(), plainRequest())
			if s != nil {
				t.Fatal("Stream returned a stream with an error status")
			}
		} else {
			_, err = p.Generate(context.Background(), plainRequest())
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("stream=%v: error %T %v is not a *provider.Error", streaming, err, err)
		}
		const msg = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."
		if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 400 || pe.Code != "invalid_request_error" || pe.RetryAfter != 0 ||
			pe.RequestID != "req_011CX88ZmBumGkvj7aK6Gqzx" || pe.Provider != "anthropic" || pe.Message != msg {
			t.Errorf("stream=%v: got kind=%v status=%d code=%q retry=%v rid=%q msg=%q", streaming,
				pe.Kind, pe.HTTPStatus, pe.Code, pe.RetryAfter, pe.RequestID, pe.Message)
		}
	}
}
