package server_test

import (
	"context"
	"testing"
	"time"

	"strconv"

	"google.golang.org/grpc/codes"
)

// Fault sequences of session 21 (see fault13_test.go for the harness).

// groqTooLarge is Groq's 413 for a request larger than the whole
// per-minute token limit (the openai package's
// testdata/dialect_groq_err_413_request_too_large.http).
func groqTooLarge(t *testing.T) f13Step {
	return f20Recorded(t, "provider/openai/testdata/dialect_groq_err_413_request_too_large.http")
}

// TestFault21GroqRequestTooLarge: Groq's 413 "Request too large … on
// tokens per minute (TPM): Limit 6000, Requested 12089" is the account's
// per-minute limit refusing a request larger than all of it: no retry
// can pass it (its Retry-After 64 would only repeat the refusal), so the
// call ends at once with ResourceExhausted, the limit as the QuotaFailure
// violation and no RetryInfo; a route falls back at once to a deployment
// whose limits may be larger.
func TestFault21GroqRequestTooLarge(t *testing.T) {
	t.Parallel()
	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, groqTooLarge(t))
		clock := &f13Clock{}
		c := f13Start(t, f13Defaults+openaiChat.yaml, up.URL, clock)
		_, err := c.Chat(context.Background(), chatReq13())
		st, info, _ := statusDetails(t, err)
		if st.Code() != codes.ResourceExhausted || info.GetReason() != "UPSTREAM_RATE_LIMITED" || info.GetMetadata()["upstreamStatus"] != "413" ||
			info.GetMetadata()["upstreamRequestId"] != "req_01llmrelay413q7w2e9r4t6y8u0" {
			t.Fatalf("%v %s %v: %q", st.Code(), info.GetReason(), info.GetMetadata(), st.Message())
		}
		if ri := retryInfo(st); ri != nil {
			t.Errorf("RetryInfo %v: no wait lets the request pass", ri)
		}
		v := quotaFailure(st).GetViolations()
		if len(v) != 1 || v[0].GetQuotaId() != "TPM" || v[0].GetQuotaValue() != 6000 || v[0].GetQuotaMetric() != "tokens" {
			t.Errorf("violations %v", v)
		}
		m := failedMeta(t, err)
		if m.GetAttempts() != 1 || up.requests() != 1 || len(clock.slept()) != 0 {
			t.Errorf("attempts %d, requests %d, sleeps %v", m.GetAttempts(), up.requests(), clock.slept())
		}
		if rl := m.GetRateLimit(); rl.GetTokensLimit() != 6000 || rl.GetTokensRemaining() != 5774 || m.GetProviderRequestId() != "req_01llmrelay413q7w2e9r4t6y8u0" {
			t.Errorf("meta rate limit %v, request id %q", rl, m.GetProviderRequestId())
		}
	})
	t.Run("routed", func(t *testing.T) {
		t.Parallel()
		first := f13Serve(t, groqTooLarge(t))
		second := f13Serve(t, openaiChat.okStep(11))
		clock := &f13Clock{}
		c := f13StartRouted(t, openaiChat, 3, first, second, clock)
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			t.Fatal(err)
		}
		m := resp.GetMeta()
		if m.GetProvider() != "second" || m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "http_413" ||
			first.requests() != 1 || len(clock.slept()) != 0 {
			t.Errorf("meta %v, first saw %d, sleeps %v", m, first.requests(), clock.slept())
		}
	})
}

// TestFault21OllamaContextLength: an input longer than Ollama's context
// is the same fact whether a new server says it with 400 or an old one
// with 500 (the same words): InvalidArgument CONTEXT_LENGTH_EXCEEDED,
// never retried; and both give way to the route's next deployment, whose
// context window may be larger (Ollama's is the deployment's num_ctx).
func TestFault21OllamaContextLength(t *testing.T) {
	t.Parallel()
	body := `{"error":"the input length exceeds the context length"}`
	for _, status := range []int{400, 500} {
		step := respond(status, hdr("Content-Type", "application/json; charset=utf-8"), body)
		t.Run(statusName(status)+"/alone", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, step)
			c := f13Start(t, f13Defaults+ollamaFormat.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.InvalidArgument || info.GetReason() != "CONTEXT_LENGTH_EXCEEDED" || up.requests() != 1 {
				t.Fatalf("%v %s (%q), requests %d", st.Code(), info.GetReason(), st.Message(), up.requests())
			}
		})
		t.Run(statusName(status)+"/routed", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, step)
			second := f13Serve(t, ollamaFormat.okStep(11))
			c := f13StartRouted(t, ollamaFormat, 3, first, second, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatalf("%v (first saw %d, second %d)", err, first.requests(), second.requests())
			}
			m := resp.GetMeta()
			if m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 || m.GetRetryReasons()[0].GetReason() != "http_"+statusName(status) {
				t.Errorf("meta %v, first saw %d", m, first.requests())
			}
		})
	}
}

func statusName(s int) string { return strconv.Itoa(s) }

// TestFault21AzureResets: an Azure 429 without Retry-After whose
// rate-limit headers show a budget exhausted waits until its reset, read
// in the unit the budget's numbers show (bare numbers: milliseconds where
// the window's refill time says so, seconds where it says that), and
// Azure's negative remaining count of an oversubscribed window is an
// exhausted budget, not an untracked one. Hand-built from the header sets
// provider.TestOpenAIRateLimitAzureUnits cites.
func TestFault21AzureResets(t *testing.T) {
	t.Parallel()
	f := azureFormat()
	t.Run("milliseconds", func(t *testing.T) {
		t.Parallel()
		// 20 requests per 10 s, none left: full again in 10 s, which
		// Azure's 10000 says in milliseconds (it was 10000 s, beyond
		// max_retry_after: the call ended at once).
		extra := hdr("x-ratelimit-limit-requests", "20", "x-ratelimit-remaining-requests", "0", "x-ratelimit-renewalperiod-requests", "10",
			"x-ratelimit-reset-requests", "10000")
		up := f13Serve(t, f.errStep(1, 429, extra), f.okStep(2))
		clock := &f13Clock{}
		c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			t.Fatal(err)
		}
		if s := clock.slept(); len(s) != 1 || s[0] != 10*time.Second || resp.GetMeta().GetAttempts() != 2 {
			t.Errorf("sleeps %v, attempts %d, want one wait of 10s", s, resp.GetMeta().GetAttempts())
		}
	})
	t.Run("oversubscribed", func(t *testing.T) {
		t.Parallel()
		// 27689 tokens beyond a 415000-token minute: full again in 64 s,
		// beyond max_retry_after (60s): the call ends at once with it
		// (the negative count was read as untracked, and the policy's
		// backoff retried twice into the same limit).
		extra := hdr("x-ratelimit-limit-tokens", "415000", "x-ratelimit-remaining-tokens", "-27689", "x-ratelimit-renewalperiod-tokens", "60",
			"x-ratelimit-reset-tokens", "64")
		up := f13Serve(t, f.errStep(1, 429, extra), f.errStep(2, 429, extra), f.errStep(3, 429, extra))
		clock := &f13Clock{}
		c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
		_, err := c.Chat(context.Background(), chatReq13())
		st, m := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
		if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 64*time.Second || len(clock.slept()) != 0 {
			t.Errorf("RetryInfo %v, sleeps %v", ri, clock.slept())
		}
		if rl := m.GetRateLimit(); rl.TokensRemaining == nil || rl.GetTokensRemaining() != 0 || rl.GetTokensLimit() != 415000 {
			t.Errorf("rate limit %v", rl)
		}
	})
}
