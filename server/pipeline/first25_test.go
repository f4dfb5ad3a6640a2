package pipeline

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
)

// ctxStream records the context it was opened with and plays events.
type ctxStream struct {
	ctxs   []context.Context
	events [][]*provider.Event
	errs   []error
}

func (c *ctxStream) Generate(context.Context, *provider.Request) (*provider.Result, error) {
	return nil, errors.New("unused")
}

func (c *ctxStream) Stream(ctx context.Context, _ *provider.Request) (provider.Stream, error) {
	n := len(c.ctxs)
	c.ctxs = append(c.ctxs, ctx)
	return &listStream{events: c.events[min(n, len(c.events)-1)], errAt: c.errs[min(n, len(c.errs)-1)]}, nil
}

// newFirstContentPipeline is newTestPipeline's with the attempts' first
// content reported (RetryPolicy.FirstContent).
func newFirstContentPipeline(attempts int) *Pipeline {
	ru, rs := Retry(RetryPolicy{MaxAttempts: attempts, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, MaxRetryAfter: time.Minute, FirstContent: true},
		&fakeClock{now: time.Unix(0, 0)})
	return New([]Interceptor{ru}, []StreamInterceptor{rs})
}

// TestFirstContentReported: each stream attempt's context carries its own
// first-content report, which the read-ahead sets at the first content
// event, not at meta, usage or a reasoning block's bare announcement (the
// Responses API's reasoning item added, its id alone); a failure after
// the announcement is still before the answer, and retried.
func TestFirstContentReported(t *testing.T) {
	t.Parallel()
	announce := &provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{ID: "rs_1"}}
	cut := provider.StreamCut("fake", "cut")
	p := &ctxStream{
		events: [][]*provider.Event{
			{{Kind: provider.EventMeta}, announce},
			{{Kind: provider.EventMeta}, announce, {Kind: provider.EventText, Text: "hi"}},
		},
		errs: []error{cut, nil},
	}
	c := &Call{Provider: p, Request: &provider.Request{}}
	s, err := newFirstContentPipeline(3).Stream(context.Background(), c)
	if err != nil {
		t.Fatalf("the cut after the announcement was not retried: %v", err)
	}
	if len(p.ctxs) != 2 || c.Record.Attempts != 2 {
		t.Fatalf("%d attempts, record %d", len(p.ctxs), c.Record.Attempts)
	}
	if _, err := newTestPipeline(&fakeClock{now: time.Unix(0, 0)}, 1).Stream(context.Background(), &Call{Provider: p, Request: &provider.Request{}}); err != nil ||
		firstContentOf(p.ctxs[2]) != nil {
		t.Errorf("without FirstContent an attempt's context carries a report (%v)", err)
	}
	first, second := firstContentOf(p.ctxs[0]), firstContentOf(p.ctxs[1])
	if first == nil || second == nil || first == second {
		t.Fatalf("reports %p %p: one per attempt", first, second)
	}
	if first.seen.Load() || !second.seen.Load() {
		t.Errorf("seen: first attempt %v (an announcement only), second %v (text)", first.seen.Load(), second.seen.Load())
	}
	var kinds []provider.EventKind
	for {
		ev, err := s.Recv()
		if err != nil {
			break
		}
		kinds = append(kinds, ev.Kind)
	}
	if len(kinds) != 3 || kinds[1] != provider.EventReasoning || kinds[2] != provider.EventText {
		t.Errorf("relayed %v: the announcement goes on with what follows", kinds)
	}
}

// TestFirstContentAfterReadAhead: a stream whose first content comes past
// the read-ahead's bound reports it when the relay reads it.
func TestFirstContentAfterReadAhead(t *testing.T) {
	t.Parallel()
	var evs []*provider.Event
	for range maxReadAhead + 2 {
		evs = append(evs, &provider.Event{Kind: provider.EventMeta})
	}
	evs = append(evs, &provider.Event{Kind: provider.EventText, Text: "late"})
	p := &ctxStream{events: [][]*provider.Event{evs}, errs: []error{nil}}
	s, err := newFirstContentPipeline(1).Stream(context.Background(), &Call{Provider: p, Request: &provider.Request{}})
	if err != nil {
		t.Fatal(err)
	}
	fc := firstContentOf(p.ctxs[0])
	for i := 0; ; i++ {
		if fc.seen.Load() != (i > maxReadAhead+2) {
			t.Fatalf("after %d events seen = %v", i, fc.seen.Load())
		}
		if _, err := s.Recv(); err != nil {
			break
		}
	}
}

// blockingBody returns its pieces one per Read, then blocks until closed.
type blockingBody struct {
	pieces []string
	closed chan struct{}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if len(b.pieces) > 0 {
		n := copy(p, b.pieces[0])
		b.pieces = b.pieces[1:]
		return n, nil
	}
	<-b.closed
	return 0, errors.New("closed")
}

func (b *blockingBody) Close() error {
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	return nil
}

// TestWatchedBodyFirstTokenBound: a stream attempt's body arms
// stream_first_token_timeout for every read until the first content is
// reported (bytes before it, keep-alives included, re-arm the same bound),
// idle_timeout after; a read that the first bound ends names
// stream_first_token_timeout, one the idle bound ends idle_timeout. A body
// with no report (a unary call) has idle_timeout throughout.
func TestWatchedBodyFirstTokenBound(t *testing.T) {
	t.Parallel()
	const idle, first = time.Hour, 2 * time.Hour
	fc := &firstContent{}
	w := newWatchedBody(&blockingBody{pieces: []string{": keep-alive\n\n", "data: x\n\n", "data: y\n\n"}, closed: make(chan struct{})}, idle, nil)
	w.first, w.fc = first, fc
	buf := make([]byte, 64)
	for i, want := range []time.Duration{first, first, idle} {
		if i == 2 {
			fc.markContent(&provider.Event{Kind: provider.EventText, Text: "x"})
		}
		if _, err := w.Read(buf); err != nil {
			t.Fatal(err)
		}
		if w.armed != want || w.armedFirst != (want == first) {
			t.Errorf("read %d armed %v (first %v), want %v", i, w.armed, w.armedFirst, want)
		}
	}
	_ = w.Close()

	// The bound running out: the timer's own callback, run at once.
	for _, tc := range []struct {
		seen bool
		want string
	}{{false, "stream_first_token_timeout (2h0m0s) before the stream's first content"}, {true, "idle_timeout (1h0m0s)"}} {
		fc := &firstContent{}
		fc.seen.Store(tc.seen)
		body := &blockingBody{closed: make(chan struct{})}
		w := newWatchedBody(body, idle, nil)
		w.first, w.fc = first, fc
		done := make(chan error, 1)
		go func() { _, err := w.Read(buf); done <- err }()
		for !w.timer.Stop() { // wait until the read has armed it
			time.Sleep(time.Millisecond)
		}
		w.timedOut.Store(true)
		_ = body.Close()
		err := <-done
		var tt *TransportTimeout
		if !errors.As(err, &tt) || !errors.Is(err, ErrIdleTimeout) || !strings.Contains(tt.Error(), tc.want) {
			t.Errorf("seen %v: err %v, want %q", tc.seen, err, tc.want)
		}
	}

	u := newWatchedBody(io.NopCloser(strings.NewReader("data")), idle, nil)
	if _, err := u.Read(buf); err != nil || u.armed != idle || u.armedFirst {
		t.Errorf("unary body armed %v (first %v), err %v", u.armed, u.armedFirst, err)
	}
}

// TestRetryAfterBeyondBackoffFallsBack: with a next deployment, a failure
// whose provider asks for a wait longer than the policy's longest backoff
// (max_delay: a 503 or 529 with a Retry-After of 30 s) is not waited out
// here: the route moves on at once. A shorter delay is waited and the
// deployment tried again; without a next deployment the long one is
// waited too (up to max_retry_after).
func TestRetryAfterBeyondBackoffFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		err         error
		canFallBack bool
		calls       int
		sleeps      []time.Duration
	}{
		{"503 Retry-After 30s, a next deployment", httpErr(503, 30*time.Second), true, 1, nil},
		{"529 Retry-After 30s, a next deployment", httpErr(529, 30*time.Second), true, 1, nil},
		{"503 Retry-After 500ms, a next deployment", httpErr(503, 500*time.Millisecond), true, 2, []time.Duration{500 * time.Millisecond}},
		{"503 Retry-After 30s, the last deployment", httpErr(503, 30*time.Second), false, 2, []time.Duration{30 * time.Second}},
	} {
		clock := &fakeClock{now: time.Unix(0, 0)}
		p := &scripted{errs: []error{tc.err}}
		_, err := newTestPipeline(clock, 3).Unary(context.Background(), &Call{Op: OpGenerate, Provider: p, Request: &provider.Request{}, CanFallBack: tc.canFallBack})
		if p.calls != tc.calls || len(clock.sleeps) != len(tc.sleeps) || (len(tc.sleeps) > 0 && clock.sleeps[0] != tc.sleeps[0]) {
			t.Errorf("%s: %d calls, sleeps %v (err %v), want %d and %v", tc.name, p.calls, clock.sleeps, err, tc.calls, tc.sleeps)
		}
		if (tc.calls == 1) != (err != nil) {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}
}
