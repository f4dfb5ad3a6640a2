package main

import (
	"cmp"
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
	name    string // row label
	target  string // "relay", "floor", "floor-tls" or "direct"
	kind    string // "unary", "stream", "stream-long"
	client  string // "go" or "ghz"
	conc    int
	rate    int // ghz fixed rate; 0 = closed loop
	raw     bool
	log     string        // server log level
	base    string        // name of the direct row this one's added latency is relative to
	floor   string        // name of the floor row this one's CPU is compared with
	model   string        // the model called ("": modelShort, or modelLong for stream-long)
	up      string        // the upstream: "clear" (""), "tls" or "tls1"
	format  string        // per-chunk rows: the stream format
	variant string        // per-chunk rows: the upstream variant (clear, tls, tls-h2, tls-nethttp1)
	dur     time.Duration // the measured window (0: -d)
}

// gateway is a running llmrelay or floor and a client of it.
type gateway struct {
	proc      *proc
	addr      string
	client    llmrelayv1.GatewayServiceClient
	pprofAddr string
}

// env is what the scenarios run against.
type env struct {
	gws map[string]*gateway  // relay, floor, floor-tls
	ups map[string]*upstream // clear, tls, tls1
}

func (e env) upstream(s scenario) *upstream {
	if s.up == "" {
		return e.ups["clear"]
	}
	return e.ups[s.up]
}

func (b *bench) runAll(ctx context.Context, rep *report) error {
	ups := map[string]*upstream{}
	for _, u := range []struct{ name, kind string }{{"mock", "clear"}, {"mock-tls", "tls"}, {"mock-tls1", "tls1"}} {
		up, err := b.startUpstream(u.name, u.kind)
		if err != nil {
			return err
		}
		ups[u.kind] = up
	}
	models := b.models()
	e := env{gws: map[string]*gateway{}, ups: ups}
	relay, relayAddr, pprofAddr, err := b.startRelay("relay", models, ups, "warn", b.o.profileDir != "")
	if err != nil {
		return err
	}
	e.gws["relay"] = &gateway{proc: relay, addr: relayAddr, pprofAddr: pprofAddr}
	if b.o.telemetryAB > 0 {
		p, addr, _, err := b.startRelayTelemetry("relay-tel", models, ups, "warn", false, true)
		if err != nil {
			return err
		}
		e.gws["relay-tel"] = &gateway{proc: p, addr: addr}
	}
	for _, f := range []struct{ name, up string }{{"floor", "clear"}, {"floor-tls", "tls"}} {
		p, addr, err := b.startFloor(f.name, ups[f.up], floorRoutes(models, f.up))
		if err != nil {
			return err
		}
		e.gws[f.name] = &gateway{proc: p, addr: addr}
	}
	for _, g := range e.gws {
		conn, client, err := dialRelay(g.addr)
		if err != nil {
			return err
		}
		defer conn.Close()
		g.client = client
	}
	if kb, err := rssKB(relay.pid()); err == nil {
		rep.RSSStartMB = float64(kb) / 1024
	}
	for _, s := range b.scenarios() {
		if (s.client == "ghz" && b.o.noGhz) || (b.o.only != nil && !b.o.only.MatchString(s.name)) {
			continue
		}
		s.log = "warn"
		if b.o.telemetryAB > 0 && s.target == "relay" && s.client == "go" {
			s.dur = b.sliceDur()
			ab, err := b.measureAB(ctx, e, s)
			if err != nil {
				return err
			}
			rep.TelemetryAB = append(rep.TelemetryAB, ab)
			continue
		}
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
	b.stopAll()
	return b.idlePhase(ctx, rep)
}

// scenarios lists the rows of a run.
func (b *bench) scenarios() []scenario {
	c1Unary, c16Unary := "direct unary c=1", "direct unary c=16"
	c1Stream := "direct stream c=1"
	sc := []scenario{
		{name: c1Unary, target: "direct", kind: "unary", client: "go", conc: 1},
		{name: "floor unary c=1", target: "floor", kind: "unary", client: "go", conc: 1, base: c1Unary},
		{name: "relay unary c=1", target: "relay", kind: "unary", client: "go", conc: 1, base: c1Unary, floor: "floor unary c=1"},
		{name: "relay unary c=1 raw", target: "relay", kind: "unary", client: "go", conc: 1, raw: true, base: c1Unary, floor: "floor unary c=1"},
		{name: "relay unary c=1 (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 1, base: c1Unary},
		{name: c16Unary, target: "direct", kind: "unary", client: "go", conc: 16},
		{name: "floor unary c=16", target: "floor", kind: "unary", client: "go", conc: 16, base: c16Unary},
		{name: "relay unary c=16", target: "relay", kind: "unary", client: "go", conc: 16, base: c16Unary, floor: "floor unary c=16"},
		{name: "relay unary c=16 (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, base: c16Unary},
		{name: "relay unary c=16 raw (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, raw: true, base: c16Unary},
		{name: "direct unary c=64", target: "direct", kind: "unary", client: "go", conc: 64},
		{name: "relay unary c=64 (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 64, base: "direct unary c=64"},
		{name: "relay unary fixed rate (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, rate: b.o.rate},
		{name: "relay unary fixed rate raw (ghz)", target: "relay", kind: "unary", client: "ghz", conc: 16, rate: b.o.rate, raw: true},
	}
	// TLS: llmrelay's default (HTTP/1.1 on its own pool), net/http's
	// HTTP/2 and net/http's HTTP/1.1, against the floor over TLS.
	for _, c := range []int{1, 16} {
		direct, floor := fmt.Sprintf("direct tls unary c=%d", c), fmt.Sprintf("floor tls unary c=%d", c)
		sc = append(sc,
			scenario{name: direct, target: "direct", kind: "unary", client: "go", conc: c, up: "tls"},
			scenario{name: floor, target: "floor-tls", kind: "unary", client: "go", conc: c, up: "tls", base: direct, model: shortModel("openai-chat", "tls")})
		for _, v := range tlsVariants {
			sc = append(sc, scenario{name: fmt.Sprintf("relay %s unary c=%d", v.name, c), target: "relay", kind: "unary", client: "go", conc: c,
				up: v.up, base: direct, floor: floor, model: shortModel("openai-chat", v.name)})
		}
	}
	sc = append(sc,
		scenario{name: c1Stream, target: "direct", kind: "stream", client: "go", conc: 1},
		scenario{name: "floor stream c=1", target: "floor", kind: "stream", client: "go", conc: 1, base: c1Stream},
		scenario{name: "relay stream c=1", target: "relay", kind: "stream", client: "go", conc: 1, base: c1Stream, floor: "floor stream c=1"},
		scenario{name: "relay stream c=1 raw", target: "relay", kind: "stream", client: "go", conc: 1, raw: true, base: c1Stream},
		scenario{name: "direct stream c=16", target: "direct", kind: "stream", client: "go", conc: 16},
		scenario{name: "relay stream c=16 (ghz)", target: "relay", kind: "stream", client: "ghz", conc: 16, base: "direct stream c=16"},
	)
	// CPU per relayed chunk: 20- and long-chunk streams of every format,
	// llmrelay and the floor; OpenAI chat also over TLS.
	perChunk := func(target, format, variant, up string) {
		for _, long := range []bool{false, true} {
			kind, model := "stream", shortModel(format, variant)
			if long {
				kind, model = "stream-long", longModel(format, variant)
			}
			who := "relay"
			if target != "relay" {
				who = "floor"
			}
			name := fmt.Sprintf("%s %s c=8 %s", who, kind, format)
			if variant != "clear" {
				name += " " + variant
			}
			sc = append(sc, scenario{name: name, target: target, kind: kind, client: "go", conc: 8, model: model, up: up,
				format: format, variant: variant})
		}
	}
	for _, f := range streamFormats {
		perChunk("relay", f.name, "clear", "clear")
		perChunk("floor", f.name, "clear", "clear")
	}
	for _, v := range tlsVariants {
		perChunk("relay", "openai-chat", v.name, v.up)
	}
	perChunk("floor-tls", "openai-chat", "tls", "tls")
	return sc
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
	target := s.target
	if target == "floor-tls" {
		target = "floor"
	}
	r := result{Name: s.name, Target: target, Kind: s.kind, Client: s.client, Concurrency: s.conc,
		Rate: s.rate, Raw: s.raw, LogLevel: s.log, Base: s.base, Floor: s.floor, Upstream: e.upstream(s).kind,
		Model: s.model, Format: s.format, Variant: s.variant, Load1: load1()}
	if s.target == "direct" {
		r.LogLevel = ""
	}
	var gw *proc
	if g := e.gws[s.target]; g != nil {
		gw = g.proc
	}
	mock := e.upstream(s).proc
	var gwCPU0 time.Duration
	if gw != nil {
		if gwCPU0, err = cpuTime(gw.pid()); err != nil {
			return r, err
		}
	}
	mockCPU0, err := cpuTime(mock.pid())
	if err != nil {
		return r, err
	}
	var rss *rssSampler
	if gw != nil {
		rss = sampleRSS(gw.pid(), 100*time.Millisecond)
	}
	if s.client == "ghz" {
		err = b.runGhz(ctx, e.gws[s.target].addr, s, &r)
	} else {
		b.runGo(ctx, s, call, &r)
	}
	var peak int64
	if rss != nil {
		var rssErr error
		if peak, rssErr = rss.done(); rssErr != nil && err == nil {
			err = rssErr
		}
	}
	if err != nil {
		return r, err
	}
	mockCPU1, err := cpuTime(mock.pid())
	if err != nil {
		return r, err
	}
	if r.Count > 0 {
		if gw != nil {
			gwCPU1, err := cpuTime(gw.pid())
			if err != nil {
				return r, err
			}
			r.RelayCPUus = us(gwCPU1-gwCPU0) / float64(r.Count)
			r.RelayRSSMB = float64(peak) / 1024
		}
		r.MockCPUus = us(mockCPU1-mockCPU0) / float64(r.Count)
	}
	log.Printf("%-40s load %.2f  %7.0f rps  p50 %8.1fµs  p99 %8.1fµs  cpu %6.1fµs/req  errors %d",
		s.name, r.Load1, r.RPS, r.P50us, r.P99us, r.RelayCPUus, r.Errors)
	return r, nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func scenarioModel(s scenario) string {
	switch {
	case s.model != "":
		return s.model
	case s.kind == "stream-long":
		return modelLong
	}
	return modelShort
}

func (b *bench) callFor(e env, s scenario) (callFunc, error) {
	model := scenarioModel(s)
	u := e.upstream(s)
	url := u.scheme() + "://" + u.addr + "/v1/chat/completions"
	g := e.gws[s.target]
	switch {
	case s.target == "direct" && s.kind == "unary":
		return directUnary(directClient(s.conc, b.roots), url), nil
	case s.target == "direct":
		return directStream(directClient(s.conc, b.roots), url), nil
	case g == nil:
		return nil, fmt.Errorf("no gateway %q", s.target)
	case s.kind == "unary":
		return relayUnary(g.client, model, s.raw), nil
	default:
		return relayStream(g.client, model, s.raw), nil
	}
}

func (b *bench) runGo(ctx context.Context, s scenario, call callFunc, r *result) {
	d := drive(ctx, s.conc, cmp.Or(s.dur, b.o.dur), call)
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
	model := scenarioModel(s)
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

func (b *bench) runGhz(ctx context.Context, addr string, s scenario, r *result) error {
	data, method, err := ghzData(s)
	if err != nil {
		return err
	}
	g := ghzRun{bin: b.ghzBin, addr: addr, method: method, data: data, conc: s.conc, rate: s.rate, dur: b.o.dur,
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
	pprofAddr := e.gws["relay"].pprofAddr
	runs := []struct {
		file string
		s    scenario
	}{
		{"cpu-unary.pprof", scenario{name: "profile unary", target: "relay", kind: "unary", client: "go", conc: 16}},
		{"cpu-unary-c1.pprof", scenario{name: "profile unary c=1", target: "relay", kind: "unary", client: "go", conc: 1}},
		{"cpu-unary-raw.pprof", scenario{name: "profile unary raw", target: "relay", kind: "unary", client: "go", conc: 16, raw: true}},
		{"cpu-stream.pprof", scenario{name: "profile stream", target: "relay", kind: "stream-long", client: "go", conc: 16}},
		{"cpu-stream-gemini.pprof", scenario{name: "profile stream gemini", target: "relay", kind: "stream-long", client: "go", conc: 8, model: longModel("gemini", "clear")}},
		{"cpu-stream-responses.pprof", scenario{name: "profile stream openai-responses", target: "relay", kind: "stream-long", client: "go", conc: 8, model: longModel("openai-responses", "clear")}},
		{"cpu-unary-tls.pprof", scenario{name: "profile unary tls", target: "relay", kind: "unary", client: "go", conc: 16, up: "tls", model: shortModel("openai-chat", "tls")}},
		{"cpu-unary-tls-h2.pprof", scenario{name: "profile unary tls-h2", target: "relay", kind: "unary", client: "go", conc: 16, up: "tls", model: shortModel("openai-chat", "tls-h2")}},
	}
	for _, pr := range runs {
		call, err := b.callFor(e, pr.s)
		if err != nil {
			return err
		}
		errc := make(chan error, 1)
		go func() {
			errc <- fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, secs), filepath.Join(b.o.profileDir, pr.file))
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
			errc <- fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, secs), filepath.Join(b.o.profileDir, "cpu-unary-rate.pprof"))
		}()
		var r result
		if err := b.runGhz(ctx, e.gws["relay"].addr, s, &r); err != nil {
			return err
		}
		if err := <-errc; err != nil {
			return err
		}
		log.Printf("profiled %s: %d calls, %d errors -> cpu-unary-rate.pprof", s.name, r.Count, r.Errors)
	}
	return fetch(ctx, "http://"+pprofAddr+"/debug/pprof/heap", filepath.Join(b.o.profileDir, "heap-after-load.pprof"))
}

// idlePhase starts a fresh server against a mock whose streams stall after
// the first chunk: it reports RSS idle, the CPU cost of info-level logging,
// and the memory per open idle stream, then the same memory of the floor.
func (b *bench) idlePhase(ctx context.Context, rep *report) error {
	mock, err := b.startUpstream("mock-slow", "clear", "-chunk-delay", "10m")
	if err != nil {
		return err
	}
	ups := map[string]*upstream{"clear": mock}
	models := []benchModel{{name: modelShort, ptype: "openai", format: "openai-chat", floorFormat: "openai-chat", upstream: "gpt-4o-mini", up: "clear"}}
	relay, relayAddr, pprofAddr, err := b.startRelay("relay-idle", models, ups, "info", true)
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
		e := env{gws: map[string]*gateway{"relay": {proc: relay, addr: relayAddr, client: client}}, ups: ups}
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
		if err := b.idleStreams(ctx, rep, client, relay, pprofAddr, mock.addr, idleKB); err != nil {
			return err
		}
	}
	if err := b.stop(relay); err != nil {
		return err
	}
	if b.o.idleStreams > 0 {
		if err := b.floorIdleStreams(ctx, rep, mock, models); err != nil {
			return err
		}
	}
	return b.stop(mock.proc)
}

// openIdleStreams opens n streams that stall at the mock, waits until the
// mock has them all, and returns a function that cancels them and reports
// the errors that were not the cancellation.
func openIdleStreams(ctx context.Context, client llmrelayv1.GatewayServiceClient, mockAddr string, n int) (int64, func() []error, error) {
	before, err := mockStreams(mockAddr)
	if err != nil {
		return 0, nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	req := &llmrelayv1.StreamChatRequest{Model: modelShort, Messages: chatMessages(), Call: callOptions(false)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var unexpected []error
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := client.StreamChat(sctx, req)
			for err == nil {
				_, err = s.Recv() // blocks: the mock stalls before the first text chunk
			}
			if status.Code(err) != codes.Canceled {
				mu.Lock()
				unexpected = append(unexpected, err)
				mu.Unlock()
			}
		}()
	}
	done := func() []error {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return unexpected
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		cur, err := mockStreams(mockAddr)
		if err != nil {
			done()
			return 0, nil, err
		}
		if open := cur - before; open >= int64(n) || time.Now().After(deadline) {
			return open, done, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *bench) idleStreams(ctx context.Context, rep *report, client llmrelayv1.GatewayServiceClient, relay *proc, pprofAddr, mockAddr string, baseKB int64) error {
	n := b.o.idleStreams
	memBefore, err := memStats(pprofAddr)
	if err != nil {
		return err
	}
	t0 := time.Now()
	open, done, err := openIdleStreams(ctx, client, mockAddr, n)
	if err != nil {
		return err
	}
	rep.Idle.OpenSeconds = time.Since(t0).Seconds()
	time.Sleep(2 * time.Second) // let allocations settle
	openKB, err := rssKB(relay.pid())
	if err != nil {
		done()
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
		done()
		return err
	}
	perStream := func(k string) float64 { return float64(memOpen[k]-memBefore[k]) / 1024 / float64(n) }
	rep.Idle.StackKBPerStream = perStream("StackInuse")
	rep.Idle.HeapInuseKBPerStream = perStream("HeapInuse")
	rep.Idle.HeapAllocKBPerStream = perStream("HeapAlloc")
	if b.o.profileDir != "" {
		if err := fetch(ctx, "http://"+pprofAddr+"/debug/pprof/heap?gc=1", filepath.Join(b.o.profileDir, "heap-idle-streams.pprof")); err != nil {
			done()
			return err
		}
		if err := fetch(ctx, "http://"+pprofAddr+"/debug/pprof/goroutine", filepath.Join(b.o.profileDir, "goroutine-idle-streams.pprof")); err != nil {
			done()
			return err
		}
	}
	log.Printf("idle streams: %d open (%d reached the mock in %.1fs), RSS %.1f MB -> %.1f MB, %.1f KB per stream, %d goroutines, load %.2f",
		n, open, rep.Idle.OpenSeconds, rep.Idle.RSSBaseMB, rep.Idle.RSSOpenMB, rep.Idle.KBPerStream, rep.Idle.Goroutines, load1())
	unexpected := done()
	rep.Idle.Errors = len(unexpected)
	if len(unexpected) > 0 {
		rep.Idle.FirstError = fmt.Sprint(unexpected[0])
	}
	if open < int64(n) {
		return fmt.Errorf("idle streams: only %d of %d reached the mock (first error: %v)", open, n, errors.Join(unexpected...))
	}
	return nil
}

// floorIdleStreams measures the floor's memory per open idle stream the
// same way (RSS growth; the floor has no pprof).
func (b *bench) floorIdleStreams(ctx context.Context, rep *report, mock *upstream, models []benchModel) error {
	floor, addr, err := b.startFloor("floor-idle", mock, floorRoutes(models, "clear"))
	if err != nil {
		return err
	}
	conn, client, err := dialRelay(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := warm(ctx, 4, 2000, relayUnary(client, modelShort, false)); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	baseKB, err := rssKB(floor.pid())
	if err != nil {
		return err
	}
	rep.Idle.FloorRSSIdleMB = float64(baseKB) / 1024
	n := b.o.idleStreams
	open, done, err := openIdleStreams(ctx, client, mock.addr, n)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	openKB, err := rssKB(floor.pid())
	unexpected := done()
	if err != nil {
		return err
	}
	if open < int64(n) || len(unexpected) > 0 {
		return fmt.Errorf("floor idle streams: %d of %d reached the mock (first error: %v)", open, n, errors.Join(unexpected...))
	}
	rep.Idle.FloorKBPerStream = float64(openKB-baseKB) / float64(n)
	log.Printf("floor idle streams: %d open, RSS %.1f MB -> %.1f MB, %.1f KB per stream", n, float64(baseKB)/1024, float64(openKB)/1024, rep.Idle.FloorKBPerStream)
	return b.stop(floor)
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
