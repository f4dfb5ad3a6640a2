package pipeline

import (
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestExhaustedResetFromProviderDate20: an exhausted limit's delay is
// counted from the provider's Date when the error has one (its relative
// resets are counted from it: the duration comes back exactly, however
// far the gateway's clock is), from the gateway's clock otherwise; only
// for a rate limit, and only for a limit with nothing remaining.
func TestExhaustedResetFromProviderDate20(t *testing.T) {
	t.Parallel()
	date := time.Date(2025, 10, 14, 9, 30, 0, 0, time.UTC)
	now := date.Add(time.Hour) // the gateway's clock, an hour on
	zero, some := int64(0), int64(5)
	rl := func(remaining *int64, reset time.Duration) *llmrelayv1.ResponseMeta {
		return &llmrelayv1.ResponseMeta{RateLimit: &llmrelayv1.RateLimit{TokensRemaining: remaining, TokensResetTime: timestamppb.New(date.Add(reset))}}
	}
	for _, tc := range []struct {
		name string
		pe   *provider.Error
		want time.Duration
	}{
		{"from the Date", &provider.Error{Kind: provider.KindRateLimited, HTTPStatus: 429, Date: date, Meta: rl(&zero, 6*time.Minute)}, 6 * time.Minute},
		{"20ms", &provider.Error{Kind: provider.KindRateLimited, HTTPStatus: 429, Date: date, Meta: rl(&zero, 20*time.Millisecond)}, 20 * time.Millisecond},
		{"no Date: the gateway's clock", &provider.Error{Kind: provider.KindRateLimited, Meta: rl(&zero, time.Hour+3*time.Second)}, 3 * time.Second},
		{"not exhausted", &provider.Error{Kind: provider.KindRateLimited, HTTPStatus: 429, Date: date, Meta: rl(&some, time.Minute)}, 0},
		{"not a rate limit", &provider.Error{Kind: provider.KindUnavailable, HTTPStatus: http.StatusServiceUnavailable, Date: date, Meta: rl(&zero, time.Minute)}, 0},
		{"reset past", &provider.Error{Kind: provider.KindRateLimited, HTTPStatus: 429, Date: date, Meta: rl(&zero, -time.Second)}, 0},
	} {
		if got := exhaustedReset(tc.pe, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
