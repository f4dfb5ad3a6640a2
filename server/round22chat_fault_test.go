package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// TestRound22ChatOpenRouterLimitInBody: OpenRouter answers its free-model
// daily limit with a 429 whose rate-limit state is in the body
// (error.metadata.headers: limit 50, remaining 0, the reset as Unix
// milliseconds; server/provider/openai/testdata/dialect_openrouter_err_429_free_per_day.http)
// and no x-ratelimit or Retry-After header. The exhausted limit is the
// error's rate-limit state now, so the call is not retried into the same
// refusal: it fails at once (the reset is beyond max_retry_after), its
// RetryInfo the time until the reset and its meta the limit. Before, the
// error had no state: three attempts within milliseconds, and a RetryInfo
// of nothing.
func TestRound22ChatOpenRouterLimitInBody(t *testing.T) {
	t.Parallel()
	date := time.Now().UTC().Truncate(time.Second)
	reset := date.Add(2 * time.Hour)
	body := fmt.Sprintf(`{"error":{"message":"Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day","code":429,`+
		`"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"%d"},"provider_name":null}},"user_id":"user_3Kq8TzWm2VbN5xRa7YcPdLhF0Ej"}`, reset.UnixMilli())
	h := merged(hdr("Content-Type", "application/json", "Date", date.Format(http.TimeFormat)), openaiChat.reqIDHeader(1))
	up := f13Serve(t, respond(429, h, body), openaiChat.okStep(2))
	clock := &f13Clock{}
	c := f13Start(t, f13Defaults+openaiChat.yaml, up.URL, clock)
	_, err := c.Chat(context.Background(), chatReq13())
	st, m := f13Check(t, openaiChat, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
	if d := retryInfo(st).GetRetryDelay().AsDuration(); d != 2*time.Hour {
		t.Errorf("RetryInfo = %v, want the 2h until the reset", retryInfo(st))
	}
	if rl := m.GetRateLimit(); rl.GetRequestsLimit() != 50 || rl.RequestsRemaining == nil || rl.GetRequestsRemaining() != 0 ||
		!rl.GetRequestsResetTime().AsTime().Equal(reset) {
		t.Errorf("rate limit = %v", rl)
	}
	if !strings.Contains(st.Message(), "free-models-per-day") || len(clock.slept()) != 0 || up.requests() != 1 {
		t.Errorf("message %q, sleeps %v, requests %d", st.Message(), clock.slept(), up.requests())
	}
}
