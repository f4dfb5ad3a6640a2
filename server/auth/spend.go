package auth

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
)

// budget is a caller's spend budget: limit nano-units of currency per
// calendar window (UTC). used counts the window's spending in process;
// with a shared store the count lives in Redis and used stays zero.
type budget struct {
	limit    int64
	currency string
	per      string

	mu     sync.Mutex
	window int64 // the start (unix seconds) of the window used belongs to
	used   int64
}

func newBudget(s *config.Spend) *budget {
	if s == nil || s.Limit == nil {
		return nil
	}
	return &budget{limit: s.Limit.Nanos, currency: s.CurrencyCode(), per: s.Per}
}

// String is the budget as configured: "5.00 USD per day".
func (b *budget) String() string {
	return fmt.Sprintf("%s %s per %s", config.Amount{Nanos: b.limit}, b.currency, b.per)
}

// spendWindow is the calendar window (UTC) of now for per (hour, day,
// month): its start in unix seconds, which names it, and how long until
// the next one.
func spendWindow(per string, now time.Time) (start int64, rest time.Duration) {
	now = now.UTC()
	var from, to time.Time
	switch per {
	case "hour":
		from = now.Truncate(time.Hour)
		to = from.Add(time.Hour)
	case "day":
		from = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		to = from.AddDate(0, 0, 1)
	default: // month (validated)
		from = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		to = from.AddDate(0, 1, 0)
	}
	return from.Unix(), to.Sub(now)
}

// room reports whether the window of now has anything left, else how
// long until it ends.
func (b *budget) room(now time.Time) (bool, time.Duration) {
	w, rest := spendWindow(b.per, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.window == w && b.used >= b.limit {
		return false, rest
	}
	return true, 0
}

// charge adds nanos to the window of now (saturating).
func (b *budget) charge(nanos int64, now time.Time) {
	w, _ := spendWindow(b.per, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.window != w {
		b.window, b.used = w, 0
	}
	if b.used > math.MaxInt64-nanos {
		b.used = math.MaxInt64
		return
	}
	b.used += nanos
}

// keepIfSame returns b when it is the budget next configures (its
// spending carries over a reload), else next.
func (b *budget) keepIfSame(next *budget) *budget {
	if b != nil && next != nil && b.limit == next.limit && b.currency == next.currency && b.per == next.per {
		return b
	}
	return next
}

// overBudget is the refusal of a caller at or over its budget.
func (c *Caller) overBudget(wait time.Duration) error {
	return &Error{Kind: RateLimited, Caller: c.Name, Limit: "spend", Budget: c.spend.String(), RetryAfter: wait,
		Msg: fmt.Sprintf("caller %s has used its spend budget (%s); retry in %v", c.Name, c.spend, wait.Round(time.Second))}
}
