package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// TestFault25ZaiUsageCapReset: Z.ai's 5-hour cap (1308) names its reset
// without a zone, in Z.ai's UTC+8 ("… will reset at 2026-09-09 05:38:28",
// a 429 of api.z.ai's OpenAI-compatible endpoint, hugalafutro/model-hotel#955):
// the client gets RESOURCE_EXHAUSTED after one attempt with RetryInfo
// saying when, 4h36m17s after the answer's Date (05:38:28+08:00 is
// 21:38:28Z); read as UTC it would have said 12h36m17s. Before, the reset
// was not read and the error said nothing of when to come back.
func TestFault25ZaiUsageCapReset(t *testing.T) {
	t.Parallel()
	f := openaiChat
	const body = `{"error":{"code":"1308","message":"Usage limit reached for 5 hour. Your limit will reset at 2026-09-09 05:38:28"}}`
	up := f13Serve(t, respond(429, merged(hdr("Content-Type", "application/json", "Date", "Tue, 08 Sep 2026 17:02:11 GMT"), f.reqIDHeader(1)), body))
	c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
	_, err := c.Chat(context.Background(), chatReq13())
	st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
	if ri := retryInfo(st); ri == nil || ri.GetRetryDelay().AsDuration() != 4*time.Hour+36*time.Minute+17*time.Second {
		t.Errorf("RetryInfo %v, want 4h36m17s", ri)
	}
	if up.requests() != 1 {
		t.Errorf("upstream saw %d requests", up.requests())
	}
}
