package auth

import (
	"math"
	"sync"
	"time"
)

// bucket is a token bucket of capacity perMinute, refilled continuously
// at perMinute per minute, starting full.
type bucket struct {
	perMinute int
	mu        sync.Mutex
	level     float64
	last      time.Time
}

func newBucket(perMinute int) *bucket {
	if perMinute <= 0 {
		return nil
	}
	return &bucket{perMinute: perMinute, level: float64(perMinute)}
}

func (b *bucket) rate() float64 { return float64(b.perMinute) / 60 } // per second

// refill brings the level up to now; the caller holds mu.
func (b *bucket) refill(now time.Time) {
	if !b.last.IsZero() && now.After(b.last) {
		b.level = math.Min(float64(b.perMinute), b.level+now.Sub(b.last).Seconds()*b.rate())
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
}

// wait is how long until the level reaches need; the caller holds mu.
func (b *bucket) wait(need float64) time.Duration {
	return time.Duration(math.Ceil((need - b.level) / b.rate() * float64(time.Second)))
}

// take removes n if the bucket holds them.
func (b *bucket) take(n float64, now time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.level < n {
		return false, b.wait(n)
	}
	b.level -= n
	return true, 0
}

// positive reports whether anything is left (a call may then spend more
// than is left: its size is known only when it ends).
func (b *bucket) positive(now time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.level <= 0 {
		return false, b.wait(math.Nextafter(0, 1)) + time.Millisecond
	}
	return true, 0
}

// spend removes n, going into debt if need be.
func (b *bucket) spend(n float64, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	b.level -= n
}

// keepIfSame returns b when it has the limit of next (its state carries
// over a reload), else next.
func (b *bucket) keepIfSame(next *bucket) *bucket {
	if b != nil && next != nil && b.perMinute == next.perMinute {
		return b
	}
	return next
}
