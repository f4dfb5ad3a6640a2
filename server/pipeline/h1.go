package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// h1Transport is the RoundTripper for cleartext HTTP/1.1 upstreams (local
// model servers: Ollama, vLLM, llama.cpp, another sidecar). It writes the
// request and reads the response on the caller's goroutine over a pooled
// keep-alive connection, with net/http's own request writer
// (Request.Write) and response parser (http.ReadResponse).
//
// net/http's Transport runs two goroutines per connection (readLoop and
// writeLoop) and hands every request and response between them and the
// caller over channels: on a small machine those hand-offs are most of the
// upstream call's latency and a large share of its CPU, and with one
// connection per open stream the two goroutines are most of the memory of
// an idle stream (docs/decisions.md). TLS upstreams keep net/http, which
// speaks HTTP/2 to them.
type h1Transport struct {
	dial             func(ctx context.Context, network, addr string) (net.Conn, error)
	firstByteTimeout time.Duration
	maxIdle          int
	idleConnTimeout  time.Duration

	mu    sync.Mutex
	pools map[string]*h1Pool // by host:port
}

// h1Pool holds the idle connections to one address, most recently used
// last.
type h1Pool struct {
	t     *h1Transport
	addr  string
	idle  []*h1Conn
	timer *time.Timer // sweeps connections idle longer than idleConnTimeout
}

type h1Conn struct {
	pool     *h1Pool
	conn     net.Conn
	br       *bufio.Reader
	reused   bool
	idleFrom time.Time
}

func newH1Transport(cfg TransportConfig, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *h1Transport {
	return &h1Transport{
		dial:             dial,
		firstByteTimeout: cfg.FirstByteTimeout,
		maxIdle:          cfg.MaxIdleConnsPerHost,
		idleConnTimeout:  idleConnTimeout,
		pools:            map[string]*h1Pool{},
	}
}

// idleConnTimeout closes pooled connections nobody used for this long (as
// net/http's IdleConnTimeout). Servers with shorter keep-alive timeouts
// (uvicorn and Node: 5 s) close first; the one replay on a fresh
// connection in RoundTrip covers those.
const idleConnTimeout = 90 * time.Second

// errServerClosedIdle: a pooled connection turned out closed by the server
// (it sat idle past the server's keep-alive timeout) before any byte of
// the response arrived. errRequestNotSent adds that the request did not
// go out whole, so the server cannot have acted on it.
var (
	errServerClosedIdle = errors.New("http: server closed idle connection")
	errRequestNotSent   = errors.New("the request was not sent whole")
)

func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		closeRequestBody(req)
		return nil, fmt.Errorf("h1 transport: unsupported scheme %q", req.URL.Scheme)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeRequestBody(req) // cancelled before anything was sent
		return nil, err
	}
	addr := canonicalAddr(req)
	for {
		c, err := t.get(ctx, addr)
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		resp, err := c.roundTrip(req)
		if err == nil {
			return resp, nil
		}
		// A pooled connection the server closed while it sat idle (get
		// checks, but the close can race the reuse): the request is sent
		// again on another connection when the server cannot have acted on
		// it, the rule net/http follows: it did not go out whole, or its
		// method is idempotent. A POST that went out whole is not replayed
		// (a model server may have started generating); the pipeline's
		// retry policy decides about it.
		if !errors.Is(err, errServerClosedIdle) || ctx.Err() != nil || !(errors.Is(err, errRequestNotSent) || replayable(req)) {
			return nil, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, fmt.Errorf("%w (and the body could not be replayed: %w)", err, gerr)
			}
			r2 := *req
			r2.Body = body
			req = &r2
		}
	}
}

// replayable: a request the server may receive twice (net/http's rule).
func replayable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != ""
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close() // the request failed before it was sent; nothing to report
	}
}

func canonicalAddr(req *http.Request) string {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(host, port)
}

// get returns the most recently used idle connection to addr, or dials one.
func (t *h1Transport) get(ctx context.Context, addr string) (*h1Conn, error) {
	t.mu.Lock()
	p := t.pools[addr]
	if p == nil {
		p = &h1Pool{t: t, addr: addr}
		t.pools[addr] = p
	}
	now := time.Now()
	for n := len(p.idle); n > 0; n = len(p.idle) {
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if now.Sub(c.idleFrom) < t.idleConnTimeout && c.br.Buffered() == 0 && alive(c.conn) {
			t.mu.Unlock()
			c.reused = true
			return c, nil
		}
		_ = c.conn.Close() // expired, closed by the server, or sent bytes unasked; the next is checked
	}
	t.mu.Unlock()
	conn, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &h1Conn{pool: p, conn: conn, br: bufio.NewReaderSize(conn, 4<<10)}, nil
}

// writers buffer requests while they are written: a connection only needs
// one then, and an open stream would otherwise hold its 4 KiB for hours.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

// put returns a connection whose last response was read to its end.
func (p *h1Pool) put(c *h1Conn) {
	t := p.t
	t.mu.Lock()
	if len(p.idle) >= t.maxIdle {
		t.mu.Unlock()
		_ = c.conn.Close() // pool full
		return
	}
	c.idleFrom = time.Now()
	p.idle = append(p.idle, c)
	if p.timer == nil {
		p.timer = time.AfterFunc(t.idleConnTimeout, p.sweep)
	}
	t.mu.Unlock()
}

// sweep closes the connections idle for longer than idleConnTimeout, and
// comes back while any remain.
func (p *h1Pool) sweep() {
	t := p.t
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	keep := p.idle[:0]
	var next time.Duration
	for _, c := range p.idle {
		if age := now.Sub(c.idleFrom); age >= t.idleConnTimeout {
			_ = c.conn.Close() // expired
		} else {
			keep = append(keep, c)
			if d := t.idleConnTimeout - age; next == 0 || d < next {
				next = d
			}
		}
	}
	clear(p.idle[len(keep):])
	p.idle = keep
	if len(keep) == 0 {
		p.timer = nil
		return
	}
	p.timer.Reset(next)
}

// roundTrip sends req on c and reads the response headers. On error the
// connection is closed.
func (c *h1Conn) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// A cancelled call closes the connection, which unblocks any read or
	// write in progress; the connection is not reused.
	stop := context.AfterFunc(ctx, func() { _ = c.conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		_ = c.conn.Close() // broken or cancelled: never reused
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(c.conn)
	werr := req.Write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	bw.Reset(nil)
	writers.Put(bw)
	deadline := c.pool.t.firstByteTimeout
	if werr != nil {
		if ctx.Err() != nil {
			return fail(werr)
		}
		// A server may answer before it has read the whole body (413,
		// 400, 401) and close: its answer is what the caller needs, not
		// our broken pipe, so it is read if it came. A pooled connection
		// the server had closed has none, and fails as closed idle.
		deadline = earlyResponseWait
	}
	if deadline > 0 {
		if err := c.conn.SetReadDeadline(time.Now().Add(deadline)); err != nil {
			return fail(err)
		}
	}
	resp, err := c.readResponse(req)
	if err != nil {
		if werr != nil {
			err = fmt.Errorf("%w: %w", errRequestNotSent, werr)
		}
		if c.reused && (errors.Is(err, io.EOF) || isConnReset(err)) {
			err = fmt.Errorf("%w: %w", errServerClosedIdle, err)
		}
		return fail(err)
	}
	if deadline > 0 {
		if err := c.conn.SetReadDeadline(time.Time{}); err != nil {
			return fail(err)
		}
	}
	if werr != nil {
		resp.Close = true // the request was not sent whole: the connection is done
	}
	b := &h1Body{c: c, rc: resp.Body, stop: stop, ctx: ctx, reusable: !resp.Close && !req.Close}
	if resp.Body == http.NoBody {
		b.finish(true) // nothing to read: the connection is free now
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

// earlyResponseWait bounds the wait for an answer the server may have sent
// before closing on a request it did not read whole.
const earlyResponseWait = time.Second

// readResponse reads the response headers, skipping 1xx informational
// responses (101 is not requested by any adapter and is returned as is).
func (c *h1Conn) readResponse(req *http.Request) (*http.Response, error) {
	for informational := 0; ; informational++ {
		if _, err := c.br.Peek(1); err != nil {
			return nil, err
		}
		r, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		if r.StatusCode >= 100 && r.StatusCode < 200 && r.StatusCode != http.StatusSwitchingProtocols {
			if informational == maxInformational {
				return nil, fmt.Errorf("more than %d informational (1xx) responses", maxInformational)
			}
			continue
		}
		return r, nil
	}
}

// maxInformational bounds the 1xx responses skipped before the answer (as
// net/http does).
const maxInformational = 5

// isConnReset: the peer reset the connection or had closed it when we
// wrote.
func isConnReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// h1Body returns the connection to the pool when the response was read to
// its end, and closes it otherwise.
type h1Body struct {
	c        *h1Conn
	rc       io.ReadCloser
	stop     func() bool
	ctx      context.Context
	reusable bool
	mu       sync.Mutex
	done     bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == nil {
		return n, nil
	}
	if err == io.EOF {
		b.finish(true)
		return n, io.EOF
	}
	b.finish(false)
	if ctxErr := b.ctx.Err(); ctxErr != nil {
		return n, ctxErr
	}
	return n, err
}

// Close before the end closes the connection (its remaining bytes would
// have to be read first; the caller drains what it wants beforehand).
func (b *h1Body) Close() error {
	b.finish(false)
	return nil
}

func (b *h1Body) finish(eof bool) {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	b.done = true
	b.mu.Unlock()
	// stop reports false when the context was already cancelled and the
	// connection closed.
	if b.stop() && eof && b.reusable {
		b.c.reused = false
		b.c.pool.put(b.c)
		return
	}
	_ = b.c.conn.Close() // not reusable, or not read to its end
}

// CloseIdleConnections closes every pooled connection (as net/http's
// Transport does): at shutdown, and for the clients a reload replaced.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.pools {
		for _, c := range p.idle {
			_ = c.conn.Close() // idle: nothing in flight
		}
		clear(p.idle)
		p.idle = p.idle[:0]
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
	}
}
