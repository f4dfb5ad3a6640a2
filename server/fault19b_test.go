package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Fault sequences of session 19, second round (see fault13_test.go for
// the harness, fault19_test.go for the first round).

// TestFault19bUnaryCompleteThenBroken: a unary answer whose whole JSON
// body arrived, then a connection that broke instead of ending the body
// cleanly (a chunked body without its last chunk, a reset) or a body
// left open until the idle timeout: the answer is complete and is the
// call's answer, with a warning that says what happened. It was
// discarded as a cut body (or a timeout) and asked for again: paid
// twice. A body cut inside its JSON is still a cut, retried.
func TestFault19bUnaryCompleteThenBroken(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		head := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1))
		for _, how := range []string{"chunked cut", "reset", "idle"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				step, warning := thenReset(head, f.okBody), provider.BodyCutAfterEndWarning
				switch how {
				case "chunked cut":
					step = f19ChunkedCut(head, f.okBody)
				case "idle":
					step, warning = thenHang(head, f.okBody), provider.BodyIdleAfterEndWarning
				}
				up := f13Serve(t, step, f.okStep(2))
				c := f13Start(t, "defaults: {idle_timeout: 150ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatalf("err %v: a complete answer whose framing broke is the answer", err)
				}
				m := resp.GetMeta()
				if m.GetAttempts() != 1 || up.requests() != 1 || m.GetProviderRequestId() != f.wantReqID(1) {
					t.Errorf("attempts %d, upstream %d, request id %q: not asked (and paid) twice", m.GetAttempts(), up.requests(), m.GetProviderRequestId())
				}
				if got := resp.GetMessage().GetParts()[0].GetText(); got != okText {
					t.Errorf("text %q", got)
				}
				if !slices.Contains(m.GetWarnings(), warning) {
					t.Errorf("warnings %q", m.GetWarnings())
				}
			})
		}
		t.Run(f.name+"/chunked cut inside the JSON", func(t *testing.T) {
			t.Parallel()
			cut := f.okBody[:len(f.okBody)-1] // all but the last brace
			up := f13Serve(t, f19ChunkedCut(head, cut), f.okStep(2))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMeta(); m.GetAttempts() != 2 || up.requests() != 2 || slices.Contains(m.GetWarnings(), provider.BodyCutAfterEndWarning) {
				t.Errorf("meta %v: a body cut inside its JSON is retried", m)
			}
		})
	}
}

// openrouterErrorFinish is the chunk OpenRouter ends a stream with when
// generation failed upstream: finish_reason "error" (native_finish_reason
// beside it), here without an error object, and the usage so far.
const openrouterErrorFinish = `data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","provider":"OpenAI","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":"error","native_finish_reason":"error"}],"usage":{"prompt_tokens":24,"completion_tokens":3,"total_tokens":27}}` + "\n\n"

// TestFault19bOpenRouterFinishError: OpenRouter's finish_reason "error"
// ("the model finishes the request with an error") without an error
// object is an upstream failure: after content, the stream ends
// Unavailable with the text relayed and the usage and response id in the
// failure's meta, not retried; before content it is retried; a unary
// answer that finished so is retried like any upstream failure. It ended
// as a success with FINISH_REASON_OTHER, the partial text passed off as
// the answer.
func TestFault19bOpenRouterFinishError(t *testing.T) {
	t.Parallel()
	f := openaiChat
	t.Run("stream after content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+openrouterErrorFinish+"data: [DONE]\n\n"),
			respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.end != nil || got.text != "The capital" || up.requests() != 1 {
			t.Fatalf("end %v, text %q, upstream %d", got.end, got.text, up.requests())
		}
		st, m := f13Check(t, f, got.err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1, 0)
		if !strings.Contains(st.Message(), "finish_reason error") || errorInfoOf(st).GetMetadata()["upstreamCode"] != "error" {
			t.Errorf("status %q, ErrorInfo %v", st.Message(), errorInfoOf(st).GetMetadata())
		}
		if m.GetUsage().GetOutputTokens() != 3 || m.GetResponseId() != "chatcmpl-f13" {
			t.Errorf("partial meta %v", m)
		}
	})
	t.Run("stream before content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, f.streamHead(1), f.head+openrouterErrorFinish+"data: [DONE]\n\n"),
			respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.err != nil || got.text != okText || got.end.GetMeta().GetAttempts() != 2 {
			t.Fatalf("err %v, text %q, end %v", got.err, got.text, got.end)
		}
	})
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		body := strings.Replace(f.okBody, `"finish_reason":"stop"`, `"finish_reason":"error","native_finish_reason":"error"`, 1)
		up := f13Serve(t, respond(200, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1)), body), f.okStep(2))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			t.Fatal(err)
		}
		if m := resp.GetMeta(); m.GetAttempts() != 2 || m.GetProviderFinishReason() != "stop" || m.GetRetryReasons()[0].GetReason() != "unavailable" {
			t.Errorf("meta %v", m)
		}
	})
}

// geminiCreditsSpent is the Gemini API's refusal once a project's prepaid
// credits are spent, as its clients quote it (dyad-sh/dyad#3626 and
// others): RESOURCE_EXHAUSTED with code 429, the message alone saying
// that the account, not the pace, is at fault.
const geminiCreditsSpent = `{"error": {"code": 429, "message": "Your prepayment credits are depleted. Please go to AI Studio at https://ai.studio/projects to manage your project and billing.", "status": "RESOURCE_EXHAUSTED"}}`

// TestFault19bGeminiCreditsSpent: Gemini's RESOURCE_EXHAUSTED for spent
// prepaid credits (its message, or a 402 code inside the status) is a
// spent quota like an HTTP 402: not retried, ResourceExhausted with no
// RetryInfo, a route falls back at once; as a 429, as a stream's error
// chunk (it was retried there as a pace limit, three times), and through
// Gemini's OpenAI-compatible endpoint (its error answer, and the status
// as a stream's error chunk, whose code the openai adapter keeps). A
// RESOURCE_EXHAUSTED that says neither is still retried.
func TestFault19bGeminiCreditsSpent(t *testing.T) {
	t.Parallel()
	code402 := strings.Replace(geminiCreditsSpent, `"code": 429`, `"code": 402`, 1)
	code402 = strings.Replace(code402, "Your prepayment credits are depleted.", "Payment required.", 1)
	for _, tc := range []struct {
		name   string
		f      f13Format
		step   f13Step
		status int
	}{
		{"gemini/429", geminiFormat, respond(429, hdr("Content-Type", "application/json"), geminiCreditsSpent), 429},
		{"gemini/stream chunk", geminiFormat, respond(200, geminiFormat.streamHead(1), "data: "+geminiCreditsSpent+"\r\n\r\n"), 0},
		{"gemini/stream chunk, code 402", geminiFormat, respond(200, geminiFormat.streamHead(1), "data: "+code402+"\r\n\r\n"), 0},
		{"gemini/stream chunk after content", geminiFormat, respond(200, geminiFormat.streamHead(1), geminiFormat.text("The capital")+"data: "+geminiCreditsSpent+"\r\n\r\n"), 0},
		{"openai-chat/Gemini's compatible endpoint", openaiChat, respond(429, merged(hdr("Content-Type", "application/json"), openaiChat.reqIDHeader(1)), "["+geminiCreditsSpent+"]"), 429},
		{"openai-chat/Gemini's compatible endpoint, stream chunk", openaiChat, respond(200, openaiChat.streamHead(1), "data: "+geminiCreditsSpent+"\n\n"), 0},
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
				t.Errorf("upstream %d, sleeps %v, RetryInfo %v: spent credits are not waited for", up.requests(), clock.slept(), retryInfo(st))
			}
			if want := map[bool]string{true: "429", false: "RESOURCE_EXHAUSTED"}[tc.f.name == "openai-chat" && stream]; errorInfoOf(st).GetMetadata()["upstreamCode"] != want {
				t.Errorf("ErrorInfo %v", errorInfoOf(st).GetMetadata())
			}
		})
	}
	t.Run("gemini/fallback", func(t *testing.T) {
		t.Parallel()
		f := geminiFormat
		first := f13Serve(t, respond(429, hdr("Content-Type", "application/json"), geminiCreditsSpent))
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
	t.Run("gemini/pace limit", func(t *testing.T) {
		t.Parallel()
		f := geminiFormat
		pace := `{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}`
		up := f13Serve(t, respond(200, f.streamHead(1), "data: "+pace+"\r\n\r\n"), respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.err != nil || got.text != okText || got.end.GetMeta().GetAttempts() != 2 {
			t.Fatalf("err %v, text %q, end %v", got.err, got.text, got.end)
		}
	})
}

// TestFault19bInBandStatus: an error inside a 200 (a stream's error event,
// a unary body) whose numeric code is an HTTP status, as OpenAI-compatible
// servers send it, is retried by the same table as that status: an
// in-band 501 (the server cannot do this) or 422 is not retried (they
// were, as any error event is), 409 and 503 are; the code is that
// status's (422 InvalidArgument, 501 Unavailable).
func TestFault19bInBandStatus(t *testing.T) {
	t.Parallel()
	f := openaiChat
	for _, tc := range []struct {
		status  int
		retried bool
		code    codes.Code
		reason  string
	}{
		{501, false, codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
		{505, false, codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
		{422, false, codes.InvalidArgument, "INVALID_REQUEST"},
		{409, true, 0, ""},
		{503, true, 0, ""},
	} {
		errObj := fmt.Sprintf(`{"error":{"code":%d,"message":"upstream said %d"}}`, tc.status, tc.status)
		for _, how := range []string{"stream event", "unary body"} {
			t.Run(fmt.Sprintf("%d/%s", tc.status, how), func(t *testing.T) {
				t.Parallel()
				first := respond(200, f.streamHead(1), f.head+"data: "+errObj+"\n\n")
				second := respond(200, f.streamHead(2), f.complete())
				if how == "unary body" {
					first = respond(200, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), errObj)
					second = f.okStep(2)
				}
				up := f13Serve(t, first, second)
				c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
				var err error
				if how == "stream event" {
					err = readStream13(t, c).err
				} else {
					_, err = c.Chat(context.Background(), chatReq13())
				}
				if tc.retried {
					if err != nil || up.requests() != 2 {
						t.Fatalf("err %v, upstream %d: retried as HTTP %d is", err, up.requests(), tc.status)
					}
					return
				}
				f13Check(t, f, err, tc.code, tc.reason, 1, 0)
				if up.requests() != 1 {
					t.Errorf("upstream %d: not retried, as HTTP %d is not", up.requests(), tc.status)
				}
			})
		}
	}
}

// TestFault19bCallTimeoutNamed: a call ended by the request's
// call.timeout says so, as one ended by max_call_duration does: the
// status names call.timeout and its value, ErrorInfo carries it
// (callTimeout), for a unary call waiting for headers and a stream
// after content (both said only "deadline exceeded", which reads as the
// client's own deadline or the provider's).
func TestFault19bCallTimeoutNamed(t *testing.T) {
	t.Parallel()
	const want = "up: the gateway ended the call at the request's call.timeout (300ms)"
	for _, f := range f13Formats() {
		t.Run(f.name+"/unary", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, hangBeforeHeaders)
			c := f13Start(t, "defaults: {retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
			req := chatReq13()
			req.Call = &llmrelayv1.CallOptions{Timeout: durationpb.New(300 * time.Millisecond)}
			_, err := c.Chat(context.Background(), req)
			st, info, _ := statusDetails(t, err) // no answer, so no request id: not f13Check
			if st.Code() != codes.DeadlineExceeded || info.GetReason() != "UPSTREAM_TIMEOUT" || up.requests() != 1 {
				t.Errorf("%v %s, upstream %d", st.Code(), info.GetReason(), up.requests())
			}
			if st.Message() != want || errorInfoOf(st).GetMetadata()["callTimeout"] != "300ms" {
				t.Errorf("status %q, ErrorInfo %v", st.Message(), errorInfoOf(st).GetMetadata())
			}
		})
		t.Run(f.name+"/stream after content", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, thenHang(f.streamHead(1), f.head+f.text("The capital")))
			c := f13Start(t, "defaults: {idle_timeout: 5s, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
			s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("x")},
				Call: &llmrelayv1.CallOptions{Timeout: durationpb.New(300 * time.Millisecond)}})
			if err != nil {
				t.Fatal(err)
			}
			text, err := streamErr(t, s.Recv)
			if text != "The capital" {
				t.Errorf("text %q", text)
			}
			st, _ := f13Check(t, f, err, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 1, 0)
			if st.Message() != want || errorInfoOf(st).GetMetadata()["callTimeout"] != "300ms" {
				t.Errorf("status %q, ErrorInfo %v", st.Message(), errorInfoOf(st).GetMetadata())
			}
		})
	}
	t.Run("client deadline first", func(t *testing.T) {
		t.Parallel()
		f := openaiChat
		up := f13Serve(t, hangBeforeHeaders)
		c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
		req := chatReq13()
		req.Call = &llmrelayv1.CallOptions{Timeout: durationpb.New(5 * time.Second)}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := c.Chat(ctx, req)
		if st, _ := status.FromError(err); st.Code() != codes.DeadlineExceeded || strings.Contains(st.Message(), "call.timeout") {
			t.Errorf("status %v: the client's own deadline ended the call", st)
		}
	})
}

// TestFault19bZeroLimitWithRemaining: Azure's x-ratelimit-limit-* of 0
// beside a remaining count above 0 (weaviate/weaviate#5035: the limit
// left out as 0) is no limit: the meta leaves that limit unset (it said
// a limit of 0 with 99 remaining), keeping the remaining count and the
// reset; a limit of 0 with nothing remaining is a limit of 0, kept.
func TestFault19bZeroLimitWithRemaining(t *testing.T) {
	t.Parallel()
	for _, f := range []f13Format{azureFormat(), openaiChat} {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			h := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1),
				hdr("x-ratelimit-limit-requests", "0", "x-ratelimit-remaining-requests", "99", "x-ratelimit-reset-requests", "1s",
					"x-ratelimit-limit-tokens", "0", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "6ms"))
			up := f13Serve(t, respond(200, h, f.okBody))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			rl := resp.GetMeta().GetRateLimit()
			if rl.RequestsLimit != nil || rl.GetRequestsRemaining() != 99 || rl.GetRequestsResetTime() == nil {
				t.Errorf("rate limit %v: a limit of 0 with 99 remaining is no limit", rl)
			}
			if rl.TokensLimit == nil || rl.GetTokensLimit() != 0 || rl.TokensRemaining == nil || rl.GetTokensRemaining() != 0 {
				t.Errorf("rate limit %v: a limit of 0 with nothing remaining is kept", rl)
			}
		})
	}
}

// anthropicLongContext is Anthropic's refusal of a long-context request
// from an account without extra usage, as anthropics/claude-code#42616
// and Wei-Shaw/sub2api#572 quote it: a 429 typed rate_limit_error.
const anthropicLongContext = `{"type":"error","error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."},"request_id":"req_011CZf8TJf84hAUziB6LuRoc"}`

// TestFault19bAnthropicLongContextEntitlement: Anthropic's 429 "Extra
// usage is required for long context requests" refuses the account, not
// its pace: PermissionDenied (it was ResourceExhausted, retried after
// each Retry-After to be refused again), not retried, no RetryInfo, and
// a route falls back to a deployment that may be entitled; inside a
// stream's error event alike. "You're out of extra usage" is a spent
// quota: ResourceExhausted, not retried.
func TestFault19bAnthropicLongContextEntitlement(t *testing.T) {
	t.Parallel()
	f := anthropicFormat
	event := func(body string) string {
		return f.head + anthropicEvent("error", body[len(`{"type":"error",`):strings.Index(body, `,"request_id"`)])
	}
	outOf := strings.Replace(anthropicLongContext, "Extra usage is required for long context requests.", "You're out of extra usage. Add more at claude.ai/settings/usage", 1) // as quoted, cut there
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
		code   codes.Code
		reason string
	}{
		{"429", anthropicLongContext, false, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED"},
		{"stream event", anthropicLongContext, true, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED"},
		{"out of extra usage/429", outOf, false, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED"},
		{"out of extra usage/stream event", outOf, true, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first := respond(429, merged(hdr("Content-Type", "application/json", "Retry-After", "2"), f.reqIDHeader(1), f.rl(1)), tc.body)
			second := f.okStep(2)
			if tc.stream {
				first = respond(200, f.streamHead(1), event(tc.body))
				second = respond(200, f.streamHead(2), f.complete())
			}
			up := f13Serve(t, first, second)
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
			var err error
			if tc.stream {
				got := readStream13(t, c)
				if got.started {
					t.Error("started")
				}
				err = got.err
			} else {
				_, err = c.Chat(context.Background(), chatReq13())
			}
			status := 429
			if tc.stream {
				status = 0
			}
			st, _ := f13Check(t, f, err, tc.code, tc.reason, 1, status)
			if up.requests() != 1 || len(clock.slept()) != 0 || retryInfo(st) != nil {
				t.Errorf("upstream %d, sleeps %v, RetryInfo %v: waiting does not help", up.requests(), clock.slept(), retryInfo(st))
			}
			if errorInfoOf(st).GetMetadata()["upstreamCode"] != "rate_limit_error" {
				t.Errorf("ErrorInfo %v", errorInfoOf(st).GetMetadata())
			}
		})
	}
	t.Run("fallback", func(t *testing.T) {
		t.Parallel()
		first := f13Serve(t, respond(429, hdr("Content-Type", "application/json", "Retry-After", "2"), anthropicLongContext))
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
}
