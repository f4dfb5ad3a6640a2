package provider

import (
	"net/http"
	"testing"
	"time"
)

// TestRound26WindowPeriods: the window lengths rate-limit headers name
// (Cerebras's and Mistral's -minute, -day, -10-second, -60-second,
// Anthropic's unified 5h, 7d and per-model 7d_sonnet) and Azure's renewal
// period in seconds; none for a month (no fixed length), the unified
// overage window or a value that is no length.
func TestRound26WindowPeriods(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]time.Duration{
		"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "10-second": 10 * time.Second, "60-second": time.Minute,
		"5h": 5 * time.Hour, "7d": 7 * 24 * time.Hour, "7d_sonnet": 7 * 24 * time.Hour, "7d-opus": 7 * 24 * time.Hour,
		"month": 0, "overage": 0, "h": 0, "0h": 0, "-5h": 0, "5x": 0, "": 0, "1001d": 0, "0-second": 0, "x-second": 0,
	} {
		got := NamedPeriod(name)
		if (got == nil) != (want == 0) || (got != nil && got.AsDuration() != want) {
			t.Errorf("NamedPeriod(%q) = %v, want %v", name, got, want)
		}
	}
	for v, want := range map[string]time.Duration{"60": time.Minute, " 1.5 ": 1500 * time.Millisecond, "0": 0, "-60": 0, "abc": 0, "1e30": 0, "NaN": 0, "+Inf": 0} {
		got := PeriodSeconds(v)
		if (got == nil) != (want == 0) || (got != nil && got.AsDuration() != want) {
			t.Errorf("PeriodSeconds(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestRound26UnifiedWindows: the unified limit headers of a Claude
// subscription become windows in the order of their names whatever the
// header map's order; a value of another form than the window holds is
// left out of it (UnifiedTyped false: meta.extended keeps it), and the
// headers that are no window's make none.
func TestRound26UnifiedWindows(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("anthropic-ratelimit-unified-7d-utilization", "0.31")
	h.Set("anthropic-ratelimit-unified-5h-reset", "soon")
	h.Set("anthropic-ratelimit-unified-5h-status", "allowed_warning")
	h.Set("anthropic-ratelimit-unified-representative-claim", "seven_day")
	h.Set("anthropic-ratelimit-unified-reset", "1789491600")
	rl := AnthropicUnifiedWindows(nil, h)
	if len(rl.GetWindows()) != 3 {
		t.Fatalf("windows %v", rl.GetWindows())
	}
	all, five, week := rl.Windows[0], rl.Windows[1], rl.Windows[2]
	if all.GetHeader() != "anthropic-ratelimit-unified" || all.GetPeriod() != nil || !all.GetResetTime().AsTime().Equal(time.Unix(1789491600, 0)) || all.GetStatus() != "" {
		t.Errorf("overall window %v", all)
	}
	if five.GetHeader() != "anthropic-ratelimit-unified-5h" || five.GetPeriod().AsDuration() != 5*time.Hour || five.GetResetTime() != nil || five.GetStatus() != "allowed_warning" {
		t.Errorf("5h window %v", five)
	}
	if week.GetHeader() != "anthropic-ratelimit-unified-7d" || week.GetUtilization() != 0.31 || week.Utilization == nil || week.GetBudget() != "unified" {
		t.Errorf("7d window %v", week)
	}
	for rest, want := range map[string]bool{"5h-reset": false, "5h-status": true, "reset": true, "representative-claim": false, "7d-utilization": true, "fallback-percentage": false} {
		if got := UnifiedTyped(rest, h.Get("anthropic-ratelimit-unified-"+rest)); got != want {
			t.Errorf("UnifiedTyped(%q) = %v, want %v", rest, got, want)
		}
	}
	if AnthropicUnifiedWindows(nil, http.Header{"Anthropic-Ratelimit-Unified-Fallback-Percentage": {"0.5"}}) != nil {
		t.Errorf("a header that is no window's made one")
	}
}
