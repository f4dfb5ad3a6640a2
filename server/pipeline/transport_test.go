package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
)

const secret = "sk-test-SECRET-1234567890"

func TestCaptureRedactsSecrets(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "session=abc")
		w.Header().Set("X-Request-Id", "req_1")
		// A provider echoing the key back must not leak it either.
		io.WriteString(w, `{"ok":true,"echo":"`+secret+`"}`)
	}))
	defer upstream.Close()
	client := NewHTTPClient(DefaultTransportConfig, NewRedactor(secret))
	capture := &provider.Capture{Limit: 1 << 20}
	ctx := provider.WithCapture(context.Background(), capture)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, upstream.URL+"/v1/x?key="+secret+"&alt=sse", strings.NewReader(`{"q":"`+secret+`"}`))
	for _, h := range []string{"Authorization", "Api-Key", "X-Api-Key", "X-Goog-Api-Key"} {
		req.Header.Set(h, "Bearer "+secret)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(secret)) {
		t.Fatal("the adapter must still see the real body")
	}
	s := capture.Snapshot()
	all := s.Method + s.URL + string(s.Request) + string(s.Response)
	for k, v := range s.RequestHeaders {
		all += k + v
	}
	for k, v := range s.ResponseHeaders {
		all += k + v
	}
	if strings.Contains(all, secret) || strings.Contains(all, "session=abc") {
		t.Fatalf("secret in capture: %s", all)
	}
	if s.RequestHeaders["authorization"] != "[REDACTED]" || s.RequestHeaders["x-goog-api-key"] != "[REDACTED]" || !strings.Contains(s.URL, "key=%5BREDACTED%5D") {
		t.Errorf("headers %v url %s", s.RequestHeaders, s.URL)
	}
	if s.ResponseHeaders["x-request-id"] != "req_1" || s.Status != 200 || !bytes.Contains(s.Response, []byte(`"ok":true`)) {
		t.Errorf("capture incomplete: %+v", s)
	}
}

func TestCaptureCap(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 1000))
	}))
	defer upstream.Close()
	client := NewHTTPClient(DefaultTransportConfig, NewRedactor())
	capture := &provider.Capture{Limit: 100}
	req, _ := http.NewRequestWithContext(provider.WithCapture(context.Background(), capture), http.MethodPost, upstream.URL, strings.NewReader(strings.Repeat("y", 500)))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := capture.Snapshot()
	if len(body) != 1000 || len(s.Response) != 100 || !s.ResponseCut || len(s.Request) != 100 || !s.RequestCut {
		t.Errorf("body %d, captured %d/%v, request %d/%v", len(body), len(s.Response), s.ResponseCut, len(s.Request), s.RequestCut)
	}
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select { // then silence
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer upstream.Close()
	defer close(release)
	cfg := DefaultTransportConfig
	cfg.IdleTimeout = 50 * time.Millisecond
	client := NewHTTPClient(cfg, nil)
	req, _ := http.NewRequest(http.MethodGet, upstream.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("err = %v, want ErrIdleTimeout", err)
	}
	if pe := provider.TransportError("x", err); pe.Kind != provider.KindTimeout {
		t.Errorf("classified as %v, want timeout", pe.Kind)
	}
}

// TestIdleTimeoutIgnoresReaderPauses: the idle timer measures the
// provider's silence only; a reader that pauses between reads (a relay
// blocked on a slow client) longer than the idle timeout is not cut.
func TestIdleTimeoutIgnoresReaderPauses(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, ev := range []string{"data: one\n\n", "data: two\n\n", "data: three\n\n"} {
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}))
	defer upstream.Close()
	cfg := DefaultTransportConfig
	cfg.IdleTimeout = 50 * time.Millisecond
	client := NewHTTPClient(cfg, nil)
	req, _ := http.NewRequest(http.MethodGet, upstream.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 4)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * cfg.IdleTimeout) // the reader is busy elsewhere; the provider has sent everything
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("after a pause of the reader: %v", err)
	}
	if got := string(first) + string(rest); got != "data: one\n\ndata: two\n\ndata: three\n\n" {
		t.Errorf("body = %q", got)
	}
}

// TestCancelReachesUpstream: a cancelled call closes the upstream request.
func TestCancelReachesUpstream(t *testing.T) {
	t.Parallel()
	gone := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer upstream.Close()
	client := NewHTTPClient(DefaultTransportConfig, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, upstream.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request still open after the caller cancelled")
	}
}

// TestCloseDrainsForReuse: a body closed right after the provider's final
// event, before the chunked terminator arrived, still returns its
// connection to the pool.
func TestCloseDrainsForReuse(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		// The terminator follows later: a little (the drain waits up to
		// drainTimeout, 50 ms, which a loaded CI machine can eat into).
		time.Sleep(2 * time.Millisecond)
	}))
	upstream.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	upstream.Start()
	defer upstream.Close()
	client := NewHTTPClient(DefaultTransportConfig, nil)
	for i := 0; i < 3; i++ {
		resp, err := client.Get(upstream.URL)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len("data: [DONE]\n\n"))
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // as an adapter does at [DONE]
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 sequential requests, want 1", n)
	}
}

// TestCaptureRedactsAcrossReads: a secret the provider echoes back is
// redacted in the capture even when it arrives split over two reads, or
// straddles the capture limit.
func TestCaptureRedactsAcrossReads(t *testing.T) {
	t.Parallel()
	half := len(secret) / 2
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"echo":"`+secret[:half])
		w.(http.Flusher).Flush()
		time.Sleep(5 * time.Millisecond) // the second half comes in another read
		io.WriteString(w, secret[half:]+`","pad":"`+strings.Repeat("p", 40)+`"}`)
	}))
	defer upstream.Close()
	client := NewHTTPClient(DefaultTransportConfig, NewRedactor(secret))
	for _, limit := range []int{0, len(`{"echo":"`) + 4} { // no cap; a cap inside the secret
		capture := &provider.Capture{Limit: limit}
		req, _ := http.NewRequestWithContext(provider.WithCapture(context.Background(), capture), http.MethodPost, upstream.URL, strings.NewReader("{}"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(body, []byte(secret)) {
			t.Fatal("the adapter must still see the real body")
		}
		s := capture.Snapshot()
		for i := 4; i <= len(secret); i++ {
			if bytes.Contains(s.Response, []byte(secret[:i])) {
				t.Errorf("limit %d: %d bytes of the secret in the capture %q", limit, i, s.Response)
				break
			}
		}
		if limit == 0 && !bytes.Contains(s.Response, []byte(`"echo":"[REDACTED]"`)) {
			t.Errorf("capture %q", s.Response)
		}
		if limit > 0 && (len(s.Response) != limit || !s.ResponseCut) {
			t.Errorf("limit %d: captured %d bytes, cut %v", limit, len(s.Response), s.ResponseCut)
		}
	}
}
