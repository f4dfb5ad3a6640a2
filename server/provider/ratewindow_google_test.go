package provider

import (
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestGoogleQuotaWindows: every violation of a Gemini QuotaFailure is a
// window (not only the first request and token quota the typed fields
// hold): budget from the metric, period from the quota id, the
// quotaValue as limit, nothing remaining, the quota id as its header;
// the RetryInfo reset only on a window no shorter than the delay and
// shorter than a day (its seconds are not when a day's quota opens); a
// violation of no known budget is no window. (Hand-written violations:
// the four quota ids and metrics Gemini's free tier reports for
// gemini-2.5-pro, as Gemini's 429 lists them, with the free tier's
// values; an ErrorInfo-derived Vertex quota; an unknown metric.)
func TestGoogleQuotaWindows(t *testing.T) {
	t.Parallel()
	const in, req = "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", "generativelanguage.googleapis.com/generate_content_free_tier_requests"
	vs := []*errdetails.QuotaFailure_Violation{
		{QuotaMetric: in, QuotaId: "GenerateContentInputTokensPerModelPerDay-FreeTier", QuotaValue: 1000000},
		{QuotaMetric: req, QuotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier", QuotaValue: 250},
		{QuotaMetric: req, QuotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", QuotaValue: 10},
		{QuotaMetric: in, QuotaId: "GenerateContentInputTokensPerModelPerMinute-FreeTier", QuotaValue: 250000},
		{QuotaMetric: "aiplatform.googleapis.com/generate_content_output_tokens_per_hour", QuotaValue: 0},
		{QuotaMetric: "generativelanguage.googleapis.com/other", QuotaId: "SomethingPerMinute", QuotaValue: 3},
	}
	now := time.Date(2025, 10, 14, 9, 12, 31, 0, time.UTC)
	reset := timestamppb.New(now.Add(53 * time.Second))
	zero, day, minute := proto.Int64(0), durationpb.New(24*time.Hour), durationpb.New(time.Minute)
	want := &llmrelayv1.RateLimit{Windows: []*llmrelayv1.RateLimitWindow{
		{Budget: "input_tokens", Header: "GenerateContentInputTokensPerModelPerDay-FreeTier", Period: day, Limit: proto.Int64(1000000), Remaining: zero},
		{Budget: "requests", Header: "GenerateRequestsPerDayPerProjectPerModel-FreeTier", Period: day, Limit: proto.Int64(250), Remaining: zero},
		{Budget: "requests", Header: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", Period: minute, Limit: proto.Int64(10), Remaining: zero, ResetTime: reset},
		{Budget: "input_tokens", Header: "GenerateContentInputTokensPerModelPerMinute-FreeTier", Period: minute, Limit: proto.Int64(250000), Remaining: zero, ResetTime: reset},
		{Budget: "output_tokens", Header: "aiplatform.googleapis.com/generate_content_output_tokens_per_hour", Period: durationpb.New(time.Hour), Remaining: zero, ResetTime: reset},
	}}
	if got := GoogleQuotaWindows(nil, vs, now, 53*time.Second); !proto.Equal(got, want) {
		t.Errorf("windows\n got %v\nwant %v", got, want)
	}
	// A delay longer than a window is not its reset.
	got := GoogleQuotaWindows(nil, vs, now, 2*time.Minute)
	for _, w := range got.GetWindows() {
		if d := w.GetPeriod().AsDuration(); (d < 2*time.Minute || d >= 24*time.Hour) != (w.ResetTime == nil) {
			t.Errorf("%s: reset %v with a 2m delay", w.Header, w.ResetTime)
		}
	}
	// Added to an existing rate limit, the same violation twice is one window.
	rl := &llmrelayv1.RateLimit{RequestsLimit: proto.Int64(10)}
	if got := GoogleQuotaWindows(rl, append(vs[2:3], vs[2]), now, 0); got != rl || len(rl.Windows) != 1 || rl.Windows[0].ResetTime != nil {
		t.Errorf("into rl: %v", got)
	}
	if got := GoogleQuotaWindows(nil, vs[5:], now, time.Second); got != nil {
		t.Errorf("no known budget: %v", got)
	}
	for id, want := range map[string]time.Duration{"Gemini25ProRequestsPerDay": 24 * time.Hour, "RequestsDaily": 24 * time.Hour,
		"ApiRequestsPerMinutePerProjectPerRegion": time.Minute, "PerSecondish": 0, "GenerateRequestsPerModel": 0, "PerHour-x": time.Hour} {
		if got := googleQuotaPeriod("", id).AsDuration(); (googleQuotaPeriod("", id) == nil) != (want == 0) || (want != 0 && got != want) {
			t.Errorf("period(%q) = %v, want %v", id, googleQuotaPeriod("", id), want)
		}
	}
}
