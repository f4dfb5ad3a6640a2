// Command bench is llmrelay's benchmark harness. It builds and starts the
// mock upstream (bench/mockupstream: cleartext, and HTTPS offering HTTP/2
// or only HTTP/1.1), llmrelay pointed at it, and the floor (bench/floor: a
// bare gRPC-to-HTTP relay on the same upstreams); drives llmrelay and the
// floor with the same in-process Go gRPC client (and llmrelay with ghz),
// calls the mock directly over HTTP for the baseline in the same run,
// samples each server's CPU time and RSS from /proc, and prints one table
// (RPS, p50/p90/p99, added latency, CPU µs per request and its ratio to
// the floor's, RSS), the CPU per relayed chunk of every provider stream
// format, and the memory per idle stream. The results are also written as
// JSON; -profile DIR writes pprof CPU and heap profiles of the server
// under load.
//
//	go run ./bench                      # about 2-3 minutes
//	go run ./bench -d 10s -profile /tmp/prof
package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

type options struct {
	mockDir     string
	out         string
	profileDir  string
	ghz         string
	noGhz       bool
	dur         time.Duration
	rate        int
	warmup      int
	idleStreams int
	longChunks  int
	keep        bool
	only        *regexp.Regexp
	serverEnv   []string
	telemetry   bool
	// telemetryAB > 0: each relay scenario of the Go client is measured
	// on two relays at once, telemetry off and on, in this many
	// alternating slices of -d (telemetry.go).
	telemetryAB int
}

func main() {
	var o options
	flag.StringVar(&o.mockDir, "mock", "bench/mockupstream", "mock upstream source directory (relative to the repository root)")
	flag.StringVar(&o.out, "out", "", "JSON results file (default bench/results/<UTC time>.json)")
	flag.StringVar(&o.profileDir, "profile", "", "write pprof CPU and heap profiles of the server under load to this directory")
	flag.StringVar(&o.ghz, "ghz", "", "ghz binary (default: PATH, then $(go env GOPATH)/bin/ghz)")
	flag.BoolVar(&o.noGhz, "no-ghz", false, "skip the ghz scenarios (Go client only)")
	flag.DurationVar(&o.dur, "d", 5*time.Second, "duration of each scenario")
	flag.IntVar(&o.rate, "rate", 2000, "requests per second of the fixed-rate scenarios")
	flag.IntVar(&o.warmup, "warmup", 300, "unmeasured calls before each scenario")
	flag.IntVar(&o.idleStreams, "idle-streams", 5000, "open idle streams for the memory measurement (0: skip)")
	flag.IntVar(&o.longChunks, "long-chunks", 200, "text chunks of the long stream (per-chunk CPU = long - short)")
	flag.BoolVar(&o.telemetry, "telemetry", false, "turn tracing (exporter none: every span made, batched and dropped) and metrics on in the relay's configuration")
	flag.IntVar(&o.telemetryAB, "telemetry-ab", 0, "measure telemetry's overhead paired: run each relay scenario (Go client) on a relay with telemetry off and one with it on, alternating in this many slices of -d each (0: off)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (configs, binaries, server logs)")
	serverEnv := flag.String("server-env", "GODEBUG=gcshrinkstackoff=1", "environment of the llmrelay process, comma-separated KEY=VALUE (default: the Dockerfile's; \"\" for none)")
	only := flag.String("only", "", "run only the scenarios whose name matches this regular expression")
	flag.Parse()
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			log.Fatalf("-only: %v", err)
		}
		o.only = re
	}
	if o.telemetryAB < 0 || (o.telemetryAB > 0 && o.telemetry) {
		log.Fatal("-telemetry-ab: a count of slices, without -telemetry (it runs a relay with telemetry and one without)")
	}
	if *serverEnv != "" {
		for _, kv := range strings.Split(*serverEnv, ",") {
			if !strings.Contains(kv, "=") {
				log.Fatalf("-server-env: %q is not KEY=VALUE", kv)
			}
			o.serverEnv = append(o.serverEnv, kv)
		}
	}
	log.SetFlags(log.Ltime)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	began := time.Now()
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := repoRoot(cwd)
	if err != nil {
		return err
	}
	mockDir := o.mockDir
	if !filepath.IsAbs(mockDir) {
		mockDir = filepath.Join(root, mockDir)
	}
	ghzBin := ""
	if !o.noGhz {
		if ghzBin, err = findGhz(o.ghz); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "llmrelay-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		log.Printf("temporary files in %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}

	log.Printf("building the mock upstream, the floor and llmrelay (load %.2f)", load1())
	mockBin, floorBin, relayBin := filepath.Join(tmp, "mockupstream"), filepath.Join(tmp, "floor"), filepath.Join(tmp, "llmrelay")
	if err := build(ctx, mockDir, ".", mockBin); err != nil {
		return err
	}
	if err := build(ctx, filepath.Join(root, "bench", "floor"), ".", floorBin); err != nil {
		return err
	}
	if err := buildRelay(ctx, root, relayBin); err != nil {
		return err
	}

	b := &bench{o: o, tmp: tmp, mockBin: mockBin, floorBin: floorBin, relayBin: relayBin, ghzBin: ghzBin}
	defer b.stopAll()
	rep := &report{
		Date: began.UTC().Format(time.RFC3339), Host: readHost(runtime.Version()),
		LoadStart: load1(), ScenarioSeconds: o.dur.Seconds(), FixedRate: o.rate,
		Args: os.Args[1:], ServerEnv: o.serverEnv,
	}
	if err := b.runAll(ctx, rep); err != nil {
		return err
	}
	rep.LoadEnd = load1()
	rep.WallSeconds = time.Since(began).Seconds()
	rep.finish()
	rep.print(os.Stdout)

	out := o.out
	if out == "" {
		out = filepath.Join(root, "bench", "results", began.UTC().Format("20060102T150405Z")+".json")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	log.Printf("results written to %s (%.0fs in all)", out, rep.WallSeconds)
	return nil
}

// bench holds the processes of one run.
type bench struct {
	o                                   options
	tmp                                 string
	mockBin, floorBin, relayBin, ghzBin string
	procs                               []*proc
	roots                               *x509.CertPool // the TLS mocks' certificates
}

func (b *bench) stopAll() {
	for i := len(b.procs) - 1; i >= 0; i-- {
		if err := b.procs[i].stop(5 * time.Second); err != nil {
			log.Printf("stop: %v", err)
		}
	}
	b.procs = nil
}

func (b *bench) stop(p *proc) error {
	for i, q := range b.procs {
		if q == p {
			b.procs = append(b.procs[:i], b.procs[i+1:]...)
			break
		}
	}
	return p.stop(5 * time.Second)
}

// startRelay starts llmrelay serving models over the upstreams; it trusts
// the TLS mocks' certificates (SSL_CERT_FILE).
func (b *bench) startRelay(name string, models []benchModel, ups map[string]*upstream, logLevel string, pprof bool) (*proc, string, string, error) {
	return b.startRelayTelemetry(name, models, ups, logLevel, pprof, b.o.telemetry)
}

// telemetryYAML turns tracing (every span made, batched and dropped by
// the no-op exporter) and metrics on.
const telemetryYAML = "telemetry:\n  tracing: {enabled: true, exporter: none}\n  metrics: {enabled: true, listen: \"127.0.0.1:0\"}\n"

func (b *bench) startRelayTelemetry(name string, models []benchModel, ups map[string]*upstream, logLevel string, pprof, telemetry bool) (*proc, string, string, error) {
	listen, err := freeAddr()
	if err != nil {
		return nil, "", "", err
	}
	cfg := relayConfig(listen, logLevel, models, ups)
	if telemetry {
		cfg += telemetryYAML
	}
	cfgPath := filepath.Join(b.tmp, name+".yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, "", "", err
	}
	args := []string{"serve", "-config", cfgPath}
	pprofAddr := ""
	if pprof {
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, "", "", err
		}
		args = append(args, "-pprof", pprofAddr)
	}
	env := append([]string{"SSL_CERT_FILE=" + b.bundle()}, b.o.serverEnv...)
	p, err := start(name, b.relayBin, filepath.Join(b.tmp, name+".log"), env, args...)
	if err != nil {
		return nil, "", "", err
	}
	b.procs = append(b.procs, p)
	if err := waitGRPC(p, listen, 15*time.Second); err != nil {
		return nil, "", "", err
	}
	return p, listen, pprofAddr, nil
}

// startFloor starts the bare relay in front of upstream u.
func (b *bench) startFloor(name string, u *upstream, routes []string) (*proc, string, error) {
	listen, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	args := []string{"-listen", listen, "-upstream", u.scheme() + "://" + u.addr, "-ca", b.bundle()}
	if u.kind == "clear" {
		args = args[:4]
	}
	for _, r := range routes {
		args = append(args, "-route", r)
	}
	p, err := start(name, b.floorBin, filepath.Join(b.tmp, name+".log"), nil, args...)
	if err != nil {
		return nil, "", err
	}
	b.procs = append(b.procs, p)
	if err := waitGRPC(p, listen, 15*time.Second); err != nil {
		return nil, "", err
	}
	return p, listen, nil
}

// fetch saves an HTTP GET (a pprof endpoint) to path.
func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close() // the copy error is the one to report
		return err
	}
	return f.Close()
}
