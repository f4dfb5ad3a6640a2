package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// fakeClock advances only when slept on, and records the sleeps.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// scripted fails with the given errors, then succeeds.
type scripted struct {
	errs  []error
	calls int
}

func (s *scripted) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	s.calls++
	if s.calls <= len(s.errs) {
		return nil, s.errs[s.calls-1]
	}
	return &provider.Result{Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}}, nil
}

func (s *scripted) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	s.calls++
	if s.calls <= len(s.errs) {
		return nil, s.errs[s.calls-1]
	}
	return &listStream{events: []*provider.Event{{Kind: provider.EventText, Text: "hi"}}}, nil
}

type listStream struct {
	events []*provider.Event
	errAt  error
}

func (l *listStream) Recv() (*provider.Event, error) {
	if len(l.events) == 0 {
		if l.errAt != nil {
			return nil, l.errAt
		}
		return nil, io.EOF
	}
	ev := l.events[0]
	l.events = l.events[1:]
	return ev, nil
}

func (l *listStream) Close() error { return nil }

func httpErr(status int, retryAfter time.Duration) error {
	return &provider.Error{Provider: "fake", Kind: provider.KindForStatus(status), HTTPStatus: status, Message: http.StatusText(status), RetryAfter: retryAfter}
}

func newTestPipeline(clock *fakeClock, attempts int) *Pipeline {
	ru, rs := Retry(RetryPolicy{MaxAttempts: attempts, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, MaxRetryAfter: time.Minute}, clock)
	tu, ts := Timing(clock.Now)
	return New([]Interceptor{ru, tu}, []StreamInterceptor{rs, ts})
}

func TestRetryUnary(t *testing.T) {
	t.Parallel()
	connReset := &provider.Error{Provider: "fake", Kind: provider.KindConnection, Message: "connection reset by peer"}
	cases := []struct {
		name     string
		errs     []error
		deadline time.Duration
		wantErr  bool
		attempts int32
		reasons  []string
		sleeps   []time.Duration // exact where the provider gave a delay; -1 = jittered
	}{
		{"500 then 200", []error{httpErr(500, 0)}, 0, false, 2, []string{"http_500"}, []time.Duration{-1}},
		{"succeeds on third attempt", []error{httpErr(503, 0), connReset}, 0, false, 3, []string{"http_503", "connection_error"}, []time.Duration{-1, -1}},
		{"429 honours retry-after", []error{httpErr(429, time.Second)}, 0, false, 2, []string{"http_429"}, []time.Duration{time.Second}},
		{"503 three times gives up", []error{httpErr(503, 0), httpErr(503, 0), httpErr(503, 0)}, 0, true, 3, []string{"http_503", "http_503", "http_503"}, []time.Duration{-1, -1}},
		{"400 never retried", []error{httpErr(400, 0)}, 0, true, 1, []string{"http_400"}, nil},
		{"401 never retried", []error{httpErr(401, 0)}, 0, true, 1, []string{"http_401"}, nil},
		{"529 overloaded retried", []error{httpErr(529, 0)}, 0, false, 2, []string{"http_529"}, []time.Duration{-1}},
		{"quota exhausted not retried", []error{&provider.Error{Kind: provider.KindRateLimited, HTTPStatus: 429, Code: "insufficient_quota"}}, 0, true, 1, []string{"http_429"}, nil},
		{"retry-after beyond deadline fails fast", []error{httpErr(429, 30*time.Second)}, 5 * time.Second, true, 1, []string{"http_429"}, nil},
		{"retry-after beyond max_retry_after fails fast", []error{httpErr(429, time.Hour)}, 0, true, 1, []string{"http_429"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := &fakeClock{now: time.Now()}
			prov := &scripted{errs: tc.errs}
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, clock.now.Add(tc.deadline))
				defer cancel()
			}
			c := &Call{Op: OpGenerate, Provider: prov, Deployment: "d1", Request: &provider.Request{}}
			_, err := newTestPipeline(clock, 3).Unary(ctx, c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if c.Record.Attempts != tc.attempts || prov.calls != int(tc.attempts) {
				t.Errorf("attempts = %d (provider saw %d), want %d", c.Record.Attempts, prov.calls, tc.attempts)
			}
			if len(c.Record.RetryReasons) != len(tc.reasons) {
				t.Fatalf("reasons = %v, want %v", c.Record.RetryReasons, tc.reasons)
			}
			for i, r := range c.Record.RetryReasons {
				if r.GetReason() != tc.reasons[i] || r.GetAttempt() != int32(i+1) || r.GetDeployment() != "d1" || r.GetDuration() == nil {
					t.Errorf("reason %d = %v, want %s", i, r, tc.reasons[i])
				}
			}
			if len(clock.sleeps) != len(tc.sleeps) {
				t.Fatalf("sleeps = %v, want %v", clock.sleeps, tc.sleeps)
			}
			for i, want := range tc.sleeps {
				got := clock.sleeps[i]
				if want >= 0 && got != want {
					t.Errorf("sleep %d = %v, want %v", i, got, want)
				}
				if want < 0 && (got < 0 || got >= 100*time.Millisecond<<i) {
					t.Errorf("sleep %d = %v outside the full-jitter window [0, %v)", i, got, 100*time.Millisecond<<i)
				}
				if d := c.Record.RetryReasons[i].GetDelay().AsDuration(); d != got {
					t.Errorf("recorded delay %v, slept %v", d, got)
				}
			}
			if tc.name == "retry-after beyond deadline fails fast" {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.RetryAfter != 30*time.Second || !errors.Is(err, ErrRetryAfterBeyondDeadline) {
					t.Errorf("err = %v, want the provider error with its delay, marked beyond deadline", err)
				}
			}
			if tc.name == "retry-after beyond max_retry_after fails fast" {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.RetryAfter != time.Hour || !errors.Is(err, ErrRetryAfterTooLong) {
					t.Errorf("err = %v, want the provider error with its delay, marked too long", err)
				}
			}
		})
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Unix(0, 0)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &Call{Op: OpGenerate, Provider: &scripted{errs: []error{httpErr(503, 0), httpErr(503, 0)}}, Request: &provider.Request{}}
	if _, err := newTestPipeline(clock, 3).Unary(ctx, c); err == nil {
		t.Fatal("want an error")
	}
	if c.Record.Attempts != 1 {
		t.Errorf("attempts = %d after cancel, want 1", c.Record.Attempts)
	}
}

func TestRetryStreamOnlyBeforeFirstEvent(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Unix(0, 0)}
	// Opening fails once, then succeeds.
	prov := &scripted{errs: []error{httpErr(502, 0)}}
	c := &Call{Provider: prov, Request: &provider.Request{}}
	s, err := newTestPipeline(clock, 3).Stream(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s.Recv()
	if err != nil || ev.Text != "hi" {
		t.Fatalf("first event = %v, %v", ev, err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
	if c.Record.Attempts != 2 || len(c.Record.RetryReasons) != 1 {
		t.Errorf("attempts %d reasons %v", c.Record.Attempts, c.Record.RetryReasons)
	}

	// An error after the first event is never retried.
	mid := &midStream{}
	c = &Call{Provider: mid, Request: &provider.Request{}}
	s, err = newTestPipeline(clock, 3).Stream(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err == nil {
		t.Fatal("want the mid-stream error")
	}
	if mid.opens != 1 || c.Record.Attempts != 1 {
		t.Errorf("mid-stream error retried: opens %d attempts %d", mid.opens, c.Record.Attempts)
	}
}

// midStream sends one event and then fails with a retryable error.
type midStream struct{ opens int }

func (m *midStream) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, errors.New("unused")
}

func (m *midStream) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	m.opens++
	return &listStream{events: []*provider.Event{{Kind: provider.EventText, Text: "a"}}, errAt: httpErr(503, 0)}, nil
}

func TestRetryStreamErrorAsFirstEvent(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Unix(0, 0)}
	first := &firstFails{}
	c := &Call{Provider: first, Request: &provider.Request{}}
	s, err := newTestPipeline(clock, 3).Stream(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Recv(); err != nil || ev.Meta.GetResponseId() != "msg_2" {
		t.Fatalf("got %v %v", ev, err)
	}
	if ev, err := s.Recv(); err != nil || ev.Text != "ok" {
		t.Fatalf("got %v %v", ev, err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
	if first.opens != 2 {
		t.Errorf("opens = %d, want 2 (the overloaded first event is retryable)", first.opens)
	}
}

type firstFails struct{ opens int }

func (f *firstFails) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, errors.New("unused")
}

func (f *firstFails) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	f.opens++
	if f.opens == 1 {
		// message_start (meta and usage), then overloaded before any content.
		return &listStream{events: []*provider.Event{
			{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{ResponseId: "msg_1"}},
			{Kind: provider.EventUsage, Usage: &llmrelayv1.Usage{InputTokens: 3}},
		}, errAt: &provider.Error{Kind: provider.KindUnavailable, Code: "overloaded_error", Message: "Overloaded"}}, nil
	}
	return &listStream{events: []*provider.Event{{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{ResponseId: "msg_2"}}, {Kind: provider.EventText, Text: "ok"}}}, nil
}

func TestRetryAfterHeader(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"1"}}, time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
		// Beyond a Duration: the longest one, not a wrapped negative
		// value that read as no delay (jittered retries in milliseconds
		// and no RetryInfo); NaN is no delay.
		{http.Header{"Retry-After": {"99999999999"}}, time.Duration(math.MaxInt64)},
		{http.Header{"Retry-After": {"Inf"}}, time.Duration(math.MaxInt64)},
		{http.Header{"Retry-After": {"NaN"}}, 0},
		{http.Header{"Retry-After-Ms": {"1e30"}}, time.Duration(math.MaxInt64)},
		{http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"2"}}, 2 * time.Second},
	}
	for _, tc := range cases {
		if got := provider.RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	pe := func(status int, kind provider.Kind, code string) error {
		return &provider.Error{Provider: "p", HTTPStatus: status, Kind: kind, Code: code, Message: "m"}
	}
	advised := func(err error, a provider.RetryAdvice) error {
		err.(*provider.Error).ShouldRetry = a
		return err
	}
	for _, c := range []struct {
		name   string
		err    error
		want   bool
		reason string
	}{
		{"503", pe(503, provider.KindUnavailable, ""), true, "http_503"},
		{"429", pe(429, provider.KindRateLimited, "rate_limit_exceeded"), true, "http_429"},
		{"429 quota", pe(429, provider.KindRateLimited, "insufficient_quota"), false, "http_429"},
		{"400", pe(400, provider.KindInvalidRequest, ""), false, "http_400"},
		{"connection", pe(0, provider.KindConnection, ""), true, "connection_error"},
		{"stream event overloaded", pe(0, provider.KindUnavailable, ""), true, "unavailable"},
		// Errors inside a 200 answer (OpenAI error events, Ollama): by kind.
		{"in-body server_error", pe(200, provider.KindUnavailable, "server_error"), true, "unavailable"},
		{"in-body rate limit", pe(200, provider.KindRateLimited, "rate_limit_exceeded"), true, "rate_limited"},
		{"in-body quota", pe(200, provider.KindRateLimited, "insufficient_quota"), false, "rate_limited"},
		{"in-body invalid", pe(200, provider.KindInvalidRequest, ""), false, "invalid_request"},
		{"our deadline", fmt.Errorf("%w: %w", pe(0, provider.KindTimeout, ""), context.DeadlineExceeded), false, "timeout"},
		{"not a provider error", errors.New("x"), false, "error"},
		// A stream cut before its final event is transient; output that
		// does not parse is not.
		{"stream cut", provider.StreamCut("p", "stream ended before [DONE]"), true, "stream_cut"},
		{"unparseable", provider.BadResponse("p", "invalid chunk"), false, "bad_response"},
		// The statuses the official SDKs retry: 408, 409, 429, 5xx, but
		// not the 5xx that answer every attempt the same.
		{"409 lock timeout", pe(409, provider.KindInvalidRequest, ""), true, "http_409"},
		{"520 proxy", pe(520, provider.KindUnavailable, ""), true, "http_520"},
		{"501", pe(501, provider.KindUnavailable, ""), false, "http_501"},
		{"505", pe(505, provider.KindUnavailable, ""), false, "http_505"},
		// x-should-retry overrides the status, as in those SDKs.
		{"503 should-retry false", advised(pe(503, provider.KindUnavailable, ""), provider.RetryDiscouraged), false, "http_503"},
		{"400 should-retry true", advised(pe(400, provider.KindInvalidRequest, ""), provider.RetryAdvised), true, "http_400"},
		{"429 quota should-retry true", advised(pe(429, provider.KindRateLimited, "insufficient_quota"), provider.RetryAdvised), true, "http_429"},
		{"429 should-retry false", advised(pe(429, provider.KindRateLimited, "rate_limit_exceeded"), provider.RetryDiscouraged), false, "http_429"},
		// The adapter's verdict from the body holds inside a 2xx too
		// (OpenAI's request too large in a stream's response.failed);
		// a 200's own header does not advise retrying its error event.
		{"stream event discouraged", advised(pe(200, provider.KindRateLimited, "rate_limit_exceeded"), provider.RetryDiscouraged), false, "rate_limited"},
		{"stream event advised", advised(pe(200, provider.KindInvalidRequest, "invalid_request_error"), provider.RetryAdvised), false, "invalid_request"},
	} {
		if got := Retryable(c.err); got != c.want {
			t.Errorf("%s: Retryable = %v, want %v", c.name, got, c.want)
		}
		if reason, _, _ := ReasonFor(c.err); reason != c.reason {
			t.Errorf("%s: reason %q, want %q", c.name, reason, c.reason)
		}
	}
}

// tickingStreams opens streams whose reads take time on the fake clock: the
// first fails at its first read (after 3 s), the next ones send a text
// after 2 s and end.
type tickingStreams struct {
	clock *fakeClock
	n     int
}

func (p *tickingStreams) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, errors.New("unused")
}

func (p *tickingStreams) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	p.n++
	if p.n == 1 {
		return &tickingStream{clock: p.clock, d: 3 * time.Second, err: httpErr(502, 0)}, nil
	}
	return &tickingStream{clock: p.clock, d: 2 * time.Second, events: []*provider.Event{{Kind: provider.EventText, Text: "hi"}}}, nil
}

type tickingStream struct {
	clock  *fakeClock
	d      time.Duration
	events []*provider.Event
	err    error
}

func (s *tickingStream) Recv() (*provider.Event, error) {
	s.clock.now = s.clock.now.Add(s.d)
	s.d = 0
	if s.err != nil {
		return nil, s.err
	}
	if len(s.events) == 0 {
		return nil, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *tickingStream) Close() error { return nil }

// TestStreamTimingCountsEveryAttempt: request_duration of a stream covers
// the attempt that failed during the read-ahead as well as the one read to
// its end, and not the backoff between them.
func TestStreamTimingCountsEveryAttempt(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Unix(0, 0)}
	c := &Call{Provider: &tickingStreams{clock: clock}, Request: &provider.Request{}}
	s, err := newTestPipeline(clock, 3).Stream(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	backoff := clock.sleeps[0]
	if c.Record.Attempts != 2 || c.Record.RequestDuration != 5*time.Second {
		t.Errorf("attempts %d, request duration %v (backoff %v), want 2 and 5s", c.Record.Attempts, c.Record.RequestDuration, backoff)
	}
}

// TestStreamFailureKeepsReportedMeta: what a stream reported before failing
// ahead of its first content event (meta, usage) travels on the error, under
// what the error itself reports.
func TestStreamFailureKeepsReportedMeta(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Unix(0, 0)}
	fail := &provider.Error{Kind: provider.KindUnavailable, Message: "failed",
		Meta: &llmrelayv1.ResponseMeta{ResolvedModel: "model-from-error", Usage: &llmrelayv1.Usage{InputTokens: 7, TotalTokens: 7}}}
	c := &Call{Provider: &oneStream{s: &listStream{events: []*provider.Event{
		{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{ResponseId: "resp_1", ResolvedModel: "model-from-event",
			RateLimit: &llmrelayv1.RateLimit{RequestsRemaining: ptr(int64(5))}}},
		{Kind: provider.EventUsage, Usage: &llmrelayv1.Usage{InputTokens: 3, CachedInputTokens: 2}},
	}, errAt: fail}}, Request: &provider.Request{}}
	_, err := newTestPipeline(clock, 1).Stream(context.Background(), c)
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	m := pe.Meta
	if m.GetResponseId() != "resp_1" || m.GetResolvedModel() != "model-from-error" || m.GetRateLimit().GetRequestsRemaining() != 5 ||
		m.GetUsage().GetInputTokens() != 7 || m.GetUsage().GetCachedInputTokens() != 0 {
		t.Errorf("error meta = %v", m)
	}
}

type oneStream struct{ s provider.Stream }

func (o *oneStream) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, errors.New("unused")
}

func (o *oneStream) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return o.s, nil
}

func ptr[T any](v T) *T { return &v }

// TestFallbackWorthy: a deployment gives way to the next for what retrying
// could fix and for what is its own fault (quota, key, model, a 5xx it
// said not to retry), never for the request's fault or the caller's end.
func TestFallbackWorthy(t *testing.T) {
	t.Parallel()
	pe := func(status int, kind provider.Kind, code string, advice provider.RetryAdvice) error {
		return &provider.Error{Provider: "p", HTTPStatus: status, Kind: kind, Code: code, Message: "m", ShouldRetry: advice}
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"503", pe(503, provider.KindUnavailable, "", provider.RetryUnsaid), true},
		{"503 should-retry false", pe(503, provider.KindUnavailable, "", provider.RetryDiscouraged), true},
		{"429 quota", pe(429, provider.KindRateLimited, "insufficient_quota", provider.RetryUnsaid), true},
		{"429 should-retry false", pe(429, provider.KindRateLimited, "rate_limit_exceeded", provider.RetryDiscouraged), true},
		{"in-body quota", pe(200, provider.KindRateLimited, "insufficient_quota", provider.RetryUnsaid), true},
		{"402 credits", pe(402, provider.KindInvalidRequest, "", provider.RetryUnsaid), true},
		{"401", pe(401, provider.KindUnauthenticated, "", provider.RetryDiscouraged), true},
		{"403", pe(403, provider.KindPermissionDenied, "", provider.RetryDiscouraged), true},
		{"404 model", pe(404, provider.KindNotFound, "", provider.RetryDiscouraged), true},
		{"400 bad key (Gemini API_KEY_INVALID)", pe(400, provider.KindUnauthenticated, "API_KEY_INVALID", provider.RetryUnsaid), true},
		{"400", pe(400, provider.KindInvalidRequest, "", provider.RetryDiscouraged), false},
		// A request too large for the deployment (round 25): its limit,
		// not the request's fault alone; another deployment may take it.
		{"413 (a proxy's page)", pe(413, provider.KindInvalidRequest, "", provider.RetryUnsaid), true},
		{"413 Anthropic request_too_large, x-should-retry false", pe(413, provider.KindInvalidRequest, "request_too_large", provider.RetryDiscouraged), true},
		{"in-stream request_too_large", pe(0, provider.KindInvalidRequest, "request_too_large", provider.RetryUnsaid), true},
		{"in-band 413", pe(200, provider.KindInvalidRequest, "413", provider.RetryUnsaid), true},
		{"400 Gemini payload limit", &provider.Error{HTTPStatus: 400, Kind: provider.KindInvalidRequest, Code: "INVALID_ARGUMENT", Message: "Request payload size exceeds the limit: 20971520 bytes."}, true},
		{"400 context length", pe(400, provider.KindContextLength, "context_length_exceeded", provider.RetryUnsaid), true},
		{"500 context length (an old Ollama)", pe(500, provider.KindContextLength, "", provider.RetryDiscouraged), true},
		{"in-stream context length", pe(200, provider.KindContextLength, "context_length_exceeded", provider.RetryUnsaid), true},
		// The deployment's model (round 24): an operation it does not do,
		// dimensions it cannot give.
		{"400 Azure OperationNotSupported", pe(400, provider.KindUnsupported, "OperationNotSupported", provider.RetryUnsaid), true},
		{"no embeddings API", pe(0, provider.KindUnsupported, "", provider.RetryUnsaid), true},
		{"400 dimensions refused", &provider.Error{HTTPStatus: 400, Kind: provider.KindInvalidRequest, Param: "dimensions", Message: "This model does not support specifying dimensions."}, true},
		{"dimensions refused before sending (ada-002)", &provider.Error{Kind: provider.KindInvalidRequest, Param: "dimensions", Message: "text-embedding-ada-002 does not take dimensions"}, true},
		{"400 another field", &provider.Error{HTTPStatus: 400, Kind: provider.KindInvalidRequest, Param: "input", Message: "m"}, false},
		{"501", pe(501, provider.KindUnavailable, "", provider.RetryUnsaid), false},
		{"in-body invalid", pe(200, provider.KindInvalidRequest, "", provider.RetryUnsaid), false},
		{"our deadline", fmt.Errorf("%w: %w", pe(0, provider.KindTimeout, "", provider.RetryUnsaid), context.DeadlineExceeded), false},
		{"canceled", pe(0, provider.KindCanceled, "", provider.RetryUnsaid), false},
		{"unparseable", provider.BadResponse("p", "invalid chunk"), false},
		{"not a provider error", errors.New("x"), false},
	} {
		if got := FallbackWorthy(c.err); got != c.want {
			t.Errorf("%s: FallbackWorthy = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReasonForAnsweredStatus: upstream_status is the HTTP status that was
// received ("0 when none was received", the proto's words): an error
// answer's own; the 2xx of an answer whose body carried the failure
// (output that does not parse, an error event or object in it, whether
// the adapter records the 200 or marks InAnswer, a cut); 0 for a failure
// before any head. Round 17 reported 0 for bad responses and in-band
// errors.
func TestReasonForAnsweredStatus(t *testing.T) {
	t.Parallel()
	inAnswer := &provider.Error{Provider: "anthropic", Kind: provider.KindUnavailable, Code: "overloaded_error", InAnswer: true}
	created := &provider.Error{Provider: "openai", Kind: provider.KindBadResponse, HTTPStatus: 201, Message: "x"}
	for _, c := range []struct {
		name   string
		err    error
		reason string
		status int32
	}{
		{"unparseable", provider.BadResponse("p", "invalid chunk"), "bad_response", 200},
		{"unparseable in a 201", created, "bad_response", 201},
		{"in-band, status recorded", &provider.Error{Provider: "openai", Kind: provider.KindRateLimited, HTTPStatus: 200, Code: "rate_limit_exceeded"}, "rate_limited", 200},
		{"in-band, marked", inAnswer, "unavailable", 200},
		{"stream cut", provider.StreamCut("p", "stream ended before [DONE]"), "stream_cut", 200},
		{"error answer", &provider.Error{Provider: "p", Kind: provider.KindUnavailable, HTTPStatus: 503}, "http_503", 503},
		{"connection refused", provider.TransportError("p", errors.New("dial tcp: connection refused")), "connection_error", 0},
		{"canceled", provider.TransportError("p", context.Canceled), "canceled", 0},
	} {
		reason, status, _ := ReasonFor(c.err)
		if reason != c.reason || status != c.status {
			t.Errorf("%s: reason %q status %d, want %q %d", c.name, reason, status, c.reason, c.status)
		}
	}
}
