package openai

import (
	"net/http"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound25ZaiUsageReset: Z.ai's spent usage caps name their reset
// without a zone ("Usage limit reached for 5 hour. Your limit will reset
// at 2026-09-09 05:38:28", a 429 of api.z.ai/api/paas/v4:
// hugalafutro/model-hotel#955), in Z.ai's UTC+8 (can1357/oh-my-pi#11014:
// the account's usage endpoint and the 429's retry-after-ms put the reset
// of "2026-09-12 00:35:41" at 16:35:41Z; diegosouzapw/OmniRoute#14479).
// Bug: the reset was not read; the cap was spent, not retried, and
// nothing told the caller when to come back. Now the wait until the reset,
// read in UTC+8, is the retry delay (longer than the gateway waits: the
// call falls back, RetryInfo says when); read as UTC it would be 8 hours
// too long. A reset with a zone is read in it; one already past leaves the
// cap spent.
func TestRound25ZaiUsageReset(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		pe := r23vCall(t, "dialect_zai_err_429_1308_usage_limit", stream)
		// 05:38:28+08:00 is 21:38:28Z, 4h36m17s after the Date (17:02:11Z).
		if want := 4*time.Hour + 36*time.Minute + 17*time.Second; pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 429 || pe.Code != "1308" || pe.RetryAfter != want {
			t.Errorf("stream %v: kind=%v status=%d code=%q retryAfter=%v, want %v", stream, pe.Kind, pe.HTTPStatus, pe.Code, pe.RetryAfter, want)
		}
		if !pipeline.Retryable(pe) || !pipeline.FallbackWorthy(pe) {
			t.Errorf("stream %v: retryable %v fallback %v", stream, pipeline.Retryable(pe), pipeline.FallbackWorthy(pe))
		}
	}

	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	date := http.Header{"Date": {"Fri, 11 Sep 2026 14:45:20 GMT"}}
	for _, tc := range []struct {
		obj  string
		want time.Duration // 0: spent, not retried
	}{
		// oh-my-pi#11014's reset, first refused at 14:45:20Z: 1h50m21s, not
		// the 9h50m21s UTC would make it.
		{`{"code":"1308","message":"Usage limit reached for 5 hour. Your limit will reset at 2026-09-12 00:35:41"}`, time.Hour + 50*time.Minute + 21*time.Second},
		// Z.ai's newer bracketed form, and the Chinese words.
		{`{"type":"rate_limit_error","code":"1308","message":"[1308][Usage limit reached for 5 hour. Your limit will reset at 2026-09-12 00:35:41][20260912001903b4955568412247d7]"}`, time.Hour + 50*time.Minute + 21*time.Second},
		{`{"code":"1308","message":"已达到 5 小时的使用上限。您的限额将在 2026-09-12 00:35:41 重置。"}`, time.Hour + 50*time.Minute + 21*time.Second},
		// The weekly cap, and a reset with its zone, read in it.
		{`{"code":"1310","message":"Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-09-14 12:05:49"}`, 2*24*time.Hour + 13*time.Hour + 20*time.Minute + 29*time.Second},
		{`{"code":"1310","message":"Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-09-14T00:00:00Z"}`, 2*24*time.Hour + 9*time.Hour + 14*time.Minute + 40*time.Second},
		{`{"code":"1308","message":"Your limit will reset at 2026-09-11T16:35:41+08:00"}`, 0},
		// Past in UTC+8 (16:00+08:00 is 08:00Z), though not in UTC: spent.
		{`{"code":"1308","message":"Usage limit reached for 5 hour. Your limit will reset at 2026-09-11 16:00:00"}`, 0},
		// No reset named: spent, as before.
		{`{"code":"1308","message":"Usage limit reached for 5 hour."}`, 0},
		// A concurrency limit (retried, no reset) is left as it was.
		{`{"code":"1302","message":"High concurrency. Your limit will reset at 2026-09-12 00:35:41"}`, -1},
	} {
		e := p.errorFromObject([]byte(tc.obj), http.StatusTooManyRequests, "", nil)
		vendorReset(e, date)
		switch {
		case tc.want > 0 && (e.RetryAfter != tc.want || !pipeline.Retryable(e)):
			t.Errorf("%s: retryAfter %v retryable %v, want %v", tc.obj, e.RetryAfter, pipeline.Retryable(e), tc.want)
		case tc.want == 0 && (e.RetryAfter != 0 || pipeline.Retryable(e)):
			t.Errorf("%s: retryAfter %v retryable %v, want spent", tc.obj, e.RetryAfter, pipeline.Retryable(e))
		case tc.want < 0 && (e.RetryAfter != 0 || !pipeline.Retryable(e)):
			t.Errorf("%s: retryAfter %v retryable %v, want a plain rate limit", tc.obj, e.RetryAfter, pipeline.Retryable(e))
		}
		if e.Kind != provider.KindRateLimited || !pipeline.FallbackWorthy(e) {
			t.Errorf("%s: kind %v fallback %v", tc.obj, e.Kind, pipeline.FallbackWorthy(e))
		}
	}
}
