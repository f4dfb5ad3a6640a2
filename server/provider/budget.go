package provider

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Pool is the memory budget all calls in flight share for provider
// response bytes.
type Pool struct {
	max  int64
	used atomic.Int64
}

// NewPool returns a pool of max bytes.
func NewPool(max int64) *Pool { return &Pool{max: max} }

// Used is the number of bytes charged now.
func (p *Pool) Used() int64 { return p.used.Load() }

// Budget is one call's share: each response body it reads may hold up to
// perBody bytes, and every byte read is charged to the pool until Release.
type Budget struct {
	pool    *Pool
	perBody int64
	mu      sync.Mutex
	charged int64
}

// NewBudget returns a call's budget from pool.
func (p *Pool) NewBudget(perBody int64) *Budget { return &Budget{pool: p, perBody: perBody} }

// LimitError is a response over a gateway limit. Limit is the
// configuration key, Max its value.
type LimitError struct {
	Limit string
	Max   int64
	Msg   string
}

func (e *LimitError) Error() string { return e.Msg }

// Charge records that a body now holds bodyTotal bytes, delta of them new:
// an error when the body exceeds its limit or the pool is used up (then
// nothing is charged).
func (b *Budget) Charge(bodyTotal, delta int64) error {
	if b == nil || delta <= 0 {
		return nil
	}
	if bodyTotal > b.perBody {
		return &LimitError{Limit: "limits.max_response_bytes", Max: b.perBody,
			Msg: fmt.Sprintf("the provider's response is larger than limits.max_response_bytes (%d bytes)", b.perBody)}
	}
	if b.pool.used.Add(delta) > b.pool.max {
		b.pool.used.Add(-delta)
		return &LimitError{Limit: "limits.max_buffered_bytes", Max: b.pool.max,
			Msg: fmt.Sprintf("the gateway holds limits.max_buffered_bytes (%d bytes) of provider responses in flight; retry later", b.pool.max)}
	}
	b.mu.Lock()
	b.charged += delta
	b.mu.Unlock()
	return nil
}

// Release returns everything the call charged to the pool.
func (b *Budget) Release() {
	if b == nil {
		return
	}
	b.mu.Lock()
	n := b.charged
	b.charged = 0
	b.mu.Unlock()
	b.pool.used.Add(-n)
}

type budgetKey struct{}

// WithBudget returns ctx carrying b.
func WithBudget(ctx context.Context, b *Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom returns the call's budget, or nil (unbounded).
func BudgetFrom(ctx context.Context) *Budget {
	b, _ := ctx.Value(budgetKey{}).(*Budget)
	return b
}

// Reserver is a response body that charges a length to the call's budget
// before the bytes are read (ReadBody allocates a declared length at once).
type Reserver interface {
	Reserve(n int64) error
}
