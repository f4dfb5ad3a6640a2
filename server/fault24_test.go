package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Fault sequences of session 24 (see fault13_test.go for the harness).
//
// Every body here is hand-built from what the providers' clients quote
// of them (each constant says which); none is a recording of its own.

// geminiZeroQuota is the Gemini API's 429 for a model without a free tier
// on a free-tier key: the message as akshayaggarwal99/nodenest#1 quotes it
// (one violation, the per-minute input tokens, limit 0; google-gemini/
// gemini-cli#22486 quotes the same lines for gemini-3.1-pro), the
// QuotaFailure shaped as gemini-cli#8437 quotes one (no quotaValue: proto3
// JSON leaves a 0 out), a RetryInfo of the per-minute window. No attempt
// succeeds however long the gateway waits.
const geminiZeroQuota = `{"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 0, model: gemini-2.0-flash-exp\nPlease retry in 27.412406319s.", "status": "RESOURCE_EXHAUSTED", "details": [` +
	`{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", "quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier", "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash-exp"}}]}, ` +
	`{"@type": "type.googleapis.com/google.rpc.Help", "links": [{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]}, ` +
	`{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "27s"}]}}`

// geminiNoFreeTier is the older words of the same refusal, as
// ai-christianson/RA.Aid#182 quotes it (empty violations, a RetryInfo of
// 33 s, which that client waited out twenty times).
const geminiNoFreeTier = `{"error": {"code": 429, "message": "Gemini 2.5 Pro Preview doesn't have a free quota tier. Please use Gemini 2.5 Pro Experimental (models/gemini-2.5.pro-exp-03-25) instead. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", "status": "RESOURCE_EXHAUSTED", "details": [` +
	`{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{}, {}, {}, {}]}, {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "33s"}]}}`

// googleZeroRegionQuota is Google's API front end refusing a request for
// a quota of 0 in the region: the RATE_LIMIT_EXCEEDED ErrorInfo's keys as
// provider.errorInfoQuota reads them (quota_limit_value "0"), a message
// that states no limit.
const googleZeroRegionQuota = `{"error": {"code": 429, "message": "Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute for a region' of service 'generativelanguage.googleapis.com' for consumer 'project_number:24'.", "status": "RESOURCE_EXHAUSTED", "details": [` +
	`{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED", "domain": "googleapis.com", "metadata": {"quota_location": "us-south1", "quota_limit_value": "0", "quota_unit": "1/min/{project}/{region}", "quota_limit": "ApiRequestsPerMinutePerProjectPerRegion", "quota_metric": "generativelanguage.googleapis.com/generate_content_requests", "service": "generativelanguage.googleapis.com", "consumer": "projects/24"}}]}}`

// TestFault24GeminiZeroQuota: a Gemini RESOURCE_EXHAUSTED naming a quota
// of 0 (limit: 0 in its message, a model without a free tier in words,
// an ErrorInfo's quota_limit_value "0") is a spent quota: not retried, no
// RetryInfo (its RetryInfo and "Please retry in" are the per-minute
// window's, which never opens for nothing), ResourceExhausted with the
// provider's QuotaFailure, and a route falls back at once; as a 429, as a
// stream's error chunk, through Gemini's OpenAI-compatible endpoint. They
// were retried after each RetryInfo into the same refusal, and the caller
// told to wait 27 s. The same message with a limit of 10 is still a pace
// limit, retried after its delay.
func TestFault24GeminiZeroQuota(t *testing.T) {
	t.Parallel()
	noDetails := `{"error": {"code": 429, "message": "* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro\nPlease retry in 20.5s.", "status": "RESOURCE_EXHAUSTED"}}`
	json := hdr("Content-Type", "application/json")
	for _, tc := range []struct {
		name   string
		f      f13Format
		step   f13Step
		status int
	}{
		{"gemini/429 limit 0", geminiFormat, respond(429, json, geminiZeroQuota), 429},
		{"gemini/429 no free quota tier", geminiFormat, respond(429, json, geminiNoFreeTier), 429},
		{"gemini/429 region quota of 0", geminiFormat, respond(429, json, googleZeroRegionQuota), 429},
		{"gemini/stream chunk", geminiFormat, respond(200, geminiFormat.streamHead(1), "data: "+noDetails+"\r\n\r\n"), 0},
		{"openai-chat/Gemini's compatible endpoint", openaiChat, respond(429, merged(json, openaiChat.reqIDHeader(1)), "["+geminiZeroQuota+"]"), 429},
		{"openai-chat/Gemini's compatible endpoint, stream chunk", openaiChat, respond(200, openaiChat.streamHead(1), "data: "+noDetails+"\n\n"), 0},
	} {
		stream := strings.Contains(tc.name, "stream")
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
			st, _ := f13Check(t, tc.f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, tc.status)
			if up.requests() != 1 || len(clock.slept()) != 0 || retryInfo(st) != nil {
				t.Errorf("upstream %d, sleeps %v, RetryInfo %v: a quota of 0 is not waited for", up.requests(), clock.slept(), retryInfo(st))
			}
			if q := quotaFailure(st); len(q.GetViolations()) == 0 {
				t.Errorf("no QuotaFailure: %v", st.Details())
			}
		})
	}
	t.Run("gemini/fallback", func(t *testing.T) {
		t.Parallel()
		f := geminiFormat
		first := f13Serve(t, respond(429, json, geminiZeroQuota))
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
	for _, limit := range []string{"10", "0.5", "05"} {
		t.Run("gemini/limit "+limit+" is a pace limit", func(t *testing.T) {
			t.Parallel()
			f := geminiFormat
			body := strings.Replace(geminiZeroQuota, "limit: 0,", "limit: "+limit+",", 1)
			body = strings.Replace(body, `"quotaDimensions"`, `"quotaValue": "10", "quotaDimensions"`, 1)
			up := f13Serve(t, respond(429, json, body), f.okStep(2))
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if s := clock.slept(); resp.GetMeta().GetAttempts() != 2 || len(s) != 1 || s[0] != 27*time.Second {
				t.Errorf("attempts %d, sleeps %v: want one wait of the RetryInfo's 27s", resp.GetMeta().GetAttempts(), s)
			}
		})
	}
}

func resourceInfo(st *status.Status) *errdetails.ResourceInfo {
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.ResourceInfo); ok {
			return r
		}
	}
	return nil
}

// TestFault24NotFoundResource: a NotFound carries a ResourceInfo naming
// what was not found, as google.rpc's NOT_FOUND does (AIP-193): for a
// provider's 404, the deployment's upstream model, owned by the provider,
// its message the description; for a model the gateway does not
// configure, that name. Neither had one (ErrorInfo alone said
// MODEL_NOT_FOUND).
func TestFault24NotFoundResource(t *testing.T) {
	t.Parallel()
	upstream := map[string]string{"openai-chat": "gpt-4o-mini", "openai-responses": "gpt-4.1", "azure": "gpt-4o-deployment",
		"anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash", "ollama": "llama3.2"}
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 404, nil))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, codes.NotFound, "MODEL_NOT_FOUND", 1, 404)
			ri := resourceInfo(st)
			if ri.GetResourceType() != "model" || ri.GetResourceName() != upstream[f.name] || ri.GetOwner() != "provider:up" ||
				ri.GetDescription() != "upstream said 404" {
				t.Errorf("ResourceInfo %v, want model %s of provider:up", ri, upstream[f.name])
			}
		})
	}
	t.Run("not configured", func(t *testing.T) {
		t.Parallel()
		f := openaiChat
		up := f13Serve(t, f.okStep(1))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "nope", Messages: chatReq13().GetMessages()})
		st := status.Convert(err)
		ri := resourceInfo(st)
		if st.Code() != codes.NotFound || ri.GetResourceType() != "model" || ri.GetResourceName() != "nope" || ri.GetOwner() != "" ||
			!strings.Contains(ri.GetDescription(), "not configured") || up.requests() != 0 {
			t.Errorf("%v %q: ResourceInfo %v, upstream %d", st.Code(), st.Message(), ri, up.requests())
		}
	})
}

// TestFault24CallerDeadlineDetails: a call that the caller's own gRPC
// deadline ends (no call.timeout, no max_call_duration) reaches the
// caller with the gateway's status, not its gRPC library's bare
// "context deadline exceeded": ErrorInfo UPSTREAM_TIMEOUT with the
// provider, and FailedCallMeta with the attempt, its retry reason and,
// for a stream cut after content, the text it relayed; while the
// provider is silent before its headers, and after a stream's first
// content. The gateway ended such a call at the deadline itself, which
// the caller's library reaches first: every detail was lost. The calls
// wait out their deadline together, then each is checked.
func TestFault24CallerDeadlineDetails(t *testing.T) {
	t.Parallel()
	const deadline = 5 * time.Second // a margin of 250 ms: room for the status under -race on a loaded machine
	type result struct {
		f      f13Format
		stream bool
		up     *f13Upstream
		text   string
		err    error
	}
	var (
		results []*result
		wg      sync.WaitGroup
	)
	for _, f := range f13Formats() {
		for _, stream := range []bool{false, true} {
			r := &result{f: f, stream: stream}
			step := hangBeforeHeaders
			if stream {
				step = thenHang(f.streamHead(1), f.head+f.text("The capital"))
			}
			r.up = f13Serve(t, step)
			c := f13Start(t, f13Defaults+f.yaml, r.up.URL, &f13Clock{})
			results = append(results, r)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				if !stream {
					_, r.err = c.Chat(ctx, chatReq13())
					return
				}
				s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: chatReq13().GetMessages()})
				if err != nil {
					r.err = err
					return
				}
				for {
					ev, err := s.Recv()
					if err != nil {
						r.err = err
						return
					}
					r.text += ev.GetTextDelta().GetText()
				}
			}()
		}
	}
	wg.Wait()
	for _, r := range results {
		name := r.f.name + "/unary, silent before headers"
		if r.stream {
			name = r.f.name + "/stream, silent after content"
		}
		t.Run(name, func(t *testing.T) {
			st := status.Convert(r.err)
			if len(st.Details()) == 0 {
				t.Fatalf("%v %q: no details (the caller's library ended the call)", st.Code(), st.Message())
			}
			if r.stream {
				if r.text != "The capital" {
					t.Errorf("text %q", r.text)
				}
				f13Check(t, r.f, r.err, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 1, 0)
				return
			}
			if info := errorInfoOf(st); st.Code() != codes.DeadlineExceeded || info.GetReason() != "UPSTREAM_TIMEOUT" || info.GetMetadata()["provider"] != "up" {
				t.Errorf("%v %q, ErrorInfo %v", st.Code(), st.Message(), info)
			}
			m := failedMeta(t, r.err)
			if rr := m.GetRetryReasons(); m.GetAttempts() != 1 || len(rr) != 1 || rr[0].GetReason() != "timeout" || r.up.requests() != 1 {
				t.Errorf("attempts %d, retry reasons %v, upstream %d", m.GetAttempts(), rr, r.up.requests())
			}
		})
	}
}

// TestFault24AgentCallerDeadline: an Agent run that the caller's deadline
// ends while it waits for a client tool's result reaches the caller with
// its failure event (the conversation so far, the run's meta) and the
// gateway's DeadlineExceeded status with its ErrorInfo; both were lost to
// the caller's library, which reached the deadline first.
func TestFault24AgentCallerDeadline(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a margin of 250 ms, as above
	defer cancel()
	evs, err := agentRun(ctx, t, c, echoSetup(t), nil)
	st := status.Convert(err)
	if st.Code() != codes.DeadlineExceeded || len(st.Details()) == 0 || errorInfoOf(st).GetReason() != "UPSTREAM_TIMEOUT" {
		t.Fatalf("%v %q, details %v: want the gateway's status", st.Code(), st.Message(), st.Details())
	}
	asked, failed := false, false
	for _, ev := range evs {
		asked = asked || ev.GetToolCallRequest() != nil
		failed = failed || ev.GetFailure() != nil
	}
	if !asked || !failed {
		t.Errorf("tool call requested %v, failure event %v: %v", asked, failed, evs)
	}
}
