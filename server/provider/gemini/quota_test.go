package gemini

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestQuotaRateLimit: each exhausted quota of a QuotaFailure fills the
// request or token half of the rate limit (the first of each kind), with
// nothing remaining until the RetryInfo delay has passed; quotas of
// neither kind, and unparseable values, are skipped. (Hand-written body:
// the quota ids and metrics are the ones Gemini's free tier reports.)
func TestQuotaRateLimit(t *testing.T) {
	t.Parallel()
	body := []byte(`{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[
{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[
 {"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_input_token_count","quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier","quotaValue":"250000"},
 {"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_input_token_count","quotaId":"GenerateContentInputTokensPerModelPerDay-FreeTier","quotaValue":"1000000"},
 {"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaValue":"not-a-number"},
 {"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaValue":"10"},
 {"quotaMetric":"generativelanguage.googleapis.com/other","quotaId":"Other","quotaValue":"3"}]},
{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"21s"}]}}`)
	st := parseStatusBody(body)
	if st == nil {
		t.Fatal("body not parsed")
	}
	now := time.Date(2025, 10, 14, 9, 12, 31, 0, time.UTC)
	got := quotaRateLimit(st, now, 21*time.Second)
	reset := timestamppb.New(now.Add(21 * time.Second))
	want := &llmrelayv1.RateLimit{RequestsLimit: proto.Int64(10), RequestsRemaining: proto.Int64(0), RequestsResetTime: reset,
		TokensLimit: proto.Int64(250000), TokensRemaining: proto.Int64(0), TokensResetTime: reset}
	if !proto.Equal(got, want) {
		t.Errorf("rate limit = %v, want %v", got, want)
	}
	// Without a retry delay the reset is unknown; without a QuotaFailure
	// there is no rate-limit state at all.
	if got := quotaRateLimit(st, now, 0); got.GetRequestsResetTime() != nil || got.GetTokensLimit() != 250000 {
		t.Errorf("without RetryInfo: %v", got)
	}
	if got := quotaRateLimit(parseStatusBody([]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[]}}`)), now, time.Second); got != nil {
		t.Errorf("without QuotaFailure: %v", got)
	}
}
