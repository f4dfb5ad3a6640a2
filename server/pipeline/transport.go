package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TransportConfig are the HTTP settings of one provider.
type TransportConfig struct {
	// ConnectTimeout bounds dialing and the TLS handshake.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait for the response headers of a
	// stream (and of any request not made by Pipeline.Unary): a stream's
	// headers come before the first token.
	FirstByteTimeout time.Duration
	// UnaryFirstByteTimeout bounds the wait for the response headers of a
	// non-streaming call (Pipeline.Unary): they come only once the whole
	// answer is generated, which takes a reasoning model minutes
	// (docs/decisions.md, "A non-streaming answer's headers wait as long
	// as the call may last").
	UnaryFirstByteTimeout time.Duration
	// IdleTimeout bounds how long one read of a response body waits for
	// the provider's next bytes (between stream events); time the reader
	// spends elsewhere (a relay blocked on a slow client) does not count.
	IdleTimeout time.Duration
	// FirstTokenTimeout bounds the same silence inside a stream before
	// its first content event (stream_first_token_timeout: a reasoning
	// model thinking without a byte), which the retry read-ahead reports
	// (firstContent); IdleTimeout takes over at it. 0: IdleTimeout
	// throughout.
	FirstTokenTimeout time.Duration
	// MaxIdleConnsPerHost is the keep-alive pool size.
	MaxIdleConnsPerHost int
	// Propagator, when set, sends the trace context of the request's
	// context upstream (traceparent); nil with tracing off.
	Propagator propagation.TextMapPropagator
	// HTTPVersion chooses the client: "auto" (or ""), "1.1" or "2"
	// (config.Transport.HTTPVersion; splitTransport).
	HTTPVersion string
}

// DefaultTransportConfig is used where the configuration sets none.
var DefaultTransportConfig = TransportConfig{
	ConnectTimeout:        10 * time.Second,
	FirstByteTimeout:      120 * time.Second,
	UnaryFirstByteTimeout: 10 * time.Minute,
	IdleTimeout:           120 * time.Second,
	MaxIdleConnsPerHost:   256,
}

// headerBounds are the waits for a response's headers: a stream's, and a
// non-streaming call's (unaryCall).
type headerBounds struct{ stream, unary time.Duration }

func headerBoundsOf(cfg TransportConfig) headerBounds {
	return headerBounds{stream: cfg.FirstByteTimeout, unary: cfg.UnaryFirstByteTimeout}
}

// of is the wait for the headers of a request made with ctx (the context
// is looked into only when the bounds differ).
func (b headerBounds) of(ctx context.Context) time.Duration {
	if b.unary != b.stream && unaryCall(ctx) {
		return b.unary
	}
	return b.stream
}

// timeout is the error of a wait of d for the headers of a request made
// with ctx: it names the setting that bounds it.
func (b headerBounds) timeout(ctx context.Context, d time.Duration, err error) *TransportTimeout {
	setting := "first_byte_timeout"
	if unaryCall(ctx) {
		setting = "unary_first_byte_timeout"
	}
	return &TransportTimeout{Setting: setting, Bound: d, Err: err}
}

// unaryKey marks the context of a non-streaming call's provider requests
// (invoke): their headers wait for headerBounds.unary.
type unaryKey struct{}

func withUnary(ctx context.Context) context.Context { return context.WithValue(ctx, unaryKey{}, true) }

func unaryCall(ctx context.Context) bool { return ctx.Value(unaryKey{}) != nil }

// TransportTimeout is the error of a wait the transport bounds that ran
// out: the response headers (first_byte_timeout, or
// unary_first_byte_timeout for a non-streaming call) or the provider's
// silence inside a body (idle_timeout). It is a net.Error that times
// out, which provider.TransportError classifies as KindTimeout (the
// silence before a stream's first content, stream_first_token_timeout,
// is a silence inside a body too: ErrIdleTimeout); the
// server names the setting in the status message, so that the operator
// knows which bound to raise.
type TransportTimeout struct {
	// Setting is the configuration key of the bound.
	Setting string
	// Bound is its value.
	Bound time.Duration
	// Err is the error the transport saw, if any (a read deadline).
	Err error
}

func (e *TransportTimeout) Error() string {
	switch e.Setting {
	case "connect_timeout":
		return fmt.Sprintf("no connection to the provider within connect_timeout (%v): the TCP connect or the TLS handshake did not finish", e.Bound)
	case "idle_timeout":
		return fmt.Sprintf("the provider sent nothing for idle_timeout (%v) in the middle of its answer", e.Bound)
	case "stream_first_token_timeout":
		return fmt.Sprintf("the provider sent nothing for stream_first_token_timeout (%v) before the stream's first content", e.Bound)
	}
	return fmt.Sprintf("no response headers from the provider within %s (%v)", e.Setting, e.Bound)
}
func (e *TransportTimeout) Timeout() bool   { return true }
func (e *TransportTimeout) Temporary() bool { return true }
func (e *TransportTimeout) Unwrap() error   { return e.Err }

// NewHTTPClient returns the pooled client of one provider: keep-alive, HTTP/2
// where the server offers it, the timeouts above, and raw capture (with
// secrets redacted) for calls whose context carries a provider.Capture.
func NewHTTPClient(cfg TransportConfig, redact *Redactor) *http.Client {
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	base := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: cfg.MaxIdleConnsPerHost,
		IdleConnTimeout:     idleConnTimeout,
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		// No ResponseHeaderTimeout: the wait for the headers depends on
		// the call (a stream's or a non-streaming answer's), and the
		// Transport's field is one for all; splitTransport.stdRoundTrip
		// bounds it.
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		// Providers compress; Go's transparent gzip is kept.
	}
	split := newSplitTransport(cfg, base, dialer.DialContext)
	return &http.Client{Transport: &roundTripper{base: split, idle: cfg.IdleTimeout, first: cfg.FirstTokenTimeout, redact: redact, prop: cfg.Propagator},
		CheckRedirect: sameOrigin}
}

// sameOrigin follows a provider's redirect only to the scheme and host of
// the configured URL; the redirect answer itself is the response
// otherwise. net/http drops Authorization on a redirect to another
// domain, but not the providers' own key headers (x-api-key, api-key,
// x-goog-api-key) nor a key in the query of a 307 to a URL the provider
// built, and another host is not what the configuration names. The
// adapter reports the 3xx as an error of its status
// (provider.NewHTTPError), which is not retried.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return http.ErrUseLastResponse
	}
	return nil
}

// newSplitTransport pairs std with the project's own HTTP/1.1 transport,
// which dials with dial (aside: h1Pool.connectAside).
func newSplitTransport(cfg TransportConfig, std *http.Transport, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *splitTransport {
	return &splitTransport{h1: newH1Transport(cfg, dial), std: std, version: cfg.HTTPVersion, headers: headerBoundsOf(cfg), connect: cfg.ConnectTimeout}
}

// splitTransport chooses the client of each request (docs/decisions.md,
// "The upstream transport"). Proxied requests and http_version "2" go
// through net/http's Transport (HTTP/2 over TLS where the server offers
// it). Otherwise requests go through h1Transport, HTTP/1.1 on the
// project's own pool, over TLS or cleartext, except that with "auto" a
// cleartext host whose address is neither loopback nor private is left to
// net/http (remembered per host:port).
type splitTransport struct {
	h1      *h1Transport
	std     *http.Transport
	version string   // "auto" (or ""), "1.1", "2"
	public  sync.Map // host:port of cleartext upstreams found public
	headers headerBounds
	connect time.Duration // connect_timeout: the dial and TLS handshake
}

func (s *splitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if s.toStd(req) {
		return s.stdRoundTrip(req)
	}
	resp, err := s.h1.roundTrip(req, req.URL.Scheme == "http" && s.version != "1.1")
	if err != nil && s.foundPublic(req, err) {
		return s.stdRoundTrip(req)
	}
	return resp, err
}

// stdRoundTrip is net/http's round trip with the wait for the headers
// bounded as h1Conn.roundTrip bounds it (headerBounds.of): a timer
// cancels the request's context with a TransportTimeout as its cause,
// and the context lives on with the body, whose Close ends it. The
// connections net/http takes for the request are bounded too
// (maxStdConns).
//
//go:noinline
func (s *splitTransport) stdRoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	conns := 0
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GetConn: func(string) {
		// Called on the round trip's goroutine, once per connection
		// net/http tries the request on.
		if conns++; conns > maxStdConns {
			cancel(errConnLoop)
		}
	}})
	var t *time.Timer
	var timeout *TransportTimeout
	if d := s.headers.of(req.Context()); d > 0 {
		// Not wrapping net/http's error: it is the cancellation
		// (context.Canceled), which would read as the caller's.
		timeout = s.headers.timeout(req.Context(), d, nil)
		t = time.AfterFunc(d, func() { cancel(timeout) })
	}
	resp, err := s.std.RoundTrip(req.WithContext(ctx))
	if t != nil && !t.Stop() && req.Context().Err() == nil {
		// The wait ran out (an answer that came at that instant is
		// cancelled with it).
		if err == nil {
			_ = resp.Body.Close() // cancelled: nothing to read
		}
		cancel(nil)
		return nil, timeout
	}
	if err != nil {
		loop := errors.Is(context.Cause(ctx), errConnLoop)
		cancel(nil)
		if loop && req.Context().Err() == nil {
			return nil, fmt.Errorf("%w: %d in a row for one request", errConnLoop, maxStdConns)
		}
		return nil, connectTimeout(req.Context(), s.connect, err)
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// maxStdConns bounds the connections net/http takes for one request. It
// tries a request again on a new connection, without a bound or a wait,
// when an HTTP/2 server closes the one it was sent on without taking the
// request up (a GOAWAY whose last stream id is below it, then the
// connection closed: a front end draining, nginx's return 444): golang/go
// #52459, open. A provider's front end that did so to every connection
// got tens of thousands of connections a minute from one call until the
// call's bound ended it. Past the bound the request fails as a connection
// failure, which the retry policy retries with its backoff, or a route
// leaves for its next deployment. One request needs one connection, two
// where a pooled one turned out closed.
const maxStdConns = 8

// errConnLoop is the failure of a request net/http tried on maxStdConns
// new connections, each closed before it answered.
var errConnLoop = errors.New("the provider closed every new connection before answering (HTTP/2 GOAWAY before taking the request up)")

// cancelOnClose ends a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel(nil)
	return err
}

// toStd and foundPublic are apart from RoundTrip, which keeps a small
// frame: the request is written below it (docs/decisions.md, "An open
// stream's goroutine stays within 8 KiB").
//
// toStd: the request goes to net/http (HTTP/2 asked for, another scheme, a
// proxy, or a cleartext host found public before).
//
//go:noinline
func (s *splitTransport) toStd(req *http.Request) bool {
	if s.version == "2" || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return true
	}
	if proxy, err := s.std.Proxy(req); err != nil || proxy != nil {
		return true // net/http reports a proxy error itself
	}
	if req.URL.Scheme == "https" || s.version == "1.1" {
		return false
	}
	_, public := s.public.Load(req.URL.Host)
	return public
}

// foundPublic: the own pool refused a cleartext host that is neither
// loopback nor private (nothing was sent); it is remembered for net/http.
//
//go:noinline
func (s *splitTransport) foundPublic(req *http.Request, err error) bool {
	if !errors.Is(err, errPublicUpstream) {
		return false
	}
	s.public.Store(req.URL.Host, true)
	return true
}

// CloseIdleConnections closes the idle connections of both transports.
func (s *splitTransport) CloseIdleConnections() {
	s.h1.CloseIdleConnections()
	s.std.CloseIdleConnections()
}

type roundTripper struct {
	base   *splitTransport
	idle   time.Duration
	first  time.Duration // TransportConfig.FirstTokenTimeout; 0: idle
	redact *Redactor
	prop   propagation.TextMapPropagator
}

// CloseIdleConnections makes http.Client.CloseIdleConnections reach the
// pools.
func (rt *roundTripper) CloseIdleConnections() { rt.base.CloseIdleConnections() }

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if rt.prop != nil || provider.TraceContextReserved(req.Header) {
		req = rt.propagate(req)
	}
	capture := provider.CaptureFrom(req.Context())
	if capture != nil {
		if err := rt.captureRequest(req, capture); err != nil {
			return nil, err
		}
	}
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	rt.watch(req, resp, capture)
	if enc := provider.UnreadEncoding(resp.Header); enc != "" && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &encodedAnswer{ReadCloser: resp.Body, status: resp.StatusCode, encoding: enc}
	} else if resp.StatusCode >= 200 && resp.StatusCode <= 299 && isHTML(resp.Header.Get("Content-Type")) {
		resp.Body = &htmlAnswer{ReadCloser: resp.Body, status: resp.StatusCode}
	}
	return resp, nil
}

// encodedAnswer is a body in a content coding the gateway did not ask for
// and cannot read (Brotli, zstd, deflate: it asks for gzip alone, which
// both transports decode): a proxy in front of the provider compressing
// whatever the client accepts. Its first read fails, unless the body is
// empty, with a KindBadResponse provider.Error that names the coding
// (provider.TransportError hands it on): read as it is, a 2xx was "not
// valid JSON" on a unary call and a stream of no events, "ended before
// [DONE]", retried into the same bytes on some formats; an error answer's
// compressed bytes were its message on others. The same coding comes
// again, so a 2xx is not retried and, as a web page is, gives way to a
// route's next deployment (ErrNotAnAnswer); an error answer keeps its
// status (the adapters read no body, the message is the status's text
// with the coding named, provider.UnreadEncoding).
type encodedAnswer struct {
	io.ReadCloser
	status   int
	encoding string
	err      error
}

// Reserve passes a reservation on to the watched body, as htmlAnswer's.
func (a *encodedAnswer) Reserve(n int64) error {
	if r, ok := a.ReadCloser.(provider.Reserver); ok {
		return r.Reserve(n)
	}
	return nil
}

func (a *encodedAnswer) Read(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	var one [1]byte
	n, err := a.ReadCloser.Read(one[:])
	if n == 0 && err != nil {
		return 0, err // empty (or broken before a byte): nothing to decode
	}
	a.err = &provider.Error{Kind: provider.KindBadResponse, HTTPStatus: a.status, Err: provider.ErrNotAnAnswer,
		Message: fmt.Sprintf("the provider answered %d with its body in Content-Encoding %s, which the gateway did not ask for (it accepts gzip) and cannot read", a.status, a.encoding)}
	return 0, a.err
}

// isHTML reports whether a Content-Type is text/html.
func isHTML(ct string) bool {
	ct = strings.TrimSpace(ct)
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = strings.TrimSpace(ct[:i])
	}
	return strings.EqualFold(ct, "text/html")
}

// htmlAnswer is the body of a 2xx answer labelled text/html: no provider
// API answers so, but a web page does (a base_url that points at a web UI
// answering every path with its index page, a captive portal, a proxy's
// sign-in page). Its first read fails when the body is markup indeed
// (provider.IsMarkup; a JSON or event-stream body merely mislabelled reads
// as it is), with a KindBadResponse provider.Error that says so, which
// provider.TransportError hands on: the adapter's "not valid JSON" or "stream
// ended before [DONE]" would hide what happened, and the cut stream was
// retried as if transient.
type htmlAnswer struct {
	io.ReadCloser
	status  int
	checked bool
	err     error
}

// Reserve passes a reservation on to the watched body (the memory
// budget), which the wrapper would otherwise hide from provider.ReadBody.
func (h *htmlAnswer) Reserve(n int64) error {
	if r, ok := h.ReadCloser.(provider.Reserver); ok {
		return r.Reserve(n)
	}
	return nil
}

func (h *htmlAnswer) Read(p []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	n, err := h.ReadCloser.Read(p)
	if h.checked {
		return n, err
	}
	data := p[:n]
	for len(data) > 0 && (data[0] == ' ' || data[0] == '\t' || data[0] == '\r' || data[0] == '\n' ||
		data[0] == 0xEF || data[0] == 0xBB || data[0] == 0xBF) { // blanks, a UTF-8 BOM
		data = data[1:]
	}
	if len(data) == 0 {
		return n, err // only blanks so far: the next read decides
	}
	h.checked = true
	if provider.IsMarkup(data) {
		h.err = &provider.Error{Kind: provider.KindBadResponse, HTTPStatus: h.status, Err: provider.ErrNotAnAnswer,
			Message: fmt.Sprintf("the provider answered %d with an HTML page (Content-Type text/html), not an API answer: does base_url point at the API?", h.status)}
		return 0, h.err
	}
	return n, err
}

// propagate, captureRequest and watch are apart from RoundTrip, which keeps a small
// frame: the upstream request is written and its answer awaited below it,
// the deepest point of a call's goroutine (see h1Pool.connectAside).
//
//go:noinline
func (rt *roundTripper) captureRequest(req *http.Request, capture *provider.Capture) error {
	var body []byte
	if req.Body != nil && req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			closeRequestBody(req) // a RoundTripper closes the body, even on error
			return fmt.Errorf("capture request body: %w", err)
		}
		body, err = io.ReadAll(rc)
		_ = rc.Close() // an in-memory copy; closing cannot fail meaningfully
		if err != nil {
			closeRequestBody(req)
			return fmt.Errorf("capture request body: %w", err)
		}
	}
	capture.StartRequest(req.Method, rt.redact.URL(req.URL), rt.redact.Headers(req.Header), rt.redact.Bytes(body))
	return nil
}

//go:noinline
func (rt *roundTripper) propagate(req *http.Request) *http.Request {
	reserved := provider.TraceContextReserved(req.Header)
	if rt.prop == nil || !trace.SpanContextFromContext(req.Context()).IsValid() {
		if reserved {
			delete(req.Header, provider.TraceContextKey)
		}
		return req
	}
	if !reserved {
		return withTraceContext(req, rt.prop)
	}
	// The adapter's own headers, open to the trace context: no copy.
	rt.prop.Inject(req.Context(), headerCarrier(req.Header))
	if provider.TraceContextReserved(req.Header) { // a propagator without traceparent
		delete(req.Header, provider.TraceContextKey)
	}
	return req
}

//go:noinline
func (rt *roundTripper) watch(req *http.Request, resp *http.Response, capture *provider.Capture) {
	if capture != nil {
		capture.RedactResponse(rt.redact.Bytes, rt.redact.longest())
		capture.StartResponse(resp.StatusCode, rt.redact.Headers(resp.Header))
	}
	budget := provider.BudgetFrom(req.Context())
	var fc *firstContent
	if rt.first > 0 {
		fc = firstContentOf(req.Context()) // nil but for a stream's attempt
	}
	if rt.idle > 0 || fc != nil || capture != nil || budget != nil {
		w := newWatchedBody(resp.Body, rt.idle, capture)
		if fc != nil {
			w.first, w.fc = rt.first, fc
			w.ensureTimer()
		}
		w.budget = budget
		// Over HTTP/2, closing an unfinished body resets just its stream
		// and the connection stays: nothing to drain.
		w.noDrain = resp.ProtoMajor >= 2
		resp.Body = w
	}
}

// ErrIdleTimeout is returned by a response body that stayed silent longer
// than the idle timeout.
var ErrIdleTimeout = provider.ErrIdleTimeout

// idleTimeout is the error of a body read the idle timeout ended: a
// TransportTimeout (a net.Error, so that provider.TransportError
// classifies it as a timeout) that is ErrIdleTimeout.
func idleTimeout(d time.Duration) error {
	return &TransportTimeout{Setting: "idle_timeout", Bound: d, Err: ErrIdleTimeout}
}

// errConnectTimedOut is the Err of a connect_timeout TransportTimeout.
// Not the dialer's or the handshake's own error: those are (or wrap)
// context.DeadlineExceeded, which reads as the call's own deadline, and
// the call's own deadline is never retried.
var errConnectTimedOut = errors.New("the dial or the TLS handshake timed out")

// connectTimeout is err as a connect_timeout TransportTimeout where it is
// the dial's or the TLS handshake's timeout (net.Dialer.Timeout,
// http.Transport.TLSHandshakeTimeout, the h1 pool's handshake bound)
// while the call's ctx is live, else err. Before the headers, with no
// header bound of net/http's own (splitTransport.stdRoundTrip times the
// headers itself), a timeout can only be the connection's. Named, it is a
// deployment that hung (retried, or on a route the next deployment at
// once); it was "deadline exceeded", read as the caller's own deadline:
// never retried, never a fallback.
func connectTimeout(ctx context.Context, bound time.Duration, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	var tt *TransportTimeout
	if errors.As(err, &tt) {
		return err
	}
	var ne net.Error
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
		return err
	}
	return &TransportTimeout{Setting: "connect_timeout", Bound: bound, Err: errConnectTimedOut}
}

// firstContent is what a stream's attempt has seen of its answer: the
// retry read-ahead (readAhead, peeked) sets seen at the first content
// event, and the attempt's watched body bounds the provider's silence by
// stream_first_token_timeout until then, by idle_timeout after. Set and
// read by the goroutine reading the stream; atomic all the same, as the
// body may be closed from another.
type firstContent struct{ seen atomic.Bool }

type firstContentKey struct{}

// withFirstContent marks ctx as a stream attempt's, whose first content
// the caller reports on the returned firstContent.
func withFirstContent(ctx context.Context) (context.Context, *firstContent) {
	fc := &firstContent{}
	return context.WithValue(ctx, firstContentKey{}, fc), fc
}

func firstContentOf(ctx context.Context) *firstContent {
	fc, _ := ctx.Value(firstContentKey{}).(*firstContent)
	return fc
}

// markContent records that a content event (contentEvent) was read; fc
// may be nil.
func (fc *firstContent) markContent(ev *provider.Event) {
	if fc != nil && contentEvent(ev) && !fc.seen.Load() {
		fc.seen.Store(true)
	}
}

// watchedBody closes the body when no read completes within the idle
// timeout, and tees what is read into the capture.
type watchedBody struct {
	rc   io.ReadCloser
	idle time.Duration
	// first bounds the silence until fc says the stream's first content
	// was read (stream_first_token_timeout); fc nil: idle throughout.
	first time.Duration
	fc    *firstContent
	// armed is the bound the pending read's timer runs for, armedFirst
	// whether it is first's.
	armed      time.Duration
	armedFirst bool
	timer      *time.Timer
	timedOut   atomic.Bool
	capture    *provider.Capture
	once       sync.Once
	eof        bool
	noDrain    bool // HTTP/2: closing early does not cost the connection
	// budget bounds and counts the bytes read (nil: unbounded); read is
	// how many were read, charged how many are charged (a reservation may
	// run ahead of the reads).
	budget        *provider.Budget
	read, charged int64
}

// Reserve charges n bytes of this body before they are read.
func (w *watchedBody) Reserve(n int64) error {
	if n <= w.charged {
		return nil
	}
	if err := w.budget.Charge(n, n-w.charged); err != nil {
		return err
	}
	w.charged = n
	return nil
}

func newWatchedBody(rc io.ReadCloser, idle time.Duration, c *provider.Capture) *watchedBody {
	w := &watchedBody{rc: rc, idle: idle, capture: c}
	if idle > 0 {
		w.ensureTimer()
	}
	return w
}

// ensureTimer makes the timer each Read arms.
func (w *watchedBody) ensureTimer() {
	if w.timer != nil {
		return
	}
	w.timer = time.AfterFunc(time.Hour, func() {
		w.timedOut.Store(true)
		_ = w.rc.Close() // unblocks the pending Read; the error reported is the timeout
	})
	w.timer.Stop() // armed by each Read only
}

// arm sets the bound of the next read: stream_first_token_timeout before
// the stream's first content, idle_timeout after (0: none).
func (w *watchedBody) arm() {
	w.armed, w.armedFirst = w.idle, false
	if w.fc != nil && !w.fc.seen.Load() {
		w.armed, w.armedFirst = w.first, true
	}
}

// timeout is the error of a read the armed bound ended.
func (w *watchedBody) timeout() error {
	if w.armedFirst {
		return &TransportTimeout{Setting: "stream_first_token_timeout", Bound: w.armed, Err: ErrIdleTimeout}
	}
	return idleTimeout(w.armed)
}

// Read reads from the body with the idle timer running only while the
// read waits: the timeout measures the provider's silence, not the time
// the reader spends elsewhere (a stream relay blocked on a slow client by
// gRPC flow control does not read, and must not be cut for it).
func (w *watchedBody) Read(p []byte) (int, error) {
	if w.timer != nil {
		if w.arm(); w.armed > 0 {
			w.timer.Reset(w.armed)
		}
	}
	n, err := w.rc.Read(p)
	if err == io.EOF {
		w.eof = true
	}
	if w.timer != nil {
		w.timer.Stop()
		if w.timedOut.Load() {
			return n, w.timeout()
		}
	}
	if n > 0 && w.capture != nil {
		w.capture.AppendResponse(p[:n]) // redacted whole by Snapshot
	}
	if n > 0 && w.budget != nil {
		w.read += int64(n)
		if w.read > w.charged {
			if berr := w.budget.Charge(w.read, w.read-w.charged); berr != nil {
				return n, berr
			}
			w.charged = w.read
		}
	}
	return n, err
}

// Draining bounds: what Close reads of an unfinished body so that the
// connection can go back to the pool.
const (
	maxDrain     = 64 << 10
	drainTimeout = 50 * time.Millisecond
)

func (w *watchedBody) Close() error {
	var err error
	w.once.Do(func() {
		if w.timer != nil {
			w.timer.Stop()
		}
		if !w.eof && !w.noDrain {
			// An adapter that stops at the provider's final event ([DONE],
			// message_stop) leaves the last bytes and the chunked
			// terminator unread, and an HTTP/1 connection closed before
			// EOF cannot be reused. Read what is left, bounded in size and
			// time; a provider still sending is cut by the timer. The drain
			// is best effort: its outcome only decides connection reuse.
			t := time.AfterFunc(drainTimeout, func() { _ = w.rc.Close() })
			_, _ = io.CopyN(io.Discard, w.rc, maxDrain)
			t.Stop()
		}
		err = w.rc.Close()
	})
	return err
}

// secretHeaders are redacted in raw captures and logs.
var secretHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "api-key": true, "x-api-key": true,
	"x-goog-api-key": true, "cookie": true, "set-cookie": true, "ocp-apim-subscription-key": true,
}

// secretParams are redacted in URLs.
var secretParams = map[string]bool{"key": true, "api_key": true, "api-key": true, "apikey": true, "access_token": true, "token": true, "sig": true}

const redacted = "[REDACTED]"

// Redactor removes secrets: the headers and query parameters that carry
// keys, and every configured secret value wherever it appears.
type Redactor struct {
	secrets [][]byte
}

// NewRedactor redacts the given secret values (empty ones are ignored).
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) >= 4 {
			r.secrets = append(r.secrets, []byte(s))
		}
	}
	return r
}

// Headers returns a flat copy of h with secret headers redacted, as valid
// UTF-8 (header bytes outside ASCII become U+FFFD: the copy goes into
// proto strings).
func (r *Redactor) Headers(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		lk := strings.ToValidUTF8(strings.ToLower(k), "\uFFFD")
		if secretHeaders[lk] {
			out[lk] = redacted
			continue
		}
		out[lk] = strings.ToValidUTF8(r.String(strings.Join(vs, ", ")), "\uFFFD")
	}
	return out
}

// URL returns u as a string with secret query parameters redacted.
func (r *Redactor) URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			if secretParams[strings.ToLower(k)] {
				q.Set(k, redacted)
			}
		}
		c.RawQuery = q.Encode()
	}
	return r.String(c.String())
}

// withTraceContext is req with the trace context of its context in its
// headers (traceparent). A RoundTripper must not modify the caller's
// request: the request and its header map are copied; the values, which
// nothing here changes, are shared (cheaper than Request.Clone's deep copy).
func withTraceContext(req *http.Request, prop propagation.TextMapPropagator) *http.Request {
	r := new(http.Request)
	*r = *req
	r.Header = make(http.Header, len(req.Header)+2)
	for k, v := range req.Header {
		r.Header[k] = v
	}
	prop.Inject(req.Context(), headerCarrier(r.Header))
	return r
}

// headerCarrier is propagation.HeaderCarrier that writes the trace
// context's headers under their canonical names without making them anew
// on every request.
type headerCarrier http.Header

func (h headerCarrier) Get(key string) string { return propagation.HeaderCarrier(h).Get(key) }
func (h headerCarrier) Keys() []string        { return propagation.HeaderCarrier(h).Keys() }

func (h headerCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		key = "Traceparent"
	case "tracestate":
		key = "Tracestate"
	case "baggage":
		key = "Baggage"
	default:
		key = http.CanonicalHeaderKey(key)
	}
	h[key] = []string{value}
}
