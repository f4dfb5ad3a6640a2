package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"strconv"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
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

// cutError answers status with headers h and body cut after n bytes: the
// Content-Length declares the whole, the connection closes after the
// part (the body cut in transit), or, with whole false, the part is all
// the body (a proxy or a limit cut it before it was sent).
func cutError(status int, h http.Header, body string, n int, inTransit bool) f13Step {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		if inTransit {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body[:n])
	}
}

// TestFault21TruncatedErrorBodies: an error answer whose JSON body is cut
// (in transit, the connection closing before its declared length; or
// sent cut) is read for what it holds up to the cut: its message (and
// the delay it states), its type and code, its RetryInfo when that was
// complete; it was the status's bare text ("Too Many Requests"), and
// Anthropic's body was not read at all once its read failed. For every
// format, the 429 is retried after the delay the cut body still states
// (Anthropic's states none: its limit is read from the message). The
// bodies are the providers' documented and recorded 429s (Anthropic's
// the anthropic package's testdata/error_429.http), shortened.
func TestFault21TruncatedErrorBodies(t *testing.T) {
	t.Parallel()
	openaiBody := `{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	anthropicBody := `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (5b2f7c1e-93d4-4a8e-b6f0-2c71d9e4a385) of 400,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."},"request_id":"req_011NHpbs0Bs5Fy0Fa5Ky6Gg1"}`
	geminiBody := `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"9s"},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]}]}}`
	ollamaBody := `{"error":{"message":"you've reached your hourly usage limit, please try again in 5s","type":"rate_limit_error","param":null}}`
	for _, tc := range []struct {
		f       f13Format
		body    string
		after   string // the body is cut right after this
		message string
		code    string
		delay   time.Duration
	}{
		{openaiChat, openaiBody, `"type":"requests",`, "Please try again in 20s.", "requests", 20 * time.Second},
		{openaiResponses, openaiBody, `"code":"rate_l`, "Please try again in 20s.", "requests", 20 * time.Second},
		{azureFormat(), openaiBody, `"param":nu`, "Please try again in 20s.", "requests", 20 * time.Second},
		{anthropicFormat, anthropicBody, `or try again later."},"request_i`, "of 400,000 input tokens per minute", "rate_limit_error", 0},
		{geminiFormat, geminiBody, `"retryDelay":"9s"},{"@type":"type.googleapis.com/google.rpc.He`, "You exceeded your current quota", "RESOURCE_EXHAUSTED", 9 * time.Second},
		{ollamaFormat, ollamaBody, `"type":"rate_limit_error","par`, "hourly usage limit", "rate_limit_error", 5 * time.Second},
	} {
		for _, inTransit := range []bool{true, false} {
			name := tc.f.name + "/sent cut"
			if inTransit {
				name = tc.f.name + "/cut in transit"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				i := strings.Index(tc.body, tc.after)
				if i < 0 {
					t.Fatalf("%q not in the body", tc.after)
				}
				h := merged(hdr("Content-Type", "application/json"), tc.f.reqIDHeader(1))
				up := f13Serve(t, cutError(429, h, tc.body, i+len(tc.after), inTransit), tc.f.okStep(2))
				clock := &f13Clock{}
				c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\n"+tc.f.yaml, up.URL, clock)
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				m := resp.GetMeta()
				if s := clock.slept(); len(s) != 1 || (tc.delay == 0 && !f20Backoff(s[0])) || (tc.delay != 0 && s[0] != tc.delay) {
					t.Errorf("sleeps %v, want [%v] (the delay the cut body states; 0: the policy's backoff)", s, tc.delay)
				}
				if rr := m.GetRetryReasons(); len(rr) != 1 || !strings.Contains(rr[0].GetMessage(), tc.message) || rr[0].GetUpstreamStatus() != 429 {
					t.Errorf("retry reasons %v, want the cut body's message %q", rr, tc.message)
				}
				// Once more, failing: the code the cut body names.
				up2 := f13Serve(t, cutError(429, h, tc.body, i+len(tc.after), inTransit))
				c2 := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+tc.f.yaml, up2.URL, &f13Clock{})
				_, err = c2.Chat(context.Background(), chatReq13())
				st, info, _ := statusDetails(t, err)
				if st.Code() != codes.ResourceExhausted || info.GetMetadata()["upstreamCode"] != tc.code || !strings.Contains(st.Message(), tc.message) ||
					info.GetMetadata()["upstreamRequestId"] != tc.f.wantReqID(1) && tc.f.reqID != "" {
					t.Errorf("%v %v %q", st.Code(), info.GetMetadata(), st.Message())
				}
				if ri := retryInfo(st); (tc.delay == 0) != (ri == nil) || ri.GetRetryDelay().AsDuration() != tc.delay {
					t.Errorf("RetryInfo %v, want %v (0: none)", ri, tc.delay)
				}
				if tc.f.name == "anthropic" {
					// The limit its message names (as the whole body's).
					if v := quotaFailure(st).GetViolations(); len(v) != 1 || v[0].GetQuotaMetric() != "input_tokens" || v[0].GetQuotaValue() != 400000 {
						t.Errorf("violations %v", v)
					}
				}
			})
		}
	}
}

// TestFault21OpenAIServerErrors: OpenAI's server errors as its API words
// them. A 500 server_error names its request id in the message for the
// help center ("Please include the request ID req_… in your message."):
// with no x-request-id (a proxy in front dropped it) that id is the
// upstream request id, on an error answer and on a stream's error event.
// A 429 of type server_error ("That model is currently overloaded with
// other requests.") is the provider's capacity, not the caller's rate
// limit: Unavailable, no QuotaFailure naming "server_error", still
// retried as a 429, and a route falls back at once.
func TestFault21OpenAIServerErrors(t *testing.T) {
	t.Parallel()
	const serverError = `{"error":{"message":"The server had an error while processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID req_23c32c4251b3cab04bce519f14d4801f in your message.)","type":"server_error","param":null,"code":null}}`
	const overloaded = `{"error":{"message":"That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID 44fa8f95f731a58124b775d316c1b044 in your message.)","type":"server_error","param":null,"code":null}}`
	json := hdr("Content-Type", "application/json")
	t.Run("500 request id in the message", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(500, json, serverError))
		c := f13Start(t, f13Defaults+openaiChat.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		st, info, _ := statusDetails(t, err)
		m := failedMeta(t, err)
		if st.Code() != codes.Unavailable || info.GetMetadata()["upstreamRequestId"] != "req_23c32c4251b3cab04bce519f14d4801f" ||
			m.GetProviderRequestId() != "req_23c32c4251b3cab04bce519f14d4801f" || m.GetAttempts() != 3 {
			t.Errorf("%v %v, meta request id %q, attempts %d", st.Code(), info.GetMetadata(), m.GetProviderRequestId(), m.GetAttempts())
		}
	})
	t.Run("header wins", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(500, merged(json, hdr("x-request-id", "req_header")), serverError))
		c := f13Start(t, f13Defaults+openaiChat.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		if _, info, _ := statusDetails(t, err); info.GetMetadata()["upstreamRequestId"] != "req_header" {
			t.Errorf("metadata %v", info.GetMetadata())
		}
	})
	t.Run("stream error event", func(t *testing.T) {
		t.Parallel()
		f := openaiChat
		up := f13Serve(t, respond(200, hdr("Content-Type", "text/event-stream"), f.head+"data: "+serverError+"\n\n"))
		c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		st, info, _ := statusDetails(t, got.err)
		if st.Code() != codes.Unavailable || info.GetMetadata()["upstreamRequestId"] != "req_23c32c4251b3cab04bce519f14d4801f" {
			t.Errorf("%v %v", st.Code(), info.GetMetadata())
		}
	})
	t.Run("429 overloaded", func(t *testing.T) {
		t.Parallel()
		step := func(n int) f13Step { return respond(429, merged(json, openaiChat.reqIDHeader(n)), overloaded) }
		up := f13Serve(t, step(1), step(2), step(3))
		clock := &f13Clock{}
		c := f13Start(t, f13Defaults+openaiChat.yaml, up.URL, clock)
		_, err := c.Chat(context.Background(), chatReq13())
		st, _ := f13Check(t, openaiChat, err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3, 429)
		if qf := quotaFailure(st); qf != nil {
			t.Errorf("QuotaFailure %v on an overloaded model", qf)
		}
	})
	t.Run("429 overloaded routed", func(t *testing.T) {
		t.Parallel()
		first := f13Serve(t, respond(429, merged(json, openaiChat.reqIDHeader(1)), overloaded))
		second := f13Serve(t, openaiChat.okStep(11))
		clock := &f13Clock{}
		c := f13StartRouted(t, openaiChat, 3, first, second, clock)
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil || resp.GetMeta().GetProvider() != "second" || first.requests() != 1 || len(clock.slept()) != 0 {
			t.Errorf("err %v, meta %v, first saw %d, sleeps %v", err, resp.GetMeta(), first.requests(), clock.slept())
		}
	})
}

// TestFault21MaskedKeyNotEchoed: OpenAI's 401 for a refused key shows it
// masked ("Incorrect API key provided: sk-e2e-te****…0000."; DeepSeek's
// "****0000"): its visible ends are the gateway's key's, and name it to
// every caller; they are
// redacted like the whole key, in the status, its retry reasons and the
// FailedCallMeta (its raw capture too), unary and streamed, for OpenAI
// and Azure. A masked key that is not the gateway's stays.
func TestFault21MaskedKeyNotEchoed(t *testing.T) {
	t.Parallel()
	masked := f13Key[:9] + strings.Repeat("*", 20) + f13Key[len(f13Key)-4:]
	body := func(key string) string {
		return `{"error":{"message":"Incorrect API key provided: ` + key + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	}
	for _, f := range []f13Format{openaiChat, openaiResponses, azureFormat()} {
		for _, stream := range []bool{false, true} {
			name := f.name + "/unary"
			if stream {
				name = f.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, respond(401, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), body(masked)))
				c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
				var err error
				if stream {
					err = readStream13(t, c).err
				} else {
					_, err = c.Chat(context.Background(), chatReq13())
				}
				st, _ := f13Check(t, f, err, codes.Unauthenticated, "UPSTREAM_UNAUTHENTICATED", 1, 401)
				all := st.Message() + fmt.Sprint(st.Proto())
				if strings.Contains(all, f13Key[:9]) || strings.Contains(all, "*0000") || !strings.Contains(st.Message(), "Incorrect API key provided: [REDACTED].") {
					t.Errorf("the key's ends reached the caller: %s", all)
				}
			})
		}
	}
	t.Run("deepseek", func(t *testing.T) {
		t.Parallel()
		// DeepSeek shows only the key's last four characters ("Your api
		// key: ****d353 is invalid", as its 401 is quoted): still the
		// gateway's key's, and redacted.
		f := openaiChat
		up := f13Serve(t, respond(401, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)),
			`{"error":{"message":"Authentication Fails, Your api key: ****`+f13Key[len(f13Key)-4:]+` is invalid","type":"authentication_error","param":null,"code":"invalid_request_error"}}`))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		st, _ := f13Check(t, f, err, codes.Unauthenticated, "UPSTREAM_UNAUTHENTICATED", 1, 401)
		if st.Message() != "up: Authentication Fails, Your api key: [REDACTED] is invalid" {
			t.Errorf("message %q", st.Message())
		}
	})
	t.Run("raw capture", func(t *testing.T) {
		t.Parallel()
		// The caller asked for the exchanged bytes (preserve_raw): the
		// 401's body in meta.raw shows the mask redacted as well.
		f := openaiChat
		up := f13Serve(t, respond(401, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), body(masked)))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		req := chatReq13()
		req.Call = &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(true)}
		_, err := c.Chat(context.Background(), req)
		raw := failedMeta(t, err).GetRaw()
		if !strings.Contains(string(raw.GetResponse()), "Incorrect API key provided: [REDACTED].") || strings.Contains(string(raw.GetResponse()), f13Key[:9]) {
			t.Errorf("raw response %q", raw.GetResponse())
		}
	})
	t.Run("another key's mask stays", func(t *testing.T) {
		t.Parallel()
		other := "sk-proj-" + strings.Repeat("*", 20) + "wxyz"
		up := f13Serve(t, respond(401, hdr("Content-Type", "application/json"), body(other)))
		c := f13Start(t, f13Defaults+openaiChat.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		if st, _, _ := statusDetails(t, err); !strings.Contains(st.Message(), other) {
			t.Errorf("message %q", st.Message())
		}
	})
}

// TestFault21AzureResponsesContentFilter: Azure's Responses API refuses a
// prompt its content filter blocked with a 400 content_filter whose
// verdicts are a list (content_filters: one entry per source, blocked or
// not), not Chat Completions' innererror.content_filter_result; the body
// as a project's test quotes Azure's answer (a jailbreak detected). The
// client gets what it gets for the Chat Completions refusal: the
// categories that blocked it in the message, the verdicts as sent in the
// FailedCallMeta's extended (they were lost), the field it blames, no
// retry.
func TestFault21AzureResponsesContentFilter(t *testing.T) {
	t.Parallel()
	const body = `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI’s content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766","type":"invalid_request_error","param":"prompt","code":"content_filter","content_filters":[{"blocked":true,"source_type":"prompt","content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"jailbreak":{"detected":true,"filtered":true}},"content_filter_offsets":{"start_offset":0,"end_offset":5608,"check_offset":0}}]}}`
	f := azureResponses()
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "unary", true: "stream"}[stream], func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(400, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), body))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			var err error
			if stream {
				err = readStream13(t, c).err
			} else {
				_, err = c.Chat(context.Background(), chatReq13())
			}
			st, m := f13Check(t, f, err, codes.InvalidArgument, "CONTENT_FILTERED", 1, 400)
			if !strings.HasSuffix(st.Message(), "(filtered: jailbreak (detected))") {
				t.Errorf("message %q", st.Message())
			}
			cf := m.GetExtended().GetFields()["content_filters"].GetListValue().GetValues()
			if len(cf) != 1 || cf[0].GetStructValue().GetFields()["source_type"].GetStringValue() != "prompt" ||
				!cf[0].GetStructValue().GetFields()["content_filter_results"].GetStructValue().GetFields()["jailbreak"].GetStructValue().GetFields()["detected"].GetBoolValue() {
				t.Errorf("extended %v", m.GetExtended())
			}
			if _, _, br := statusDetails(t, err); len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != "prompt" {
				t.Errorf("BadRequest %v", br)
			}
		})
	}
}

// TestFault21ContextLengthFallsBack: a prompt longer than a deployment's
// context window gives way to the route's next deployment, for every
// format's own words (the adapter packages' stored answers: OpenAI's 400
// context_length_exceeded, Anthropic's "prompt is too long", Gemini's
// token count beyond the maximum; Ollama's in TestFault21OllamaContextLength)
// and for an error event inside a stream (a Responses stream's
// response.failed): never retried on the deployment that refused it.
// Alone, the same answers are InvalidArgument CONTEXT_LENGTH_EXCEEDED.
func TestFault21ContextLengthFallsBack(t *testing.T) {
	t.Parallel()
	responsesFailed := respond(200, openaiResponses.streamHead(1), openaiResponses.head+responsesEvent("response.failed",
		`"sequence_number":4,"response":{`+responsesObj+`,"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again."},"usage":null}`))
	for _, tc := range []struct {
		name   string
		f      f13Format
		step   func(t *testing.T) f13Step
		stream bool
	}{
		{"openai", openaiChat, func(t *testing.T) f13Step { return f20Recorded(t, "provider/openai/testdata/err_context_length.http") }, false},
		{"anthropic", anthropicFormat, func(t *testing.T) f13Step {
			return f20Recorded(t, "provider/anthropic/testdata/error_context_length.http")
		}, false},
		{"gemini", geminiFormat, func(t *testing.T) f13Step {
			return f20Recorded(t, "provider/gemini/testdata/error_context_length.http")
		}, false},
		{"responses stream", openaiResponses, func(*testing.T) f13Step { return responsesFailed }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, tc.step(t))
			second := f13Serve(t, tc.f.okStep(11))
			if tc.stream {
				second = f13Serve(t, respond(200, tc.f.streamHead(11), tc.f.complete()))
			}
			clock := &f13Clock{}
			c := f13StartRouted(t, tc.f, 3, first, second, clock)
			var m *llmrelayv1.ResponseMeta
			if tc.stream {
				got := readStream13(t, c)
				if got.err != nil || got.text != okText {
					t.Fatalf("err %v, text %q", got.err, got.text)
				}
				m = got.end.GetMeta()
			} else {
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				m = resp.GetMeta()
			}
			if m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 || len(clock.slept()) != 0 || len(m.GetRouting().GetTried()) != 1 {
				t.Errorf("meta %v, first saw %d, sleeps %v", m, first.requests(), clock.slept())
			}
			alone := f13Serve(t, tc.step(t))
			c = f13Start(t, f13Defaults+tc.f.yaml, alone.URL, &f13Clock{})
			var err error
			if tc.stream {
				err = readStream13(t, c).err
			} else {
				_, err = c.Chat(context.Background(), chatReq13())
			}
			if st, info, _ := statusDetails(t, err); st.Code() != codes.InvalidArgument || info.GetReason() != "CONTEXT_LENGTH_EXCEEDED" || alone.requests() != 1 {
				t.Errorf("alone: %v %s %q, requests %d", st.Code(), info.GetReason(), st.Message(), alone.requests())
			}
		})
	}
}

// azureResponses is the Azure format on the Responses API.
func azureResponses() f13Format {
	az := azureFormat()
	f := openaiResponses
	f.name, f.reqID = "azure-responses", az.reqID
	f.yaml = strings.Replace(strings.Replace(az.yaml, "format: openai-chat", "format: openai-responses", 1), `api_version: "2024-10-21"`, `api_version: "2025-04-01-preview"`, 1)
	return f
}

// TestFault21ThrottledStreamRetryAfter: Azure refuses a throttled
// Responses stream with a 200 whose head says retry-after (and the
// oversubscribed token count), then an error event rate_limit_exceeded
// and response.failed (the shape a proxy's capture of the live service
// quotes; hand-built). Nothing was relayed, so it is retried: after the
// head's Retry-After (it was the policy's millisecond backoff, into the
// same refusal), and with every attempt refused the client's RetryInfo
// is that delay.
func TestFault21ThrottledStreamRetryAfter(t *testing.T) {
	t.Parallel()
	f := azureResponses()
	msg := "Your requests to gpt-5.6-sol for gpt-5.6-sol in swedencentral have exceeded rate limit."
	throttled := func(n int) f13Step {
		h := merged(hdr("Content-Type", "text/event-stream", "retry-after", "4", "x-ratelimit-remaining-tokens", "-27689", "x-ratelimit-reset-tokens", "64"), f.reqIDHeader(n))
		return respond(200, h, responsesEvent("response.created", `"sequence_number":0,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`)+
			"event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"rate_limit_exceeded\",\"message\":\""+msg+"\",\"param\":null}\n\n"+
			responsesEvent("response.failed", `"sequence_number":2,"response":{`+responsesObj+`,"status":"failed","error":{"code":"rate_limit_exceeded","message":"`+msg+`"},"usage":null}`))
	}
	t.Run("then answered", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, throttled(1), respond(200, f.streamHead(2), f.complete()))
		clock := &f13Clock{}
		c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
		got := readStream13(t, c)
		if got.err != nil || got.text != okText {
			t.Fatalf("err %v, text %q", got.err, got.text)
		}
		if s := clock.slept(); len(s) != 1 || s[0] != 4*time.Second {
			t.Errorf("sleeps %v, want [4s]", s)
		}
		if rr := got.end.GetMeta().GetRetryReasons(); len(rr) != 1 || rr[0].GetDelay().AsDuration() != 4*time.Second || rr[0].GetMessage() != msg {
			t.Errorf("retry reasons %v", rr)
		}
	})
	t.Run("every attempt refused", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, throttled(1), throttled(2), throttled(3))
		clock := &f13Clock{}
		c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
		got := readStream13(t, c)
		st, _ := f13Check(t, f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3, 0)
		if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 4*time.Second {
			t.Errorf("RetryInfo %v, want 4s", ri)
		}
		if s := clock.slept(); len(s) != 2 || s[0] != 4*time.Second || s[1] != 4*time.Second {
			t.Errorf("sleeps %v", s)
		}
	})
}

// TestFault21OllamaOutOfMemory: Ollama refuses to load a model larger
// than its host's free memory with a 500 ("model requires more system
// memory (44.0 GiB) than is available (7.6 GiB)", its scheduler's words
// as users quote them): the same refusal comes back until another model
// is unloaded, minutes later, so it is not retried (it was, twice, at
// once); a route falls back at once to a deployment on another host. The
// same through Ollama's OpenAI-compatible endpoint.
func TestFault21OllamaOutOfMemory(t *testing.T) {
	t.Parallel()
	const msg = "model requires more system memory (44.0 GiB) than is available (7.6 GiB)"
	for _, tc := range []struct {
		f    f13Format
		body string
	}{
		{ollamaFormat, `{"error":"` + msg + `"}`},
		{openaiChat, `{"error":{"message":"` + msg + `","type":"api_error","param":null,"code":null}}`},
	} {
		step := respond(500, merged(hdr("Content-Type", "application/json; charset=utf-8"), tc.f.reqIDHeader(1)), tc.body)
		t.Run(tc.f.name+"/alone", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, step)
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, clock)
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, tc.f, err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1, 500)
			if !strings.Contains(st.Message(), msg) || up.requests() != 1 || len(clock.slept()) != 0 || retryInfo(st) != nil {
				t.Errorf("message %q, requests %d, sleeps %v, RetryInfo %v", st.Message(), up.requests(), clock.slept(), retryInfo(st))
			}
		})
		t.Run(tc.f.name+"/routed", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, step)
			second := f13Serve(t, tc.f.okStep(11))
			clock := &f13Clock{}
			c := f13StartRouted(t, tc.f, 3, first, second, clock)
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMeta(); m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 || len(clock.slept()) != 0 {
				t.Errorf("meta %v, first saw %d, sleeps %v", m, first.requests(), clock.slept())
			}
		})
	}
}

// TestFault21RateLimitKeptAcrossAttempts: a 429 reports the rate-limit
// state, the next attempts fail without an answer (a connection reset):
// the client's FailedCallMeta keeps the state the 429 reported, the
// provider's latest word on its limits (it was lost: the last attempt
// reported none), with no request id (the failed attempt had none). A
// later attempt's own state replaces an earlier one's.
func TestFault21RateLimitKeptAcrossAttempts(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		if f.wantRL == nil {
			continue // no rate-limit headers
		}
		t.Run(f.name+"/reset after 429", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 429, nil), resetConn, resetConn)
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, info, _ := statusDetails(t, err)
			m := failedMeta(t, err)
			if st.Code() != codes.Unavailable || up.requests() != 3 || m.GetAttempts() != 3 {
				t.Fatalf("%v %s %q, requests %d", st.Code(), info.GetReason(), st.Message(), up.requests())
			}
			if m.GetRateLimit() == nil || m.GetRateLimit().GetRequestsRemaining() != f.wantRL(1) || m.GetProviderRequestId() != "" {
				t.Errorf("rate limit %v, request id %q: want the 429's state and no id", m.GetRateLimit(), m.GetProviderRequestId())
			}
		})
		t.Run(f.name+"/the latest wins", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 429, nil), resetConn, f.errStep(3, 503, nil))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			m := failedMeta(t, err)
			if m.GetRateLimit().GetRequestsRemaining() != f.wantRL(3) || m.GetProviderRequestId() != f.wantReqID(3) {
				t.Errorf("rate limit %v, request id %q: want the last answer's", m.GetRateLimit(), m.GetProviderRequestId())
			}
		})
	}
}

// TestFault21GroqFlexCapacity: Groq answers a flex-tier request it has no
// capacity for with status 498, error capacity_exceeded, and documents
// it as retried with backoff (its Flex Processing page; the body here is
// hand-built in its error shape). It was an invalid request of an
// unknown status: neither retried nor a reason to fall back. It is
// Unavailable, retried, and a route falls back once the retries are spent.
func TestFault21GroqFlexCapacity(t *testing.T) {
	t.Parallel()
	f := openaiChat
	step := func(n int) f13Step {
		return respond(498, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n)),
			`{"error":{"message":"flex tier capacity exceeded, please try again later","type":"capacity_exceeded","code":"capacity_exceeded"}}`)
	}
	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, step(1), step(2), step(3))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		f13Check(t, f, err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3, 498)
	})
	t.Run("routed", func(t *testing.T) {
		t.Parallel()
		first := f13Serve(t, step(1), step(2), step(3))
		second := f13Serve(t, f.okStep(11))
		c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil || resp.GetMeta().GetProvider() != "second" || first.requests() != 3 {
			t.Errorf("err %v, meta %v, first saw %d", err, resp.GetMeta(), first.requests())
		}
	})
}
