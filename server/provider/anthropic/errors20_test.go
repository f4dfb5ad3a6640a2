package anthropic

import (
	"fmt"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestLimitQuota20: the limit a rate_limit_error's message names becomes
// the error's QuotaFailure violation (metric, value, window), in the
// words Anthropic's 429s use (as its clients quote them); a message that
// names no limit, or an error that is not a rate limit, gets none.
func TestLimitQuota20(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind provider.Kind
		msg  string
		want string
	}{
		{provider.KindRateLimited, "This request would exceed the rate limit for your organization (1815e560-bf0c-433e-b03a-793524e11fda) of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.", "input_tokens 50000 ITPM"},
		{provider.KindRateLimited, "This request would exceed the rate limit for your organization of 8,000 output tokens per minute", "output_tokens 8000 OTPM"},
		{provider.KindRateLimited, "This request would exceed the rate limit for your organization of 50 requests per minute.", "requests 50 RPM"},
		{provider.KindRateLimited, "Number of request tokens has exceeded your per-minute rate limit", ""},
		{provider.KindInvalidRequest, "of 50,000 input tokens per minute", ""},
	} {
		e := &provider.Error{Kind: tc.kind, Message: tc.msg}
		limitQuota(e)
		got := ""
		if len(e.Quota) == 1 {
			v := e.Quota[0]
			got = fmt.Sprintf("%s %d %s", v.GetQuotaMetric(), v.GetQuotaValue(), v.GetQuotaId())
			if v.GetDescription() != tc.msg {
				t.Errorf("%q: description %q", tc.msg, v.GetDescription())
			}
		} else if len(e.Quota) > 1 {
			t.Errorf("%q: %d violations", tc.msg, len(e.Quota))
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.msg, got, tc.want)
		}
	}
}
