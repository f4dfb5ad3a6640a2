package provider

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseResetDuration: durations and bare seconds read as before the
// shortcut for values ending in a unit.
func TestParseResetDuration(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"6ms", "1s", "6m0s", "1h2m3.5s", " 20ms ", "5", "0.5", "1e3", "Inf", "NaN", "1us", "1µs", "2ns", "x", "", "s", "m5s", "5 s"} {
		got, gerr := parseResetDuration(v)
		want, werr := time.Duration(0), error(nil)
		tv := strings.TrimSpace(v)
		if secs, err := strconv.ParseFloat(tv, 64); err == nil {
			want = time.Duration(secs * float64(time.Second))
		} else {
			want, werr = time.ParseDuration(tv)
		}
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("%q: %v %v, want %v %v", v, got, gerr, want, werr)
		}
	}
}
