package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// result is one scenario's measurements. Times are in microseconds.
type result struct {
	Name            string  `json:"name"`
	Target          string  `json:"target"` // relay | direct
	Kind            string  `json:"kind"`   // unary | stream | stream-long
	Client          string  `json:"client"` // go | ghz
	Concurrency     int     `json:"concurrency"`
	Rate            int     `json:"rate,omitempty"`
	Raw             bool    `json:"raw_capture"`
	LogLevel        string  `json:"log_level,omitempty"`
	Base            string  `json:"baseline,omitempty"`
	Floor           string  `json:"floor,omitempty"`    // the floor row compared with
	Upstream        string  `json:"upstream,omitempty"` // clear, tls (HTTP/2 offered), tls1 (HTTP/1.1 only)
	Model           string  `json:"model,omitempty"`
	Format          string  `json:"format,omitempty"`  // per-chunk rows
	Variant         string  `json:"variant,omitempty"` // per-chunk rows
	Load1           float64 `json:"load1"`
	Seconds         float64 `json:"seconds"`
	Count           int64   `json:"count"`
	Errors          int64   `json:"errors"`
	FirstError      string  `json:"first_error,omitempty"`
	RPS             float64 `json:"rps"`
	P50us           float64 `json:"p50_us"`
	P90us           float64 `json:"p90_us"`
	P99us           float64 `json:"p99_us"`
	AddedP50us      float64 `json:"added_p50_us,omitempty"`
	AddedP99us      float64 `json:"added_p99_us,omitempty"`
	TTFTP50us       float64 `json:"ttft_p50_us,omitempty"`
	TTFTP99us       float64 `json:"ttft_p99_us,omitempty"`
	AddedTTFTP50us  float64 `json:"added_ttft_p50_us,omitempty"`
	ChunksPerStream float64 `json:"chunks_per_stream,omitempty"`
	// RelayCPUus is the CPU time per call of the server under test
	// (llmrelay, or the floor in floor rows).
	RelayCPUus float64 `json:"relay_cpu_us_per_req,omitempty"`
	CPURatio   float64 `json:"cpu_ratio_to_floor,omitempty"`
	MockCPUus  float64 `json:"mock_cpu_us_per_req"`
	RelayRSSMB float64 `json:"relay_rss_peak_mb,omitempty"`
}

// idleResult is the memory phase.
type idleResult struct {
	RSSFreshMB         float64 `json:"rss_fresh_mb"`
	RSSIdleMB          float64 `json:"rss_idle_mb"` // after 2000 warm-up calls
	RSSBaseMB          float64 `json:"rss_before_streams_mb"`
	RSSOpenMB          float64 `json:"rss_streams_open_mb"`
	Streams            int     `json:"streams"`
	StreamsReachedMock int64   `json:"streams_reached_mock"`
	OpenSeconds        float64 `json:"open_seconds"`
	KBPerStream        float64 `json:"kb_per_stream"`
	Goroutines         int     `json:"goroutines_streams_open"`
	// Go runtime memory per stream (MemStats differences, streams open
	// minus before): goroutine stacks, in-use heap spans, live objects.
	StackKBPerStream     float64 `json:"stack_kb_per_stream"`
	HeapInuseKBPerStream float64 `json:"heap_inuse_kb_per_stream"`
	HeapAllocKBPerStream float64 `json:"heap_alloc_kb_per_stream"`
	Errors               int     `json:"errors"`
	FirstError           string  `json:"first_error,omitempty"`
	// The floor's RSS after 2000 calls and growth per open idle stream.
	FloorRSSIdleMB   float64 `json:"floor_rss_idle_mb,omitempty"`
	FloorKBPerStream float64 `json:"floor_kb_per_stream,omitempty"`
}

// target is one of issue 7's goals and what was measured.
type target struct {
	Goal  string  `json:"goal"`
	Limit float64 `json:"limit"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	Met   *bool   `json:"met"` // nil: not measured in this run
	Note  string  `json:"note,omitempty"`
}

type report struct {
	Date            string      `json:"date"`
	Host            hostInfo    `json:"host"`
	Args            []string    `json:"args"`
	ServerEnv       []string    `json:"server_env,omitempty"`
	LoadStart       float64     `json:"load1_start"`
	LoadEnd         float64     `json:"load1_end"`
	WallSeconds     float64     `json:"wall_seconds"`
	ScenarioSeconds float64     `json:"scenario_seconds"`
	FixedRate       int         `json:"fixed_rate"`
	RSSStartMB      float64     `json:"relay_rss_start_mb"`
	RSSAfterLoadMB  float64     `json:"relay_rss_after_load_mb"`
	Results         []result    `json:"results"`
	Idle            idleResult  `json:"idle"`
	Chunks          []chunkCost `json:"cpu_per_chunk"`
	Targets         []target    `json:"targets"`
	// TelemetryAB: -telemetry-ab's paired measurements.
	TelemetryAB []telemetryAB `json:"telemetry_ab,omitempty"`
}

func (r *report) find(name string) *result {
	for i := range r.Results {
		if r.Results[i].Name == name {
			return &r.Results[i]
		}
	}
	return nil
}

// chunkCost is the CPU per relayed chunk of one stream format on one
// upstream variant: (long stream - short stream) / (chunk difference).
type chunkCost struct {
	Format      string  `json:"format"`
	Variant     string  `json:"variant"`
	RelayUS     float64 `json:"relay_us"`
	FloorUS     float64 `json:"floor_us"`
	Ratio       float64 `json:"ratio_to_floor"`
	ChunksLong  float64 `json:"chunks_long"`
	ChunksShort float64 `json:"chunks_short"`
}

// perChunk is (long - short) CPU per stream over the chunk difference of
// the short and long rows of target, format and variant.
func (r *report) perChunk(target, format, variant string) (float64, *result, *result) {
	var short, long *result
	for i := range r.Results {
		x := &r.Results[i]
		if x.Target != target || x.Format != format || x.Variant != variant || x.Count == 0 {
			continue
		}
		switch x.Kind {
		case "stream":
			short = x
		case "stream-long":
			long = x
		}
	}
	if short == nil || long == nil || long.ChunksPerStream <= short.ChunksPerStream {
		return 0, nil, nil
	}
	return (long.RelayCPUus - short.RelayCPUus) / (long.ChunksPerStream - short.ChunksPerStream), short, long
}

// finish computes added latencies, ratios to the floor and per-chunk
// costs, and checks the targets of issue 17.
func (r *report) finish() {
	for i := range r.Results {
		x := &r.Results[i]
		if base := r.find(x.Base); base != nil && x.Count > 0 {
			x.AddedP50us, x.AddedP99us = x.P50us-base.P50us, x.P99us-base.P99us
			if x.TTFTP50us > 0 {
				x.AddedTTFTP50us = x.TTFTP50us - base.TTFTP50us
			}
		}
		if fl := r.find(x.Floor); fl != nil && fl.RelayCPUus > 0 && x.Count > 0 {
			x.CPURatio = x.RelayCPUus / fl.RelayCPUus
		}
	}
	r.Chunks = nil
	for i := range r.Results {
		x := &r.Results[i]
		if x.Target != "relay" || x.Kind != "stream" || x.Format == "" {
			continue
		}
		relay, short, long := r.perChunk("relay", x.Format, x.Variant)
		floorVariant := "clear"
		if x.Variant != "clear" {
			floorVariant = "tls"
		}
		floor, _, _ := r.perChunk("floor", x.Format, floorVariant)
		if relay == 0 {
			continue
		}
		c := chunkCost{Format: x.Format, Variant: x.Variant, RelayUS: relay, FloorUS: floor,
			ChunksShort: short.ChunksPerStream, ChunksLong: long.ChunksPerStream}
		if floor > 0 {
			c.Ratio = relay / floor
		}
		r.Chunks = append(r.Chunks, c)
	}
	ratio := func(goal string, limit float64, relay, floor string) {
		x, f := r.find(relay), r.find(floor)
		if x == nil || f == nil {
			r.Targets = append(r.Targets, target{Goal: goal, Limit: limit, Unit: "× floor", Note: "not measured"})
			return
		}
		met := x.Errors == 0 && f.Errors == 0 && x.CPURatio > 0 && x.CPURatio <= limit
		r.Targets = append(r.Targets, target{Goal: goal, Limit: limit, Value: x.CPURatio, Unit: "× floor", Met: &met,
			Note: fmt.Sprintf("%.1f vs %.1f µs per call", x.RelayCPUus, f.RelayCPUus)})
	}
	r.Targets = nil
	ratio("CPU per call, 16 clients, cleartext", 1.5, "relay unary c=16", "floor unary c=16")
	ratio("CPU per call, 16 clients, TLS", 1.5, "relay tls unary c=16", "floor tls unary c=16")
	ratio("CPU per call, one client, cleartext", 1.4, "relay unary c=1", "floor unary c=1")
	ratio("CPU per call, one client, TLS", 1.4, "relay tls unary c=1", "floor tls unary c=1")
	for _, c := range r.Chunks {
		if c.Variant != "clear" && c.Variant != "tls" {
			continue // the non-default TLS clients are reported, not judged
		}
		met := c.Ratio > 0 && c.Ratio <= 1.3
		r.Targets = append(r.Targets, target{Goal: "CPU per relayed chunk, " + c.Format + " " + c.Variant, Limit: 1.3, Value: c.Ratio,
			Unit: "× floor", Met: &met, Note: fmt.Sprintf("%.2f vs %.2f µs per chunk", c.RelayUS, c.FloorUS)})
	}
	if r.Idle.Streams > 0 && r.Idle.FloorKBPerStream > 0 {
		v := r.Idle.KBPerStream / r.Idle.FloorKBPerStream
		met := v <= 1.3 && r.Idle.StreamsReachedMock >= int64(r.Idle.Streams)
		r.Targets = append(r.Targets, target{Goal: fmt.Sprintf("memory per open idle stream (%d streams)", r.Idle.Streams), Limit: 1.3, Value: v,
			Unit: "× floor", Met: &met, Note: fmt.Sprintf("%.1f vs %.1f KB per stream; %d goroutines", r.Idle.KBPerStream, r.Idle.FloorKBPerStream, r.Idle.Goroutines)})
	} else {
		r.Targets = append(r.Targets, target{Goal: "memory per open idle stream", Limit: 1.3, Unit: "× floor", Note: "not measured (-idle-streams 0)"})
	}
	for _, ab := range r.TelemetryAB {
		met := ab.Errors == 0 && ab.Ratio <= 1.1
		r.Targets = append(r.Targets, target{Goal: "telemetry overhead, " + ab.Name, Limit: 1.1, Value: ab.Ratio, Unit: "× off",
			Met: &met, Note: fmt.Sprintf("%.1f vs %.1f µs per call, paired in %d slices", ab.OnCPU, ab.OffCPU, ab.Slices)})
	}
	if r.Idle.RSSIdleMB > 0 {
		met := r.Idle.RSSIdleMB <= 25
		r.Targets = append(r.Targets, target{Goal: "RSS idle", Limit: 25, Value: r.Idle.RSSIdleMB, Unit: "MB", Met: &met, Note: "after 2000 calls"})
	} else {
		r.Targets = append(r.Targets, target{Goal: "RSS idle", Limit: 25, Unit: "MB", Note: "not measured"})
	}
}

func f0(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func f1(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// print writes the results as a Markdown table, then the targets.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nllmrelay benchmark, %s, %d× %s, %s, Go %s, load %.2f → %.2f, %.0f s per scenario\n\n",
		r.Date, r.Host.CPUs, r.Host.CPUModel, r.Host.MemTotal, strings.TrimPrefix(r.Host.GoVersion, "go"), r.LoadStart, r.LoadEnd, r.ScenarioSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "scenario\tcalls\terr\tRPS\tp50 µs\tp90 µs\tp99 µs\tadded p50\tadded p99\tTTFT p50\tadded TTFT\tCPU µs/req\t× floor\tmock CPU\tRSS MB\tload\t")
	for _, x := range r.Results {
		ratio := "-"
		if x.CPURatio > 0 {
			ratio = fmt.Sprintf("%.2f", x.CPURatio)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t\n",
			x.Name, x.Count, x.Errors, f0(x.RPS), f0(x.P50us), f0(x.P90us), f0(x.P99us),
			f0(x.AddedP50us), f0(x.AddedP99us), f0(x.TTFTP50us), f0(x.AddedTTFTP50us),
			f1(x.RelayCPUus), ratio, f1(x.MockCPUus), f1(x.RelayRSSMB), x.Load1)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintln(w, "table:", err)
	}
	fmt.Fprintf(w, "\nCPU per relayed chunk (µs; (long - short stream) / chunk difference):\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "format\tupstream\tllmrelay\tfloor\t× floor\t")
	for _, c := range r.Chunks {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t\n", c.Format, c.Variant, c.RelayUS, c.FloorUS, c.Ratio)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintln(w, "table:", err)
	}
	printTelemetryAB(w, r.TelemetryAB)
	fmt.Fprintf(w, "\nfloor: idle RSS %.1f MB, %.1f KB per open idle stream\n", r.Idle.FloorRSSIdleMB, r.Idle.FloorKBPerStream)
	fmt.Fprintf(w, "\nRSS: %.1f MB at start, %.1f MB after the load; fresh server %.1f MB, idle after 2000 calls %.1f MB; %d open idle streams: %.1f → %.1f MB = %.1f KB per stream (%d goroutines; per stream: %.1f KB of goroutine stack, %.1f KB of heap spans in use, %.1f KB of live objects)\n\n",
		r.RSSStartMB, r.RSSAfterLoadMB, r.Idle.RSSFreshMB, r.Idle.RSSIdleMB, r.Idle.Streams, r.Idle.RSSBaseMB, r.Idle.RSSOpenMB, r.Idle.KBPerStream, r.Idle.Goroutines,
		r.Idle.StackKBPerStream, r.Idle.HeapInuseKBPerStream, r.Idle.HeapAllocKBPerStream)
	for _, t := range r.Targets {
		verdict := "not judged"
		if t.Met != nil {
			verdict = "NOT MET"
			if *t.Met {
				verdict = "met"
			}
		}
		limit := fmt.Sprintf("(target ≤ %g)", t.Limit)
		fmt.Fprintf(w, "  %-48s %8.2f %-7s %-16s %s", t.Goal, t.Value, t.Unit, limit, verdict)
		if t.Note != "" {
			fmt.Fprintf(w, "  [%s]", t.Note)
		}
		fmt.Fprintln(w)
	}
}
