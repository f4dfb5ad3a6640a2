package gemini

import (
	"math"
	"testing"
	"time"
)

// TestMessageRetryDelay: the delay a RESOURCE_EXHAUSTED message states is
// a Go duration, minutes and hours included ("Please retry in 1m5s.",
// "Please retry in 9h10m57.29s." for a daily quota, as clients of the API
// quote it; they read as no delay, so the call was retried at once); one
// beyond a Duration is the longest, as a Retry-After header's is.
func TestMessageRetryDelay(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]time.Duration{
		"Quota exceeded. Please retry in 34.237795071s.":  34237795071 * time.Nanosecond,
		"Please retry in 850ms.":                          850 * time.Millisecond,
		"Please retry in 1m5s.":                           65 * time.Second,
		"Please retry in 9h10m57.29s.":                    9*time.Hour + 10*time.Minute + 57290*time.Millisecond,
		"please retry in 2H.":                             2 * time.Hour,
		"Please retry in 250µs":                           250 * time.Microsecond,
		"Please retry in 99999999999h.":                   time.Duration(math.MaxInt64),
		"Please retry in 0s.":                             0,
		"Please retry in 850msec.":                        0,
		"Please retry in 1.5 seconds.":                    0,
		"Please retry in -5s.":                            0,
		"Please retry in 1e3s.":                           0,
		"Resource has been exhausted (e.g. check quota).": 0,
	} {
		if got := messageRetryDelay(msg); got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
}
