package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// The fault matrix: every format × every fault shape a provider (or a
// proxy in front of it) answers before its first content × unary and
// stream. The same fault must give the same answer whichever way it was
// asked: the code, ErrorInfo reason, RetryInfo from the provider's delay,
// the attempts, each retry reason (reason, upstream status, provider
// request id, the delay waited), the last attempt's rate-limit state. The
// earlier fault tests check most cells one mode at a time; this one holds
// the two modes to each other and fills the cells they left (a stream's
// 429 with an HTTP-date, retry-after-ms or only an exhausted reset; a
// stream's 408, 500 JSON, gzip error page and refused connection; a
// Brotli body the gateway cannot read).

// f26Defaults: three attempts, bounded silences, millisecond backoff.
const f26Defaults = "defaults: {first_byte_timeout: 150ms, unary_first_byte_timeout: 150ms, idle_timeout: 150ms, " +
	"retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\n"

// f26Br503 is {"error":{"message":"upstream said 503","type":"server_error","param":null,"code":null}}
// Brotli-compressed (node's zlib.brotliCompressSync): a proxy that
// compresses with br though the gateway asked for gzip only.
var f26Br503, _ = base64.StdEncoding.DecodeString("G1cAYJwF7t4dcWnxorqoEL5SZGavYWrg6hSLTop89UEuDth3o13Ua5pFuY2dp6hFOGKideTpNtIb9CTcZzSickGFsQoRadAP")

// f26BrOK is {"answer":"in br"} Brotli-compressed likewise: a 200 the
// gateway cannot read, whatever the format.
var f26BrOK, _ = base64.StdEncoding.DecodeString("iwiAeyJhbnN3ZXIiOiJpbiBiciJ9Aw==")

// f26Shape is one fault an attempt meets before any content.
type f26Shape struct {
	name string
	// step answers attempt n of format f; date is the answer's Date.
	step func(f f13Format, n int, date time.Time) f13Step
	// streamStep replaces step for a stream request (nil: the same).
	streamStep func(f f13Format, n int, date time.Time) f13Step
	// only: the formats it applies to ("" for all).
	only   []string
	code   codes.Code
	reason string
	// retried: a later attempt is made; retry is the retry reason each
	// failed attempt records, status its upstream status.
	retried bool
	retry   string
	status  int
	// delay is the provider's delay waited before each retry and given
	// as RetryInfo at the end (0: the policy's backoff and no RetryInfo).
	delay time.Duration
	// noHead: no response head arrives (no request id, no rate limits).
	noHead bool
	// streamReason and streamRetry replace reason and retry for a stream
	// request ("": the same); rrStatus is the upstream status each retry
	// reason records when it differs from status (an answer's 200 head).
	streamReason, streamRetry string
	rrStatus                  int32
	// msgNot: what the status message must not hold; msgHas: what it
	// must.
	msgNot []string
	msgHas string
}

func f26ErrStep(f f13Format, n, st int, date time.Time, extra http.Header) f13Step {
	return f.errStep(n, st, merged(hdr("Date", date.Format(http.TimeFormat)), extra))
}

func f26Raw(st int, ctype, body string, extra http.Header) func(f f13Format, n int, date time.Time) f13Step {
	return func(f f13Format, n int, date time.Time) f13Step {
		h := merged(hdr("Date", date.Format(http.TimeFormat)), f.reqIDHeader(n), f.rl(n), extra)
		if ctype != "" {
			h.Set("Content-Type", ctype)
		}
		return respond(st, h, body)
	}
}

func f26Shapes() []f26Shape {
	resetConn := func(f13Format, int, time.Time) f13Step {
		return func(w http.ResponseWriter, _ *http.Request) {
			c, _, _ := w.(http.Hijacker).Hijack()
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
		}
	}
	openaiLike := []string{"openai-chat", "openai-responses", "azure", "ollama"}
	return []f26Shape{
		{name: "429 Retry-After seconds", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 429, d, hdr("Retry-After", "2"))
		}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", retried: true, retry: "http_429", status: 429, delay: 2 * time.Second},
		{name: "429 Retry-After HTTP-date", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 429, d, hdr("Retry-After", d.Add(3*time.Second).Format(http.TimeFormat)))
		}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", retried: true, retry: "http_429", status: 429, delay: 3 * time.Second},
		{name: "429 retry-after-ms", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 429, d, hdr("retry-after-ms", "1500"))
		}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", retried: true, retry: "http_429", status: 429, delay: 1500 * time.Millisecond},
		{name: "429 exhausted x-ratelimit-reset only", only: openaiLike, step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 429, d, hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "20s"))
		}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", retried: true, retry: "http_429", status: 429, delay: 20 * time.Second},
		{name: "429 exhausted anthropic reset only", only: []string{"anthropic"}, step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 429, d, hdr("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", d.Add(20*time.Second).Format(time.RFC3339)))
		}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", retried: true, retry: "http_429", status: 429, delay: 20 * time.Second},
		{name: "429 Retry-After beyond max_retry_after", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 429, d, hdr("Retry-After", "120"))
		}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", retry: "http_429", status: 429, delay: 2 * time.Minute, msgHas: "max_retry_after"},
		{name: "503 Retry-After beyond max_retry_after", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 503, d, hdr("Retry-After", "120"))
		}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retry: "http_503", status: 503, delay: 2 * time.Minute, msgHas: "max_retry_after"},
		{name: "529 retry-after-ms", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 529, d, hdr("retry-after-ms", "750"))
		}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_529", status: 529, delay: 750 * time.Millisecond},
		{name: "429 no delay", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 429, d, nil)
		}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", retried: true, retry: "http_429", status: 429},
		{name: "500 JSON", step: func(f f13Format, n int, d time.Time) f13Step { return f26ErrStep(f, n, 500, d, nil) },
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_500", status: 500},
		{name: "502 proxy HTML", step: f26Raw(502, "text/html", nginx502, nil),
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_502", status: 502, msgNot: []string{"<", "nginx"}},
		{name: "502 proxy plain text", step: f26Raw(502, "text/plain", "upstream connect error or disconnect/reset before headers. reset reason: connection termination", nil),
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_502", status: 502, msgHas: "up: upstream connect error or disconnect/reset before headers. reset reason: connection termination"},
		{name: "503 JSON Retry-After", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26ErrStep(f, n, 503, d, hdr("Retry-After", "1"))
		}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_503", status: 503, delay: time.Second},
		{name: "504 proxy HTML", step: f26Raw(504, "text/html", "<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center></body></html>", nil),
			code: codes.DeadlineExceeded, reason: "UPSTREAM_TIMEOUT", retried: true, retry: "http_504", status: 504, msgNot: []string{"<"}},
		{name: "529 overloaded", step: func(f f13Format, n int, d time.Time) f13Step { return f26ErrStep(f, n, 529, d, nil) },
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_529", status: 529},
		{name: "408 empty", step: f26Raw(408, "", "", nil),
			code: codes.DeadlineExceeded, reason: "UPSTREAM_TIMEOUT", retried: true, retry: "http_408", status: 408},
		{name: "503 gzip JSON", step: func(f f13Format, n int, d time.Time) f13Step {
			return f26Raw(503, "application/json", gzipped(f.errBody(503)), hdr("Content-Encoding", "gzip"))(f, n, d)
		}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_503", status: 503},
		{name: "503 br JSON", step: f26Raw(503, "application/json", string(f26Br503), hdr("Content-Encoding", "br")),
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "http_503", status: 503, msgNot: []string{"\ufffd", "\x1b"}, msgHas: "Content-Encoding br"},
		{name: "200 br answer", step: func(f f13Format, n int, d time.Time) f13Step {
			h := merged(hdr("Date", d.Format(http.TimeFormat), "Content-Encoding", "br"), f.reqIDHeader(n), f.rl(n))
			h.Set("Content-Type", "application/json")
			return respond(200, h, string(f26BrOK))
		}, code: codes.Unavailable, reason: "UPSTREAM_BAD_RESPONSE", retry: "bad_response", rrStatus: 200, msgNot: []string{"\ufffd", "\x1b"}, msgHas: "Content-Encoding br"},
		{name: "headers then reset", step: func(f f13Format, n int, d time.Time) f13Step {
			return thenReset(merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), "")
		}, streamStep: func(f f13Format, n int, d time.Time) f13Step { return thenReset(f.streamHead(n), "") },
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "unavailable", rrStatus: 200},
		{name: "200 empty", step: func(f f13Format, n int, d time.Time) f13Step {
			return respond(200, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), "")
		}, streamStep: func(f f13Format, n int, d time.Time) f13Step { return respond(200, f.streamHead(n), "") },
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "unavailable", rrStatus: 200,
			streamReason: "UPSTREAM_BAD_RESPONSE", streamRetry: "stream_cut"},
		{name: "200 body cut short", step: func(f f13Format, n int, d time.Time) f13Step {
			return cutBody(merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), f.okBody[:len(f.okBody)/2])
		}, streamStep: func(f f13Format, n int, d time.Time) f13Step { return respond(200, f.streamHead(n), f.head) },
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "unavailable", rrStatus: 200,
			streamReason: "UPSTREAM_BAD_RESPONSE", streamRetry: "stream_cut"},
		{name: "silent after headers", step: func(f f13Format, n int, d time.Time) f13Step {
			return thenHang(merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), f.okBody[:len(f.okBody)/2])
		}, streamStep: func(f f13Format, n int, d time.Time) f13Step { return thenHang(f.streamHead(n), f.head) },
			code: codes.DeadlineExceeded, reason: "UPSTREAM_TIMEOUT", retried: true, retry: "timeout", rrStatus: 200, msgHas: "idle_timeout"},
		{name: "200 invalid JSON", step: func(f f13Format, n int, d time.Time) f13Step {
			return respond(200, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n)), "{not json}")
		}, streamStep: func(f f13Format, n int, d time.Time) f13Step {
			body := map[string]string{"openai-responses": "event: response.created\ndata: {not json}\n\n", "anthropic": "event: message_start\ndata: {not json}\n\n",
				"gemini": "data: {not json}\r\n\r\n", "ollama": "{not json}\n"}[f.name]
			if body == "" {
				body = "data: {not json}\n\n"
			}
			return respond(200, f.streamHead(n), body)
		}, code: codes.Unavailable, reason: "UPSTREAM_BAD_RESPONSE", retry: "bad_response", rrStatus: 200},
		{name: "reset before headers", step: resetConn, noHead: true,
			code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", retried: true, retry: "connection_error"},
		{name: "silent before headers", step: func(f13Format, int, time.Time) f13Step { return hangBeforeHeaders }, noHead: true,
			code: codes.DeadlineExceeded, reason: "UPSTREAM_TIMEOUT", retried: true, retry: "timeout"},
	}
}

// f26Outcome is what a client got from one call, unary or streamed.
type f26Outcome struct {
	err     error
	started bool
	ended   bool
	text    string
	meta    *llmrelayv1.ResponseMeta
}

func f26Call(t *testing.T, c llmrelayv1.GatewayServiceClient, stream bool) f26Outcome {
	t.Helper()
	if !stream {
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			return f26Outcome{err: err}
		}
		return f26Outcome{ended: true, text: resp.GetMessage().GetParts()[0].GetText(), meta: resp.GetMeta()}
	}
	got := readStream13(t, c)
	return f26Outcome{err: got.err, started: got.started, ended: got.end != nil, text: got.text, meta: got.end.GetMeta()}
}

func (f f13Format) okFor(n int, stream bool) f13Step {
	if stream {
		return respond(200, f.streamHead(n), f.complete())
	}
	return f.okStep(n)
}

// TestFault26Matrix: each shape on every attempt (the status the client
// ends with) and on the first attempt only (retried into the answer), for
// every format, unary and streamed alike.
func TestFault26Matrix(t *testing.T) {
	t.Parallel()
	date := time.Now().UTC().Truncate(time.Second)
	for _, f := range f13Formats() {
		for _, sh := range f26Shapes() {
			if sh.only != nil && !containsStr(sh.only, f.name) {
				continue
			}
			for _, stream := range []bool{false, true} {
				mode := "unary"
				if stream {
					mode = "stream"
				}
				step := sh.step
				if stream && sh.streamStep != nil {
					step = sh.streamStep
				}
				sh := sh
				if stream && sh.streamReason != "" {
					sh.reason = sh.streamReason
				}
				if stream && sh.streamRetry != "" {
					sh.retry = sh.streamRetry
				}
				if sh.rrStatus == 0 {
					sh.rrStatus = int32(sh.status)
				}
				t.Run(f.name+"/"+sh.name+"/"+mode+"/every attempt", func(t *testing.T) {
					t.Parallel()
					up := f13Serve(t, step(f, 1, date), step(f, 2, date), step(f, 3, date))
					clock := &f13Clock{}
					c := f13Start(t, f26Defaults+f.yaml, up.URL, clock)
					got := f26Call(t, c, stream)
					if got.err == nil || got.started || got.ended {
						t.Fatalf("err %v, started %v, ended %v: want the status alone", got.err, got.started, got.ended)
					}
					attempts := 1
					if sh.retried {
						attempts = 3
					}
					ff := f
					if sh.noHead {
						ff.reqID = ""
					}
					st, m := f13Check(t, ff, got.err, sh.code, sh.reason, attempts, sh.status)
					if !strings.Contains(st.Message(), sh.msgHas) {
						t.Errorf("message %q does not say %q", st.Message(), sh.msgHas)
					}
					for _, bad := range sh.msgNot {
						if strings.Contains(st.Message(), bad) {
							t.Errorf("message %q holds %q", st.Message(), bad)
						}
					}
					for i, rr := range m.GetRetryReasons() {
						if rr.GetReason() != sh.retry || rr.GetUpstreamStatus() != sh.rrStatus || rr.GetProviderRequestId() != ff.wantReqID(i+1) {
							t.Errorf("retry reason %d = %v, want %s, upstream status %d, request id %q", i, rr, sh.retry, sh.rrStatus, ff.wantReqID(i+1))
						}
						if i < attempts-1 {
							if d := rr.GetDelay().AsDuration(); (sh.delay == 0 && !f20Backoff(d)) || (sh.delay != 0 && d != sh.delay) {
								t.Errorf("retry reason %d delay %v, want %v (0: the policy's backoff)", i, d, sh.delay)
							}
						}
					}
					if s := clock.slept(); len(s) != attempts-1 || up.requests() != attempts {
						t.Errorf("sleeps %v, upstream saw %d, want %d attempts", s, up.requests(), attempts)
					}
					if sh.code == codes.ResourceExhausted {
						if v := quotaFailure(st).GetViolations(); len(v) == 0 || v[0].GetSubject() != "provider:up" || v[0].GetDescription() == "" {
							t.Errorf("QuotaFailure violations %v, want the provider's", v)
						}
					} else if q := quotaFailure(st); q != nil {
						t.Errorf("QuotaFailure %v on %v", q, st.Code())
					}
					ri := retryInfo(st)
					if sh.delay == 0 && ri != nil {
						t.Errorf("RetryInfo %v without a provider delay", ri)
					}
					if sh.delay != 0 && ri.GetRetryDelay().AsDuration() != sh.delay {
						t.Errorf("RetryInfo %v, want the provider's %v", ri, sh.delay)
					}
					if !sh.noHead && f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(attempts) {
						if !strings.Contains(sh.name, "exhausted") || m.GetRateLimit().GetRequestsRemaining() != 0 {
							t.Errorf("rate limit %v, want the last attempt's", m.GetRateLimit())
						}
					}
				})
				if !sh.retried {
					continue
				}
				t.Run(f.name+"/"+sh.name+"/"+mode+"/then success", func(t *testing.T) {
					t.Parallel()
					up := f13Serve(t, step(f, 1, date), f.okFor(2, stream))
					clock := &f13Clock{}
					c := f13Start(t, f26Defaults+f.yaml, up.URL, clock)
					got := f26Call(t, c, stream)
					if got.err != nil || !got.ended || got.text != okText {
						t.Fatalf("err %v, ended %v, text %q", got.err, got.ended, got.text)
					}
					m := got.meta
					if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || up.requests() != 2 {
						t.Fatalf("attempts %d, reasons %v, upstream %d", m.GetAttempts(), m.GetRetryReasons(), up.requests())
					}
					rr := m.GetRetryReasons()[0]
					wantID := f.wantReqID(1)
					if sh.noHead {
						wantID = ""
					}
					if rr.GetReason() != sh.retry || rr.GetUpstreamStatus() != sh.rrStatus || rr.GetProviderRequestId() != wantID {
						t.Errorf("retry reason %v, want %s %d %q", rr, sh.retry, sh.rrStatus, wantID)
					}
					if d := rr.GetDelay().AsDuration(); (sh.delay == 0 && !f20Backoff(d)) || (sh.delay != 0 && d != sh.delay) {
						t.Errorf("delay %v, want %v", d, sh.delay)
					}
					if m.GetProviderRequestId() != f.wantReqID(2) || (f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(2)) {
						t.Errorf("meta request id %q, rate limit %v: want the answer's", m.GetProviderRequestId(), m.GetRateLimit())
					}
				})
			}
		}
	}
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestFault26UnreadEncodingFallsBack: a 200 in a content coding the
// gateway cannot read is the deployment's setup (a proxy compressing with
// Brotli), as a web page where the API should be is: a routed model gives
// way to its next deployment at once, unary and streamed; the failed
// attempt is recorded as bad_response with its request id.
func TestFault26UnreadEncodingFallsBack(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, stream := range []bool{false, true} {
			mode := "unary"
			if stream {
				mode = "stream"
			}
			t.Run(f.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				h := merged(hdr("Content-Type", "application/json", "Content-Encoding", "br"), f.reqIDHeader(1), f.rl(1))
				first := f13Serve(t, respond(200, h, string(f26BrOK)))
				second := f13Serve(t, f.okFor(11, stream))
				c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
				got := f26Call(t, c, stream)
				if got.err != nil || got.text != okText {
					t.Fatalf("err %v, text %q", got.err, got.text)
				}
				m := got.meta
				if rr := m.GetRetryReasons(); m.GetAttempts() != 2 || len(rr) != 1 || rr[0].GetReason() != "bad_response" || rr[0].GetUpstreamStatus() != 200 ||
					rr[0].GetDeployment() != m.GetRouting().GetTried()[0] || rr[0].GetProviderRequestId() != f.wantReqID(1) ||
					!strings.Contains(rr[0].GetMessage(), "Content-Encoding br") {
					t.Errorf("attempts %d, reasons %v", m.GetAttempts(), rr)
				}
				if first.requests() != 1 || second.requests() != 1 || m.GetProvider() != "second" {
					t.Errorf("first saw %d, second %d, provider %s", first.requests(), second.requests(), m.GetProvider())
				}
			})
		}
	}
}

// TestFault26GzipStream: a stream a proxy gzips (unasked) reads as the
// stream it holds, for every format; so does a gzipped error answer to a
// stream request, retried by its status into the answer.
func TestFault26GzipStream(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			errH := merged(hdr("Content-Type", "application/json", "Content-Encoding", "gzip"), f.reqIDHeader(1), f.rl(1))
			up := f13Serve(t, respond(503, errH, gzipped(f.errBody(503))), respond(200, merged(f.streamHead(2), hdr("Content-Encoding", "gzip")), gzipped(f.complete())))
			c := f13Start(t, f26Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.end == nil || got.text != okText {
				t.Fatalf("err %v, end %v, text %q", got.err, got.end, got.text)
			}
			m := got.end.GetMeta()
			if rr := m.GetRetryReasons(); m.GetAttempts() != 2 || len(rr) != 1 || rr[0].GetReason() != "http_503" || rr[0].GetMessage() != "upstream said 503" ||
				rr[0].GetProviderRequestId() != f.wantReqID(1) || m.GetProviderRequestId() != f.wantReqID(2) {
				t.Errorf("meta %v", m)
			}
		})
	}
}

// TestFault26ConnectionRefused: nothing listens at the provider's
// address: unary and streamed alike, every attempt is a connection_error
// with no status or request id, the client gets Unavailable and no event.
func TestFault26ConnectionRefused(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, stream := range []bool{false, true} {
			t.Run(f.name+"/"+map[bool]string{false: "unary", true: "stream"}[stream], func(t *testing.T) {
				t.Parallel()
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				url := "http://" + l.Addr().String()
				_ = l.Close()
				clock := &f13Clock{}
				c := f13Start(t, f26Defaults+f.yaml, url, clock)
				got := f26Call(t, c, stream)
				if got.err == nil || got.started || got.ended {
					t.Fatalf("err %v, started %v, ended %v", got.err, got.started, got.ended)
				}
				ff := f
				ff.reqID = ""
				_, m := f13Check(t, ff, got.err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3, 0)
				for i, rr := range m.GetRetryReasons() {
					if rr.GetReason() != "connection_error" || rr.GetUpstreamStatus() != 0 || rr.GetProviderRequestId() != "" ||
						(i < 2 && !f20Backoff(rr.GetDelay().AsDuration())) {
						t.Errorf("retry reason %d = %v", i, rr)
					}
				}
				if m.GetRateLimit() != nil || len(clock.slept()) != 2 {
					t.Errorf("rate limit %v, sleeps %v", m.GetRateLimit(), clock.slept())
				}
			})
		}
	}
}

// TestFault26GeminiArrayStreamError: streamGenerateContent without
// alt=sse (a proxy that dropped the query) answers a JSON array of chunks;
// an error object in it is the stream's error event: before content it is
// retried by its status into the answer, after content the client keeps
// its delta and gets the status, never a complete-looking end.
func TestFault26GeminiArrayStreamError(t *testing.T) {
	t.Parallel()
	f := geminiFormat
	chunk := func(text string) string {
		return `{"candidates":[{"content":{"parts":[{"text":` + strconvQuote(text) + `}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":14,"totalTokenCount":14},"modelVersion":"gemini-2.5-flash","responseId":"gem_f26"}`
	}
	errObj := `{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}`
	head := func(n int) http.Header {
		return merged(hdr("Content-Type", "application/json; charset=UTF-8"), f.reqIDHeader(n))
	}
	t.Run("before content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, head(1), "[\n"+errObj+"\n]"), respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f26Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.err != nil || got.text != okText {
			t.Fatalf("err %v, text %q", got.err, got.text)
		}
		if rr := got.end.GetMeta().GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != "unavailable" || up.requests() != 2 {
			t.Errorf("retry reasons %v, upstream %d", rr, up.requests())
		}
	})
	t.Run("after content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, head(1), "[\n"+chunk("The capital")+",\n"+errObj+"\n]"))
		c := f13Start(t, f26Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.text != "The capital" || got.end != nil || got.err == nil {
			t.Fatalf("text %q, end %v, err %v", got.text, got.end, got.err)
		}
		f13Check(t, f, got.err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1, 0)
		if up.requests() != 1 {
			t.Errorf("retried after content: %d", up.requests())
		}
	})
	t.Run("cut before content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, head(1), "[{\"candidates\": [{\"content\": {\"parts\": [{\"te"), respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f26Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.err != nil || got.text != okText {
			t.Fatalf("err %v, text %q", got.err, got.text)
		}
		if rr := got.end.GetMeta().GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != "stream_cut" || rr[0].GetUpstreamStatus() != 200 {
			t.Errorf("retry reasons %v", rr)
		}
	})
	t.Run("cut inside the array", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, head(1), "[\n"+chunk("The capital")+",\n"))
		c := f13Start(t, f26Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.text != "The capital" || got.end != nil || got.err == nil {
			t.Fatalf("text %q, end %v, err %v", got.text, got.end, got.err)
		}
		f13Check(t, f, got.err, codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 1, 0)
	})
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
