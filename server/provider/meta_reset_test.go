package provider

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// parseResetDurationRef is parseResetDuration trying ParseFloat on every
// value (before the unit check).
func parseResetDurationRef(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(secs * float64(time.Second)), nil
	}
	return time.ParseDuration(v)
}

var resetCases = []string{"1s", "6m0s", "20ms", "1h2m3.5s", "5", " 5 ", "0.5", "1e3", "inf", "-Inf", "NaN", "infinity", "0x1p-2",
	"1_000", "", " ", "s", "m", "1us", "1µs", "1ns", "1.5h", "+2m", "-3s", "1S", "1M", "1H", "2.", ".5", "5x", "3h ", "1e"}

func checkReset(t *testing.T, v string) {
	got, err := parseResetDuration(v)
	want, wantErr := parseResetDurationRef(v)
	if got != want || (err == nil) != (wantErr == nil) {
		t.Errorf("%q: %v %v, want %v %v", v, got, err, want, wantErr)
	}
}

// TestParseResetDurationSkipsFloatForUnits is not parallel: AllocsPerRun.
func TestParseResetDurationSkipsFloatForUnits(t *testing.T) {
	for _, v := range resetCases {
		checkReset(t, v)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = parseResetDuration("6m0s") }); n != 0 {
		t.Errorf("%v allocations for a duration", n)
	}
}

func FuzzParseResetDuration(f *testing.F) {
	for _, v := range resetCases {
		f.Add(v)
	}
	f.Fuzz(checkReset)
}
