package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// ghzRun is one ghz invocation.
type ghzRun struct {
	bin    string
	addr   string
	method string // e.g. llmrelay.v1.GatewayService/Chat
	data   []byte // the request as protojson
	conc   int
	rate   int // requests per second; 0 = as fast as possible
	dur    time.Duration
	out    string // where ghz writes its JSON report
}

// ghzReport is the part of ghz's JSON report the harness uses. Latencies
// are in nanoseconds.
type ghzReport struct {
	Count                  int64            `json:"count"`
	Total                  int64            `json:"total"`
	Average                int64            `json:"average"`
	RPS                    float64          `json:"rps"`
	ErrorDistribution      map[string]int64 `json:"errorDistribution"`
	StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
	LatencyDistribution    []struct {
		Percentage int   `json:"percentage"`
		Latency    int64 `json:"latency"`
	} `json:"latencyDistribution"`
}

// latency returns the latency at a percentage ghz reports (10, 25, 50, 75,
// 90, 95, 99).
func (r *ghzReport) latency(pct int) (time.Duration, bool) {
	for _, l := range r.LatencyDistribution {
		if l.Percentage == pct {
			return time.Duration(l.Latency), true
		}
	}
	return 0, false
}

// ok is the number of calls that ended with status OK.
func (r *ghzReport) ok() int64 { return r.StatusCodeDistribution["OK"] }

func parseGhzReport(raw []byte) (*ghzReport, error) {
	var r ghzReport
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("ghz report: %w", err)
	}
	if r.Count > 0 && len(r.LatencyDistribution) == 0 && r.ok() > 0 {
		return nil, fmt.Errorf("ghz report: %d calls but no latency distribution", r.Count)
	}
	return &r, nil
}

func (g ghzRun) run(ctx context.Context) (*ghzReport, error) {
	args := []string{
		"--insecure", "--call", g.method, "-d", string(g.data),
		"-c", strconv.Itoa(g.conc), "-z", g.dur.String(), "--duration-stop=wait",
		"--connections=1", "-O", "json", "-o", g.out,
	}
	if g.rate > 0 {
		args = append(args, "--rps", strconv.Itoa(g.rate))
	}
	args = append(args, g.addr)
	cmd := exec.CommandContext(ctx, g.bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ghz %s: %w\n%s", g.method, err, stderr.String())
	}
	raw, err := os.ReadFile(g.out)
	if err != nil {
		return nil, err
	}
	return parseGhzReport(raw)
}

// findGhz returns the ghz binary: the flag, then PATH, then $GOPATH/bin.
func findGhz(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p, err := exec.LookPath("ghz"); err == nil {
		return p, nil
	}
	gopath, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(string(bytes.TrimSpace(gopath)), "bin", "ghz")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("ghz not found: go install github.com/bojand/ghz/cmd/ghz@v0.120.0 (or -ghz PATH, or -no-ghz)")
}
