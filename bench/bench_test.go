package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	// Field 2 may hold spaces and parentheses; utime=250, stime=50 ticks.
	line := "4242 (llm relay (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 100 1000000 500 18446744073709551615"
	got, err := parseStatCPU([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("cpu = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 u s 1 2"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	t.Parallel()
	status := "Name:\tllmrelay\nVmPeak:\t  999 kB\nVmRSS:\t   23456 kB\nThreads:\t9\n"
	got, err := parseStatusKB(strings.NewReader(status), "VmRSS:")
	if err != nil || got != 23456 {
		t.Fatalf("got %d, %v", got, err)
	}
	if _, err := parseStatusKB(strings.NewReader(status), "VmSwap:"); err == nil {
		t.Error("missing field: no error")
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{50: 50, 90: 90, 99: 99, 100: 100, 0: 1} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("empty input")
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
}

func TestParseGhzReport(t *testing.T) {
	t.Parallel()
	raw := `{"count":10,"total":2000000000,"average":150000,"rps":5.0,
	  "errorDistribution":{"rpc error: code = Unavailable":2},
	  "statusCodeDistribution":{"OK":8,"Unavailable":2},
	  "latencyDistribution":[{"percentage":50,"latency":120000},{"percentage":99,"latency":900000}],
	  "details":[{"latency":1}]}`
	r, err := parseGhzReport([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.ok() != 8 || r.Count != 10 {
		t.Errorf("ok %d count %d", r.ok(), r.Count)
	}
	if p, ok := r.latency(99); !ok || p != 900*time.Microsecond {
		t.Errorf("p99 = %v %v", p, ok)
	}
	if _, ok := r.latency(90); ok {
		t.Error("p90 is not in the report")
	}
	if _, err := parseGhzReport([]byte(`{"count":3,"statusCodeDistribution":{"OK":3}}`)); err == nil {
		t.Error("calls without latencies: no error")
	}
	if _, err := parseGhzReport([]byte(`not json`)); err == nil {
		t.Error("bad JSON: no error")
	}
}

func TestParseGoroutineTotal(t *testing.T) {
	t.Parallel()
	if n, err := parseGoroutineTotal("goroutine profile: total 9010\n3000 @ 0x1"); err != nil || n != 9010 {
		t.Errorf("got %d, %v", n, err)
	}
	if _, err := parseGoroutineTotal("<html>"); err == nil {
		t.Error("no error for a wrong head")
	}
}

func TestReportFinish(t *testing.T) {
	t.Parallel()
	r := &report{Host: hostInfo{CPUs: 2}, Results: []result{
		{Name: "direct unary c=1", Target: "direct", Count: 100, P50us: 80, P99us: 300},
		{Name: "floor unary c=1", Target: "floor", Count: 100, RelayCPUus: 100},
		{Name: "relay unary c=1", Target: "relay", Count: 100, P50us: 150, P99us: 1500, Base: "direct unary c=1", Floor: "floor unary c=1", RelayCPUus: 130},
		{Name: "floor unary c=16", Target: "floor", Count: 100, RelayCPUus: 40},
		{Name: "relay unary c=16", Target: "relay", Count: 100, Floor: "floor unary c=16", RelayCPUus: 70},
		{Name: "direct stream c=1", Target: "direct", Count: 10, TTFTP50us: 100},
		{Name: "relay stream c=1", Target: "relay", Count: 10, TTFTP50us: 160, Base: "direct stream c=1"},
		{Name: "relay stream c=8 ollama", Target: "relay", Kind: "stream", Format: "ollama", Variant: "clear", Count: 10, RelayCPUus: 500, ChunksPerStream: 20},
		{Name: "relay stream-long c=8 ollama", Target: "relay", Kind: "stream-long", Format: "ollama", Variant: "clear", Count: 10, RelayCPUus: 1400, ChunksPerStream: 200},
		{Name: "floor stream c=8 ollama", Target: "floor", Kind: "stream", Format: "ollama", Variant: "clear", Count: 10, RelayCPUus: 300, ChunksPerStream: 21},
		{Name: "floor stream-long c=8 ollama", Target: "floor", Kind: "stream-long", Format: "ollama", Variant: "clear", Count: 10, RelayCPUus: 1020, ChunksPerStream: 201},
	}, Idle: idleResult{Streams: 100, StreamsReachedMock: 100, KBPerStream: 30, FloorKBPerStream: 20, RSSIdleMB: 22}}
	r.finish()
	relay := r.find("relay unary c=1")
	if relay.AddedP50us != 70 || relay.AddedP99us != 1200 || relay.CPURatio != 1.3 {
		t.Errorf("added %v/%v, ratio %v", relay.AddedP50us, relay.AddedP99us, relay.CPURatio)
	}
	if got := r.find("relay stream c=1").AddedTTFTP50us; got != 60 {
		t.Errorf("added ttft %v", got)
	}
	if len(r.Chunks) != 1 || r.Chunks[0].RelayUS != 5 || r.Chunks[0].FloorUS != 4 || r.Chunks[0].Ratio != 1.25 {
		t.Errorf("chunks %+v", r.Chunks)
	}
	want := map[string]bool{
		"CPU per call, one client, cleartext":       true,  // 1.3
		"CPU per call, 16 clients, cleartext":       false, // 1.75
		"CPU per call, 16 clients, TLS":             false, // not measured
		"CPU per call, one client, TLS":             false,
		"CPU per relayed chunk, ollama clear":       true,  // 1.25
		"memory per open idle stream (100 streams)": false, // 1.5
		"RSS idle": true,
	}
	for _, tg := range r.Targets {
		w, ok := want[tg.Goal]
		if !ok {
			t.Errorf("unexpected target %q", tg.Goal)
			continue
		}
		met := tg.Met != nil && *tg.Met
		if met != w {
			t.Errorf("%s: met=%v (value %v), want %v", tg.Goal, met, tg.Value, w)
		}
		delete(want, tg.Goal)
	}
	if len(want) > 0 {
		t.Errorf("targets missing: %v", want)
	}
}

func TestParseMemStats(t *testing.T) {
	// The tail of /debug/pprof/heap?debug=1.
	tail := "heap profile: 1: 2 [3: 4] @ heap/1048576\n\n# runtime.MemStats\n# Alloc = 1\n# HeapAlloc = 2097152\n# HeapInuse = 4194304\n# Stack = 65536 / 98304\n# PauseNs = [0 0]\n"
	m, err := parseMemStats(tail)
	if err != nil {
		t.Fatal(err)
	}
	if m["HeapAlloc"] != 2097152 || m["HeapInuse"] != 4194304 || m["StackInuse"] != 65536 {
		t.Errorf("%v", m)
	}
	if _, err := parseMemStats("# Alloc = 1\n"); err == nil {
		t.Error("missing fields accepted")
	}
}

// TestTelemetryAB: a paired measurement is judged against issue 15's 10%
// bound on the ratio over all slices, and its table gives the spread of
// the slice pairs.
func TestTelemetryAB(t *testing.T) {
	t.Parallel()
	r := &report{TelemetryAB: []telemetryAB{
		{Name: "relay unary c=16", Slices: 4, OffCPU: 80, OnCPU: 96, Ratio: 1.2, PairRatios: []float64{1.3, 1.1, 1.2, 1.15}},
		{Name: "relay stream c=1", Slices: 3, OffCPU: 400, OnCPU: 432, Ratio: 1.08, PairRatios: []float64{1.05, 1.12, 1.07}},
		{Name: "relay stream c=8 openai-chat", Slices: 2, OffCPU: 200, OnCPU: 210, Ratio: 1.05, PairRatios: []float64{1.0, 1.1}, Errors: 1},
	}}
	r.finish()
	want := map[string]bool{
		"telemetry overhead, relay unary c=16":             false, // 1.2
		"telemetry overhead, relay stream c=1":             true,  // 1.08
		"telemetry overhead, relay stream c=8 openai-chat": false, // an error in a slice
	}
	for _, tg := range r.Targets {
		w, ok := want[tg.Goal]
		if !ok {
			continue
		}
		if met := tg.Met != nil && *tg.Met; met != w || tg.Unit != "× off" {
			t.Errorf("%s: met=%v (value %v %s), want %v", tg.Goal, met, tg.Value, tg.Unit, w)
		}
		delete(want, tg.Goal)
	}
	if len(want) > 0 {
		t.Errorf("targets missing: %v", want)
	}
	var out strings.Builder
	printTelemetryAB(&out, r.TelemetryAB)
	// relay unary c=16: +20% overall; pairs sorted 1.1, 1.15, 1.2, 1.3:
	// median +17.5%, min +10%, max +30%.
	for _, s := range []string{"+20.0%|", "+17.5%|", "+10.0%|", "+30.0%|", "+8.0%|", "+7.0%|", "+12.0%|"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
	if r.TelemetryAB[0].PairRatios[0] != 1.3 {
		t.Error("printing sorted the measured pairs in place")
	}
}
