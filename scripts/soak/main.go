// Command soak drives a running llmrelay with thousands of concurrent
// streams, some cancelled half-way, against a trickling OpenAI-compatible
// upstream it serves itself, and reports the server's goroutines, open fds
// and RSS at baseline, at each round's peak and after each round. It exits
// non-zero when goroutines or fds do not come back to baseline. Run it
// with scripts/soak.sh (not part of the test run).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func main() {
	bin := flag.String("bin", "", "the llmrelay binary")
	streams := flag.Int("streams", 2000, "concurrent streams per round")
	rounds := flag.Int("rounds", 3, "rounds")
	cancelShare := flag.Float64("cancel", 0.3, "share of streams cancelled half-way")
	conns := flag.Int("conns", 8, "client connections")
	settle := flag.Duration("settle", 3*time.Second, "wait after a round before sampling")
	flag.Parse()
	if err := run(*bin, *streams, *rounds, *cancelShare, *conns, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// upstream streams 20 chunks, one every 25 ms.
func upstream() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 20 {
			fmt.Fprintf(w, `data: {"id": "s", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"content": "w%d "}, "finish_reason": null}]}`+"\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(25 * time.Millisecond):
			}
		}
		io.WriteString(w, `data: {"id": "s", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}`+"\n\ndata: [DONE]\n\n")
	})}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

type sample struct {
	goroutines, fds int
	rssKB           int
}

func (s sample) String() string {
	return fmt.Sprintf("%6d goroutines %6d fds %8.1f MB RSS", s.goroutines, s.fds, float64(s.rssKB)/1024)
}

func measure(pid int, pprof string) (sample, error) {
	var s sample
	resp, err := http.Get("http://" + pprof + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n') // "goroutine profile: total N"
	if _, err := fmt.Sscanf(line, "goroutine profile: total %d", &s.goroutines); err != nil {
		return s, fmt.Errorf("goroutine profile: %q: %w", line, err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(st), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			s.rssKB, _ = strconv.Atoi(f[1])
		}
	}
	return s, nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func run(bin string, streams, rounds int, cancelShare float64, nconns int, settle time.Duration) error {
	up, stopUp, err := upstream()
	if err != nil {
		return err
	}
	defer stopUp()
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "soak.yaml")
	yaml := fmt.Sprintf(`server: {log_level: warn}
providers:
  - {name: up, type: openai, base_url: %q, api_key: sk-soak-0000000000}
models:
  - {name: m, provider: up, capabilities: {chat: {format: openai-chat}}}
limits: {max_concurrent_calls: %d, max_concurrent_streams: %d}
`, up, 2*streams, 2*streams)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return err
	}
	addr, err := freePort()
	if err != nil {
		return err
	}
	pprof, err := freePort()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "-config", cfg, "-listen", addr, "-pprof", pprof)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	pid := cmd.Process.Pid

	var clients []llmrelayv1.GatewayServiceClient
	for range nconns {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		clients = append(clients, llmrelayv1.NewGatewayServiceClient(conn))
	}
	req := &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER,
		Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "soak"}}}}}}
	one := func(c llmrelayv1.GatewayServiceClient, cancelAfter time.Duration) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if cancelAfter > 0 {
			time.AfterFunc(cancelAfter, cancel)
		}
		s, err := c.StreamChat(ctx, req)
		if err != nil {
			return err
		}
		for {
			if _, err := s.Recv(); err != nil {
				if errors.Is(err, io.EOF) || (cancelAfter > 0 && status.Code(err) == codes.Canceled) {
					return nil
				}
				return err
			}
		}
	}
	// Warm up every connection, then the baseline.
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range clients {
		for one(c, 0) != nil {
			if time.Now().After(deadline) {
				return errors.New("the server did not come up")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(settle)
	base, err := measure(pid, pprof)
	if err != nil {
		return err
	}
	fmt.Printf("baseline            %v\n", base)
	var failed atomic.Int64
	var first, last sample
	for r := range rounds {
		var wg sync.WaitGroup
		start := time.Now()
		for i := range streams {
			var after time.Duration
			if rand.Float64() < cancelShare {
				after = time.Duration(50+rand.IntN(400)) * time.Millisecond
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := one(clients[i%len(clients)], after); err != nil {
					if failed.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "stream:", err)
					}
				}
			}()
		}
		time.Sleep(300 * time.Millisecond)
		peak, err := measure(pid, pprof)
		if err != nil {
			return err
		}
		wg.Wait()
		took := time.Since(start)
		time.Sleep(settle)
		if last, err = measure(pid, pprof); err != nil {
			return err
		}
		fmt.Printf("round %d peak        %v\nround %d after       %v  (%d streams in %v)\n", r+1, peak, r+1, last, streams, took.Round(time.Millisecond))
		if r == 0 {
			first = last
		}
	}
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d streams failed", n)
	}
	// Goroutines come back to the baseline (a little slack for the
	// runtime). Fds come back to the baseline plus the upstream keep-alive
	// pool (at most 256 idle connections, no goroutine each), and RSS,
	// which the Go runtime returns to the OS lazily, must not grow from
	// round to round.
	const pool = 256
	switch {
	case last.goroutines > base.goroutines+10:
		return fmt.Errorf("goroutines not back to baseline: %v after, %v before", last, base)
	case last.fds > base.fds+pool+10:
		return fmt.Errorf("fds not back to baseline plus the keep-alive pool: %v after, %v before", last, base)
	case rounds > 1 && float64(last.rssKB) > 1.25*float64(first.rssKB):
		return fmt.Errorf("RSS grows from round to round: %v after the last, %v after the first", last, first)
	}
	fmt.Println("back to baseline (fds: plus the upstream keep-alive pool; RSS: no growth across rounds)")
	return nil
}
