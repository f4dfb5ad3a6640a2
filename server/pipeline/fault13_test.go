package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// cutClock's Sleep ends the call's context (a deadline reached while
// backing off) and returns its error.
type cutClock struct {
	fakeClock
	cancel context.CancelFunc
}

func (c *cutClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	c.cancel()
	<-ctx.Done()
	return ctx.Err()
}

// TestRetryBackoffInterrupted: the call's context ends during the backoff
// after a 503: no further attempt, the failure is marked
// ErrBackoffInterrupted (the server reports the context's end with the
// 503's details), and the only retry reason has no delay (no attempt
// followed it).
func TestRetryBackoffInterrupted(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		clock := &cutClock{fakeClock: fakeClock{now: time.Unix(0, 0)}, cancel: cancel}
		ru, rs := Retry(RetryPolicy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}, clock)
		p := New([]Interceptor{ru}, []StreamInterceptor{rs})
		prov := &scripted{errs: []error{httpErr(503, 0), httpErr(503, 0)}}
		c := &Call{Op: OpGenerate, Provider: prov, Deployment: "d1", Request: &provider.Request{}}
		var err error
		if stream {
			_, err = p.Stream(ctx, c)
		} else {
			_, err = p.Unary(ctx, c)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.HTTPStatus != 503 || !errors.Is(err, ErrBackoffInterrupted) {
			t.Fatalf("stream %v: err = %v, want the 503 marked ErrBackoffInterrupted", stream, err)
		}
		if prov.calls != 1 || c.Record.Attempts != 1 || len(clock.sleeps) != 1 {
			t.Errorf("stream %v: provider calls %d, attempts %d, sleeps %v", stream, prov.calls, c.Record.Attempts, clock.sleeps)
		}
		if rr := c.Record.RetryReasons; len(rr) != 1 || rr[0].GetReason() != "http_503" || rr[0].GetDelay() != nil {
			t.Errorf("stream %v: retry reasons = %v, want the 503 without a delay", stream, rr)
		}
		cancel()
	}
}

// TestExhaustedReset: a 429 without Retry-After whose rate-limit state
// shows an exhausted limit waits for that limit's reset (the latest of
// several), and gives the client that delay as RetryInfo; a limit with
// requests left, a reset in the past or another failure says nothing.
func TestExhaustedReset(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(d)) }
	n := func(v int64) *int64 { return &v }
	cases := []struct {
		name   string
		status int
		rl     *llmrelayv1.RateLimit
		want   time.Duration
	}{
		{"requests exhausted", 429, &llmrelayv1.RateLimit{RequestsRemaining: n(0), RequestsResetTime: at(20 * time.Second)}, 20 * time.Second},
		{"both exhausted: the later", 429, &llmrelayv1.RateLimit{RequestsRemaining: n(0), RequestsResetTime: at(20 * time.Second),
			TokensRemaining: n(0), TokensResetTime: at(25 * time.Second)}, 25 * time.Second},
		{"tokens exhausted, requests left", 429, &llmrelayv1.RateLimit{RequestsRemaining: n(5), RequestsResetTime: at(time.Minute),
			TokensRemaining: n(0), TokensResetTime: at(3 * time.Second)}, 3 * time.Second},
		{"nothing exhausted", 429, &llmrelayv1.RateLimit{RequestsRemaining: n(5), RequestsResetTime: at(time.Minute)}, 0},
		{"remaining unknown", 429, &llmrelayv1.RateLimit{RequestsResetTime: at(time.Minute)}, 0},
		{"reset passed", 429, &llmrelayv1.RateLimit{RequestsRemaining: n(0), RequestsResetTime: at(-time.Second)}, 0},
		{"no rate limit", 429, nil, 0},
		{"not a rate limit", 503, &llmrelayv1.RateLimit{RequestsRemaining: n(0), RequestsResetTime: at(20 * time.Second)}, 0},
	}
	for _, tc := range cases {
		pe := httpErr(tc.status, 0).(*provider.Error)
		if tc.rl != nil {
			pe.Meta = &llmrelayv1.ResponseMeta{RateLimit: tc.rl}
		}
		if got := exhaustedReset(pe, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Through the retry interceptor: waited out, and kept on the error for
	// RetryInfo when the attempts are used up.
	clock := &fakeClock{now: now}
	limited := func(reset time.Duration) error {
		pe := httpErr(429, 0).(*provider.Error)
		pe.Meta = &llmrelayv1.ResponseMeta{RateLimit: &llmrelayv1.RateLimit{RequestsRemaining: n(0), RequestsResetTime: at(reset)}}
		return pe
	}
	// The second 429 comes after the 4s wait, its limit resetting 5s later.
	prov := &scripted{errs: []error{limited(4 * time.Second), limited(9 * time.Second)}}
	c := &Call{Op: OpGenerate, Provider: prov, Deployment: "d1", Request: &provider.Request{}}
	_, err := newTestPipeline(clock, 2).Unary(context.Background(), c)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.RetryAfter != 5*time.Second || len(clock.sleeps) != 1 || clock.sleeps[0] != 4*time.Second {
		t.Errorf("err %v (retry after %v), sleeps %v", err, pe.RetryAfter, clock.sleeps)
	}
}

// TestRateLimitFallsBackAtOnce: with another deployment after this one, a
// rate limit is not retried here, whatever delay it asks for; without
// one, it is.
func TestRateLimitFallsBackAtOnce(t *testing.T) {
	t.Parallel()
	for _, canFallBack := range []bool{true, false} {
		clock := &fakeClock{now: time.Unix(0, 0)}
		prov := &scripted{errs: []error{httpErr(429, time.Second)}}
		c := &Call{Op: OpGenerate, Provider: prov, Deployment: "d1", Request: &provider.Request{}, CanFallBack: canFallBack}
		_, err := newTestPipeline(clock, 3).Unary(context.Background(), c)
		if canFallBack && (err == nil || prov.calls != 1 || len(clock.sleeps) != 0 || c.Record.RetryReasons[0].GetDelay() != nil) {
			t.Errorf("with a fallback: err %v, calls %d, sleeps %v", err, prov.calls, clock.sleeps)
		}
		if !canFallBack && (err != nil || prov.calls != 2 || len(clock.sleeps) != 1) {
			t.Errorf("without a fallback: err %v, calls %d, sleeps %v", err, prov.calls, clock.sleeps)
		}
	}
}
