package openai

import (
	"strconv"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// windowLines is each of rl's windows as one line: budget, header,
// limit/remaining ("-" where unset), period ("-" where unset), reset
// ("-" where unset) as an offset from date, or as a UTC time when date
// is zero, then status and utilization when set.
func windowLines(rl *llmrelayv1.RateLimit, date time.Time) []string {
	var out []string
	n := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	for _, w := range rl.GetWindows() {
		period, reset := "-", "-"
		if w.GetPeriod() != nil {
			period = w.GetPeriod().AsDuration().String()
		}
		if w.GetResetTime() != nil {
			if date.IsZero() {
				reset = w.GetResetTime().AsTime().UTC().Format(time.RFC3339Nano)
			} else {
				reset = "+" + w.GetResetTime().AsTime().Sub(date).String()
			}
		}
		line := w.GetBudget() + " " + w.GetHeader() + " " + n(w.Limit) + "/" + n(w.Remaining) + " " + period + " " + reset
		if w.GetStatus() != "" {
			line += " " + w.GetStatus()
		}
		if w.Utilization != nil {
			line += " " + strconv.FormatFloat(w.GetUtilization(), 'f', -1, 64)
		}
		out = append(out, line)
	}
	return out
}

// checkWindows fails unless rl's windows are want (windowLines), in order.
func checkWindows(t *testing.T, what string, rl *llmrelayv1.RateLimit, date time.Time, want ...string) {
	t.Helper()
	if got := windowLines(rl, date); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: rate-limit windows\n got %s\nwant %s", what, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}
