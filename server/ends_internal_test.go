package server

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestCallSetEnds: end cancels every call still registered with its
// cause, and calls registered afterwards at once; a removed call is left
// alone.
func TestCallSetEnds(t *testing.T) {
	t.Parallel()
	var set callSet
	cause := errors.New("over")
	type call struct {
		ctx    context.Context
		cancel context.CancelCauseFunc
		slot   callSlot
	}
	var calls []call
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			ctx, cancel := context.WithCancelCause(context.Background())
			slot := set.add(cancel)
			mu.Lock()
			calls = append(calls, call{ctx, cancel, slot})
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, c := range calls[:10] {
		release(c.cancel, c.slot)
	}
	set.end(cause)
	for i, c := range calls {
		got := context.Cause(c.ctx)
		if i < 10 && got != context.Canceled {
			t.Errorf("released call %d: cause %v", i, got)
		}
		if i >= 10 && got != cause {
			t.Errorf("call %d: cause %v, want the end's", i, got)
		}
	}
	for range len(set.shards) + 1 {
		ctx, cancel := context.WithCancelCause(context.Background())
		set.add(cancel).remove()
		if context.Cause(ctx) != cause {
			t.Fatalf("a call added after the end runs on: %v", context.Cause(ctx))
		}
	}
}
