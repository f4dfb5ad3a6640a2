package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Fault sequences of session 25 (see fault13_test.go for the harness).

// nginx413 is nginx's own page for a body over client_max_body_size, as
// its source writes it (src/http/ngx_http_special_response.c:
// ngx_http_error_413_page, then ngx_http_error_tail), behind a 413 of
// Content-Type text/html: what a self-hosted server (vLLM, Ollama,
// llama.cpp) answers a large request through an nginx left at its 1 MB
// default. Hand-built: no JSON at all.
const nginx413 = "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

// TestFault25RequestTooLargeFallsBack: a 413 refuses the request's size
// at this deployment: the limit is its endpoint's (Anthropic's 32 MB,
// which Cloudflare answers with request_too_large, x-should-retry: false:
// the anthropic adapter's testdata/error_413.http) or a proxy's in front of
// it (nginx's page, an empty body), and the route's next deployment may
// take the same request. It goes there at once (no retry: the same body
// meets the same limit), unary and streamed; without a next deployment
// the caller gets InvalidArgument, INVALID_REQUEST, upstreamStatus 413,
// after one attempt and with no RetryInfo (waiting does not shrink the
// request). A 413 never fell back, whatever the deployment after it.
func TestFault25RequestTooLargeFallsBack(t *testing.T) {
	t.Parallel()
	html := hdr("Content-Type", "text/html", "Server", "nginx/1.27.3")
	for _, tc := range []struct {
		name string
		f    f13Format
		step f13Step
	}{
		{"openai-chat/nginx page", openaiChat, respond(413, html, nginx413)},
		{"openai-chat/no body", openaiChat, respond(413, hdr("Content-Length", "0"), "")},
		{"anthropic/request_too_large", anthropicFormat, f20Recorded(t, "provider/anthropic/testdata/error_413.http")},
		{"anthropic/nginx page", anthropicFormat, respond(413, html, nginx413)},
		{"gemini/nginx page", geminiFormat, respond(413, html, nginx413)},
		{"ollama/nginx page", ollamaFormat, respond(413, html, nginx413)},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += "/stream"
			}
			t.Run(name+"/routed", func(t *testing.T) {
				t.Parallel()
				first := f13Serve(t, tc.step)
				second := f13Serve(t, tc.f.okStep(11))
				if stream {
					second = f13Serve(t, respond(200, tc.f.streamHead(11), tc.f.complete()))
				}
				clock := &f13Clock{}
				c := f13StartRouted(t, tc.f, 3, first, second, clock)
				var m *llmrelayv1.ResponseMeta
				if stream {
					s := readStream13(t, c)
					if s.err != nil {
						t.Fatalf("did not fall back: %v", s.err)
					}
					if s.text != okText {
						t.Errorf("text %q", s.text)
					}
					m = s.end.GetMeta()
				} else {
					resp, err := c.Chat(context.Background(), chatReq13())
					if err != nil {
						t.Fatalf("did not fall back: %v", err)
					}
					m = resp.GetMeta()
				}
				if m.GetProvider() != "second" || m.GetAttempts() != 2 || m.GetProviderRequestId() != tc.f.wantReqID(11) ||
					!slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
					t.Errorf("meta = %v", m)
				}
				rr := m.GetRetryReasons()
				if len(rr) != 1 || rr[0].GetDeployment() != "first" || rr[0].GetReason() != "http_413" || rr[0].GetUpstreamStatus() != 413 {
					t.Errorf("retry reasons %v", rr)
				}
				if first.requests() != 1 || second.requests() != 1 || len(clock.slept()) != 0 {
					t.Errorf("first saw %d, second %d, sleeps %v", first.requests(), second.requests(), clock.slept())
				}
			})
			t.Run(name+"/alone", func(t *testing.T) {
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
				st := validDetails(t, err)
				info := errorInfoOf(st)
				if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" || info.GetMetadata()["upstreamStatus"] != "413" {
					t.Errorf("status %v %q, info %v", st.Code(), st.Message(), info)
				}
				if strings.Contains(st.Message(), "<html") {
					t.Errorf("message holds the page: %q", st.Message())
				}
				if retryInfo(st) != nil {
					t.Errorf("RetryInfo on a request too large: %v", retryInfo(st))
				}
				if m := failedMeta(t, err); m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 1 {
					t.Errorf("meta = %v", m)
				}
				if up.requests() != 1 || len(clock.slept()) != 0 {
					t.Errorf("upstream saw %d, sleeps %v", up.requests(), clock.slept())
				}
			})
		}
	}
}

// TestFault25ContentFilterFallback: a deployment's content filter
// refusing the prompt (Azure's 400 content_filter, the adapter's
// testdata/azure_err_content_filter.http; Gemini's blocked prompt in a
// 200, testdata/blocked.http) stands by default: InvalidArgument,
// CONTENT_FILTERED, the next deployment never asked. With the model's
// content_filter_fallback the route moves on to the next deployment at
// once, unary and (Azure's, before any event) streamed; the meta names the
// refused attempt's deployment.
func TestFault25ContentFilterFallback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		f      f13Format
		step   f13Step
		reason string
		stream bool
	}{
		{"azure", azureFormat(), f20Recorded(t, "provider/openai/testdata/azure_err_content_filter.http"), "http_400", false},
		{"azure/stream", azureFormat(), f20Recorded(t, "provider/openai/testdata/azure_err_content_filter.http"), "http_400", true},
		{"gemini", geminiFormat, f20Recorded(t, "provider/gemini/testdata/blocked.http"), "content_filter", false},
	} {
		for _, optIn := range []bool{false, true} {
			t.Run(tc.name+"/"+map[bool]string{false: "default", true: "content_filter_fallback"}[optIn], func(t *testing.T) {
				t.Parallel()
				first := f13Serve(t, tc.step)
				second := f13Serve(t, tc.f.okStep(11))
				if tc.stream {
					second = f13Serve(t, respond(200, tc.f.streamHead(11), tc.f.complete()))
				}
				yaml := f13Routed(tc.f, 3)
				if optIn {
					yaml = strings.Replace(yaml, "{name: m,", "{name: m, content_filter_fallback: true,", 1)
				}
				c := f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), first.URL, &f13Clock{})
				var (
					m   *llmrelayv1.ResponseMeta
					err error
				)
				if tc.stream {
					s := readStream13(t, c)
					err = s.err
					m = s.end.GetMeta()
				} else {
					var resp *llmrelayv1.ChatResponse
					resp, err = c.Chat(context.Background(), chatReq13())
					m = resp.GetMeta()
				}
				if !optIn {
					st := validDetails(t, err)
					if st.Code() != codes.InvalidArgument || errorInfoOf(st).GetReason() != "CONTENT_FILTERED" {
						t.Fatalf("status %v %q", st.Code(), st.Message())
					}
					if fm := failedMeta(t, err); fm.GetProvider() != "first" || fm.GetAttempts() != 1 || len(fm.GetRouting().GetTried()) != 0 {
						t.Errorf("meta = %v", fm)
					}
					if first.requests() != 1 || second.requests() != 0 {
						t.Errorf("first saw %d, second %d", first.requests(), second.requests())
					}
					return
				}
				if err != nil {
					t.Fatalf("did not fall back: %v", err)
				}
				if m.GetProvider() != "second" || m.GetAttempts() != 2 || !slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
					t.Errorf("meta = %v", m)
				}
				if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetDeployment() != "first" || rr[0].GetReason() != tc.reason {
					t.Errorf("retry reasons %v", rr)
				}
				if first.requests() != 1 || second.requests() != 1 {
					t.Errorf("first saw %d, second %d", first.requests(), second.requests())
				}
			})
		}
	}
}

// pause is a silence of d inside a paced answer.
type pause time.Duration

// paced writes a 200's head, then its pieces in order: a string is
// written and flushed, a pause waited out (or the gateway's going away).
func paced(h http.Header, pieces ...any) f13Step {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, p := range pieces {
			switch p := p.(type) {
			case string:
				if _, err := io.WriteString(w, p); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			case pause:
				select {
				case <-r.Context().Done():
					return
				case <-time.After(time.Duration(p)):
				}
			}
		}
	}
}

// keepAlive is n pieces of what a provider sends while its model thinks,
// every, between them.
func keepAlive(n int, every time.Duration, piece string) []any {
	var out []any
	for range n {
		out = append(out, pause(every), piece)
	}
	return out
}

// f25Timeouts is f13Defaults with a short idle_timeout and, when set, a
// stream_first_token_timeout.
func f25Timeouts(idle, first string) string {
	s := "defaults: {idle_timeout: " + idle
	if first != "" {
		s += ", stream_first_token_timeout: " + first
	}
	return s + ", retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n"
}

// TestFault25FirstTokenSilence: a reasoning model that thinks without
// sending anything is silent for longer than idle_timeout before its
// first content: right after the headers, or after the events that come
// before any content (OpenAI's role chunk, Anthropic's message_start and
// content_block_start, the Responses API's created and reasoning item).
// By default (idle_timeout alone) the attempt is cut there and retried, a
// paid answer lost each time; with stream_first_token_timeout longer than
// the silence the stream is read whole, in one attempt.
func TestFault25FirstTokenSilence(t *testing.T) {
	t.Parallel()
	reasoningHead := responsesEvent("response.created", `"sequence_number":0,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`) +
		responsesEvent("response.in_progress", `"sequence_number":1,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`) +
		responsesEvent("response.output_item.added", `"sequence_number":2,"output_index":0,"item":{"id":"rs_f25","type":"reasoning","summary":[]}`)
	responses := openaiResponses
	responses.head = reasoningHead + responses.head
	for _, tc := range []struct {
		name  string
		f     f13Format
		after bool // the silence after the format's head, not before it
	}{
		{"openai-chat/after headers", openaiChat, false},
		{"openai-chat/after role chunk", openaiChat, true},
		{"openai-responses/after reasoning item", responses, true},
		{"anthropic/after content_block_start", anthropicFormat, true},
		{"gemini/after headers", geminiFormat, false},
		{"ollama/after headers", ollamaFormat, false},
	} {
		for _, first := range []string{"", "30s"} {
			t.Run(tc.name+"/first="+first, func(t *testing.T) {
				t.Parallel()
				var pieces []any
				if tc.after {
					pieces = append(pieces, tc.f.head, pause(time.Second))
				} else {
					pieces = append(pieces, pause(time.Second), tc.f.head)
				}
				pieces = append(pieces, tc.f.text("The capital of France")+tc.f.text(" is Paris.")+tc.f.tail)
				up := f13Serve(t, paced(tc.f.streamHead(1), pieces...))
				c := f13Start(t, f25Timeouts("250ms", first)+tc.f.yaml, up.URL, &f13Clock{})
				s := readStream13(t, c)
				if first == "" {
					// idle_timeout alone: cut in the silence, every attempt.
					st := validDetails(t, s.err)
					if st.Code() != codes.DeadlineExceeded || !strings.Contains(st.Message(), "idle_timeout (250ms)") {
						t.Fatalf("status %v %q", st.Code(), st.Message())
					}
					if m := failedMeta(t, s.err); m.GetAttempts() != 3 || up.requests() != 3 {
						t.Errorf("attempts %d, upstream saw %d", m.GetAttempts(), up.requests())
					}
					return
				}
				if s.err != nil || s.text != okText {
					t.Fatalf("err %v, text %q", s.err, s.text)
				}
				if m := s.end.GetMeta(); m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 0 || up.requests() != 1 {
					t.Errorf("meta %v, upstream saw %d", m, up.requests())
				}
			})
		}
	}
}

// TestFault25FirstTokenKeepAlive: what a provider sends while its model
// thinks resets stream_first_token_timeout as it resets idle_timeout:
// OpenRouter's SSE comments (": OPENROUTER PROCESSING", its documented
// keep-alive) and Anthropic's ping events, sent for four times the bound
// before the first content. The bound is the provider's silence, not the
// time to the first token: the stream is read whole, in one attempt.
func TestFault25FirstTokenKeepAlive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		f     f13Format
		piece string
	}{
		{"openai-chat/OpenRouter comments", openaiChat, ": OPENROUTER PROCESSING\n\n"},
		{"anthropic/ping", anthropicFormat, "event: ping\ndata: {\"type\": \"ping\"}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pieces := append([]any{tc.f.head}, keepAlive(12, 100*time.Millisecond, tc.piece)...)
			pieces = append(pieces, tc.f.complete()[len(tc.f.head):])
			up := f13Serve(t, paced(tc.f.streamHead(1), pieces...))
			c := f13Start(t, f25Timeouts("30s", "400ms")+tc.f.yaml, up.URL, &f13Clock{})
			s := readStream13(t, c)
			if s.err != nil || s.text != okText {
				t.Fatalf("err %v, text %q", s.err, s.text)
			}
			if m := s.end.GetMeta(); m.GetAttempts() != 1 || up.requests() != 1 {
				t.Errorf("meta %v, upstream saw %d", m, up.requests())
			}
		})
	}
}

// TestFault25FirstTokenTimeout: stream_first_token_timeout runs out (the
// provider's headers, then nothing): a transport timeout like
// idle_timeout's, retried, whose status and retry reasons name the
// setting; on a route, the next deployment at once. After the first
// content the bound is idle_timeout again: silence there ends the stream
// (after content, not retried) naming idle_timeout, however long
// stream_first_token_timeout is.
func TestFault25FirstTokenTimeout(t *testing.T) {
	t.Parallel()
	f := openaiChat
	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, paced(f.streamHead(1), pause(10*time.Second)))
		c := f13Start(t, f25Timeouts("30s", "200ms")+f.yaml, up.URL, &f13Clock{})
		s := readStream13(t, c)
		st := validDetails(t, s.err)
		const said = "stream_first_token_timeout (200ms)"
		if st.Code() != codes.DeadlineExceeded || errorInfoOf(st).GetReason() != "UPSTREAM_TIMEOUT" || !strings.Contains(st.Message(), said) {
			t.Fatalf("status %v %q", st.Code(), st.Message())
		}
		m := failedMeta(t, s.err)
		if m.GetAttempts() != 3 || len(m.GetRetryReasons()) != 3 || up.requests() != 3 {
			t.Fatalf("meta %v, upstream saw %d", m, up.requests())
		}
		for _, rr := range m.GetRetryReasons() {
			// The headers came, with the provider's request id: each
			// attempt keeps its own.
			if rr.GetReason() != "timeout" || !strings.Contains(rr.GetMessage(), said) || rr.GetProviderRequestId() != f.wantReqID(1) {
				t.Errorf("retry reason %v", rr)
			}
		}
	})
	t.Run("routed", func(t *testing.T) {
		t.Parallel()
		first := f13Serve(t, paced(f.streamHead(1), pause(10*time.Second)))
		second := f13Serve(t, respond(200, f.streamHead(11), f.complete()))
		yaml := strings.Replace(f13Routed(f, 3), "defaults: {", "defaults: {idle_timeout: 30s, stream_first_token_timeout: 200ms, ", 1)
		c := f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), first.URL, &f13Clock{})
		s := readStream13(t, c)
		if s.err != nil || s.text != okText {
			t.Fatalf("err %v, text %q", s.err, s.text)
		}
		m := s.end.GetMeta()
		if m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 || !slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
			t.Errorf("meta %v, first saw %d", m, first.requests())
		}
	})
	t.Run("idle after content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, paced(f.streamHead(1), f.head+f.text("The capital"), pause(10*time.Second)))
		c := f13Start(t, f25Timeouts("200ms", "30s")+f.yaml, up.URL, &f13Clock{})
		s := readStream13(t, c)
		st := validDetails(t, s.err)
		if st.Code() != codes.DeadlineExceeded || !strings.Contains(st.Message(), "idle_timeout (200ms)") || s.text != "The capital" {
			t.Fatalf("status %v %q, text %q", st.Code(), st.Message(), s.text)
		}
		if up.requests() != 1 {
			t.Errorf("upstream saw %d", up.requests())
		}
	})
}

// silentTLS accepts TCP connections and never answers a ClientHello: a
// provider (or what stands in front of it) whose TLS handshake hangs. It
// counts the connections.
type silentTLS struct {
	net.Listener
	mu sync.Mutex
	n  int
}

func newSilentTLS(t *testing.T) *silentTLS {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentTLS{Listener: ln}
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.n++
			conns = append(conns, c)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return s
}

func (s *silentTLS) conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// TestFault25TLSHandshakeTimeout: a TLS handshake that does not finish
// within connect_timeout, on both transports (the h1 pool: http_version
// auto and 1.1; net/http: 2), unary and streamed. On the h1 pool it read
// as the call's own deadline ("deadline exceeded": the handshake's
// context error): one attempt, never retried, never a fallback; on
// net/http it was "timeout talking to provider", retried on the same
// deployment with a route after it. Now it is a transport timeout that
// names connect_timeout, like the other bounds: retried alone, and on a
// route the next deployment at once.
func TestFault25TLSHandshakeTimeout(t *testing.T) {
	t.Parallel()
	const said = "connect_timeout (150ms)"
	for _, version := range []string{"auto", "1.1", "2"} {
		for _, stream := range []bool{false, true} {
			name := version + map[bool]string{false: "", true: "/stream"}[stream]
			defaults := `defaults: {connect_timeout: 150ms, http_version: "` + version + `", retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}` + "\n"
			call := func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
				if stream {
					s := readStream13(t, c)
					return s.end.GetMeta(), s.err
				}
				resp, err := c.Chat(context.Background(), chatReq13())
				return resp.GetMeta(), err
			}
			t.Run(name+"/alone", func(t *testing.T) {
				t.Parallel()
				up := newSilentTLS(t)
				c := f13Start(t, defaults+openaiChat.yaml, "https://"+up.Addr().String(), &f13Clock{})
				_, err := call(c)
				st := validDetails(t, err)
				if st.Code() != codes.DeadlineExceeded || errorInfoOf(st).GetReason() != "UPSTREAM_TIMEOUT" || !strings.Contains(st.Message(), said) {
					t.Fatalf("status %v %q", st.Code(), st.Message())
				}
				m := failedMeta(t, err)
				if m.GetAttempts() != 3 || len(m.GetRetryReasons()) != 3 || up.conns() != 3 {
					t.Fatalf("attempts %d, reasons %v, connections %d", m.GetAttempts(), m.GetRetryReasons(), up.conns())
				}
				for _, rr := range m.GetRetryReasons() {
					if rr.GetReason() != "timeout" || !strings.Contains(rr.GetMessage(), said) {
						t.Errorf("retry reason %v", rr)
					}
				}
			})
			t.Run(name+"/routed", func(t *testing.T) {
				t.Parallel()
				first := newSilentTLS(t)
				second := f13Serve(t, openaiChat.okStep(11))
				if stream {
					second = f13Serve(t, respond(200, openaiChat.streamHead(11), openaiChat.complete()))
				}
				yaml := strings.Replace(f13Routed(openaiChat, 3), "defaults: {", `defaults: {connect_timeout: 150ms, http_version: "`+version+`", `, 1)
				c := f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), "https://"+first.Addr().String(), &f13Clock{})
				m, err := call(c)
				if err != nil {
					t.Fatalf("did not fall back: %v", err)
				}
				if m.GetProvider() != "second" || m.GetAttempts() != 2 || first.conns() != 1 || !slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
					t.Errorf("meta %v, first saw %d connections", m, first.conns())
				}
				if rr := m.GetRetryReasons(); len(rr) != 1 || !strings.Contains(rr[0].GetMessage(), said) {
					t.Errorf("retry reasons %v", rr)
				}
			})
		}
	}
}

// TestFault25LongRetryAfterFallsBack: a deployment that answers 529
// (Anthropic's overloaded, Retry-After in seconds) or 503 (Azure's
// retry-after-ms) asking for a wait longer than max_delay gives way to
// the route's next deployment at once; the wait was slept out on it (30
// s), then the deployment retried. The retry reason names the refused
// attempt with its request id, and no delay (none was waited).
func TestFault25LongRetryAfterFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f      f13Format
		status int
		extra  http.Header
	}{
		{anthropicFormat, 529, hdr("Retry-After", "30")},
		{azureFormat(), 503, hdr("Retry-After-Ms", "1500")},
		{openaiChat, 503, hdr("Retry-After", "20")},
	} {
		t.Run(tc.f.name, func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, tc.f.errStep(1, tc.status, tc.extra), tc.f.okStep(2))
			second := f13Serve(t, tc.f.okStep(11))
			clock := &f13Clock{}
			yaml := strings.Replace(f13Routed(tc.f, 3), "max_delay: 2ms", "max_delay: 1s", 1)
			c := f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), first.URL, clock)
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			if m.GetProvider() != "second" || m.GetAttempts() != 2 || first.requests() != 1 || len(clock.slept()) != 0 {
				t.Errorf("meta %v, first saw %d, sleeps %v", m, first.requests(), clock.slept())
			}
			if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetUpstreamStatus() != int32(tc.status) || rr[0].GetProviderRequestId() != tc.f.wantReqID(1) || rr[0].GetDelay() != nil {
				t.Errorf("retry reasons %v", rr)
			}
		})
	}
}

// TestFault25RetryBudgetAcrossDeployments: a route whose every attempt
// fails, each differently: the first deployment a 503, a 200 whose
// connection is reset after its head (unary: inside the JSON; streamed:
// after the events before any content), a 529 asking for 2 s; the
// second, the last, a 503 asking for 30 s (waited: nothing after it), a
// 500, a 503 asking for 1.5 s by retry-after-ms. The status is the last
// attempt's (Unavailable, RetryInfo 1.5 s: the policy would retry it), and
// the meta counts all six attempts, each retry reason naming its
// deployment, its failure, the provider request id of its answer (the
// reset 200's too) and the delay waited after it: none after a
// deployment's last attempt.
func TestFault25RetryBudgetAcrossDeployments(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, stream := range []bool{false, true} {
			name := f.name + map[bool]string{false: "", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ct, part := "application/json", f.okBody[:20]
				if stream {
					ct, part = f.streamType, f.head
				}
				first := f13Serve(t, f.errStep(1, 503, nil), thenReset(merged(hdr("Content-Type", ct), f.reqIDHeader(2)), part), f.errStep(3, 529, hdr("Retry-After", "2")))
				second := f13Serve(t, f.errStep(11, 503, hdr("Retry-After", "30")), f.errStep(12, 500, nil), f.errStep(13, 503, hdr("Retry-After-Ms", "1500")))
				clock := &f13Clock{}
				c := f13StartRouted(t, f, 3, first, second, clock)
				var err error
				if stream {
					err = readStream13(t, c).err
				} else {
					_, err = c.Chat(context.Background(), chatReq13())
				}
				st := validDetails(t, err)
				if st.Code() != codes.Unavailable || retryInfo(st).GetRetryDelay().AsDuration() != 1500*time.Millisecond {
					t.Errorf("status %v %q, RetryInfo %v", st.Code(), st.Message(), retryInfo(st))
				}
				m := failedMeta(t, err)
				if m.GetAttempts() != 6 || m.GetProvider() != "second" || m.GetProviderRequestId() != f.wantReqID(13) ||
					!slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
					t.Errorf("meta %v", m)
				}
				type want struct {
					deployment, reason string
					id                 int
					waited             bool
				}
				wants := []want{{"first", "http_503", 1, true}, {"first", "unavailable", 2, true}, {"first", "http_529", 3, false},
					{"second", "http_503", 11, true}, {"second", "http_500", 12, true}, {"second", "http_503", 13, false}}
				rr := m.GetRetryReasons()
				if len(rr) != len(wants) {
					t.Fatalf("retry reasons %v", rr)
				}
				for i, w := range wants {
					r := rr[i]
					if r.GetAttempt() != int32(i+1) || r.GetDeployment() != w.deployment || r.GetReason() != w.reason ||
						r.GetProviderRequestId() != f.wantReqID(w.id) || (r.GetDelay() != nil) != w.waited {
						t.Errorf("retry reason %d = %v, want %+v", i, r, w)
					}
				}
				if d := rr[3].GetDelay().AsDuration(); d != 30*time.Second {
					t.Errorf("waited %v after the second deployment's 503, want its Retry-After", d)
				}
				if first.requests() != 3 || second.requests() != 3 {
					t.Errorf("first saw %d, second %d", first.requests(), second.requests())
				}
			})
		}
	}
}

// TestFault25EmbedBodyTooLargeSplits: an embeddings server behind an
// nginx whose client_max_body_size the call's body exceeds answers its
// 413 page (no JSON, no limit named): the same inputs in smaller bodies
// pass, and the gateway sends them so, halving until each body fits (a
// body of 12 inputs is 85 bytes, of 6 at most 55, the limit 60), on
// the same deployment (one vector space), in input order, with the
// warning naming the refusals; a single input over the limit is the
// call's refusal, InvalidArgument with the 413. It was the call's
// refusal whatever the inputs.
func TestFault25EmbedBodyTooLargeSplits(t *testing.T) {
	t.Parallel()
	inner := newEmbedUpstream(t, 1000, false, nil)
	proxy := func(limit int) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if len(body) > limit {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusRequestEntityTooLarge)
				_, _ = io.WriteString(w, nginx413)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			inner.serve(w, r)
		}))
		t.Cleanup(s.Close)
		return s
	}
	c, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), proxy(60).URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(12)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 12)
	if got := inner.requestSizes(); fmt.Sprint(got) != "[6 6]" {
		t.Errorf("requests of %v inputs", got)
	}
	if w := resp.GetMeta().GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "inputs 0 to 11 (Request Entity Too Large)") {
		t.Errorf("warnings %q", w)
	}

	alone, _ := startWith(t, embedYAML("openai", "openai-embeddings", ""), proxy(10).URL)
	_, err = alone.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(2)})
	st := validDetails(t, err)
	if st.Code() != codes.InvalidArgument || errorInfoOf(st).GetMetadata()["upstreamStatus"] != "413" {
		t.Errorf("status %v %q", st.Code(), st.Message())
	}
}

// TestFault25ContentFilterStopFallsBack: a unary answer the provider's
// content filter stopped (Azure's finish_reason content_filter after
// "The duel began at dawn. The first", 50 tokens: the adapter's
// testdata/azure_content_filter_finish.http) is the call's answer by
// default. With content_filter_fallback the route discards it for the
// next deployment's, as LiteLLM's content_policy_fallbacks do with such
// an answer: a failed attempt (content_filter, its provider request id),
// its 50 tokens added to the usage with a warning (billed all the same).
// The last deployment's filtered answer stands.
func TestFault25ContentFilterStopFallsBack(t *testing.T) {
	t.Parallel()
	f := azureFormat()
	rec := f20Recorded(t, "provider/openai/testdata/azure_content_filter_finish.http")
	const recID = "41a04bf7-3645-46e9-826a-0c719aa1d2cc"
	for _, tc := range []struct {
		name         string
		optIn        bool
		second       f13Step
		wantProvider string
	}{
		{"default", false, f.okStep(11), "first"},
		{"content_filter_fallback", true, f.okStep(11), "second"},
		{"content_filter_fallback, both filtered", true, rec, "second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, rec)
			second := f13Serve(t, tc.second)
			yaml := f13Routed(f, 3)
			if tc.optIn {
				yaml = strings.Replace(yaml, "{name: m,", "{name: m, content_filter_fallback: true,", 1)
			}
			c := f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), first.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			if m.GetProvider() != tc.wantProvider {
				t.Fatalf("answered by %q, meta %v", m.GetProvider(), m)
			}
			if !tc.optIn {
				if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER || m.GetAttempts() != 1 || second.requests() != 0 {
					t.Errorf("meta %v, second saw %d", m, second.requests())
				}
				return
			}
			rr := m.GetRetryReasons()
			if m.GetAttempts() != 2 || len(rr) != 1 || rr[0].GetDeployment() != "first" || rr[0].GetReason() != "content_filter" ||
				rr[0].GetProviderRequestId() != recID || !slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
				t.Errorf("meta %v", m)
			}
			wantTotal, wantFinish := int32(50+32), llmrelayv1.FinishReason_FINISH_REASON_STOP
			if strings.Contains(tc.name, "both") {
				wantTotal, wantFinish = 100, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
			}
			if m.GetUsage().GetTotalTokens() != wantTotal || m.GetFinishReason() != wantFinish {
				t.Errorf("usage %v, finish %v, want %d tokens and %v", m.GetUsage(), m.GetFinishReason(), wantTotal, wantFinish)
			}
			if !slices.ContainsFunc(m.GetWarnings(), func(w string) bool {
				return strings.Contains(w, "the answer of first was stopped by its content filter") && strings.Contains(w, "usage includes its 50 tokens")
			}) {
				t.Errorf("warnings %q", m.GetWarnings())
			}
		})
	}
}
