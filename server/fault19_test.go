package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Fault sequences of session 19 (see fault13_test.go for the harness).

// gemini499 is Gemini's answer when its backend gave up on the operation
// under load, as gemini-cli printed it (google-gemini/gemini-cli#20309):
// a google.rpc.Status in an array, with the legacy "errors" list.
const gemini499 = `[{
  "error": {
    "code": 499,
    "message": "The operation was cancelled.",
    "errors": [
      {
        "message": "The operation was cancelled.",
        "domain": "global",
        "reason": "backendError"
      }
    ],
    "status": "CANCELLED"
  }
}
]`

// TestFault19ProviderCancelled: an HTTP 499 (Gemini's CANCELLED, its
// backend giving up under load) is the provider's transient failure, not
// the caller's invalid request (it was InvalidArgument INVALID_REQUEST,
// never retried) nor its cancellation: retried like a 5xx (gemini-cli
// retries it, python-genai#2506 asks google-genai to), Unavailable once
// the attempts are spent. Gemini's OpenAI-compatible endpoint sends the
// same array; every format reads the status alike.
func TestFault19ProviderCancelled(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		body := f.errBody(499)
		if f.name == "gemini" || f.name == "openai-chat" {
			body = gemini499
		}
		step := func(n int) f13Step {
			return respond(499, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), body)
		}
		t.Run(f.name+"/then success", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, step(1), f.okStep(2))
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatalf("not retried: %v", err)
			}
			m := resp.GetMeta()
			if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || up.requests() != 2 || len(clock.slept()) != 1 {
				t.Fatalf("attempts %d, reasons %v, upstream %d, sleeps %v", m.GetAttempts(), m.GetRetryReasons(), up.requests(), clock.slept())
			}
			if rr := m.GetRetryReasons()[0]; rr.GetReason() != "http_499" || rr.GetUpstreamStatus() != 499 {
				t.Errorf("retry reason %v", rr)
			}
			if m.GetProviderRequestId() != f.wantReqID(2) {
				t.Errorf("provider_request_id %q", m.GetProviderRequestId())
			}
		})
		t.Run(f.name+"/every attempt", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, step(1), step(2), step(3), f.okStep(4))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3, 499)
			if f.name == "gemini" && (st.Message() != "up: The operation was cancelled." || errorInfoOf(st).GetMetadata()["upstreamCode"] != "CANCELLED") {
				t.Errorf("status %q, ErrorInfo %v", st.Message(), errorInfoOf(st).GetMetadata())
			}
		})
		t.Run(f.name+"/stream", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, step(1), respond(200, f.streamHead(2), f.complete()))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.text != okText || got.end.GetMeta().GetAttempts() != 2 {
				t.Fatalf("err %v, text %q, end %v", got.err, got.text, got.end)
			}
		})
	}
}

// TestFault19GeminiCancelledEvent: Gemini's CANCELLED inside a 200
// stream is its backend giving up too: before any content it is retried
// (it was the caller's Canceled, never retried), after content it ends
// the stream Unavailable (not Canceled: the client cancelled nothing),
// with the text relayed and no retry.
func TestFault19GeminiCancelledEvent(t *testing.T) {
	t.Parallel()
	f := geminiFormat
	ev := `data: {"error": {"code": 499,"message": "The operation was cancelled.","status": "CANCELLED"}}` + "\r\n\r\n"
	t.Run("before content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, f.streamHead(1), ev), respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.err != nil || got.text != okText || got.end == nil {
			t.Fatalf("not retried: err %v, text %q", got.err, got.text)
		}
		if m := got.end.GetMeta(); m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "unavailable" {
			t.Errorf("meta %v", m)
		}
	})
	t.Run("after content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, f.streamHead(1), f.text("The capital")+ev), respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.end != nil || got.text != "The capital" || up.requests() != 1 {
			t.Fatalf("end %v, text %q, upstream %d", got.end, got.text, up.requests())
		}
		st, _ := f13Check(t, f, got.err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1, 0)
		if errorInfoOf(st).GetMetadata()["upstreamCode"] != "CANCELLED" {
			t.Errorf("ErrorInfo %v", errorInfoOf(st).GetMetadata())
		}
	})
}

// untrackedTokens are the headers Azure answers with for a budget it does
// not track (its Responses API's tokens since November 2025, as
// openai/openai-dotnet#838 quotes them): -1 for limit and remaining, a
// reset of 0.
func untrackedTokens() http.Header {
	return hdr("x-ratelimit-limit-tokens", "-1", "x-ratelimit-remaining-tokens", "-1", "x-ratelimit-reset-tokens", "0")
}

// TestFault19UntrackedBudget: a rate-limit budget reported as -1 is not
// reported: the meta leaves it unset (it said a limit of -1 with -1
// remaining, resetting now), and a 429's QuotaFailure does not name it as
// an exhausted limit of -1 (it did, beside the requests limit that was
// exhausted, or instead of the provider's code when none was); the
// budgets that were reported are kept.
func TestFault19UntrackedBudget(t *testing.T) {
	t.Parallel()
	for _, f := range []f13Format{openaiChat, openaiResponses, azureFormat()} {
		t.Run(f.name+"/200", func(t *testing.T) {
			t.Parallel()
			h := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), openaiRL(1))
			for k, vs := range untrackedTokens() {
				h[k] = vs // in place of openaiRL's tokens budget
			}
			up := f13Serve(t, respond(200, h, f.okBody))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			rl := resp.GetMeta().GetRateLimit()
			if rl.TokensLimit != nil || rl.TokensRemaining != nil || rl.TokensResetTime != nil {
				t.Errorf("rate limit %v: the untracked tokens budget must stay unset", rl)
			}
			if rl.GetRequestsLimit() != 10000 || rl.GetRequestsRemaining() != 9001 || rl.GetRequestsResetTime() == nil {
				t.Errorf("rate limit %v lost the requests budget", rl)
			}
		})
		for _, tc := range []struct {
			name   string
			extra  http.Header
			metric string // the one violation's metric, "" for the provider's code
		}{
			{"requests exhausted", merged(untrackedTokens(), hdr("x-ratelimit-remaining-requests", "0", "Retry-After", "2")), "requests"},
			{"nothing else exhausted", merged(untrackedTokens(), hdr("Retry-After", "2")), ""},
		} {
			t.Run(f.name+"/429/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, f.errStep(1, 429, tc.extra))
				c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				st, m := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
				if rl := m.GetRateLimit(); rl.TokensLimit != nil || rl.TokensRemaining != nil || rl.TokensResetTime != nil || rl.GetRequestsLimit() != 10000 {
					t.Errorf("rate limit %v", rl)
				}
				q := quotaFailure(st).GetViolations()
				if len(q) != 1 {
					t.Fatalf("violations %v", q)
				}
				// openaiErr types its 429 "requests": the requests limit.
				if q[0].GetQuotaMetric() != "requests" || q[0].GetQuotaValue() != 10000 || q[0].GetSubject() != "provider:up" {
					t.Errorf("violation %v", q[0])
				}
				if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 2*time.Second {
					t.Errorf("RetryInfo %v", ri)
				}
			})
		}
	}
}

// f19ChunkedCut answers 200 with body as one HTTP/1.1 chunk and closes
// the connection without the last (zero-length) chunk: a body that does
// not end cleanly, as a proxy closing early leaves it.
func f19ChunkedCut(h http.Header, body string) f13Step {
	return func(w http.ResponseWriter, _ *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer c.Close()
		var head strings.Builder
		head.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n")
		for k, vs := range h {
			for _, v := range vs {
				head.WriteString(k + ": " + v + "\r\n")
			}
		}
		_, _ = fmt.Fprintf(c, "%s\r\n%x\r\n%s\r\n", head.String(), len(body), body)
	}
}

// TestFault19CompleteThenBroken: a whole answer in a format whose end is
// the end of the body (Gemini; a chat stream with its finish and usage
// but no [DONE], as Cerebras sends it), then a connection that breaks
// instead of closing cleanly (a chunked body without its last chunk, a
// reset): the answer is complete, its end and usage reach the client with
// a warning, as when the connection stays open (TestFault18Complete
// ThenSilence). The client had the whole text and then got Unavailable
// with no end and no usage, and nothing was retried. Formats with a
// terminator of their own were complete at it already.
func TestFault19CompleteThenBroken(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		body := strings.Replace(f.complete(), "data: [DONE]\n\n", "", 1)
		for _, how := range []string{"chunked cut", "reset"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				step := thenReset(f.streamHead(1), body)
				if how == "chunked cut" {
					step = f19ChunkedCut(f.streamHead(1), body)
				}
				up := f13Serve(t, step, respond(200, f.streamHead(2), f.complete()))
				c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.err != nil || got.end == nil {
					t.Fatalf("err %v, end %v: a complete answer whose connection broke is complete", got.err, got.end)
				}
				m := got.end.GetMeta()
				if got.text != okText || got.end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetUsage().GetOutputTokens() == 0 ||
					m.GetAttempts() != 1 || up.requests() != 1 || m.GetProviderRequestId() != f.wantReqID(1) {
					t.Errorf("text %q, end %v, upstream %d", got.text, got.end, up.requests())
				}
				warned := slices.Contains(m.GetWarnings(), provider.CutAfterEndWarning)
				if want := f.name == "gemini" || strings.Contains(f.complete(), "[DONE]"); warned != want {
					t.Errorf("warning %v, want %v: %q", warned, want, m.GetWarnings())
				}
			})
		}
	}
}

// TestFault19WholeAnswerForStream: a stream request answered with the
// whole unary answer as application/json (a proxy or compatible server
// that ignored "stream"). The OpenAI formats and Anthropic failed it as a
// bad response (round 19: better than Anthropic's retries of it as a cut
// stream, each paid for), losing an answer the provider was paid for;
// Gemini's and Ollama's stream readers took it as the one chunk of a
// stream, which failed an answer without a finish reason or written over
// several lines. Since round 24 every format relays the unary answer of
// the body, once, with a warning that says so.
func TestFault19WholeAnswerForStream(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.okStep(1), f.okStep(2), f.okStep(3))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.text != okText || got.end.GetMeta().GetAttempts() != 1 || up.requests() != 1 {
				t.Fatalf("err %v, text %q, end %v, upstream %d", got.err, got.text, got.end, up.requests())
			}
			m := got.end.GetMeta()
			if !slices.Contains(m.GetWarnings(), provider.WholeAnswerWarning) {
				t.Errorf("no warning that the whole answer was relayed: %q", m.GetWarnings())
			}
			if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(1) {
				t.Errorf("rate limit %v", m.GetRateLimit())
			}
		})
	}
}

// geminiDaily is Gemini's 429 for a model without a free tier, as
// googleapis/python-genai#2044 logged it: per-day and per-minute quotas
// of limit 0 (no quotaValue) and a RetryInfo of seconds.
const geminiDaily = `{"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.Help", "links": [{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]}, {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"}}, {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"}}, {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", "quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier", "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"}}]}, {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "47s"}]}}`

// TestFault19DailyQuota: a 429 whose QuotaFailure (or RATE_LIMIT_EXCEEDED
// ErrorInfo) names a per-day quota is a spent quota: not retried, whatever
// seconds its RetryInfo names (it was retried after them, 47 s each,
// to fail the same way), no RetryInfo to the client, the violations as
// sent; a route falls back at once. The same status as a stream's
// chunk, and through Gemini's OpenAI-compatible endpoint (its array
// form). A per-minute quota alone is waited out as before.
func TestFault19DailyQuota(t *testing.T) {
	t.Parallel()
	array := "[" + geminiDaily + "]"
	errorInfoDaily := `{"error": {"code": 429, "message": "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com' for consumer 'project_number:681255809395'.", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED", "domain": "googleapis.com", "metadata": {"quota_metric": "cloudcode-pa.googleapis.com/gemini_2_5_pro_requests", "quota_limit": "Gemini25ProRequestsPerDay"}}, {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}]}}`
	for _, tc := range []struct {
		name   string
		f      f13Format
		step   f13Step
		quotas int
	}{
		{"gemini/QuotaFailure", geminiFormat, respond(429, hdr("Content-Type", "application/json"), geminiDaily), 3},
		{"gemini/ErrorInfo", geminiFormat, respond(429, hdr("Content-Type", "application/json"), errorInfoDaily), 1},
		{"gemini/stream chunk", geminiFormat, respond(200, geminiFormat.streamHead(1), "data: "+geminiDaily+"\r\n\r\n"), 3},
		{"openai-chat/Gemini's compatible endpoint", openaiChat, respond(429, merged(hdr("Content-Type", "application/json"), openaiChat.reqIDHeader(1)), array), 3},
	} {
		stream := strings.HasSuffix(tc.name, "stream chunk")
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, tc.step, tc.f.okStep(2))
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, clock)
			var err error
			if stream {
				err = readStream13(t, c).err
			} else {
				_, err = c.Chat(context.Background(), chatReq13())
			}
			status := 429
			if stream {
				status = 0
			}
			st, _ := f13Check(t, tc.f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, status)
			if up.requests() != 1 || len(clock.slept()) != 0 {
				t.Errorf("upstream %d, sleeps %v: a spent daily quota is not waited for", up.requests(), clock.slept())
			}
			if ri := retryInfo(st); ri != nil {
				t.Errorf("RetryInfo %v: waiting does not help", ri)
			}
			q := quotaFailure(st).GetViolations()
			if len(q) != tc.quotas || !strings.Contains(q[0].GetQuotaId(), "PerDay") {
				t.Errorf("violations %v", q)
			}
		})
	}
	t.Run("gemini/fallback", func(t *testing.T) {
		t.Parallel()
		f := geminiFormat
		first := f13Serve(t, respond(429, hdr("Content-Type", "application/json"), geminiDaily))
		second := f13Serve(t, f.okStep(2))
		clock := &f13Clock{}
		c := f13StartRouted(t, f, 3, first, second, clock)
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			t.Fatal(err)
		}
		if m := resp.GetMeta(); m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 || len(clock.slept()) != 0 {
			t.Errorf("meta %v, first %d, sleeps %v", m, first.requests(), clock.slept())
		}
	})
	t.Run("gemini/per-minute only", func(t *testing.T) {
		t.Parallel()
		f := geminiFormat
		minute := strings.Replace(geminiDaily, `{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"}}, `, "", 1)
		if minute == geminiDaily {
			t.Fatal("fixture not rewritten")
		}
		up := f13Serve(t, respond(429, hdr("Content-Type", "application/json"), minute), f.okStep(2))
		clock := &f13Clock{}
		c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil || resp.GetMeta().GetAttempts() != 2 {
			t.Fatalf("err %v, meta %v", err, resp.GetMeta())
		}
		if s := clock.slept(); len(s) != 1 || s[0] != 47*time.Second {
			t.Errorf("sleeps %v, want the RetryInfo's 47s", s)
		}
	})
}

// invalidPrompt is OpenAI's refusal of a prompt its usage policy filter
// flagged (reasoning models; as alan-turing-institute/t0-1#69 and
// BeehiveInnovations/pal-mcp-server#178 quote it).
const invalidPrompt = `{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting","type":"invalid_request_error","param":null,"code":"invalid_prompt"}}`

// TestFault19PolicyFlaggedPrompt: OpenAI's invalid_prompt of a prompt
// flagged by its usage policy is CONTENT_FILTERED (it was INVALID_REQUEST,
// as for a malformed request), as a 400 and inside a Responses stream
// (response.failed) alike; never retried. An invalid_prompt that names no
// policy stays an invalid request.
func TestFault19PolicyFlaggedPrompt(t *testing.T) {
	t.Parallel()
	failed := func(body string) string {
		obj := body[len(`{"error":`) : len(body)-1]
		return responsesEvent("response.created", `"sequence_number":0,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`) +
			responsesEvent("response.failed", `"sequence_number":1,"response":{`+responsesObj+`,"status":"failed","error":`+obj+`,"usage":null}`)
	}
	other := strings.Replace(invalidPrompt, "your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting", "the messages do not follow the expected format.", 1)
	for _, f := range []f13Format{openaiChat, openaiResponses, azureFormat()} {
		for _, tc := range []struct {
			name, body, reason string
		}{{"flagged", invalidPrompt, "CONTENT_FILTERED"}, {"other", other, "INVALID_REQUEST"}} {
			t.Run(f.name+"/400/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, respond(400, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1)), tc.body), f.okStep(2))
				c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				st, _ := f13Check(t, f, err, codes.InvalidArgument, tc.reason, 1, 400)
				if errorInfoOf(st).GetMetadata()["upstreamCode"] != "invalid_prompt" || up.requests() != 1 {
					t.Errorf("ErrorInfo %v, upstream %d", errorInfoOf(st).GetMetadata(), up.requests())
				}
			})
		}
	}
	t.Run("openai-responses/response.failed", func(t *testing.T) {
		t.Parallel()
		f := openaiResponses
		up := f13Serve(t, respond(200, f.streamHead(1), failed(invalidPrompt)), respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		f13Check(t, f, got.err, codes.InvalidArgument, "CONTENT_FILTERED", 1, 0)
		if up.requests() != 1 {
			t.Errorf("upstream %d", up.requests())
		}
	})
}

// TestFault19AnthropicSpendLimit: Anthropic's 400 invalid_request_error
// "You have reached your specified API usage limits" (the organization's
// spend limit; anthropics/claude-code#38035 quotes it) is a spent quota,
// ResourceExhausted (it was an invalid request) and a reason to fall back;
// it and "credit balance is too low" inside a stream's error event are
// not retried (the credit balance's was, three times, as a rate limit).
func TestFault19AnthropicSpendLimit(t *testing.T) {
	t.Parallel()
	f := anthropicFormat
	limits := `{"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."},"request_id":"req_011CZLrUfBVkVHn5T6EqQaf7"}`
	credit := `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_011CZLrUfBVkVHn5T6EqQaf8"}`
	t.Run("400", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(400, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1)), limits), f.okStep(2))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 400)
		if q := quotaFailure(st).GetViolations(); len(q) != 1 || q[0].GetSubject() != "provider:up" || !strings.Contains(q[0].GetDescription(), "usage limits") {
			t.Errorf("QuotaFailure %v", q)
		}
		if retryInfo(st) != nil || up.requests() != 1 {
			t.Errorf("RetryInfo %v, upstream %d", retryInfo(st), up.requests())
		}
	})
	for name, body := range map[string]string{"usage limits": limits, "credit balance": credit} {
		t.Run("stream event/"+name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), f.head+anthropicEvent("error", body[len(`{"type":"error",`):strings.Index(body, `,"request_id"`)])), respond(200, f.streamHead(2), f.complete()))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started {
				t.Errorf("started")
			}
			f13Check(t, f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
			if up.requests() != 1 {
				t.Errorf("upstream %d: a spent quota is not retried", up.requests())
			}
		})
	}
	t.Run("fallback", func(t *testing.T) {
		t.Parallel()
		first := f13Serve(t, respond(400, hdr("Content-Type", "application/json"), limits))
		second := f13Serve(t, f.okStep(2))
		c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			t.Fatal(err)
		}
		if m := resp.GetMeta(); m.GetProvider() != "second" || m.GetAttempts() != 2 || m.GetRetryReasons()[0].GetReason() != "http_400" || first.requests() != 1 {
			t.Errorf("meta %v", m)
		}
	})
}

// TestFault19GeminiLocationRefused: Gemini's 400 FAILED_PRECONDITION for
// a deployment that may not call it (the gateway's location, as
// gemini-api-php/client#32 quotes it; the free tier unavailable in the
// country without billing, as the Gemini API's error table words it) is
// PermissionDenied and falls back to the next deployment (it was the
// caller's InvalidArgument, and the route gave up); not retried. Through
// Gemini's OpenAI-compatible endpoint alike. Another FAILED_PRECONDITION
// stays an invalid request.
func TestFault19GeminiLocationRefused(t *testing.T) {
	t.Parallel()
	location := `{"error": {"code": 400, "message": "User location is not supported for the API use.", "status": "FAILED_PRECONDITION"}}`
	freeTier := `{"error": {"code": 400, "message": "Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.", "status": "FAILED_PRECONDITION"}}`
	other := `{"error": {"code": 400, "message": "Precondition check failed.", "status": "FAILED_PRECONDITION"}}`
	for _, tc := range []struct {
		name, body     string
		f              f13Format
		code           codes.Code
		reason         string
		fallsBack      bool
		wrapInArray    bool
		upstreamReqIDs bool
	}{
		{"gemini/location", location, geminiFormat, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED", true, false, false},
		{"gemini/free tier", freeTier, geminiFormat, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED", true, false, false},
		{"gemini/other", other, geminiFormat, codes.InvalidArgument, "INVALID_REQUEST", false, false, false},
		{"openai-chat/compatible endpoint", location, openaiChat, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED", true, true, true},
	} {
		body := tc.body
		if tc.wrapInArray {
			body = "[" + body + "]"
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hdr("Content-Type", "application/json")
			if tc.upstreamReqIDs {
				h = merged(h, tc.f.reqIDHeader(1))
			}
			up := f13Serve(t, respond(400, h, body), tc.f.okStep(2))
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, tc.f, err, tc.code, tc.reason, 1, 400)
			if errorInfoOf(st).GetMetadata()["upstreamCode"] != "FAILED_PRECONDITION" || up.requests() != 1 {
				t.Errorf("ErrorInfo %v, upstream %d", errorInfoOf(st).GetMetadata(), up.requests())
			}
		})
		t.Run(tc.name+"/routed", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, respond(400, hdr("Content-Type", "application/json"), body))
			second := f13Serve(t, tc.f.okStep(2))
			c := f13StartRouted(t, tc.f, 3, first, second, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if !tc.fallsBack {
				if status.Code(err) != codes.InvalidArgument || second.requests() != 0 {
					t.Errorf("err %v, second %d: an invalid request does not fall back", err, second.requests())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMeta(); m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 {
				t.Errorf("meta %v, first %d", m, first.requests())
			}
		})
	}
}
