package pipeline

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// h1Transport is llmrelay's own HTTP/1.1 RoundTripper, cleartext or TLS.
// It writes the request and reads the response on the caller's goroutine
// over a pooled keep-alive connection (one per concurrent call). The
// requests the adapters make are written by writeRequestFast, the same
// bytes as net/http's Request.Write without its allocations; any other by
// Request.Write (h1_write.go). Likewise response heads of the usual shape
// are parsed by readResponseFast (h1_read.go), any other by
// http.ReadResponse.
//
// net/http's Transport runs two goroutines per connection (readLoop and
// writeLoop) and hands every request and response between them and the
// caller over channels; its HTTP/2 client adds a hand-off per request and
// writes headers and body as separate TLS records. On a small machine
// those hand-offs are most of the upstream call's latency and a large
// share of its CPU, and with one connection per open stream the two
// goroutines are most of the memory of an idle stream (docs/decisions.md).
// What net/http bounds is bounded here too: response headers
// (maxHeaderBytes), 1xx responses, the TLS handshake.
type h1Transport struct {
	dial             func(ctx context.Context, network, addr string) (net.Conn, error)
	tls              *tls.Config // the base TLS settings; ServerName is set per host
	handshakeTimeout time.Duration
	headers          headerBounds // the waits for the response headers
	maxIdle          int
	idleConnTimeout  time.Duration
	maxHeaderBytes   int64
	// alive checks a pooled connection before reuse (a MSG_PEEK on unix;
	// elsewhere the replay rules cover a connection found closed).
	alive func(*h1Conn) bool

	mu    sync.Mutex
	pools map[string]*h1Pool // by scheme://host:port
	// byHost finds the pool of a request by its URL's host as written
	// (without making the key of pools on every call).
	byHost map[hostKey]*h1Pool
}

// hostKey is a request's scheme (TLS or not) and URL host as written.
type hostKey struct {
	tls  bool
	host string
}

// maxHostKeys bounds byHost (distinct spellings of the configured hosts;
// past it, pools are found the slower way).
const maxHostKeys = 1024

// aliveProbe is the default liveness check: the connection's probe, made
// on its first reuse.
func aliveProbe(c *h1Conn) bool {
	if c.probe == nil {
		c.probe = newProbe(c.raw)
	}
	return c.probe.alive()
}

// h1Pool holds the idle connections to one address, most recently used
// last.
type h1Pool struct {
	t     *h1Transport
	addr  string // host:port
	host  string // for TLS: the server name
	tls   bool
	idle  []*h1Conn
	timer *time.Timer // sweeps connections idle longer than idleConnTimeout
}

type h1Conn struct {
	pool      *h1Pool
	raw       net.Conn // the TCP connection (checked for liveness)
	conn      net.Conn // raw, or the TLS connection over it
	br        *bufio.Reader
	readLimit int64 // bytes the response head may still take (maxHeaderBytes)
	reused    bool
	idleFrom  time.Time
	probe     *probe // liveness peeks (aliveProbe)
	closeFn   func() // closes conn: what a cancelled call does
}

// maxResponseHeaderBytes bounds a response head (status line and headers,
// each 1xx response on its own), as net/http's Transport does by default.
const maxResponseHeaderBytes = 10 << 20

func newH1Transport(cfg TransportConfig, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *h1Transport {
	return &h1Transport{
		dial:             dial,
		tls:              &tls.Config{ClientSessionCache: tls.NewLRUClientSessionCache(64), NextProtos: []string{"http/1.1"}},
		handshakeTimeout: cfg.ConnectTimeout,
		headers:          headerBoundsOf(cfg),
		maxIdle:          cfg.MaxIdleConnsPerHost,
		idleConnTimeout:  idleConnTimeout,
		maxHeaderBytes:   maxResponseHeaderBytes,
		alive:            aliveProbe,
		pools:            map[string]*h1Pool{},
		byHost:           map[hostKey]*h1Pool{},
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
// go out whole, so the server cannot have acted on it. errPublicUpstream:
// a cleartext upstream that the caller wanted only when it is local
// (loopback or private) is not; nothing was sent.
var (
	errServerClosedIdle = errors.New("http: server closed idle connection")
	errRequestNotSent   = errors.New("the request was not sent whole")
	errPublicUpstream   = errors.New("cleartext upstream is neither loopback nor private")
)

func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.roundTrip(req, false)
}

// roundTrip carries req; with localOnly, only to a loopback or private
// address (errPublicUpstream otherwise, with nothing sent and the body
// left open).
func (t *h1Transport) roundTrip(req *http.Request, localOnly bool) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		closeRequestBody(req)
		return nil, fmt.Errorf("h1 transport: unsupported scheme %q", req.URL.Scheme)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeRequestBody(req) // cancelled before anything was sent
		return nil, err
	}
	p := t.pool(req)
	// Whether the caller left the encoding to us, decided once: the first
	// pass puts Accept-Encoding on the request, which a replay below must
	// not take for the caller's own (its gzip answer would reach the
	// caller compressed).
	ask := askGzip(req)
	for {
		c, err := p.get(ctx, localOnly)
		if errors.Is(err, errPublicUpstream) {
			return nil, err // nothing sent; the body stays open for net/http
		}
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		gzipped := p.tls && ask
		if gzipped {
			r2 := *req
			r2.Header = req.Header.Clone()
			r2.Header.Set("Accept-Encoding", "gzip")
			req = &r2
		}
		resp, err := c.roundTrip(req)
		if err == nil {
			if ask {
				// Over cleartext gzip is not asked for (local servers,
				// nothing to save), but a proxy may compress anyway: the
				// caller, who asked for no encoding of its own, cannot
				// use the compressed bytes (an error body would reach
				// the client as binary).
				ungzip(resp)
			}
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

// pool returns the pool of the request's scheme, host and port.
func (t *h1Transport) pool(req *http.Request) *h1Pool {
	isTLS := req.URL.Scheme == "https"
	hk := hostKey{isTLS, req.URL.Host}
	t.mu.Lock()
	p := t.byHost[hk]
	t.mu.Unlock()
	if p != nil {
		return p
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
		if isTLS {
			port = "443"
		}
	}
	addr := net.JoinHostPort(host, port)
	key := req.URL.Scheme + "://" + addr
	t.mu.Lock()
	defer t.mu.Unlock()
	p = t.pools[key]
	if p == nil {
		p = &h1Pool{t: t, addr: addr, host: host, tls: isTLS}
		t.pools[key] = p
	}
	if len(t.byHost) < maxHostKeys {
		t.byHost[hk] = p
	}
	return p
}

// get returns the most recently used idle connection of the pool, or dials
// one (with localOnly, only to a loopback or private address).
func (p *h1Pool) get(ctx context.Context, localOnly bool) (*h1Conn, error) {
	t := p.t
	t.mu.Lock()
	now := time.Now()
	for n := len(p.idle); n > 0; n = len(p.idle) {
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if now.Sub(c.idleFrom) < t.idleConnTimeout && c.br.Buffered() == 0 && t.alive(c) {
			t.mu.Unlock()
			c.reused = true
			return c, nil
		}
		_ = c.conn.Close() // expired, closed by the server, or sent bytes unasked; the next is checked
	}
	t.mu.Unlock()
	return p.connectAside(ctx, localOnly)
}

// connectAside runs connect on a goroutine of its own, which ends with it.
//
// Otherwise the connection would be made on the caller's goroutine, a
// call's handler at the bottom of the interceptor, pipeline and client
// frames: the dialer's own frames (resolution, dialParallel, socket,
// connect) add about 3 KiB there, a TLS handshake (key exchange,
// certificate verification) more than 16 KiB, and a goroutine whose stack
// grew keeps it for its whole life (the Dockerfile's gcshrinkstackoff=1):
// every open stream would hold 8 or 24 KiB it needed once, to connect
// (docs/decisions.md, "An open stream's goroutine stays within 8 KiB"). A
// connection is made per new connection, not per call (they are pooled),
// and costs system calls and round trips that dwarf the goroutine's start;
// net/http's Transport dials and handshakes on a goroutine too. The dial
// and the handshake honour ctx, so the wait for their result needs no
// select.
func (p *h1Pool) connectAside(ctx context.Context, localOnly bool) (*h1Conn, error) {
	type result struct {
		c   *h1Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := p.connect(ctx, localOnly)
		done <- result{c, err}
	}()
	r := <-done
	return r.c, r.err
}

// connect dials the pool's address (with localOnly, only a loopback or
// private one) and, for TLS, makes the handshake.
func (p *h1Pool) connect(ctx context.Context, localOnly bool) (*h1Conn, error) {
	t := p.t
	raw, err := t.dial(ctx, "tcp", p.addr)
	if err != nil {
		return nil, connectTimeout(ctx, t.handshakeTimeout, err)
	}
	if localOnly && !localAddr(raw.RemoteAddr()) {
		_ = raw.Close() // unused: net/http carries this host
		return nil, errPublicUpstream
	}
	c := &h1Conn{pool: p, raw: raw, conn: raw}
	if p.tls {
		cfg := t.tls.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = p.host
		}
		tc := tls.Client(raw, cfg)
		hctx, cancel := ctx, context.CancelFunc(func() {})
		if t.handshakeTimeout > 0 {
			hctx, cancel = context.WithTimeout(ctx, t.handshakeTimeout)
		}
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = raw.Close() // the handshake error is the one to report
			return nil, connectTimeout(ctx, t.handshakeTimeout, err)
		}
		c.conn = tc
	}
	c.br = bufio.NewReaderSize(c, readBufferSize)
	c.readLimit = math.MaxInt64
	return c, nil
}

// localAddr: a loopback, private (RFC 1918, RFC 4193) or link-local
// address.
func localAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := ta.IP
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()
}

// Read reads from the connection, at most readLimit bytes: the bound on a
// response head, lifted once the head is read (net/http's persistConn
// does the same).
func (c *h1Conn) Read(p []byte) (int, error) {
	if c.readLimit <= 0 {
		return 0, errHeadersTooLarge
	}
	if int64(len(p)) > c.readLimit {
		p = p[:c.readLimit]
	}
	n, err := c.conn.Read(p)
	c.readLimit -= int64(n)
	return n, err
}

var errHeadersTooLarge = errors.New("server response headers too large")

// askGzip: net/http's rule for transparent compression (no
// Accept-Encoding or Range of the caller's, not a HEAD).
func askGzip(req *http.Request) bool {
	return req.Method != http.MethodHead && req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == ""
}

// ungzip decompresses a gzip answer transparently, as net/http does.
func ungzip(resp *http.Response) {
	if !strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") || resp.Body == http.NoBody {
		return
	}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
	resp.Body = &gzipBody{body: resp.Body}
}

// gzipBody opens the gzip reader on the first Read, so that a body closed
// unread costs nothing.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil && g.err == nil {
		g.zr, g.err = gzip.NewReader(g.body)
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }

// readBufferSize is a connection's read buffer, held for as long as the
// connection lives, by every open stream too. 2 KiB takes a typical
// response head (OpenAI's, with its rate-limit and tracing headers, is
// 1-1.5 KB) and several stream events in one read; longer heads are read
// in more than one (textproto assembles long lines). net/http's 4 KiB
// bought an open stream nothing but 2 KiB more memory (issue 17).
const readBufferSize = 2 << 10

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
	if c.closeFn == nil {
		c.closeFn = func() { _ = c.conn.Close() }
	}
	stop := context.AfterFunc(ctx, c.closeFn)
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
	werr := writeRequest(bw, req)
	if werr == nil {
		werr = bw.Flush()
	}
	bw.Reset(nil)
	writers.Put(bw)
	deadline := c.pool.t.headers.of(ctx)
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
		if c.readLimit <= 0 {
			err = fmt.Errorf("server response headers exceeded %d bytes; aborted", c.pool.t.maxHeaderBytes)
		}
		if werr != nil {
			err = fmt.Errorf("%w: %w", errRequestNotSent, werr)
		}
		if c.reused && (errors.Is(err, io.EOF) || isConnReset(err)) {
			err = fmt.Errorf("%w: %w", errServerClosedIdle, err)
		}
		if werr == nil && errors.Is(err, os.ErrDeadlineExceeded) {
			err = c.pool.t.headers.timeout(ctx, deadline, err)
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
		c.readLimit = c.pool.t.maxHeaderBytes // per head, 1xx included (net/http)
		if _, err := c.br.Peek(1); err != nil {
			return nil, err
		}
		if r, ok := readResponseFast(c.br, req); ok {
			c.readLimit = math.MaxInt64
			r.Request = nil // see below
			return r, nil   // a final answer: the fast path takes no 1xx
		}
		r, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		c.readLimit = math.MaxInt64
		if r.StatusCode >= 100 && r.StatusCode < 200 && r.StatusCode != http.StatusSwitchingProtocols {
			if informational == maxInformational {
				return nil, fmt.Errorf("more than %d informational (1xx) responses", maxInformational)
			}
			continue
		}
		// The response does not hold the request: a stream's answer is
		// read for as long as the stream is open, and the request holds
		// its body (the whole conversation) and headers, which nothing
		// reads once it was sent (net/http.Client fills Request itself
		// where it needs one; the adapters do not).
		r.Request = nil
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
