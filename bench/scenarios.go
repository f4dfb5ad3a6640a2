package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

const (
	modelShort = "bench/gpt-4o-mini"
	modelLong  = "bench/long"
)

// waitGRPC waits until llmrelay's health service reports SERVING.
func waitGRPC(p *proc, addr string, timeout time.Duration) error {
	conn, _, err := dialRelay(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if err := p.alive(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not serving after %v: %v", p.name, timeout, last)
}

// scenario is one measured run.
type scenario struct {
	name   string // row label
	target string // "relay" or "direct"
	kind   string // "unary", "stream", "stream-long"
	client string // "go" or "ghz"
	conc   int
	rate   int // ghz fixed rate; 0 = closed loop
	raw    bool
	log    string // server log level
	base   string // name of the direct row this one's added latency is relative to
}

// env is what a scenario runs against.
type env struct {
	relay     *proc
	relayAddr string
	client    llmrelayv1.GatewayServiceClient
	mock      *proc
	mockURL   string // chat completions URL
	pprofAddr string
}

func (b *bench) runAll(ctx context.Context, rep *report) error {
	mock, mockAddr, err := b.startMock("mock")
	if err != nil {
		return err
	}
	relay, relayAddr, pprofAddr, err := b.startRelay("relay", mockAddr, "warn", b.o.profileDir != "")
	if err != nil {
		return err
	}
	conn, client, err := dialRelay(relayAddr)
	if err != nil {
		return err
	}
	defer conn.Close()
	e := env{relay: relay, relayAddr: relayAddr, client: client, mock: mock,
		mockURL: "http://" + mockAddr + "/v1/chat/completions", pprofAddr: pprofAddr}
	if kb, err := rssKB(relay.pid()); err == nil {
		rep.RSSStartMB = float64(kb) / 1024
	}

	c1Unary := "direct unary c=1"
	c1Stream := "direct stream c=1"
	scenarios := []scenario{
		{name: c1Unary, target: "direct", kind: "unary", client: "go", conc: 1},
		{name: "relay unary c=1", target: "relay", kind: "unary", client: "go", conc: 1, base: c1Unary},
		{name: "relay unary c=1 raw", target: "relay", kind: "unary", client: "go", conc: 1, raw: true, base: c1Unary},
		{name: "relay unary c=1 (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 1, base: c1Unary},
		{name: "direct unary c=16", target: "direct", kind: "unary", client: "go", conc: 16},
		{name: "relay unary c=16", target: "relay", kind: "unary", client: "go", conc: 16, base: "direct unary c=16"},
		{name: "relay unary c=16 (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, base: "direct unary c=16"},
		{name: "relay unary c=16 raw (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, raw: true, base: "direct unary c=16"},
		{name: "direct unary c=64", target: "direct", kind: "unary", client: "go", conc: 64},
		{name: "relay unary c=64 (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 64, base: "direct unary c=64"},
		{name: "relay unary fixed rate (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, rate: b.o.rate},
		{name: "relay unary fixed rate raw (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, rate: b.o.rate, raw: true},
		{name: c1Stream, target: "direct", kind: "stream", client: "go", conc: 1},
		{name: "relay stream c=1", target: "relay", kind: "stream", client: "go", conc: 1, base: c1Stream},
		{name: "relay stream c=1 raw", target: "relay", kind: "stream", client: "go", conc: 1, raw: true, base: c1Stream},
		{name: "direct stream c=16", target: "direct", kind: "stream", client: "go", conc: 16},
		{name: "relay stream c=16 (ghz)", target: "relay", kind: "stream", client: "ghz", conc: 16, base: "direct stream c=16"},
		{name: "relay stream c=8", target: "relay", kind: "stream", client: "go", conc: 8},
		{name: "relay stream-long c=8", target: "relay", kind: "stream-long", client: "go", conc: 8},
	}
	for _, s := range scenarios {
		if (s.client == "ghz" && b.o.noGhz) || (b.o.only != nil && !b.o.only.MatchString(s.name)) {
			continue
		}
		s.log = "warn"
		r, err := b.measure(ctx, e, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		rep.Results = append(rep.Results, r)
	}
	if kb, err := rssKB(relay.pid()); err == nil {
		rep.RSSAfterLoadMB = float64(kb) / 1024
	}
	if b.o.profileDir != "" {
		if err := b.profiles(ctx, e); err != nil {
			return err
		}
	}
	if err := b.stop(relay); err != nil {
		return err
	}
	if err := b.stop(mock); err != nil {
		return err
	}
	return b.idlePhase(ctx, rep)
}

// measure runs one scenario: warm-up, then the measured window with the
// server's and the mock's CPU time read around it and RSS sampled.
func (b *bench) measure(ctx context.Context, e env, s scenario) (result, error) {
	call, err := b.callFor(e, s)
	if err != nil {
		return result{}, err
	}
	if err := warm(ctx, s.conc, max(b.o.warmup, s.conc*4), call); err != nil {
		return result{}, err
	}
	r := result{Name: s.name, Target: s.target, Kind: s.kind, Client: s.client, Concurrency: s.conc,
		Rate: s.rate, Raw: s.raw, LogLevel: s.log, Base: s.base, Load1: load1()}
	if s.target == "direct" {
		r.LogLevel = ""
	}
	relayCPU0, err := cpuTime(e.relay.pid())
	if err != nil {
		return r, err
	}
	mockCPU0, err := cpuTime(e.mock.pid())
	if err != nil {
		return r, err
	}
	rss := sampleRSS(e.relay.pid(), 100*time.Millisecond)
	if s.client == "ghz" {
		err = b.runGhz(ctx, e, s, &r)
	} else {
		b.runGo(ctx, s, call, &r)
	}
	peak, rssErr := rss.done()
	if err != nil {
		return r, err
	}
	if rssErr != nil {
		return r, rssErr
	}
	relayCPU1, err := cpuTime(e.relay.pid())
	if err != nil {
		return r, err
	}
	mockCPU1, err := cpuTime(e.mock.pid())
	if err != nil {
		return r, err
	}
	if r.Count > 0 {
		if s.target == "relay" {
			r.RelayCPUus = us(relayCPU1-relayCPU0) / float64(r.Count)
			r.RelayRSSMB = float64(peak) / 1024
		}
		r.MockCPUus = us(mockCPU1-mockCPU0) / float64(r.Count)
	}
	log.Printf("%-34s load %.2f  %7.0f rps  p50 %8.1fµs  p99 %8.1fµs  cpu %6.1fµs/req  errors %d",
		s.name, r.Load1, r.RPS, r.P50us, r.P99us, r.RelayCPUus, r.Errors)
	return r, nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func (b *bench) callFor(e env, s scenario) (callFunc, error) {
	model := modelShort
	if s.kind == "stream-long" {
		model = modelLong
	}
	switch {
	case s.target == "direct" && s.kind == "unary":
		return directUnary(directClient(s.conc), e.mockURL), nil
	case s.target == "direct":
		return directStream(directClient(s.conc), e.mockURL), nil
	case s.kind == "unary":
		return relayUnary(e.client, model, s.raw), nil
	default:
		return relayStream(e.client, model, s.raw), nil
	}
}

func (b *bench) runGo(ctx context.Context, s scenario, call callFunc, r *result) {
	d := drive(ctx, s.conc, b.o.dur, call)
	r.Count, r.Errors = int64(len(d.samples)), int64(d.errors)
	if d.firstErr != nil {
		r.FirstError = d.firstErr.Error()
	}
	r.Seconds = d.elapsed.Seconds()
	r.RPS = float64(r.Count) / d.elapsed.Seconds()
	lat := latencies(d.samples, func(s sample) time.Duration { return s.lat })
	r.P50us, r.P90us, r.P99us = us(percentile(lat, 50)), us(percentile(lat, 90)), us(percentile(lat, 99))
	if strings.HasPrefix(s.kind, "stream") && len(d.samples) > 0 {
		ttft := latencies(d.samples, func(s sample) time.Duration { return s.ttft })
		r.TTFTP50us, r.TTFTP99us = us(percentile(ttft, 50)), us(percentile(ttft, 99))
		var chunks int
		for _, x := range d.samples {
			chunks += x.chunks
		}
		r.ChunksPerStream = float64(chunks) / float64(len(d.samples))
	}
}

// ghzData renders the scenario's request as protojson for ghz.
func ghzData(s scenario) ([]byte, string, error) {
	model := modelShort
	if s.kind == "stream-long" {
		model = modelLong
	}
	opts := &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(64)}
	var m proto.Message
	method := "llmrelay.v1.GatewayService/Chat"
	if s.kind == "unary" {
		m = &llmrelayv1.ChatRequest{Model: model, Messages: chatMessages(), Options: opts, Call: callOptions(s.raw)}
	} else {
		method = "llmrelay.v1.GatewayService/StreamChat"
		m = &llmrelayv1.StreamChatRequest{Model: model, Messages: chatMessages(), Options: opts, Call: callOptions(s.raw)}
	}
	raw, err := protojson.Marshal(m)
	return raw, method, err
}

func (b *bench) runGhz(ctx context.Context, e env, s scenario, r *result) error {
	data, method, err := ghzData(s)
	if err != nil {
		return err
	}
	g := ghzRun{bin: b.ghzBin, addr: e.relayAddr, method: method, data: data, conc: s.conc, rate: s.rate, dur: b.o.dur,
		out: filepath.Join(b.tmp, "ghz-"+strconv.Itoa(int(time.Now().UnixNano()))+".json")}
	t0 := time.Now()
	rep, err := g.run(ctx)
	if err != nil {
		return err
	}
	r.Seconds = time.Since(t0).Seconds()
	r.Count = rep.ok()
	r.Errors = rep.Count - rep.ok()
	for k := range rep.ErrorDistribution {
		r.FirstError = k
		break
	}
	r.RPS = float64(r.Count) / (float64(rep.Total) / 1e9)
	p50, _ := rep.latency(50)
	p90, _ := rep.latency(90)
	p99, _ := rep.latency(99)
	r.P50us, r.P90us, r.P99us = us(p50), us(p90), us(p99)
	return nil
}

// profiles records CPU profiles of the server under unary and stream load
// and heap profiles after, with the pprof hook (-pprof).
func (b *bench) profiles(ctx context.Context, e env) error {
	secs := max(int(b.o.dur.Seconds()), 2)
	runs := []struct {
		file string
		s    scenario
	}{
		{"cpu-unary.pprof", scenario{name: "profile unary", target: "relay", kind: "unary", client: "go", conc: 16}},
		{"cpu-unary-raw.pprof", scenario{name: "profile unary raw", target: "relay", kind: "unary", client: "go", conc: 16, raw: true}},
		{"cpu-stream.pprof", scenario{name: "profile stream", target: "relay", kind: "stream-long", client: "go", conc: 16}},
	}
	for _, pr := range runs {
		call, err := b.callFor(e, pr.s)
		if err != nil {
			return err
		}
		errc := make(chan error, 1)
		go func() {
			errc <- fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", e.pprofAddr, secs), filepath.Join(b.o.profileDir, pr.file))
		}()
		d := drive(ctx, pr.s.conc, time.Duration(secs)*time.Second+500*time.Millisecond, call)
		if err := <-errc; err != nil {
			return err
		}
		log.Printf("profiled %s: %d calls, %d errors -> %s", pr.s.name, len(d.samples), d.errors, pr.file)
	}
	// The fixed rate, where CPU per call is highest: ghz paces the calls
	// (the Go driver has no pacing).
	if b.ghzBin != "" {
		s := scenario{name: "profile unary fixed rate", target: "relay", kind: "unary", client: "ghz", conc: 16, rate: b.o.rate}
		errc := make(chan error, 1)
		go func() {
			errc <- fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", e.pprofAddr, secs), filepath.Join(b.o.profileDir, "cpu-unary-rate.pprof"))
		}()
		var r result
		if err := b.runGhz(ctx, e, s, &r); err != nil {
			return err
		}
		if err := <-errc; err != nil {
			return err
		}
		log.Printf("profiled %s: %d calls, %d errors -> cpu-unary-rate.pprof", s.name, r.Count, r.Errors)
	}
	return fetch(ctx, "http://"+e.pprofAddr+"/debug/pprof/heap", filepath.Join(b.o.profileDir, "heap-after-load.pprof"))
}

// idlePhase starts a fresh server against a mock whose streams stall after
// the first chunk: it reports RSS idle, the CPU cost of info-level logging,
// and the memory per open idle stream.
func (b *bench) idlePhase(ctx context.Context, rep *report) error {
	mock, mockAddr, err := b.startMock("mock-slow", "-chunk-delay", "10m")
	if err != nil {
		return err
	}
	relay, relayAddr, pprofAddr, err := b.startRelay("relay-idle", mockAddr, "info", true)
	if err != nil {
		return err
	}
	conn, client, err := dialRelay(relayAddr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if kb, err := rssKB(relay.pid()); err == nil {
		rep.Idle.RSSFreshMB = float64(kb) / 1024
	}
	// Unary calls do not stall (the delay is per stream chunk).
	if err := warm(ctx, 4, 2000, relayUnary(client, modelShort, false)); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	idleKB, err := rssKB(relay.pid())
	if err != nil {
		return err
	}
	rep.Idle.RSSIdleMB = float64(idleKB) / 1024

	if logName := "relay unary fixed rate, log info (ghz)"; !b.o.noGhz && (b.o.only == nil || b.o.only.MatchString(logName)) {
		e := env{relay: relay, relayAddr: relayAddr, client: client, mock: mock}
		s := scenario{name: logName, target: "relay", kind: "unary", client: "ghz",
			conc: 16, rate: b.o.rate, log: "info"}
		r, err := b.measure(ctx, e, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		rep.Results = append(rep.Results, r)
		time.Sleep(time.Second)
		if idleKB, err = rssKB(relay.pid()); err != nil {
			return err
		}
	}
	if b.o.idleStreams > 0 {
		if err := b.idleStreams(ctx, rep, client, relay, pprofAddr, mockAddr, idleKB); err != nil {
			return err
		}
	}
	if err := b.stop(relay); err != nil {
		return err
	}
	return b.stop(mock)
}

func (b *bench) idleStreams(ctx context.Context, rep *report, client llmrelayv1.GatewayServiceClient, relay *proc, pprofAddr, mockAddr string, baseKB int64) error {
	n := b.o.idleStreams
	before, err := mockStreams(mockAddr)
	if err != nil {
		return err
	}
	memBefore, err := memStats(pprofAddr)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := &llmrelayv1.StreamChatRequest{Model: modelShort, Messages: chatMessages(), Call: callOptions(false)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var unexpected []error
	t0 := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := client.StreamChat(sctx, req)
			if err == nil {
				_, err = s.Recv() // blocks: the mock stalls before the first text chunk
			}
			if status.Code(err) != codes.Canceled {
				mu.Lock()
				unexpected = append(unexpected, err)
				mu.Unlock()
			}
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	var open int64
	for {
		cur, err := mockStreams(mockAddr)
		if err != nil {
			return err
		}
		open = cur - before
		if open >= int64(n) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rep.Idle.OpenSeconds = time.Since(t0).Seconds()
	time.Sleep(2 * time.Second) // let allocations settle
	openKB, err := rssKB(relay.pid())
	if err != nil {
		return err
	}
	rep.Idle.Streams = n
	rep.Idle.StreamsReachedMock = open
	rep.Idle.RSSOpenMB = float64(openKB) / 1024
	rep.Idle.RSSBaseMB = float64(baseKB) / 1024
	rep.Idle.KBPerStream = float64(openKB-baseKB) / float64(n)
	if g, err := goroutines(pprofAddr); err == nil {
		rep.Idle.Goroutines = g
	} else {
		log.Printf("goroutine count: %v", err)
	}
	memOpen, err := memStats(pprofAddr)
	if err != nil {
		return err
	}
	perStream := func(k string) float64 { return float64(memOpen[k]-memBefore[k]) / 1024 / float64(n) }
	rep.Idle.StackKBPerStream = perStream("StackInuse")
	rep.Idle.HeapInuseKBPerStream = perStream("HeapInuse")
	rep.Idle.HeapAllocKBPerStream = perStream("HeapAlloc")
	if b.o.profileDir != "" {
		if err := fetch(ctx, "http://"+pprofAddr+"/debug/pprof/heap?gc=1", filepath.Join(b.o.profileDir, "heap-idle-streams.pprof")); err != nil {
			return err
		}
		if err := fetch(ctx, "http://"+pprofAddr+"/debug/pprof/goroutine", filepath.Join(b.o.profileDir, "goroutine-idle-streams.pprof")); err != nil {
			return err
		}
	}
	log.Printf("idle streams: %d open (%d reached the mock in %.1fs), RSS %.1f MB -> %.1f MB, %.1f KB per stream, %d goroutines, load %.2f",
		n, open, rep.Idle.OpenSeconds, rep.Idle.RSSBaseMB, rep.Idle.RSSOpenMB, rep.Idle.KBPerStream, rep.Idle.Goroutines, load1())
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	rep.Idle.Errors = len(unexpected)
	if len(unexpected) > 0 {
		rep.Idle.FirstError = fmt.Sprint(unexpected[0])
	}
	if open < int64(n) {
		return fmt.Errorf("idle streams: only %d of %d reached the mock (first error: %v)", open, n, errors.Join(unexpected...))
	}
	return nil
}

// mockStreams reads the mock's count of streamed chat requests.
func mockStreams(addr string) (int64, error) {
	resp, err := http.Get("http://" + addr + "/mock/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st struct {
		ChatStream int64 `json:"chat_stream"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, fmt.Errorf("mock stats: %w", err)
	}
	return st.ChatStream, nil
}

// memStats reads the server's runtime.MemStats from the "# Name = value"
// lines at the end of /debug/pprof/heap?debug=1, read after a collection
// (gc=1) so that HeapAlloc counts live objects only.
func memStats(pprofAddr string) (map[string]int64, error) {
	resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/heap?debug=1&gc=1") // after a GC: live objects
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseMemStats(string(body))
}

func parseMemStats(s string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
		if !ok || !strings.HasPrefix(line, "# ") {
			continue
		}
		// "# Stack = inuse / sys" is StackInuse.
		if first, _, ok := strings.Cut(value, " / "); ok && name == "Stack" {
			name, value = "StackInuse", first
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil {
			out[name] = v
		}
	}
	for _, k := range []string{"StackInuse", "HeapInuse", "HeapAlloc"} {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("heap profile without # %s", k)
		}
	}
	return out, nil
}

// goroutines reads the server's goroutine count from pprof.
func goroutines(pprofAddr string) (int, error) {
	resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	head := make([]byte, 128)
	n, err := io.ReadAtLeast(resp.Body, head, 1)
	if err != nil {
		return 0, err
	}
	return parseGoroutineTotal(string(head[:n]))
}

// parseGoroutineTotal reads "goroutine profile: total N" (the first line of
// /debug/pprof/goroutine?debug=1).
func parseGoroutineTotal(s string) (int, error) {
	const prefix = "goroutine profile: total "
	line, _, _ := strings.Cut(s, "\n")
	if !strings.HasPrefix(line, prefix) {
		return 0, fmt.Errorf("unexpected goroutine profile head %q", line)
	}
	return strconv.Atoi(strings.TrimSpace(line[len(prefix):]))
}
