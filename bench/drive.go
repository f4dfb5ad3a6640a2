package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// sample is one completed call.
type sample struct {
	lat    time.Duration // until the whole answer was read
	ttft   time.Duration // streams: until the first text chunk
	chunks int           // streams: text chunks received
}

// callFunc makes one call.
type callFunc func(ctx context.Context) (sample, error)

// driveResult is what a closed-loop run measured.
type driveResult struct {
	samples  []sample
	errors   int
	firstErr error
	elapsed  time.Duration
}

// warm makes n calls, unmeasured, spread over conc workers.
func warm(ctx context.Context, conc, n int, call callFunc) error {
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	errc := make(chan error, conc)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if _, err := call(ctx); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	return nil
}

// drive runs conc workers that call back to back for d (closed loop: each
// worker starts its next call when the previous one ended).
func drive(ctx context.Context, conc int, d time.Duration, call callFunc) driveResult {
	var mu sync.Mutex
	var res driveResult
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]sample, 0, 4096)
			var nerr int
			var first error
			for time.Now().Before(deadline) && ctx.Err() == nil {
				s, err := call(ctx)
				if err != nil {
					nerr++
					if first == nil {
						first = err
					}
					continue
				}
				local = append(local, s)
			}
			mu.Lock()
			res.samples = append(res.samples, local...)
			res.errors += nerr
			if res.firstErr == nil {
				res.firstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// percentile returns the p-th percentile (0..100) of sorted durations by
// the nearest-rank method; 0 for no data.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	rank = min(max(rank, 0), len(sorted)-1)
	return sorted[rank]
}

// latencies extracts and sorts one field of the samples.
func latencies(ss []sample, field func(sample) time.Duration) []time.Duration {
	out := make([]time.Duration, 0, len(ss))
	for _, s := range ss {
		out = append(out, field(s))
	}
	slices.Sort(out)
	return out
}

// --- llmrelay over gRPC -----------------------------------------------------

func dialRelay(addr string) (*grpc.ClientConn, llmrelayv1.GatewayServiceClient, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return conn, llmrelayv1.NewGatewayServiceClient(conn), nil
}

// The request is a small chat: a system and a user
// message, max_tokens 64.
func chatMessages() []*llmrelayv1.Message {
	return []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "You are a helpful assistant."}}}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "Say hello in one short sentence."}}}},
	}
}

func callOptions(raw bool) *llmrelayv1.CallOptions {
	return &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(raw)}
}

func relayUnary(c llmrelayv1.GatewayServiceClient, model string, raw bool) callFunc {
	req := &llmrelayv1.ChatRequest{Model: model, Messages: chatMessages(),
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(64)}, Call: callOptions(raw)}
	return func(ctx context.Context) (sample, error) {
		t0 := time.Now()
		resp, err := c.Chat(ctx, req)
		if err != nil {
			return sample{}, err
		}
		lat := time.Since(t0)
		if len(resp.GetMessage().GetParts()) == 0 {
			return sample{}, errors.New("chat: empty message")
		}
		if raw && len(resp.GetMeta().GetRaw().GetResponse()) == 0 {
			return sample{}, errors.New("chat: raw capture asked for but missing")
		}
		return sample{lat: lat}, nil
	}
}

func relayStream(c llmrelayv1.GatewayServiceClient, model string, raw bool) callFunc {
	req := &llmrelayv1.StreamChatRequest{Model: model, Messages: chatMessages(),
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(64)}, Call: callOptions(raw)}
	return func(ctx context.Context) (sample, error) {
		t0 := time.Now()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s, err := c.StreamChat(ctx, req)
		if err != nil {
			return sample{}, err
		}
		var out sample
		ended := false
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return sample{}, err
			}
			switch {
			case ev.GetTextDelta() != nil:
				if out.chunks == 0 {
					out.ttft = time.Since(t0)
				}
				out.chunks++
			case ev.GetEnd() != nil:
				ended = true
			}
		}
		out.lat = time.Since(t0)
		if !ended || out.chunks == 0 {
			return sample{}, fmt.Errorf("stream: end=%v, %d text chunks", ended, out.chunks)
		}
		return out, nil
	}
}

// --- the mock, called directly over HTTP -----------------------------------

// directClient keeps one keep-alive connection per worker, as a load
// generator does; over TLS it speaks HTTP/1.1 (as the floor does),
// trusting roots.
func directClient(conc int, roots *x509.CertPool) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2, IdleConnTimeout: time.Minute,
		DisableCompression: true, TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
}

func directBody(stream bool) []byte {
	body := `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},` +
		`{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":64`
	if stream {
		// What llmrelay's OpenAI adapter asks for, so the mock does the same work.
		body += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	return []byte(body + "}")
}

func directUnary(hc *http.Client, url string) callFunc {
	body := directBody(false)
	return func(ctx context.Context) (sample, error) {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return sample{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-bench")
		resp, err := hc.Do(req)
		if err != nil {
			return sample{}, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			return sample{}, err
		}
		if resp.StatusCode != http.StatusOK || n == 0 {
			return sample{}, fmt.Errorf("direct: status %d, %d bytes", resp.StatusCode, n)
		}
		return sample{lat: time.Since(t0)}, nil
	}
}

var (
	dataPrefix   = []byte("data: ")
	doneLine     = []byte("data: [DONE]")
	contentStart = []byte(`"delta":{"content":"`)
)

func directStream(hc *http.Client, url string) callFunc {
	body := directBody(true)
	return func(ctx context.Context) (sample, error) {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return sample{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer sk-bench")
		resp, err := hc.Do(req)
		if err != nil {
			return sample{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return sample{}, fmt.Errorf("direct stream: status %d", resp.StatusCode)
		}
		var out sample
		done := false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 16<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.HasPrefix(line, dataPrefix) {
				continue
			}
			if bytes.Equal(line, doneLine) {
				done = true
				break
			}
			// The first chunk with text is what llmrelay relays as its
			// first text_delta (the role chunk has empty content).
			if bytes.Contains(line, contentStart) {
				if out.chunks == 0 {
					out.ttft = time.Since(t0)
				}
				out.chunks++
			}
		}
		if err := sc.Err(); err != nil {
			return sample{}, err
		}
		// Read to EOF so the connection is reused.
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return sample{}, err
		}
		out.lat = time.Since(t0)
		if !done || out.chunks == 0 {
			return sample{}, fmt.Errorf("direct stream: done=%v, %d text chunks", done, out.chunks)
		}
		return out, nil
	}
}
