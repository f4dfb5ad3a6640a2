package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
)

// rawServer accepts connections and hands each to serve, counting them.
type rawServer struct {
	ln    net.Listener
	conns atomic.Int32
}

func newRawServer(t *testing.T, serve func(n int32, c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := s.conns.Add(1)
			go func() {
				defer c.Close()
				serve(n, c)
			}()
		}
	}()
	return s
}

func (s *rawServer) URL() string { return "http://" + s.ln.Addr().String() }

// readRequest reads one request and its body from br.
func readRequest(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	return req, body, err
}

// answerOnce answers one request with resp, then closes the connection
// (after promising keep-alive, when resp does).
func answerOnce(resp string) func(int32, net.Conn) {
	return func(_ int32, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err == nil {
			io.WriteString(c, resp)
		}
	}
}

// answerEach answers every request on the connection with resp.
func answerEach(resp string) func(int32, net.Conn) {
	return func(_ int32, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			io.WriteString(c, resp)
		}
	}
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"

func post(t *testing.T, client *http.Client, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return client.Do(req)
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestH1Reuse: sequential calls share one keep-alive connection, chunked
// and Content-Length bodies alike, and the request reaches the server as
// sent.
func TestH1Reuse(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var gotBodies []string
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			req, body, err := readRequest(br)
			if err != nil {
				return
			}
			mu.Lock()
			gotBodies = append(gotBodies, req.Method+" "+req.URL.RequestURI()+" "+req.Header.Get("Authorization")+" "+string(body))
			mu.Unlock()
			if i%2 == 0 {
				io.WriteString(c, okResponse)
			} else {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
			}
		}
	})
	client := NewHTTPClient(DefaultTransportConfig, nil)
	want := []string{`{"ok":true}`, "hello world", `{"ok":true}`, "hello world"}
	for i, w := range want {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/chat?x=1", strings.NewReader(`{"n":1}`))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Request != nil {
			t.Error("the response holds the request (its body and headers) while it is read")
		}
		if got := readAll(t, resp); got != w {
			t.Errorf("call %d: body %q, want %q", i, got, w)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("%d connections for 4 sequential calls, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gotBodies) != 4 || gotBodies[0] != `POST /v1/chat?x=1 Bearer k {"n":1}` {
		t.Errorf("server saw %q", gotBodies)
	}
}

// TestH1StaleConnDropped: a pooled connection the server closed after its
// last response is found closed before reuse (the liveness peek), so each
// call goes out once, on a fresh connection.
func TestH1StaleConnDropped(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err == nil {
			requests.Add(1)
			io.WriteString(c, okResponse) // keep-alive promised, then closed
		}
	})
	client := NewHTTPClient(DefaultTransportConfig, nil)
	for i := 0; i < 3; i++ {
		resp, err := post(t, client, context.Background(), srv.URL(), `{"n":1}`)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got := readAll(t, resp); got != `{"ok":true}` {
			t.Fatalf("call %d: %q", i, got)
		}
		time.Sleep(5 * time.Millisecond) // lets the close reach the client
	}
	if n, r := srv.conns.Load(), requests.Load(); n != 3 || r != 3 {
		t.Errorf("%d connections and %d requests for 3 calls, want 3 and 3", n, r)
	}
}

// TestH1SentPostNotReplayed: a server that read a whole POST and then
// dropped the connection (crashed mid-generation) gets it once, not once
// per pooled connection: the call fails with a connection error and the
// pipeline's retry policy decides.
func TestH1SentPostNotReplayed(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := newRawServer(t, func(n int32, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			if requests.Add(1) > 4 {
				return // the fifth request: drop the connection unanswered
			}
			io.WriteString(c, okResponse)
		}
	})
	client := NewHTTPClient(DefaultTransportConfig, nil)
	// Four pooled connections.
	var open []*http.Response
	for i := 0; i < 4; i++ {
		resp, err := post(t, client, context.Background(), srv.URL(), "x")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp)
	}
	for _, resp := range open {
		readAll(t, resp)
	}
	_, err := post(t, client, context.Background(), srv.URL(), "generate")
	if err == nil {
		t.Fatal("no error")
	}
	if pe := provider.TransportError("x", err); pe.Kind != provider.KindConnection {
		t.Errorf("%v classified as %v", err, pe.Kind)
	}
	time.Sleep(20 * time.Millisecond)
	if r := requests.Load(); r != 5 {
		t.Errorf("the server received %d requests, want 5 (the POST once)", r)
	}
}

// TestH1Replayable: net/http's replay rule.
func TestH1Replayable(t *testing.T) {
	t.Parallel()
	get, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	post, _ := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader("b"))
	keyed, _ := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader("b"))
	keyed.Header.Set("Idempotency-Key", "k1")
	if !replayable(get) || replayable(post) || !replayable(keyed) {
		t.Errorf("replayable: GET %v, POST %v, POST with a key %v", replayable(get), replayable(post), replayable(keyed))
	}
}

// TestH1CancelledNotSent: a call whose context is done is not written to a
// pooled connection.
func TestH1CancelledNotSent(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			requests.Add(1)
			io.WriteString(c, okResponse)
		}
	})
	client := NewHTTPClient(DefaultTransportConfig, nil)
	resp, err := post(t, client, context.Background(), srv.URL(), "x")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 20; i++ {
		if _, err := post(t, client, ctx, srv.URL(), "x"); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if r := requests.Load(); r != 1 {
		t.Errorf("the server received %d requests, want 1", r)
	}
}

// TestH1EarlyCloseNotReused: a body closed before its end takes its
// connection with it (the unread bytes would corrupt the next response).
func TestH1EarlyCloseNotReused(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, answerEach("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"))
	h1 := newH1Transport(DefaultTransportConfig, (&net.Dialer{}).DialContext)
	client := &http.Client{Transport: h1}
	for i := 0; i < 2; i++ {
		resp, err := post(t, client, context.Background(), srv.URL(), "x")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 3)
		if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "012" {
			t.Fatalf("%q %v", buf, err)
		}
		resp.Body.Close()
	}
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestH1ConnectionClose: a response with Connection: close is not pooled.
func TestH1ConnectionClose(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		br := bufio.NewReader(c)
		if _, _, err := readRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
		// The connection stays open: only the header says it is done.
		io.Copy(io.Discard, c)
	})
	client := NewHTTPClient(DefaultTransportConfig, nil)
	for i := 0; i < 2; i++ {
		resp, err := post(t, client, context.Background(), srv.URL(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); got != "ok" {
			t.Fatal(got)
		}
	}
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestH1Informational: 1xx responses before the answer are skipped.
func TestH1Informational(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, answerOnce("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"+okResponse))
	client := NewHTTPClient(DefaultTransportConfig, nil)
	resp, err := post(t, client, context.Background(), srv.URL(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != 200 || got != `{"ok":true}` {
		t.Errorf("%d %q", resp.StatusCode, got)
	}
}

// TestH1FirstByteTimeout: no response headers within the first-byte
// timeout is a timeout error.
func TestH1FirstByteTimeout(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		io.Copy(io.Discard, c) // reads, never answers
	})
	cfg := DefaultTransportConfig
	cfg.FirstByteTimeout = 30 * time.Millisecond
	client := NewHTTPClient(cfg, nil)
	_, err := post(t, client, context.Background(), srv.URL(), "x")
	if err == nil {
		t.Fatal("no error")
	}
	if pe := provider.TransportError("x", err); pe.Kind != provider.KindTimeout {
		t.Errorf("%v classified as %v, want timeout", err, pe.Kind)
	}
}

// TestH1CancelDuringBody: cancelling the call ends a blocked body read with
// the context's error, closes the connection, and the next call dials a
// new one.
func TestH1CancelDuringBody(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(n int32, c net.Conn) {
		br := bufio.NewReader(c)
		if _, _, err := readRequest(br); err != nil {
			return
		}
		if n == 1 {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
			io.Copy(io.Discard, c) // then silence until the client closes
			return
		}
		io.WriteString(c, okResponse)
	})
	client := NewHTTPClient(TransportConfig{MaxIdleConnsPerHost: 4}, nil) // no idle timeout: only the cancel can end the read
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := post(t, client, ctx, srv.URL(), "x")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	resp.Body.Close()
	resp, err = post(t, client, context.Background(), srv.URL(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != `{"ok":true}` {
		t.Fatal(got)
	}
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestH1CancelledBeforeSend: a call whose context is already done fails
// with the context's error.
func TestH1CancelledBeforeSend(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(_ int32, c net.Conn) { io.Copy(io.Discard, c) })
	client := NewHTTPClient(DefaultTransportConfig, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := post(t, client, ctx, srv.URL(), "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// TestH1IdleSweep: connections idle longer than the idle connection
// timeout are closed by the sweeper, without another call.
func TestH1IdleSweep(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{})
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		br := bufio.NewReader(c)
		if _, _, err := readRequest(br); err != nil {
			return
		}
		io.WriteString(c, okResponse)
		if _, err := br.ReadByte(); err == io.EOF {
			close(closed) // the client closed the idle connection
		}
	})
	h1 := newH1Transport(DefaultTransportConfig, (&net.Dialer{}).DialContext)
	h1.idleConnTimeout = 20 * time.Millisecond
	client := &http.Client{Transport: h1}
	resp, err := post(t, client, context.Background(), srv.URL(), "x")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("idle connection never closed")
	}
	h1.mu.Lock()
	defer h1.mu.Unlock()
	if p := h1.pools["http://"+srv.ln.Addr().String()]; len(p.idle) != 0 || p.timer != nil {
		t.Errorf("pool after sweep: %d idle, timer %v", len(p.idle), p.timer != nil)
	}
}

// TestH1PoolCap: at most MaxIdleConnsPerHost connections stay pooled.
func TestH1PoolCap(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, answerEach(okResponse))
	cfg := DefaultTransportConfig
	cfg.MaxIdleConnsPerHost = 2
	h1 := newH1Transport(cfg, (&net.Dialer{}).DialContext)
	client := &http.Client{Transport: h1}
	var open []*http.Response
	for i := 0; i < 4; i++ { // four concurrent calls: four connections
		resp, err := post(t, client, context.Background(), srv.URL(), "x")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp)
	}
	for _, resp := range open {
		readAll(t, resp)
	}
	h1.mu.Lock()
	n := len(h1.pools["http://"+srv.ln.Addr().String()].idle)
	h1.mu.Unlock()
	if n != 2 {
		t.Errorf("%d pooled, want 2", n)
	}
}

// TestSplitTransportProxy: cleartext requests that a proxy is configured
// for go through net/http's Transport (and so the proxy); TLS without a
// proxy goes through the own pool.
func TestSplitTransportProxy(t *testing.T) {
	t.Parallel()
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		io.WriteString(w, "via proxy "+r.URL.String())
	}))
	defer proxy.Close()
	tlsUpstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tls")
	}))
	defer tlsUpstream.Close()
	pu, _ := url.Parse(proxy.URL)
	std := tlsUpstream.Client().Transport.(*http.Transport).Clone()
	std.Proxy = func(r *http.Request) (*url.URL, error) {
		if r.URL.Host == "upstream.example:8080" {
			return pu, nil
		}
		return nil, nil
	}
	h1 := newH1Transport(DefaultTransportConfig, (&net.Dialer{}).DialContext)
	h1.tls.RootCAs = std.TLSClientConfig.RootCAs
	client := &http.Client{Transport: &splitTransport{h1: h1, std: std}}
	resp, err := client.Get("http://upstream.example:8080/v1/x")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != "via proxy http://upstream.example:8080/v1/x" || proxied.Load() != 1 {
		t.Errorf("%q", got)
	}
	resp, err = client.Get(tlsUpstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != "tls" {
		t.Errorf("%q", got)
	}
}

// TestH1LargeRequestBody: a request body larger than the write buffer is
// sent whole.
func TestH1LargeRequestBody(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		br := bufio.NewReader(c)
		_, body, err := readRequest(br)
		if err != nil {
			return
		}
		if !bytes.Equal(body, big) {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
			return
		}
		io.WriteString(c, okResponse)
	})
	client := NewHTTPClient(DefaultTransportConfig, nil)
	resp, err := post(t, client, context.Background(), srv.URL(), string(big))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != 200 || got != `{"ok":true}` {
		t.Errorf("%d %q", resp.StatusCode, got)
	}
}

// TestH1EarlyResponse: a server that answers before reading the whole body
// and closes (here net/http's, refusing an 8 MiB body) gets its answer to
// the caller, not the broken pipe of the unfinished write.
func TestH1EarlyResponse(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, `{"error":{"message":"too large"}}`)
	}))
	defer up.Close()
	client := NewHTTPClient(DefaultTransportConfig, nil)
	big := strings.Repeat("x", 8<<20)
	for i := 0; i < 3; i++ {
		resp, err := post(t, client, context.Background(), up.URL, big)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got := readAll(t, resp); resp.StatusCode != http.StatusRequestEntityTooLarge || got != `{"error":{"message":"too large"}}` {
			t.Errorf("call %d: %d %q", i, resp.StatusCode, got)
		}
	}
}

// TestH1InformationalBounded: a server that sends nothing but 1xx
// responses gets an error after a few, not a loop until the deadline.
func TestH1InformationalBounded(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, answerOnce(strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", 20)))
	client := NewHTTPClient(DefaultTransportConfig, nil)
	if _, err := post(t, client, context.Background(), srv.URL(), "x"); err == nil || !strings.Contains(err.Error(), "informational") {
		t.Errorf("err = %v", err)
	}
}

// TestH1SmallReadBuffer: a connection's read buffer is readBufferSize
// (2 KiB: an open stream holds it), and response heads, header lines and
// stream chunks longer than it are read whole.
func TestH1SmallReadBuffer(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("v", 3*readBufferSize)
	data := strings.Repeat("d", 3*readBufferSize)
	srv := newRawServer(t, answerEach(fmt.Sprintf("HTTP/1.1 200 OK\r\nX-Long: %s\r\nX-Other: o\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", long, len(data), data)))
	client := NewHTTPClient(DefaultTransportConfig, nil)
	resp, err := post(t, client, context.Background(), srv.URL(), "{}")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("X-Long") != long || resp.Header.Get("X-Other") != "o" {
		t.Errorf("headers %d bytes, X-Other %q", len(resp.Header.Get("X-Long")), resp.Header.Get("X-Other"))
	}
	if got := readAll(t, resp); got != data {
		t.Errorf("body of %d bytes, want %d", len(got), len(data))
	}
	h1 := client.Transport.(*roundTripper).base.h1
	h1.mu.Lock()
	defer h1.mu.Unlock()
	for _, p := range h1.pools {
		for _, c := range p.idle {
			if c.br.Size() != 2<<10 {
				t.Errorf("read buffer of %d bytes, want 2 KiB", c.br.Size())
			}
		}
		if len(p.idle) != 1 {
			t.Errorf("%d idle connections after one call, want 1", len(p.idle))
		}
	}
}
