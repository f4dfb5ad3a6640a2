package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat: 100 on
// every mainstream Linux architecture (getconf CLK_TCK).
const clockTicks = 100

// build compiles a main package into out. dir is the module directory the
// build runs in.
func build(ctx context.Context, dir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w\n%s", pkg, dir, err, stderr.String())
	}
	return nil
}

// proc is a child process started by the harness.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error // the Wait result, valid after done is closed
}

// start runs bin with args and the harness's environment plus env; its
// stdout and stderr go to logPath.
func start(name, bin, logPath string, env []string, args ...string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		_ = f.Close() // the start error is the one to report
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// alive reports an error if the process has exited.
func (p *proc) alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v (log: %s)", p.name, p.err, p.log.Name())
	default:
		return nil
	}
}

// stop sends SIGTERM, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) error {
	select {
	case <-p.done:
	default:
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("signal %s: %w", p.name, err)
		}
		select {
		case <-p.done:
		case <-time.After(grace):
			if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				return fmt.Errorf("kill %s: %w", p.name, err)
			}
			<-p.done
		}
	}
	return p.log.Close()
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// waitHTTP polls url until it answers 200 or the timeout passes.
func waitHTTP(p *proc, client *http.Client, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if err := p.alive(); err != nil {
			return err
		}
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // draining a probe; the status is what counts
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("%s: status %d", url, resp.StatusCode)
		} else {
			last = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %v: %v", p.name, timeout, last)
}

// cpuTime is a process's user+system CPU time from /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(raw)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStatCPU(raw []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, errors.New("proc stat: no ')'")
	}
	f := strings.Fields(string(raw[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the name", len(f))
	}
	ut, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat utime: %w", err)
	}
	st, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat stime: %w", err)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// rssKB is VmRSS from /proc/<pid>/status.
func rssKB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseStatusKB(f, "VmRSS:")
}

// parseStatusKB returns the value in kB of a /proc/<pid>/status field.
func parseStatusKB(r io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, field) {
			continue
		}
		f := strings.Fields(line[len(field):])
		if len(f) == 0 {
			return 0, fmt.Errorf("proc status %s: no value", field)
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("proc status: no %s", field)
}

// load1 is the one-minute load average.
func load1() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// rssSampler records the peak RSS of a process while it runs.
type rssSampler struct {
	pid  int
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	max  int64
	err  error
}

func sampleRSS(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{pid: pid, stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.take()
			select {
			case <-s.stop:
				s.take()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) take() {
	kb, err := rssKB(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		return
	}
	s.max = max(s.max, kb)
}

// done stops sampling and returns the peak in kB.
func (s *rssSampler) done() (int64, error) {
	close(s.stop)
	s.wg.Wait()
	return s.max, s.err
}

// hostInfo describes the machine for the report.
type hostInfo struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"`
	MemTotal  string `json:"mem_total"`
}

func readHost(goVersion string) hostInfo {
	h := hostInfo{GoVersion: goVersion}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "processor":
				h.CPUs++
			case "model name":
				h.CPUModel = strings.TrimSpace(v)
			}
		}
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(raw))
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		if kb, err := parseStatusKB(f, "MemTotal:"); err == nil {
			h.MemTotal = fmt.Sprintf("%.1f GB", float64(kb)/(1<<20))
		}
		_ = f.Close() // read-only
	}
	return h
}

// repoRoot finds the directory holding this module's go.mod, from dir up.
func repoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		raw, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(raw, []byte("module github.com/llmrelay/llmrelay\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no llmrelay go.mod above %s: run the harness from the repository", dir)
		}
	}
}

// buildRelay builds llmrelay as the Dockerfile does: static (no cgo),
// trimmed paths, no symbol table or DWARF.
func buildRelay(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/llmrelay")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/llmrelay: %w\n%s", err, b)
	}
	return nil
}
