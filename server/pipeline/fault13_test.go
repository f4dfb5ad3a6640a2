package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

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
