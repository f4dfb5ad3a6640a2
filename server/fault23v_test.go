package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// Round 23: OpenAI-compatible vendors' own error answers through the
// gateway (the openai adapter's reading of them:
// server/provider/openai/round23_vendor_errors_test.go, the bodies its
// testdata/README.md cites). A spent balance or quota is RESOURCE_EXHAUSTED
// at once (one attempt, no RetryInfo), the provider's capacity UNAVAILABLE
// after the retries, a reset named the RetryInfo.

const (
	f23vZaiBalance    = `{"error":{"code":"1113","message":"Insufficient balance or no resource package. Please recharge."}}`
	f23vZaiUsageCap   = `{"error":{"code":"1308","message":"Usage limit reached for 5 hour. Your limit will reset at 2025-11-21 19:41:55"}}`
	f23vKimiQuota     = `{"error":{"message":"Your account exceeded current quota","type":"exceeded_current_quota_error"}}`
	f23vKimiOverload  = `{"error":{"message":"The engine is currently overloaded, please try again later","type":"engine_overloaded_error"}}`
	f23vArrearage     = `{"error":{"code":"Arrearage","param":null,"message":"Access denied, please make sure your account is in good standing.","type":"Arrearage"}}`
	f23vFireworks     = `{"error":{"message":"Account acme-research is suspended, possibly due to reaching the monthly spending limit or failure to pay past invoices.","param":null,"code":"PRECONDITION_FAILED","type":"error"}}`
	f23vMiniMaxReset  = `{"base_resp":{"status_code":2056,"status_msg":"usage limit exceeded, 5-hour usage limit reached for Token Plan Starter (1500/1500 used), resets at 2026-05-20T20:00:00Z"}}`
	f23vMiniMaxBefore = "Wed, 20 May 2026 17:30:00 GMT" // 2h30m before that reset
)

// TestFault23VendorErrorAnswers: each answer, unary, as the client gets it:
// code, reason, attempts. Before: the Z.ai and Kimi quotas were retried
// three times (a 429; "unavailable" in a stream), Arrearage and Fireworks's
// suspended account were INVALID_ARGUMENT, Kimi's overload a rate limit.
func TestFault23VendorErrorAnswers(t *testing.T) {
	t.Parallel()
	f := openaiChat
	for _, tc := range []struct {
		name     string
		status   int
		body     string
		code     codes.Code
		reason   string
		attempts int
	}{
		{"zai 1113 balance", 429, f23vZaiBalance, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
		{"kimi exceeded quota", 429, f23vKimiQuota, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
		{"kimi engine overloaded", 429, f23vKimiOverload, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{"dashscope arrearage", 400, f23vArrearage, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
		{"fireworks suspended", 412, f23vFireworks, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 3; n++ {
				steps = append(steps, respond(tc.status, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), tc.body))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, tc.code, tc.reason, tc.attempts, tc.status)
			if tc.attempts == 1 && retryInfo(st) != nil {
				t.Errorf("RetryInfo %v on a spent quota", retryInfo(st))
			}
			if up.requests() != tc.attempts {
				t.Errorf("upstream saw %d requests, want %d", up.requests(), tc.attempts)
			}
		})
	}
}

// TestFault23VendorErrorEvents: the same quotas as a 200 stream's only
// event: not retried (they were "unavailable" errors at the start of a
// stream, retried three times).
func TestFault23VendorErrorEvents(t *testing.T) {
	t.Parallel()
	f := openaiChat
	for name, body := range map[string]string{"zai 1308 usage cap": f23vZaiUsageCap, "kimi exceeded quota": f23vKimiQuota} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), "data: "+body+"\n\n"), respond(200, f.streamHead(2), f.complete()))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v err %v, text %q", got.started, got.err, got.text)
			}
			f13Check(t, f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
			if up.requests() != 1 {
				t.Errorf("upstream saw %d requests", up.requests())
			}
		})
	}
}

// TestFault23MiniMaxPlanResetRetryInfo: MiniMax's spent Token Plan naming
// its reset (base_resp 2056 in a 200): RESOURCE_EXHAUSTED after one
// attempt, the wait until the reset (2h30m from the answer's Date) as
// RetryInfo, beyond max_retry_after. Before: coded insufficient_quota, no
// RetryInfo, nothing said when to come back.
func TestFault23MiniMaxPlanResetRetryInfo(t *testing.T) {
	t.Parallel()
	f := openaiChat
	up := f13Serve(t, respond(200, merged(hdr("Content-Type", "application/json", "Date", f23vMiniMaxBefore), f.reqIDHeader(1)), f23vMiniMaxReset))
	c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
	_, err := c.Chat(context.Background(), chatReq13())
	st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
	if ri := retryInfo(st); ri == nil || ri.GetRetryDelay().AsDuration() != 150*time.Minute {
		t.Errorf("RetryInfo %v, want 2h30m", ri)
	}
	if up.requests() != 1 {
		t.Errorf("upstream saw %d requests", up.requests())
	}
}

// TestFault23VendorQuotaFallsBack: a routed model whose first deployment's
// balance is spent (Z.ai's 1113; DashScope's Arrearage, which was an
// invalid request and did not fall back) is served by the second, after
// one attempt at the first.
func TestFault23VendorQuotaFallsBack(t *testing.T) {
	t.Parallel()
	f := openaiChat
	for name, tc := range map[string]struct {
		status int
		body   string
	}{"zai 1113": {429, f23vZaiBalance}, "arrearage": {400, f23vArrearage}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, respond(tc.status, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), tc.body))
			second := f13Serve(t, f.okStep(11))
			c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if first.requests() != 1 || second.requests() != 1 {
				t.Errorf("first saw %d requests, second %d", first.requests(), second.requests())
			}
			if got := resp.GetMeta().GetProvider(); got != "second" {
				t.Errorf("answered by %q", got)
			}
		})
	}
}
