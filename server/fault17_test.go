package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// Fault sequences of session 17 (see fault13_test.go for the harness).

// f17Retried3 is the defaults for three attempts with recorded backoff.
const f17Defaults = "defaults: {first_byte_timeout: 300ms, idle_timeout: 300ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\n"

// TestFault17RateLimitEventBeforeContent: a rate-limit error event inside
// a 200 stream before any content is retried like an HTTP 429 (nothing was
// relayed), recorded as a failed attempt; on every attempt the client gets
// ResourceExhausted, and RetryInfo when the event named a delay.
func TestFault17RateLimitEventBeforeContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		f     f13Format
		event string
		delay time.Duration
	}{
		{"code rate_limit_exceeded", openaiChat, `data: {"error":{"message":"Rate limit reached for gpt-4o-mini. Please try again in 1.5s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}` + "\n\n", 1500 * time.Millisecond},
		{"code rate_limit_exceeded", azureFormat(), `data: {"error":{"message":"Rate limit reached. Please try again in 2s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}` + "\n\n", 2 * time.Second},
		{"numeric code 429", openaiChat, `data: {"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min."}}` + "\n\n", 0},
		{"error event rate_limit_exceeded", openaiResponses, responsesEvent("error", `"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 20ms.","param":null,"sequence_number":1`), 20 * time.Millisecond},
		{"response.failed rate_limit_exceeded", openaiResponses, responsesEvent("response.failed", `"sequence_number":4,"response":{`+responsesObj+`,"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 5ms."},"usage":null}`), 5 * time.Millisecond},
		{"rate_limit_error", anthropicFormat, anthropicEvent("error", `"error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}`), 0},
		{"RESOURCE_EXHAUSTED", geminiFormat, `data: {"error": {"code": 429,"message": "Resource has been exhausted (e.g. check quota).","status": "RESOURCE_EXHAUSTED"}}` + "\r\n\r\n", 0},
	} {
		t.Run(tc.f.name+"/"+tc.name+"/then success", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.f.head+tc.event), respond(200, tc.f.streamHead(2), tc.f.complete()))
			clock := &f13Clock{}
			c := f13Start(t, f17Defaults+tc.f.yaml, up.URL, clock)
			got := readStream13(t, c)
			if got.err != nil || got.text != okText || got.end == nil {
				t.Fatalf("not retried: err %v, text %q", got.err, got.text)
			}
			m := got.end.GetMeta()
			if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "rate_limited" {
				t.Errorf("attempts %d, reasons %v", m.GetAttempts(), m.GetRetryReasons())
			}
			if s := clock.slept(); len(s) != 1 || (tc.delay > 0 && s[0] != tc.delay) {
				t.Errorf("sleeps %v, want the event's delay %v", s, tc.delay)
			}
		})
		t.Run(tc.f.name+"/"+tc.name+"/every attempt", func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 3; n++ {
				steps = append(steps, respond(200, tc.f.streamHead(n), tc.f.head+tc.event))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, f17Defaults+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v err %v", got.started, got.err)
			}
			st, m := f13Check(t, tc.f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3, 0)
			if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != tc.delay {
				t.Errorf("RetryInfo = %v, want %v", ri, tc.delay)
			}
			for _, rr := range m.GetRetryReasons() {
				if rr.GetReason() != "rate_limited" {
					t.Errorf("retry reason %v", rr)
				}
			}
		})
	}
}

// TestFault17QuotaEventBeforeContent: an exhausted quota (OpenAI's
// insufficient_quota, an OpenAI-compatible 402, Anthropic's billing_error,
// which was PermissionDenied) inside a 200 stream is not retried: it would
// fail the same way.
func TestFault17QuotaEventBeforeContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		f     f13Format
		event string
	}{
		{"insufficient_quota", openaiChat, `data: {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}` + "\n\n"},
		{"insufficient_quota", azureFormat(), `data: {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}` + "\n\n"},
		{"numeric code 402", openaiChat, `data: {"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits"}}` + "\n\n"},
		{"response.failed insufficient_quota", openaiResponses, responsesEvent("response.failed", `"sequence_number":4,"response":{`+responsesObj+`,"status":"failed","error":{"code":"insufficient_quota","message":"You exceeded your current quota, please check your plan and billing details."},"usage":null}`)},
		{"error event insufficient_quota", openaiResponses, responsesEvent("error", `"code":"insufficient_quota","message":"You exceeded your current quota.","param":null,"sequence_number":1`)},
		{"billing_error", anthropicFormat, anthropicEvent("error", `"error":{"type":"billing_error","message":"Your credit balance is too low to access the Anthropic API."}`)},
	} {
		t.Run(tc.f.name+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.f.head+tc.event), respond(200, tc.f.streamHead(2), tc.f.complete()))
			c := f13Start(t, f17Defaults+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v err %v, text %q", got.started, got.err, got.text)
			}
			f13Check(t, tc.f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
			if up.requests() != 1 {
				t.Errorf("upstream saw %d requests", up.requests())
			}
		})
	}
}

// TestFault17Quota429: a 429 whose body says the quota is spent or the
// account's billing is not active is not retried (the same answer comes
// back; billing_not_active was retried as a rate limit), in a stream's
// error event neither.
func TestFault17Quota429(t *testing.T) {
	t.Parallel()
	for i, body := range []string{
		`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
		`{"error":{"message":"Your account is not active, please check your billing details on our website.","type":"billing_not_active","param":null,"code":"billing_not_active"}}`,
		`{"error":{"message":"Your account is not active, please check your billing details on our website.","type":"billing_not_active","param":null,"code":null}}`,
	} {
		name := []string{"insufficient_quota", "billing_not_active", "billing_not_active type only"}[i]
		for _, f := range []f13Format{openaiChat, openaiResponses, azureFormat()} {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				h := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1))
				up := f13Serve(t, respond(429, h, body), f.okStep(2))
				c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
				if code := errorInfoOf(st).GetMetadata()["upstreamCode"]; !strings.Contains(body, `"`+code+`"`) || code == "" {
					t.Errorf("upstreamCode %q", code)
				}
			})
		}
		if f := openaiChat; true {
			t.Run(f.name+"/stream event/"+name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, respond(200, f.streamHead(1), f.head+"data: "+body+"\n\n"), respond(200, f.streamHead(2), f.complete()))
				c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				f13Check(t, f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
			})
		}
	}
}

const nginx502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

// TestFault17HTMLErrorBodies: a proxy's HTML error page in front of the
// provider: retried by status, the message does not dump the HTML, the
// status stays in the metadata.
func TestFault17HTMLErrorBodies(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, tc := range []struct {
			status int
			ctype  string
			body   string
			code   codes.Code
			reason string
		}{
			{500, "text/html", "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1><p>The server encountered an internal error.</p></body></html>", codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
			{502, "text/html", nginx502, codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
			{503, "text/html; charset=UTF-8", "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>", codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
			{504, "text/html", "<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center></body></html>", codes.DeadlineExceeded, "UPSTREAM_TIMEOUT"},
			{529, "text/html", "<html><body>Site overloaded</body></html>", codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
			{503, "", "", codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
			{502, "text/plain", "upstream connect error or disconnect/reset before headers. reset reason: connection termination", codes.Unavailable, "UPSTREAM_UNAVAILABLE"},
		} {
			t.Run(f.name+"/"+http.StatusText(tc.status)+"/"+tc.ctype, func(t *testing.T) {
				t.Parallel()
				var steps []f13Step
				for n := 1; n <= 3; n++ {
					h := merged(f.reqIDHeader(n), f.rl(n))
					if tc.ctype != "" {
						h.Set("Content-Type", tc.ctype)
					}
					steps = append(steps, respond(tc.status, h, tc.body))
				}
				up := f13Serve(t, steps...)
				c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				st, m := f13Check(t, f, err, tc.code, tc.reason, 3, tc.status)
				if strings.ContainsAny(st.Message(), "<>") || strings.Contains(st.Message(), "\n") {
					t.Errorf("message dumps the page: %q", st.Message())
				}
				for _, rr := range m.GetRetryReasons() {
					if strings.ContainsAny(rr.GetMessage(), "<>") {
						t.Errorf("retry reason message dumps the page: %q", rr.GetMessage())
					}
				}
				if strings.TrimSpace(strings.TrimPrefix(st.Message(), "up:")) == "" {
					t.Errorf("message %q says nothing (want at least the status)", st.Message())
				}
			})
		}
	}
}

// TestFault17OKNotJSON: a 200 whose body is an HTML page (a base_url
// pointing at a web UI that answers every path with its index page, a
// captive portal) is a bad response that says so, not retried (it would
// only come again), on unary calls and streams alike (a stream was read as
// an event stream without events, "ended before [DONE]", and retried); a
// JSON answer merely labelled text/html is read as the answer it is.
func TestFault17OKNotJSON(t *testing.T) {
	t.Parallel()
	page := "\n<!DOCTYPE html><html><head><title>Sign in</title></head><body><form>...</form></body></html>"
	for _, f := range f13Formats() {
		check := func(t *testing.T, up *f13Upstream, err error) {
			t.Helper()
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_BAD_RESPONSE" || !strings.Contains(st.Message(), "HTML page") ||
				strings.Contains(st.Message(), "<html") || strings.Contains(st.Message(), "DOCTYPE") {
				t.Errorf("%v %s %q", st.Code(), info.GetReason(), st.Message())
			}
			m := failedMeta(t, err)
			if up.requests() != 1 || m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "bad_response" {
				t.Errorf("upstream %d, meta %v", up.requests(), m)
			}
			if info.GetMetadata()["upstreamRequestId"] != f.wantReqID(1) {
				t.Errorf("metadata %v", info.GetMetadata())
			}
		}
		t.Run(f.name+"/unary", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, merged(hdr("Content-Type", "text/html"), f.reqIDHeader(1)), page), f.okStep(2))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			check(t, up, err)
		})
		t.Run(f.name+"/stream", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, merged(hdr("Content-Type", "text/html; charset=utf-8"), f.reqIDHeader(1)), page), respond(200, f.streamHead(2), f.complete()))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.err == nil {
				t.Fatalf("end %v err %v", got.end, got.err)
			}
			check(t, up, got.err)
		})
		t.Run(f.name+"/JSON labelled text/html", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, merged(hdr("Content-Type", "text/html"), f.reqIDHeader(1)), "  "+f.okBody))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil || resp.GetMessage().GetParts()[0].GetText() != okText {
				t.Fatalf("err %v resp %v", err, resp)
			}
		})
	}
}

// TestFault17ClosedAfterHeaders: the connection closes right after a 200's
// headers, no body byte: a cut answer, retried (nothing was relayed);
// likewise an empty body, whether the close delimits it or a
// Content-Length of 0 (a unary one read as JSON that does not parse and
// was not retried).
func TestFault17ClosedAfterHeaders(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name+"/stream", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, thenReset(f.streamHead(1), ""), respond(200, f.streamHead(2), f.complete()))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.text != okText {
				t.Fatalf("err %v text %q", got.err, got.text)
			}
			if m := got.end.GetMeta(); m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 {
				t.Errorf("meta %v", m)
			}
		})
		t.Run(f.name+"/stream empty body", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, f.streamHead(1), ""), respond(200, f.streamHead(2), f.complete()))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.text != okText {
				t.Fatalf("err %v text %q", got.err, got.text)
			}
			if m := got.end.GetMeta(); m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "stream_cut" {
				t.Errorf("meta %v", m)
			}
		})
		for name, step := range map[string]f13Step{
			"close-delimited": func(w http.ResponseWriter, _ *http.Request) {
				c, bw, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
				_ = bw.Flush()
				_ = c.Close()
			},
			"content-length 0": respond(200, hdr("Content-Type", "application/json"), ""),
		} {
			t.Run(f.name+"/unary empty body/"+name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, step, step, f.okStep(3))
				c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				st, info, _ := statusDetails(t, err)
				if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_UNAVAILABLE" || !strings.Contains(st.Message(), "no answer") {
					t.Errorf("%v %s %q", st.Code(), info.GetReason(), st.Message())
				}
				if m := failedMeta(t, err); m.GetAttempts() != 2 || up.requests() != 2 {
					t.Errorf("attempts %d, upstream %d: an empty answer is retried", m.GetAttempts(), up.requests())
				}
			})
		}
		t.Run(f.name+"/unary", func(t *testing.T) {
			t.Parallel()
			okHead := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1))
			up := f13Serve(t, thenReset(okHead, ""), f.okStep(2))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMeta(); m.GetAttempts() != 2 {
				t.Errorf("meta %v", m)
			}
		})
	}
}

// TestFault17RedirectAcrossHosts: a 3xx to another host is not followed:
// the provider's key must not reach a host the configuration does not name.
func TestFault17RedirectAcrossHosts(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, code := range []int{301, 302, 307, 308} {
			t.Run(f.name+"/"+http.StatusText(code), func(t *testing.T) {
				t.Parallel()
				other := f13Serve(t, f.okStep(9))
				up := f13Serve(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Location", other.URL+r.URL.RequestURI())
					w.WriteHeader(code)
				})
				c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				if other.requests() != 0 {
					t.Fatalf("followed the redirect to another host (%d requests)", other.requests())
				}
				st, info, _ := statusDetails(t, err)
				if st.Code() != codes.Unavailable || info.GetMetadata()["upstreamStatus"] != strconv.Itoa(code) ||
					!strings.Contains(st.Message(), "redirected to http://"+strings.TrimPrefix(other.URL, "http://")+", not followed") {
					t.Errorf("%v %v %q", st.Code(), info.GetMetadata(), st.Message())
				}
				if up.requests() != 1 {
					t.Errorf("a redirect was retried: %d requests", up.requests())
				}
			})
		}
		t.Run(f.name+"/same host is followed", func(t *testing.T) {
			t.Parallel()
			var up *f13Upstream
			up = f13Serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", up.URL+r.URL.RequestURI())
				w.WriteHeader(http.StatusTemporaryRedirect)
			}, f.okStep(2))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetMessage().GetParts()[0].GetText() != okText || up.requests() != 2 || resp.GetMeta().GetAttempts() != 1 {
				t.Errorf("requests %d, meta %v", up.requests(), resp.GetMeta())
			}
		})
	}
}

// TestFault17DeadlineWaitingForHeaders: the caller's deadline ends while
// the provider has not answered: DeadlineExceeded UPSTREAM_TIMEOUT, the
// attempt in the meta.
func TestFault17DeadlineWaitingForHeaders(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name+"/unary", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, hangBeforeHeaders)
			c := f13Start(t, "defaults: {retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
			req := chatReq13()
			req.Call = &llmrelayv1.CallOptions{Timeout: durationpb.New(200 * time.Millisecond)}
			_, err := c.Chat(context.Background(), req)
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.DeadlineExceeded || info.GetReason() != "UPSTREAM_TIMEOUT" {
				t.Fatalf("%v %s %q", st.Code(), info.GetReason(), st.Message())
			}
			m := failedMeta(t, err)
			if m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 1 || up.requests() != 1 {
				t.Errorf("attempts %d reasons %v upstream %d", m.GetAttempts(), m.GetRetryReasons(), up.requests())
			}
			t.Logf("%q reasons %v", st.Message(), m.GetRetryReasons())
		})
		t.Run(f.name+"/stream after content", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, thenHang(f.streamHead(1), f.head+f.text("The capital")))
			c := f13Start(t, "defaults: {retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
			s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("x")},
				Call: &llmrelayv1.CallOptions{Timeout: durationpb.New(300 * time.Millisecond)}})
			if err != nil {
				t.Fatal(err)
			}
			text, err := streamErr(t, s.Recv)
			if text != "The capital" {
				t.Errorf("text %q", text)
			}
			st, m := f13Check(t, f, err, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 1, 0)
			t.Logf("%q reasons %v", st.Message(), m.GetRetryReasons())
		})
	}
}

// TestFault17MaxAttemptsLastReason: attempts fail differently; the status
// is the last attempt's, the meta has all of them in order.
func TestFault17MaxAttemptsLastReason(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 503, nil), f.errStep(2, 429, hdr("Retry-After", "1")), f.errStep(3, 500, nil))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, m := f13Check(t, f, err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3, 0)
			var got []string
			for _, rr := range m.GetRetryReasons() {
				got = append(got, rr.GetReason())
			}
			if strings.Join(got, ",") != "http_503,http_429,http_500" {
				t.Errorf("reasons %v", got)
			}
			if ri := retryInfo(st); ri != nil {
				t.Errorf("RetryInfo %v of an earlier attempt", ri)
			}
			if info := errorInfoOf(st); info.GetMetadata()["upstreamStatus"] != "500" {
				t.Errorf("metadata %v", info.GetMetadata())
			}
		})
	}
}

// TestFault17JSONErrorForStream: a stream request answered 200 with a
// plain JSON error body (no SSE framing; a proxy, or a compatible server
// that reports its errors so): classified by its content like the same
// error in an event, not as a cut stream (the Anthropic and Gemini
// adapters read it as an event stream, where it now is a bare JSON
// object's event: internal/sse).
func TestFault17JSONErrorForStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f        f13Format
		body     string
		code     codes.Code
		reason   string
		attempts int
	}{
		{openaiChat, `{"error":{"message":"Rate limit reached for gpt-4o-mini. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3},
		{openaiChat, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
		{openaiResponses, `{"error":{"message":"Rate limit reached. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3},
		{azureFormat(), `{"error":{"message":"The server had an error.","type":"server_error","param":null,"code":null}}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{anthropicFormat, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{anthropicFormat, `{"type":"error","error":{"type":"rate_limit_error","message":"Too many requests"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3},
		{geminiFormat, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3},
		{ollamaFormat, `{"error":"model is overloaded, please try again later"}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
	} {
		t.Run(tc.f.name+"/"+tc.body[:30], func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 3; n++ {
				steps = append(steps, respond(200, merged(hdr("Content-Type", "application/json"), tc.f.reqIDHeader(n), tc.f.rl(n)), tc.body))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, f17Defaults+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v err %v", got.started, got.err)
			}
			f13Check(t, tc.f, got.err, tc.code, tc.reason, tc.attempts, 0)
		})
	}
}

// TestFault17GeminiRetryInfoEvent: Gemini's RESOURCE_EXHAUSTED event
// before content carries its RetryInfo: waited out, and given to the
// client when every attempt fails.
func TestFault17GeminiRetryInfoEvent(t *testing.T) {
	t.Parallel()
	f := geminiFormat
	ev := `data: {"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}` + "\r\n\r\n"
	up := f13Serve(t, respond(200, f.streamHead(1), ev))
	clock := &f13Clock{}
	c := f13Start(t, f17Defaults+f.yaml, up.URL, clock)
	got := readStream13(t, c)
	st, _ := f13Check(t, f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3, 0)
	if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 7*time.Second {
		t.Errorf("RetryInfo %v", ri)
	}
	if s := clock.slept(); len(s) != 2 || s[0] != 7*time.Second {
		t.Errorf("sleeps %v", s)
	}
}

// TestFault17StreamOpenFailures: a stream's request fails before any
// event: reset before the headers, an empty 503, a proxy's HTML 502.
func TestFault17StreamOpenFailures(t *testing.T) {
	t.Parallel()
	reset := func(w http.ResponseWriter, _ *http.Request) {
		c, _, _ := w.(http.Hijacker).Hijack()
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
	for _, f := range f13Formats() {
		for _, tc := range []struct {
			name   string
			step   f13Step
			reason string
			status int
			code   codes.Code
		}{
			{"reset before headers", reset, "connection_error", 0, codes.Unavailable},
			{"empty 503", respond(503, f.reqIDHeader(1), ""), "http_503", 503, codes.Unavailable},
			{"html 502", respond(502, merged(hdr("Content-Type", "text/html"), f.reqIDHeader(1)), nginx502), "http_502", 502, codes.Unavailable},
			{"html 504", respond(504, merged(hdr("Content-Type", "text/html"), f.reqIDHeader(1)), "<html><body>504 Gateway Time-out</body></html>"), "http_504", 504, codes.DeadlineExceeded},
		} {
			t.Run(f.name+"/"+tc.name+"/then success", func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, tc.step, respond(200, f.streamHead(2), f.complete()))
				c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.err != nil || got.text != okText {
					t.Fatalf("err %v text %q", got.err, got.text)
				}
				m := got.end.GetMeta()
				if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != tc.reason ||
					m.GetProviderRequestId() != f.wantReqID(2) {
					t.Errorf("meta %v", m)
				}
			})
			t.Run(f.name+"/"+tc.name+"/every attempt", func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, tc.step)
				c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.started || got.err == nil {
					t.Fatalf("started %v err %v", got.started, got.err)
				}
				st, info, _ := statusDetails(t, got.err)
				if st.Code() != tc.code || strings.Contains(st.Message(), "<") || (tc.status != 0 && info.GetMetadata()["upstreamStatus"] != strconv.Itoa(tc.status)) {
					t.Errorf("%v %v %q", st.Code(), info.GetMetadata(), st.Message())
				}
				if m := failedMeta(t, got.err); m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 2 {
					t.Errorf("meta %v", m)
				}
			})
		}
	}
}

func gzipped(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.String()
}

// TestFault17GzipBodies: a gzip-encoded body (a proxy compressing its
// answers whether asked or not) reads as its content: the error's message
// and kind, the answer.
func TestFault17GzipBodies(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name+"/429", func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 3; n++ {
				h := merged(hdr("Content-Type", "application/json", "Content-Encoding", "gzip", "Retry-After", "1"), f.reqIDHeader(n), f.rl(n))
				steps = append(steps, respond(429, h, gzipped(f.errBody(429))))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3, 429)
			if st.Message() != "up: upstream said 429" {
				t.Errorf("message %q, want the body's", st.Message())
			}
		})
		t.Run(f.name+"/200", func(t *testing.T) {
			t.Parallel()
			h := merged(hdr("Content-Type", "application/json", "Content-Encoding", "gzip"), f.reqIDHeader(1), f.rl(1))
			up := f13Serve(t, respond(200, h, gzipped(f.okBody)))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil || resp.GetMessage().GetParts()[0].GetText() != okText {
				t.Fatalf("err %v", err)
			}
		})
	}
}

// TestFault17KeyNeverLeaks: a provider that echoes the gateway's key in
// its error (body message, code, param, request id header) or in the
// stream's error event: the key reaches the client nowhere (message,
// ErrorInfo, BadRequest, retry reasons, meta).
func TestFault17KeyNeverLeaks(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		if f.name == "ollama" {
			// ollama.com takes a key; the format's setup has none.
			f.yaml = strings.Replace(f.yaml, "type: ollama\n", "type: ollama\n    api_key: "+f13Key+"\n", 1)
		}
		for _, status := range []int{400, 401, 429, 503} {
			t.Run(f.name+"/"+strconv.Itoa(status), func(t *testing.T) {
				t.Parallel()
				body := strings.ReplaceAll(f.errBody(status), "upstream said "+strconv.Itoa(status), "Incorrect API key provided: "+f13Key+". You can find your API key at https://example.com/?key="+f13Key)
				h := merged(hdr("Content-Type", "application/json"), f.rl(1))
				if f.reqID != "" {
					h.Set(f.reqID, "req-"+f13Key)
				}
				up := f13Serve(t, respond(status, h, body))
				c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				st := status17(t, err)
				if strings.Contains(fmt.Sprint(st.Proto()), f13Key[3:]) {
					t.Errorf("the key leaks: %v", st.Proto())
				}
				if !strings.Contains(st.Message(), "Incorrect API key provided") {
					t.Errorf("message %q lost the provider's words", st.Message())
				}
			})
		}
		t.Run(f.name+"/stream event", func(t *testing.T) {
			t.Parallel()
			ev := strings.ReplaceAll(f.errEvent, "The server had an error while processing your request. Sorry about that!", "bad key "+f13Key)
			ev = strings.ReplaceAll(ev, "Overloaded", "bad key "+f13Key)
			ev = strings.ReplaceAll(ev, "The model is overloaded. Please try again later.", "bad key "+f13Key)
			ev = strings.ReplaceAll(ev, "unexpected EOF", "bad key "+f13Key)
			if !strings.Contains(ev, f13Key) {
				t.Fatalf("no key in %q", ev)
			}
			up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+ev))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			st := status17(t, got.err)
			if strings.Contains(fmt.Sprint(st.Proto()), f13Key[3:]) {
				t.Errorf("the key leaks: %v", st.Proto())
			}
		})
	}
}

func status17(t *testing.T, err error) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.OK {
		t.Fatalf("not a status: %v", err)
	}
	return st
}

// TestFault17ClientCancel: the client goes away while the provider has
// not answered, and while a stream is open after content: the upstream
// request ends at once (its connection closed, nothing left generating
// for nobody), no retry follows, and the call is logged as Canceled.
func TestFault17ClientCancel(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, when := range []string{"before headers", "mid-stream"} {
			t.Run(f.name+"/"+when, func(t *testing.T) {
				t.Parallel()
				ended := make(chan struct{})
				step := func(w http.ResponseWriter, r *http.Request) {
					defer close(ended)
					if when == "mid-stream" {
						for k, vs := range f.streamHead(1) {
							w.Header()[k] = vs
						}
						w.WriteHeader(200)
						_, _ = io.WriteString(w, f.head+f.text("The capital"))
						w.(http.Flusher).Flush()
					}
					select {
					case <-r.Context().Done():
					case <-time.After(5 * time.Second):
					}
				}
				up := f13Serve(t, step)
				cfg, err := config.Parse([]byte(strings.ReplaceAll(f17Defaults+f.yaml, "{{URL}}", up.URL)), "test")
				if err != nil {
					t.Fatal(err)
				}
				logs := &syncBuffer{}
				srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)), server.WithRetryClock(&f13Clock{}))
				if err != nil {
					t.Fatal(err)
				}
				c := llmrelayv1.NewGatewayServiceClient(serveBufconn(t, srv))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("x")}})
				if err != nil {
					t.Fatal(err)
				}
				if when == "mid-stream" {
					for {
						ev, err := s.Recv()
						if err != nil {
							t.Fatalf("no delta: %v", err)
						}
						if ev.GetTextDelta() != nil {
							break
						}
					}
				} else {
					for up.requests() == 0 {
						time.Sleep(time.Millisecond)
					}
				}
				start := time.Now()
				cancel()
				select {
				case <-ended:
				case <-time.After(3 * time.Second):
					t.Fatal("the upstream request outlived the client")
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("the upstream request ended %v after the client", d)
				}
				deadline := time.Now().Add(3 * time.Second)
				for !strings.Contains(logs.String(), "msg=rpc") && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				if l := logs.String(); !strings.Contains(l, "code=Canceled") {
					t.Errorf("logged as: %s", l)
				}
				if up.requests() != 1 {
					t.Errorf("upstream saw %d requests", up.requests())
				}
			})
		}
	}
}

func quotaFailure(st *status.Status) *errdetails.QuotaFailure {
	for _, d := range st.Details() {
		if q, ok := d.(*errdetails.QuotaFailure); ok {
			return q
		}
	}
	return nil
}

// TestFault17QuotaFailure: every ResourceExhausted status carries a
// QuotaFailure naming whose quota ran out: the provider's, with the limit
// its error names (OpenAI's type, "requests" in these bodies, with the
// headers' value of it), else each limit its rate-limit headers show
// exhausted (metric and value), or its code and message when they show
// none; the caller's own limit.
func TestFault17QuotaFailure(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name+"/429", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 429, nil))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
			q := quotaFailure(st)
			if len(q.GetViolations()) != 1 {
				t.Fatalf("QuotaFailure = %v", q)
			}
			v := q.GetViolations()[0]
			metric, value := "", int64(0)
			if strings.Contains(f.errBody(429), `"type":"requests"`) {
				metric, value = "requests", 10000 // openaiRL's limit
			}
			if v.GetSubject() != "provider:up" || v.GetDescription() != "upstream said 429" || v.GetQuotaMetric() != metric || v.GetQuotaValue() != value {
				t.Errorf("violation = %v", v)
			}
		})
	}
	// The bodies are each provider's for these headers: OpenAI types a
	// 429 by the limit that refused it (tokens, when the headers show
	// those spent; the shared openaiErr says "requests", which these
	// headers contradict); Azure's names none.
	openaiTokens, azure429 := openaiChat, azureFormat()
	openaiTokens.errBody = func(int) string {
		return `{"error":{"message":"upstream said 429","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	}
	azure429.errBody = func(int) string { return `{"error":{"code":"429","message":"upstream said 429"}}` }
	for _, tc := range []struct {
		f       f13Format
		extra   http.Header
		metrics string
	}{
		{openaiTokens, hdr("x-ratelimit-remaining-tokens", "0", "x-ratelimit-limit-tokens", "30000"), "tokens:30000"},
		{azure429, hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-remaining-tokens", "0"), "requests:10000 tokens:30000"},
		{anthropicFormat, hdr("anthropic-ratelimit-requests-remaining", "0"), "requests:4000"},
	} {
		t.Run(tc.f.name+"/exhausted limits", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, tc.f.errStep(1, 429, merged(tc.extra, hdr("Retry-After", "3"))))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+tc.f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, tc.f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
			var got []string
			for _, v := range quotaFailure(st).GetViolations() {
				if v.GetSubject() != "provider:up" || v.GetDescription() != "upstream said 429" {
					t.Errorf("violation = %v", v)
				}
				got = append(got, v.GetQuotaMetric()+":"+strconv.FormatInt(v.GetQuotaValue(), 10))
			}
			if strings.Join(got, " ") != tc.metrics {
				t.Errorf("violations %v, want %s", got, tc.metrics)
			}
		})
	}
	t.Run("stream quota event", func(t *testing.T) {
		t.Parallel()
		f := openaiChat
		up := f13Serve(t, respond(200, f.streamHead(1), f.head+`data: {"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`+"\n\n"))
		c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		st, _ := f13Check(t, f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
		if v := quotaFailure(st).GetViolations(); len(v) != 1 || v[0].GetQuotaId() != "insufficient_quota" || v[0].GetSubject() != "provider:up" {
			t.Errorf("violations %v", v)
		}
	})
	t.Run("not for other codes", func(t *testing.T) {
		t.Parallel()
		f := openaiChat
		up := f13Serve(t, f.errStep(1, 503, nil))
		c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
		_, err := c.Chat(context.Background(), chatReq13())
		if q := quotaFailure(status.Convert(err)); q != nil {
			t.Errorf("QuotaFailure on %v: %v", status.Code(err), q)
		}
	})
	t.Run("caller limit", func(t *testing.T) {
		t.Parallel()
		c, _ := startWith(t, string(config.DefaultYAML())+`
auth:
  tokens:
    - {name: echo, sha256: `+sha(echoToken)+`, requests_per_minute: 1}
`, "")
		req := &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}}
		if _, err := c.Chat(bearer(echoToken), req); err != nil {
			t.Fatal(err)
		}
		_, err := c.Chat(bearer(echoToken), req)
		st := status.Convert(err)
		v := quotaFailure(st).GetViolations()
		if st.Code() != codes.ResourceExhausted || len(v) != 1 || v[0].GetSubject() != "caller:echo" || v[0].GetQuotaId() != "requests_per_minute" || v[0].GetDescription() == "" {
			t.Errorf("%v: violations %v", st.Code(), v)
		}
	})
}

// TestFault17InBandErrorStatus: an error inside a 200 (an error event
// before or after content) has no upstream status in the ErrorInfo, for
// every format alike: "200" beside an error code reads as a success (the
// openai and ollama formats said "200", the others nothing). Its retry
// reason reports the 200 that was received (round 26: the proto's "0
// when none was received", as for a cut after the head), every format
// alike, the reason the kind's.
func TestFault17InBandErrorStatus(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, body := range []string{f.head + f.errEvent, f.head + f.text("The capital") + f.errEvent} {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, respond(200, f.streamHead(1), body))
				c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				st, m := f13Check(t, f, got.err, f.errCode, f.errReason, 1, 0)
				if s, ok := errorInfoOf(st).GetMetadata()["upstreamStatus"]; ok || m.GetRetryReasons()[0].GetUpstreamStatus() != 200 {
					t.Errorf("upstreamStatus %q, retry reason %v", s, m.GetRetryReasons()[0])
				}
			})
		}
	}
}

// TestFault17ResetDurations: OpenAI's reset values in Go duration form
// with fractions ("1m30.5s") give the delay of an exhausted limit's 429;
// one beyond max_retry_after ends the call at once with it as RetryInfo.
func TestFault17ResetDurations(t *testing.T) {
	t.Parallel()
	for _, f := range []f13Format{openaiChat, openaiResponses, azureFormat()} {
		for _, tc := range []struct {
			reset    string
			want     time.Duration
			attempts int
		}{{"1m30.5s", 90500 * time.Millisecond, 2}, {"6m0s", 6 * time.Minute, 1}, {"850ms", 850 * time.Millisecond, 2}} {
			t.Run(f.name+"/"+tc.reset, func(t *testing.T) {
				t.Parallel()
				extra := hdr("x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", tc.reset, "Date", time.Now().UTC().Format(http.TimeFormat))
				up := f13Serve(t, f.errStep(1, 429, extra), f.errStep(2, 429, extra))
				clock := &f13Clock{}
				c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms, max_retry_after: 100s}}\n"+f.yaml, up.URL, clock)
				_, err := c.Chat(context.Background(), chatReq13())
				st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", tc.attempts, 429)
				ri := retryInfo(st).GetRetryDelay().AsDuration()
				if ri > tc.want || ri < tc.want-2*time.Second {
					t.Errorf("RetryInfo %v, want about %v", ri, tc.want)
				}
				if s := clock.slept(); len(s) != tc.attempts-1 || (len(s) == 1 && (s[0] > tc.want || s[0] < tc.want-2*time.Second)) {
					t.Errorf("sleeps %v", s)
				}
			})
		}
	}
}

// TestFault17ConnectionRefused: nothing listens at the provider's
// address: every attempt fails before a response (connection_error),
// Unavailable at the end, and the message does not hold the key (nor a
// request URL's query, where Gemini's can be).
func TestFault17ConnectionRefused(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + l.Addr().String()
			_ = l.Close()
			c := f13Start(t, f17Defaults+f.yaml, url, &f13Clock{})
			_, err = c.Chat(context.Background(), chatReq13())
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_UNAVAILABLE" || strings.Contains(st.Message(), f13Key) || strings.Contains(st.Message(), "key=") {
				t.Errorf("%v %s %q", st.Code(), info.GetReason(), st.Message())
			}
			m := failedMeta(t, err)
			if m.GetAttempts() != 3 || len(m.GetRetryReasons()) != 3 {
				t.Fatalf("meta %v", m)
			}
			for _, rr := range m.GetRetryReasons() {
				if rr.GetReason() != "connection_error" || rr.GetUpstreamStatus() != 0 {
					t.Errorf("retry reason %v", rr)
				}
			}
			if _, ok := info.GetMetadata()["upstreamStatus"]; ok {
				t.Errorf("metadata %v", info.GetMetadata())
			}
		})
	}
}

// TestFault17ErrorIn200Unary: an error object as the whole body of a 200
// unary answer, on the formats fault13 left out: classified by its
// content (retried when transient, ResourceExhausted for a rate limit).
func TestFault17ErrorIn200Unary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f        f13Format
		body     string
		code     codes.Code
		reason   string
		attempts int
	}{
		{anthropicFormat, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2},
		{anthropicFormat, `{"type":"error","error":{"type":"rate_limit_error","message":"Too many requests"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 2},
		{geminiFormat, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2},
		{geminiFormat, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 2},
		{openaiResponses, `{"error":{"message":"Rate limit reached. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 2},
	} {
		t.Run(tc.f.name+"/"+tc.reason, func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 2; n++ {
				steps = append(steps, respond(200, merged(hdr("Content-Type", "application/json"), tc.f.reqIDHeader(n), tc.f.rl(n)), tc.body))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+tc.f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			f13Check(t, tc.f, err, tc.code, tc.reason, tc.attempts, 0)
		})
	}
}

// TestFault17FallbackOnMisdirection: a routed model's first deployment
// answers with a web page or a redirect elsewhere (its base_url is
// wrong, or a proxy before it): never the request's fault, so the next
// deployment answers; the first is tried once.
func TestFault17FallbackOnMisdirection(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, tc := range []struct {
			name   string
			reason string
			step   func(other string) f13Step
		}{
			{"html page", "bad_response", func(string) f13Step {
				return respond(200, merged(hdr("Content-Type", "text/html"), f.reqIDHeader(1)), "<!doctype html><html><body>Open WebUI</body></html>")
			}},
			{"redirect elsewhere", "http_302", func(other string) f13Step {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Location", other+r.URL.RequestURI())
					w.WriteHeader(http.StatusFound)
				}
			}},
		} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", f.name, tc.name, stream), func(t *testing.T) {
					t.Parallel()
					elsewhere := f13Serve(t, f.okStep(99))
					first := f13Serve(t, tc.step(elsewhere.URL))
					answer := f.okStep(11)
					if stream {
						answer = respond(200, f.streamHead(11), f.complete())
					}
					second := f13Serve(t, answer)
					c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
					var m *llmrelayv1.ResponseMeta
					if stream {
						got := readStream13(t, c)
						if got.err != nil || got.text != okText {
							t.Fatalf("err %v text %q", got.err, got.text)
						}
						m = got.end.GetMeta()
					} else {
						resp, err := c.Chat(context.Background(), chatReq13())
						if err != nil {
							t.Fatal(err)
						}
						m = resp.GetMeta()
					}
					if m.GetProvider() != "second" || m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != tc.reason ||
						m.GetRetryReasons()[0].GetDeployment() != "first" {
						t.Errorf("meta %v", m)
					}
					if first.requests() != 1 || elsewhere.requests() != 0 {
						t.Errorf("first saw %d, elsewhere %d", first.requests(), elsewhere.requests())
					}
				})
			}
		}
	}
}

// TestFault17BareJSONErrorInStream: the provider's error written into a
// 200 event stream as a bare JSON object (no "data:"; Gemini's streamed
// errors come so, pretty-printed, and google-genai reads them by counting
// braces), before any content: read as the error it is (retried when
// transient, ResourceExhausted for a rate limit), not as a stream cut.
func TestFault17BareJSONErrorInStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f        f13Format
		body     string
		code     codes.Code
		reason   string
		attempts int
	}{
		{geminiFormat, "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n", codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3},
		{geminiFormat, "{\n  \"error\": {\n    \"code\": 503,\n    \"message\": \"The model is overloaded. Please try again later.\",\n    \"status\": \"UNAVAILABLE\"\n  }\n}\n", codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{geminiFormat, `{"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}}` + "\n", codes.InvalidArgument, "INVALID_REQUEST", 1},
		{openaiChat, `{"error":{"message":"Rate limit reached. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}` + "\n\n", codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3},
		{azureFormat(), `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}` + "\n\n", codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
		{anthropicFormat, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n", codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
	} {
		t.Run(tc.f.name+"/"+tc.reason, func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 3; n++ {
				steps = append(steps, respond(200, tc.f.streamHead(n), tc.f.head+tc.body))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, f17Defaults+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v err %v", got.started, got.err)
			}
			f13Check(t, tc.f, got.err, tc.code, tc.reason, tc.attempts, 0)
		})
		t.Run(tc.f.name+"/"+tc.reason+"/after content", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.f.head+tc.f.text("The capital")+tc.body))
			c := f13Start(t, f17Defaults+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.text != "The capital" || got.end != nil {
				t.Fatalf("text %q end %v", got.text, got.end)
			}
			f13Check(t, tc.f, got.err, tc.code, tc.reason, 1, 0)
		})
	}
}

// TestFault17StreamMaxAttemptsLastReason: a stream's attempts fail
// differently before any content (a 503, a cut, an error event): the
// status is the last attempt's, the meta lists the three in order, and
// the client got no event.
func TestFault17StreamMaxAttemptsLastReason(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 503, nil), respond(200, f.streamHead(2), f.head), respond(200, f.streamHead(3), f.head+f.errEvent))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v err %v", got.started, got.err)
			}
			_, m := f13Check(t, f, got.err, f.errCode, f.errReason, 3, 0)
			var reasons []string
			for _, rr := range m.GetRetryReasons() {
				reasons = append(reasons, rr.GetReason())
			}
			if strings.Join(reasons, ",") != "http_503,stream_cut,unavailable" {
				t.Errorf("reasons %v", reasons)
			}
		})
	}
}
