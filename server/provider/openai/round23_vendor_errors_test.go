package openai

import (
	"context"

	"errors"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// r23vCall replays one fixture to the adapter, unary or streamed (a
// stream read to its end), and returns the error it ended with.
func r23vCall(t *testing.T, file string, stream bool) *provider.Error {
	t.Helper()
	srv := providertest.ReplayFile(t, td(file+".http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	req := simpleRequest("glm-4.6")
	var err error
	if stream {
		var s provider.Stream
		s, err = p.Stream(context.Background(), req)
		if err == nil {
			for {
				if _, err = s.Recv(); err != nil {
					break
				}
			}
			_ = s.Close()
			if errors.Is(err, io.EOF) {
				t.Fatalf("%s: the stream ended without the error", file)
			}
		}
	} else {
		_, err = p.Generate(context.Background(), req)
	}
	return providerError(t, err)
}

// TestRound23VendorErrorAnswers: OpenAI-compatible vendors' own error
// answers (hand-built from quoted bodies: testdata/README.md, "Round 23:
// vendors' error answers on their OpenAI-compatible endpoints"), read as
// what they say. Before:
//   - Z.ai's spent balance (1113) was a plain 429, retried into the same
//     refusal; its 5-hour cap (1308) in a 200 stream an unknown code,
//     "unavailable" and retried.
//   - Kimi's exceeded_current_quota_error was a 429 retried, in a stream
//     "unavailable" and retried; its engine_overloaded_error the caller's
//     rate limit; its "exceeded model token limit" an invalid request (no
//     fallback to a deployment with a larger window).
//   - DashScope's Arrearage and Fireworks's suspended account were
//     invalid requests (400, 412): neither fell back to another account.
//   - DashScope's content inspection (data_inspection_failed) was an
//     invalid request, in a stream an unknown failure retried.
//   - Groq's restricted organization was an invalid request (400): it did
//     not fall back to another account.
//   - MiniMax's spent Token Plan with its reset named (base_resp 2056 in a
//     200) was not retried and said nothing of when to come back.
func TestRound23VendorErrorAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file            string
		stream          bool
		kind            provider.Kind
		status          int
		code, rid       string
		retry, fallback bool
		retryAfter      time.Duration
	}{
		{"dialect_zai_err_429_1113_balance", false, provider.KindRateLimited, 429, "1113", "", false, true, 0},
		{"dialect_zai_err_429_1113_balance", true, provider.KindRateLimited, 429, "1113", "", false, true, 0},
		{"dialect_zai_err_429_1302_concurrency", false, provider.KindRateLimited, 429, "1302", "20251121143355d4f271b360c51926", true, true, 0},
		// Round 25: the reset the 5-hour cap names ("2025-11-21 19:41:55",
		// UTC+8: 11:41:55Z) is 4h36m24s after the answer's Date: the
		// delay, longer than the gateway waits (it was not read: not
		// retried, nothing said when to come back).
		{"dialect_zai_stream_1308_usage_limit", true, provider.KindRateLimited, 200, "1308", "", true, true, 4*time.Hour + 36*time.Minute + 24*time.Second},
		{"dialect_moonshot_err_429_exceeded_quota", false, provider.KindRateLimited, 429, "exceeded_current_quota_error", "", false, true, 0},
		{"dialect_moonshot_stream_exceeded_quota", true, provider.KindRateLimited, 200, "exceeded_current_quota_error", "", false, true, 0},
		{"dialect_moonshot_err_429_engine_overloaded", false, provider.KindUnavailable, 429, "engine_overloaded_error", "", true, true, 0},
		{"dialect_moonshot_err_400_token_limit", false, provider.KindContextLength, 400, "invalid_request_error", "", false, true, 0},
		{"dialect_dashscope_err_400_arrearage", false, provider.KindRateLimited, 400, "Arrearage", "c1a597e1-cecb-4ab8-b58f-477115e3e215", false, true, 0},
		{"dialect_fireworks_err_412_suspended", false, provider.KindRateLimited, 412, "PRECONDITION_FAILED", "decf40bd-f45b-4fe9-b980-90ab8757ede3", false, true, 0},
		{"dialect_dashscope_err_400_data_inspection", false, provider.KindContentFilter, 400, "data_inspection_failed", "987fe9de-c211-4919-aeb6-9085f8999f76", false, false, 0},
		{"dialect_groq_err_400_organization_restricted", false, provider.KindPermissionDenied, 400, "organization_restricted", "req_01llmrelayorgr5k8m2p4s6v9x1z", false, true, 0},
		// The reset is 2h30m after the answer's Date: the delay, longer
		// than the gateway waits (so it falls back, RetryInfo saying when).
		{"dialect_minimax_base_resp_2056_reset", false, provider.KindRateLimited, 200, "2056", "", true, true, 150 * time.Minute},
		{"dialect_minimax_base_resp_2056_reset", true, provider.KindRateLimited, 200, "2056", "", true, true, 150 * time.Minute},
		// Without a reset the plan is spent: not retried (as before).
		{"dialect_minimax_base_resp_1008", false, provider.KindRateLimited, 200, "insufficient_quota", "", false, true, 0},
	} {
		pe := r23vCall(t, tc.file, tc.stream)
		name := tc.file
		if tc.stream {
			name += " (stream)"
		}
		if pe.Kind != tc.kind || pe.HTTPStatus != tc.status || pe.Code != tc.code || pe.RequestID != tc.rid || pe.RetryAfter != tc.retryAfter {
			t.Errorf("%s: got kind=%v status=%d code=%q rid=%q retryAfter=%v msg=%q", name, pe.Kind, pe.HTTPStatus, pe.Code, pe.RequestID, pe.RetryAfter, pe.Message)
		}
		if got := pipeline.Retryable(pe); got != tc.retry {
			t.Errorf("%s: Retryable = %v, want %v (advice %v)", name, got, tc.retry, pe.ShouldRetry)
		}
		if got := pipeline.FallbackWorthy(pe); got != tc.fallback {
			t.Errorf("%s: FallbackWorthy = %v, want %v", name, got, tc.fallback)
		}
	}
}

// TestRound23VendorErrorEvents: the same vendors' error objects inside a
// 200 (a stream's error event, an error body), where no status says what
// they are: the kind and the retry verdict from the code, type and words
// alone. Each line says what it was before when that was wrong.
func TestRound23VendorErrorEvents(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	for _, tc := range []struct {
		obj   string
		kind  provider.Kind
		retry bool
	}{
		// Z.ai's table (was: unavailable, retried, for every code).
		{`{"code":"1113","message":"Insufficient balance or no resource package. Please recharge."}`, provider.KindRateLimited, false},
		// The 5-hour cap with its reset named (UTC+8, 3h41m55s after the
		// Date below): retried after it, as MiniMax's plan (round 25).
		{`{"code":"1308","message":"已达到 5 小时的使用上限。您的限额将在 2025-11-21 19:41:55 重置。"}`, provider.KindRateLimited, true},
		{`{"code":"1302","message":"High concurrency"}`, provider.KindRateLimited, true},
		{`{"code":"1261","message":"Prompt exceeds max length"}`, provider.KindContextLength, false},
		{`{"code":"1301","message":"系统检测到输入或生成内容可能包含不安全或敏感内容"}`, provider.KindContentFilter, false},
		{`{"code":"1001","message":"Header中未收到Authentication参数"}`, provider.KindUnauthenticated, false},
		{`{"code":"1211","message":"模型不存在，请检查模型代码。"}`, provider.KindNotFound, false},
		{`{"code":"1312","message":"The model is overloaded"}`, provider.KindUnavailable, true},
		{`{"code":"1214","message":"messages 参数非法。请检查文档。"}`, provider.KindInvalidRequest, false},
		{`{"code":"1213","message":"未正常接收到 prompt 参数。"}`, provider.KindInvalidRequest, false},
		{`{"code":"1222","message":"API 不存在"}`, provider.KindNotFound, false},
		{`{"code":"1313","message":"您的账户当前使用模式不符合公平使用策略，请求频率已受到限制。"}`, provider.KindRateLimited, false},
		// A code the table does not list: an unknown failure, retried.
		{`{"code":"1234","message":"网络错误，请联系客服"}`, provider.KindUnavailable, true},
		// Z.ai's newer form: a type, and the code in brackets leading the
		// message (was: a rate limit retried).
		{`{"type":"rate_limit_error","code":"1308","message":"[1308][Usage limit reached for 5 hour. Your limit will reset at 2025-11-21 19:41:55][20251121150301c6e84d2f9a7b1035]"}`, provider.KindRateLimited, true},
		// A numeric code beside a type is not Z.ai's: Mistral's "1000"
		// is its internal error (real_rubyllm_mistral_err_500_context).
		{`{"message":"Service unavailable.","type":"internal_server_error","code":"1000"}`, provider.KindUnavailable, true},
		// Kimi (was: unavailable, retried).
		{`{"message":"Your account exceeded current quota","type":"exceeded_current_quota_error"}`, provider.KindRateLimited, false},
		{`{"message":"Your account reached max request: 3, please try again after 1 seconds","type":"rate_limit_reached_error"}`, provider.KindRateLimited, true},
		{`{"message":"The engine is currently overloaded, please try again later","type":"engine_overloaded_error"}`, provider.KindUnavailable, true},
		{`{"message":"Invalid request: Your request exceeded model token limit: 262144 (requested: 270117)","type":"invalid_request_error"}`, provider.KindContextLength, false},
		// DashScope (was: unavailable, retried).
		{`{"code":"Arrearage","message":"Access denied, please make sure your account is in good standing.","type":"Arrearage"}`, provider.KindRateLimited, false},
		{`{"code":"data_inspection_failed","param":null,"message":"Output data may contain inappropriate content.","type":"data_inspection_failed"}`, provider.KindContentFilter, false},
		{`{"message":"<400> InternalError.Algo.DataInspectionFailed: Input text data may contain inappropriate content.","type":"data_inspection_failed","param":null,"code":"data_inspection_failed"}`, provider.KindContentFilter, false},
		{`{"code":"Throttling.AllocationQuota","message":"Allocated quota exceeded, please increase your quota limit.","type":"Throttling.AllocationQuota"}`, provider.KindRateLimited, true},
		{`{"code":"Throttling.AllocationQuota","message":"Free allocated quota exceeded.","type":"Throttling.AllocationQuota"}`, provider.KindRateLimited, false},
		// Spent balances in vendors' words (was: retried).
		{`{"message":"Insufficient Balance","type":"unknown_error","code":"invalid_request_error"}`, provider.KindRateLimited, false},
		{`{"message":"insufficient balance (1008)","type":"api_error"}`, provider.KindRateLimited, false},
		{`{"message":"Credit limit exceeded. Please navigate to https://api.together.xyz/settings/billing to add credit or upgrade your plan.","type":"credit_limit","code":null}`, provider.KindRateLimited, false},
		{`{"message":"Account acme-research is suspended, possibly due to reaching the monthly spending limit or failure to pay past invoices.","code":"PRECONDITION_FAILED","type":"error"}`, provider.KindRateLimited, false},
		// Z.ai's Chinese words for its spent balance, without the code.
		{`{"message":"余额不足或无可用资源包,请充值。","type":"api_error"}`, provider.KindRateLimited, false},
		// Together's rate limit under the same type: retried.
		{`{"message":"You have been rate limited. Your rate limit is 60 queries per minute.","type":"credit_limit","code":null}`, provider.KindRateLimited, true},
		// Cerebras's limits (was: unavailable) and its queue (capacity).
		{`{"message":"Tokens per minute limit exceeded - too many tokens processed.","type":"too_many_tokens_error","param":"quota","code":"token_quota_exceeded"}`, provider.KindRateLimited, true},
		{`{"message":"Tokens per day limit exceeded - too many tokens processed.","type":"too_many_tokens_error","param":"quota","code":"token_quota_exceeded"}`, provider.KindRateLimited, false},
		{`{"message":"We're experiencing high traffic right now! Please try again soon.","code":"queue_exceeded"}`, provider.KindUnavailable, true},
		// Mistral's capacity and rate limit (was: unavailable; rate_limited
		// was not read as a rate limit).
		{`{"message":"Service tier capacity exceeded for this model.","type":"service_tier_capacity_exceeded","code":"3505"}`, provider.KindUnavailable, true},
		{`{"message":"Requests rate limit exceeded","type":"rate_limited","code":"1300"}`, provider.KindRateLimited, true},
		// MiniMax's Token Plan without a reset, as an error object: spent.
		{`{"message":"Token Plan usage limit reached: Upgrade your Token Plan or purchase Credits for more usage. (2056)","type":"rate_limit_error"}`, provider.KindRateLimited, false},
	} {
		e := p.errorFromObject([]byte(tc.obj), http.StatusOK, "", nil)
		p.inBand(e, http.Header{"Date": {"Fri, 21 Nov 2025 08:00:00 GMT"}})
		if e.Kind != tc.kind || pipeline.Retryable(e) != tc.retry {
			t.Errorf("%s: kind %v retryable %v (advice %v), want %v %v", tc.obj, e.Kind, pipeline.Retryable(e), e.ShouldRetry, tc.kind, tc.retry)
		}
		if want := tc.kind != provider.KindContentFilter && tc.kind != provider.KindInvalidRequest; pipeline.FallbackWorthy(e) != want {
			t.Errorf("%s: FallbackWorthy = %v, want %v", tc.obj, !want, want)
		}
	}
}

// TestRound23MiniMaxPlanResetInErrorObject: MiniMax's spent Token Plan as
// an error object whose message names the reset ("… resets at
// 2026-05-20T20:00:00Z (2056)", its Anthropic-compatible endpoint's words,
// MiniMax-AI/MiniMax-M2.7#36): the wait until the reset, from the answer's
// Date, is the delay, in a stream's error event as in a 429.
func TestRound23MiniMaxPlanResetInErrorObject(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	obj := `{"message":"usage limit exceeded, 5-hour usage limit reached for Token Plan Starter (1500/1500 used), resets at 2026-05-20T20:00:00Z (2056)","type":"rate_limit_error"}`
	e := p.errorFromObject([]byte(obj), http.StatusOK, "", nil)
	p.inBand(e, http.Header{"Date": {"Wed, 20 May 2026 19:00:00 GMT"}})
	if e.Kind != provider.KindRateLimited || e.RetryAfter != time.Hour || !pipeline.Retryable(e) {
		t.Errorf("stream event: kind %v retry after %v retryable %v, want rate limited, 1h, retryable", e.Kind, e.RetryAfter, pipeline.Retryable(e))
	}
	// A reset already past: nothing to wait for, spent.
	e = p.errorFromObject([]byte(obj), http.StatusOK, "", nil)
	p.inBand(e, http.Header{"Date": {"Wed, 20 May 2026 21:00:00 GMT"}})
	if e.RetryAfter != 0 || pipeline.Retryable(e) {
		t.Errorf("past reset: retry after %v retryable %v, want 0 and not retried", e.RetryAfter, pipeline.Retryable(e))
	}
}

// TestRound23GroqDailyTokens: Groq's daily token limit (a 429, or an error
// event, rate_limit_exceeded of type tokens: "… on tokens per day (TPD):
// Limit 100000, Used 99657, Requested 1568. Please try again in
// 17m38.976s. …", as clients quote it) is a rate limit whose delay the
// message states: the TPD violation and the 17m38.976s delay, longer than
// the gateway waits, so the call falls back with RetryInfo. No bug:
// recorded so the vendor rules above do not take it for a spent balance.
func TestRound23GroqDailyTokens(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	obj := `{"message":"Rate limit reached for model ` + "`llama-3.3-70b-versatile`" + ` in organization ` + "`org_01jz4q8w2k5v7n9b3c6x1m0tde`" + ` service tier ` + "`on_demand`" + ` on tokens per day (TPD): Limit 100000, Used 99657, Requested 1568. Please try again in 17m38.976s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}`
	e := p.errorFromObject([]byte(obj), http.StatusOK, "", nil)
	p.inBand(e, nil)
	want := 17*time.Minute + 38976*time.Millisecond
	if e.Kind != provider.KindRateLimited || e.RetryAfter != want || !pipeline.Retryable(e) || e.ShouldRetry == provider.RetryDiscouraged {
		t.Errorf("kind %v retry after %v retryable %v, want rate limited, %v, retryable", e.Kind, e.RetryAfter, pipeline.Retryable(e), want)
	}
	if len(e.Quota) != 1 || e.Quota[0].GetQuotaId() != "TPD" || e.Quota[0].GetQuotaValue() != 100000 {
		t.Errorf("quota %v, want TPD 100000", e.Quota)
	}
}

// TestRound23CerebrasLimits: Cerebras's 429s name their limit in words of
// their own ("Tokens per day limit exceeded - too many tokens processed.",
// type too_many_tokens_error, code token_quota_exceeded; hand-built
// fixtures, testdata/README.md). The limit is the quota violation (there
// was none). A daily token limit, whose reset Cerebras's headers do not
// give (x-ratelimit-reset-tokens-day is not sent), is spent for the day:
// not retried (it was retried into the same refusal), falling back. A
// daily request limit, whose day reset is sent, waits for it: the delay
// (9h54m15.25s), longer than the gateway waits, so it falls back with
// RetryInfo.
func TestRound23CerebrasLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file       string
		code       string
		quota      *errdetails.QuotaFailure_Violation
		retry      bool
		retryAfter time.Duration
	}{
		{"dialect_cerebras_err_429_tokens_per_day", "token_quota_exceeded",
			&errdetails.QuotaFailure_Violation{QuotaMetric: "tokens", QuotaId: "TPD", Description: "Tokens per day limit exceeded - too many tokens processed."}, false, 0},
		{"dialect_cerebras_err_429_requests_per_day", "request_quota_exceeded",
			&errdetails.QuotaFailure_Violation{QuotaMetric: "requests", QuotaId: "RPD", Description: "Requests per day limit exceeded - too many requests sent."}, true, 35655250 * time.Millisecond},
	} {
		for _, stream := range []bool{false, true} {
			pe := r23vCall(t, tc.file, stream)
			if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 429 || pe.Code != tc.code || pe.RetryAfter != tc.retryAfter {
				t.Errorf("%s (stream %v): got kind=%v status=%d code=%q retryAfter=%v", tc.file, stream, pe.Kind, pe.HTTPStatus, pe.Code, pe.RetryAfter)
			}
			if !violationsEqual(pe.Quota, []*errdetails.QuotaFailure_Violation{tc.quota}) {
				t.Errorf("%s (stream %v): quota %v, want %v", tc.file, stream, pe.Quota, tc.quota)
			}
			if got := pipeline.Retryable(pe); got != tc.retry {
				t.Errorf("%s (stream %v): Retryable = %v, want %v", tc.file, stream, got, tc.retry)
			}
			if !pipeline.FallbackWorthy(pe) {
				t.Errorf("%s (stream %v): not FallbackWorthy", tc.file, stream)
			}
		}
	}
}

// TestRound23MiniMaxBaseRespChunkReset: MiniMax's base_resp 2056 in a
// chunk of a 200 stream (minimaxError, then inBand): the reset its
// status_msg names is the delay and the error stays retryable after it
// (code 2056, no longer insufficient_quota); without a reset, or with one
// past, it stays a spent quota, not retried.
func TestRound23MiniMaxBaseRespChunkReset(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	h := http.Header{"Date": {"Wed, 20 May 2026 19:15:00 GMT"}}
	for _, tc := range []struct {
		msg        string
		code       string
		retryAfter time.Duration
		retry      bool
	}{
		{"usage limit exceeded, weekly usage limit reached for Token Plan Plus (4500/4500 used), resets at 2026-05-20T20:00:00Z", "2056", 45 * time.Minute, true},
		{"usage limit exceeded, weekly usage limit reached for Token Plan Plus (4500/4500 used), resets at 2026-05-20T19:00:00Z", "insufficient_quota", 0, false},
		{"Token Plan usage limit reached", "insufficient_quota", 0, false},
	} {
		e := p.minimaxError(&baseResp{StatusCode: 2056, StatusMsg: flexString(tc.msg)}, http.StatusOK)
		p.inBand(e, h)
		if e.Kind != provider.KindRateLimited || e.Code != tc.code || e.RetryAfter != tc.retryAfter || pipeline.Retryable(e) != tc.retry {
			t.Errorf("%q: kind %v code %q retry after %v retryable %v, want %q %v %v", tc.msg, e.Kind, e.Code, e.RetryAfter, pipeline.Retryable(e), tc.code, tc.retryAfter, tc.retry)
		}
	}
}

// TestRound23KimiRateLimit: Kimi's 429 rate_limit_reached_error names its
// limit and its delay in words OpenAI's do not use ("… request reached
// organization max RPM: 3, please try again after 1 seconds"): the delay
// is the retry delay (it was none: the retry policy's backoff, not the
// second Kimi asked for) and the limit the quota violation (there was
// none).
func TestRound23KimiRateLimit(t *testing.T) {
	t.Parallel()
	pe := r23vCall(t, "dialect_moonshot_err_429_rpm", false)
	want := &errdetails.QuotaFailure_Violation{QuotaMetric: "requests", QuotaId: "RPM", QuotaValue: 3, Description: pe.Message}
	if pe.Kind != provider.KindRateLimited || pe.Code != "rate_limit_reached_error" || pe.RetryAfter != time.Second || !pipeline.Retryable(pe) ||
		!violationsEqual(pe.Quota, []*errdetails.QuotaFailure_Violation{want}) {
		t.Errorf("got kind %v code %q retry after %v retryable %v quota %v", pe.Kind, pe.Code, pe.RetryAfter, pipeline.Retryable(pe), pe.Quota)
	}
	for msg, v := range map[string]*errdetails.QuotaFailure_Violation{
		"Your account org-x<ak-y> request reached max organization concurrency: 1, please try again after 1 seconds":                                                 {QuotaMetric: "concurrency", QuotaId: "concurrency", QuotaValue: 1},
		"Your account org-x / proj-z <ak-y> request reached project TPM rate limit, current: 1410, limit: 100, see https://platform.moonshot.cn/docs/pricing/limits": {QuotaMetric: "tokens", QuotaId: "TPM", QuotaValue: 100},
	} {
		e := &provider.Error{Kind: provider.KindRateLimited, Code: "rate_limit_reached_error", Message: msg}
		rateLimitQuota(e, "rate_limit_reached_error")
		v.Description = msg
		if !violationsEqual(e.Quota, []*errdetails.QuotaFailure_Violation{v}) {
			t.Errorf("%q: quota %v, want %v", msg, e.Quota, v)
		}
	}
}
