// Package mcp is the gateway's MCP client: it connects to an MCP server over
// streamable HTTP or SSE (the official Go SDK), lists its tools as llmrelay
// tools, and calls them. Headers (credentials) are added by the transport
// and never logged or reported.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Transports.
const (
	Streamable = "streamable"
	SSE        = "sse"
)

// Server is where and how to reach one MCP server.
type Server struct {
	// Name identifies the server in events and errors.
	Name string
	URL  string
	// Transport is Streamable (default) or SSE.
	Transport string
	// Headers are sent on every HTTP request (e.g. Authorization).
	Headers map[string]string
	// AllowedTools limits the tools offered (all when empty).
	AllowedTools []string
	// MaxResponseBytes bounds each HTTP response body the server sends
	// (an SSE event stream is one); 0: no bound.
	MaxResponseBytes int64
	// MaxResultBytes bounds a call's result text (Result.Content before
	// its notes): a longer one is cut at a rune boundary, with a note
	// saying so (Result.CutBytes); 0: no bound. The bytes of the media
	// given to the model (Result.Parts) count too: a medium that would
	// take the text and the media before it past the bound is left out,
	// whole, with a note (a cut image or PDF is no image or PDF).
	MaxResultBytes int
}

// scrubbed is an error whose text no longer shows the server URL's query.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub takes the server URL's query out of an error's text (net/http
// quotes the whole URL): hosted MCP services put keys there, and the text
// reaches callers (statuses, MCP execution events) and logs. Go already
// masks a password in the URL.
func (s Server) scrub(err error) error {
	u, perr := url.Parse(s.URL)
	if err == nil || perr != nil || u.RawQuery == "" {
		return err
	}
	safe := *u
	safe.RawQuery = "REDACTED"
	msg := err.Error()
	for _, v := range []string{s.URL, u.Redacted(), u.String()} {
		msg = strings.ReplaceAll(msg, v, safe.Redacted())
	}
	msg = strings.ReplaceAll(msg, u.RawQuery, "REDACTED") // wherever else it was quoted
	return &scrubbed{msg: msg, err: err}
}

// Session is a connected MCP server.
type Session struct {
	server  Server
	hc      *http.Client
	cancels *cancelTracker
	wire    *wire
	cut     *streamCut

	mu sync.Mutex
	// session is the current SDK session: a new one replaces it when the
	// server forgot the old one (404 for its Mcp-Session-Id).
	session *sdk.ClientSession
	// ends end the sessions' contexts (the SSE event stream).
	ends []context.CancelFunc
	// closeErrs are the errors of closing the sessions replaced.
	closeErrs []error
	// closed is the session renew closed and could not replace (its new
	// session failed to connect): still s.session, and renewed by the
	// next call.
	closed *sdk.ClientSession
	// safe holds the tools the server listed as read-only or idempotent
	// (annotations readOnlyHint, idempotentHint): a call of one may be
	// sent again on a new session even if the old one may have had it.
	safe map[string]bool
	// unheard is set when the current session's server declares
	// tools.listChanged but its notifications cannot reach the gateway:
	// the streamable transport before protocol 2026-07-28 sends them on
	// the standalone GET stream, which the gateway does not open.
	unheard bool

	// changed is set by notifications/tools/list_changed (and by a new
	// session) and cleared when Tools lists again.
	changed atomic.Bool
}

// cancelWait bounds how long Close waits for the cancellations of abandoned
// calls to go out (the SDK gives each 5 s).
const cancelWait = 2 * time.Second

// cancelTracker counts the calls abandoned by their context, whose
// notifications/cancelled the SDK sends from a goroutine of its own after
// the call returned, and those notifications as they go out: a session
// closed before would drop them, and the server would run the cancelled
// tools to their end.
type cancelTracker struct {
	mu      sync.Mutex
	owed    int
	sent    int
	changed chan struct{}
}

func newCancelTracker() *cancelTracker { return &cancelTracker{changed: make(chan struct{})} }

func (t *cancelTracker) owe() {
	t.mu.Lock()
	t.owed++
	t.mu.Unlock()
}

func (t *cancelTracker) markSent() {
	t.mu.Lock()
	t.sent++
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
}

// wait returns once every owed cancellation went out, or after d.
func (t *cancelTracker) wait(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		t.mu.Lock()
		done, changed := t.sent >= t.owed, t.changed
		t.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		}
	}
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	cancels *cancelTracker
	wire    *wire
	max     int64
	// sse: the legacy SSE transport, whose GET event stream carries every
	// answer of the session; it is bounded event by event, and cut notes
	// why the bound ended it.
	sse bool
	cut *streamCut
}

// streamCut is why the bound ended the legacy SSE transport's event
// stream: the SDK reports the stream's end as EOF alone, to every call
// waiting on it.
type streamCut struct {
	mu  sync.Mutex
	err error
}

func (c *streamCut) set(err error) {
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
}

// explain adds the reason the stream was cut, if it was, to err.
func (c *streamCut) explain(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil || err == nil {
		return err
	}
	return fmt.Errorf("%w (%v)", err, c.err)
}

// limitedBody fails a read past max bytes instead of buffering whatever an
// MCP server sends.
type limitedBody struct {
	io.ReadCloser
	left int64
	max  int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, err // the end (or a read error) right at the bound
		}
		return 0, fmt.Errorf("the response is larger than %d bytes (limits.max_response_bytes)", b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// eventLimitedBody bounds each event of an event stream (the bytes
// between two blank lines) by max: the legacy SSE transport's one GET
// stream carries every answer of the session, and a bound on the whole
// body ended a long run's session once its answers added up to
// limits.max_response_bytes, none of them that large. What one event may
// hold is bounded as a response is.
type eventLimitedBody struct {
	io.ReadCloser
	max  int64
	used int64 // bytes of the current event so far
	// eol: the last byte ended a line; cr: it was a \r (a \n after it
	// ends the same line).
	eol, cr bool
	over    bool
	cut     *streamCut
}

func (b *eventLimitedBody) Read(p []byte) (int, error) {
	if b.over {
		err := fmt.Errorf("the server's event stream was cut: an event larger than %d bytes (limits.max_response_bytes)", b.max)
		b.cut.set(err)
		return 0, err
	}
	n, err := b.ReadCloser.Read(p)
	for i, c := range p[:n] {
		switch {
		case c == '\n' && b.cr:
			b.cr = false // \r\n: one line end
			continue
		case c == '\n' || c == '\r':
			if b.eol {
				b.used = 0 // a blank line: the event ended
			}
			b.eol, b.cr = true, c == '\r'
		default:
			b.eol, b.cr = false, false
		}
		if b.used++; b.used > b.max {
			b.over = true
			return i, nil // the error comes with the next read
		}
	}
	return n, err
}

// roundTrip sends r and bounds the response body.
func (t headerTransport) roundTrip(r *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(r)
	switch {
	case err != nil || t.max <= 0:
	case t.sse && r.Method == http.MethodGet:
		res.Body = &eventLimitedBody{ReadCloser: res.Body, max: t.max, cut: t.cut}
	default:
		res.Body = &limitedBody{ReadCloser: res.Body, left: t.max, max: t.max}
	}
	return res, err
}

var cancelledMethod = []byte(`"notifications/cancelled"`)

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	sl, _ := r.Context().Value(sendLogKey{}).(*sendLog)
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		res, err := t.roundTrip(r)
		if err == nil {
			sl.refused(res)
			err = t.wire.response(r, nil, res) // GET: an event stream (SSE transport, resumption)
		}
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	// A JSON-RPC message (small): read to see whether it is a
	// cancellation, then sent as it was.
	body, err := io.ReadAll(r.Body)
	if cerr := r.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	id := t.wire.sent(body)
	res, err := t.roundTrip(r)
	if bytes.Contains(body, cancelledMethod) {
		t.cancels.markSent() // delivered or failed: nothing more to wait for
	}
	if sl != nil && id != nil {
		sl.note(r, res, err)
	}
	if err != nil {
		return nil, err
	}
	sl.refused(res)
	if err := t.wire.response(r, id, res); err != nil {
		return nil, err
	}
	return res, nil
}

// sseResumes is how many times in a row a call's event stream is resumed
// (GET with Last-Event-ID) without a new event: a 2025-11-25 server may
// close the stream after an event id and a retry delay and send the result
// on the resumed one (SEP-1699); the call's own deadline bounds the rest.
const sseResumes = 5

// Connect opens a session; ctx bounds the handshake only, not the session
// (Close ends it).
func Connect(ctx context.Context, s Server, base http.RoundTripper) (*Session, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	switch s.Transport {
	case "", Streamable, SSE:
	default:
		return nil, fmt.Errorf("mcp server %s: unknown transport %q (streamable or sse)", s.Name, s.Transport)
	}
	cancels, w, cut := newCancelTracker(), &wire{}, &streamCut{}
	hc := &http.Client{Transport: headerTransport{base: base, headers: s.Headers, cancels: cancels, wire: w, max: s.MaxResponseBytes,
		sse: s.Transport == SSE, cut: cut}, CheckRedirect: sameOrigin}
	sess := &Session{server: s, hc: hc, cancels: cancels, wire: w, cut: cut}
	cs, end, err := sess.dial(ctx)
	if err != nil {
		return nil, err
	}
	sess.session, sess.ends, sess.unheard = cs, []context.CancelFunc{end}, sess.deaf(cs)
	return sess, nil
}

// deaf reports whether cs's server declares tools.listChanged on a
// connection that does not carry its notifications: the streamable
// transport before protocol 2026-07-28 (the standalone GET stream is off).
func (s *Session) deaf(cs *sdk.ClientSession) bool {
	init := cs.InitializeResult()
	if s.server.Transport == SSE || init == nil || init.Capabilities == nil || init.Capabilities.Tools == nil {
		return false
	}
	return init.Capabilities.Tools.ListChanged && init.ProtocolVersion < "2026-07-28"
}

// ToolsChanged reports whether the server's tools may differ from those
// Tools last returned: it sent notifications/tools/list_changed since,
// the session was replaced by a new one, or the server declares
// tools.listChanged on a connection that cannot carry the notification
// (then every round may find a change, and Tools is worth calling again).
func (s *Session) ToolsChanged() bool {
	s.mu.Lock()
	unheard := s.unheard
	s.mu.Unlock()
	return unheard || s.changed.Load()
}

// dial opens and initializes one SDK session; end ends its context.
func (s *Session) dial(ctx context.Context) (cs *sdk.ClientSession, end context.CancelFunc, err error) {
	var t sdk.Transport
	if s.server.Transport == SSE {
		t = &sdk.SSEClientTransport{Endpoint: s.server.URL, HTTPClient: s.hc}
	} else {
		t = &sdk.StreamableClientTransport{Endpoint: s.server.URL, HTTPClient: s.hc, MaxRetries: sseResumes, DisableStandaloneSSE: true}
	}
	// The gateway has no roots, no model to lend and no user to ask: it
	// declares no capability (the SDK's default claimed roots with
	// listChanged) and refuses roots/list (method not found, as the SDK
	// refuses sampling and elicitation) rather than answer a server that
	// ignored the capabilities with an empty list it could take for "no
	// access anywhere".
	//
	// A server that declares tools.listChanged may add or remove tools
	// during the run: its notification marks the list for a new
	// tools/list before the next round (ToolsChanged). Under protocol
	// 2026-07-28 the SDK opens subscriptions/listen for it; over the SSE
	// transport it comes on the event stream.
	c := sdk.NewClient(&sdk.Implementation{Name: "llmrelay", Version: "v1"},
		&sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{},
			ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.changed.Store(true) }})
	c.AddReceivingMiddleware(refuseRoots)
	// The SSE transport's event stream lives in the context it is
	// connected with: ctx ending after the handshake would cut it (every
	// later call failed with EOF). The session gets a context of its own,
	// ended by ctx during the handshake only, and by Close.
	sl := &sendLog{} // the handshake's refusal of the credentials, if any
	sessCtx, sessCancel := context.WithCancel(context.WithoutCancel(context.WithValue(ctx, sendLogKey{}, sl)))
	stop := context.AfterFunc(ctx, sessCancel)
	cs, err = c.Connect(sessCtx, t, nil)
	if !stop() && err == nil {
		// ctx ended as the handshake finished: the stream is cut.
		err = errors.Join(ctx.Err(), cs.Close())
	}
	if err != nil {
		sessCancel()
		return nil, nil, s.server.scrub(sl.authErr(fmt.Errorf("mcp server %s: connect: %w", s.server.Name, err)))
	}
	return cs, sessCancel, nil
}

// refuseRoots answers roots/list with "method not found".
func refuseRoots(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "roots/list" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "roots are not supported by this client"}
		}
		return next(ctx, method, req)
	}
}

// current is the session in use.
func (s *Session) current() *sdk.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// renew replaces a session the server forgot with a new one (once for all
// the calls that found it gone) and returns the session to use. The lock
// is held while the new session is made: the other calls wait for it.
func (s *Session) renew(ctx context.Context, gone *sdk.ClientSession) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != gone {
		return s.session, nil // renewed by another call
	}
	// The server has no session left to DELETE: Close ends ours only. Its
	// error, if any, is reported by Close.
	if s.closed != gone {
		if err := gone.Close(); err != nil && !errors.Is(err, sdk.ErrSessionMissing) {
			s.closeErrs = append(s.closeErrs, err)
		}
		s.closed = gone
	}
	cs, end, err := s.dial(ctx)
	if err != nil {
		// gone stays, closed: the next call renews it (closedSession).
		return nil, err
	}
	s.session, s.ends, s.closed = cs, append(s.ends, end), nil
	s.unheard = s.deaf(cs)
	s.changed.Store(true) // a new session may list other tools
	s.cut.set(nil)        // a new event stream
	return cs, nil
}

// closedSession reports whether cs is a session renew closed without
// replacing it: a call on it fails ("client is closing") and renews it.
func (s *Session) closedSession(cs *sdk.ClientSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed == cs
}

// sendLog records whether a request of one attempt may have reached the
// server: the transport notes each request (a JSON-RPC call, not a
// notification) sent with a context carrying it.
type sendLog struct {
	mu      sync.Mutex
	reached bool
	// auth is the server's last refusal of the credentials (401) or of
	// access (403), with its challenge; nil when none.
	auth *AuthError
}

// maxChallenge bounds the WWW-Authenticate text kept for an error.
const maxChallenge = 512

// refused keeps a 401 or 403 answer's status and WWW-Authenticate
// challenge: the SDK's error says "Unauthorized" alone, and the challenge
// (error="invalid_token", error_description, scope, resource_metadata)
// is what tells an operator what to change. sl may be nil.
func (l *sendLog) refused(res *http.Response) {
	if l == nil || (res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusForbidden) {
		return
	}
	c := strings.Join(res.Header.Values("WWW-Authenticate"), ", ")
	c = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, c)
	if len(c) > maxChallenge {
		c = cutUTF8(c, maxChallenge) + "…"
	}
	l.mu.Lock()
	l.auth = &AuthError{Status: res.StatusCode, Challenge: c}
	l.mu.Unlock()
}

// authErr is err with the server's refusal of the credentials when one
// was noted, err itself otherwise.
func (l *sendLog) authErr(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.auth == nil || err == nil {
		return err
	}
	ae := *l.auth
	ae.err = err
	return &ae
}

// AuthError is a request the MCP server refused for its credentials (HTTP
// 401: missing, expired or wrong) or for access (403), with the
// server's WWW-Authenticate challenge.
type AuthError struct {
	Status    int
	Challenge string
	err       error
}

func (e *AuthError) Error() string {
	msg := e.err.Error() + " (HTTP " + strconv.Itoa(e.Status)
	if e.Challenge != "" {
		msg += "; WWW-Authenticate: " + e.Challenge
	}
	if e.Status == http.StatusUnauthorized {
		msg += "; check the server's Authorization header"
	}
	return msg + ")"
}

func (e *AuthError) Unwrap() error { return e.err }

type sendLogKey struct{}

// note records one HTTP exchange of a call. The server did not have the
// call when the connection was never made (a dial error: refused, no such
// host) or when it answered 404 for the session (it no longer knows it,
// and the spec has it refuse the request); any other answer or error
// (the request may have been written before the connection broke) may
// come from a server that has it.
func (l *sendLog) note(r *http.Request, res *http.Response, err error) {
	var oe *net.OpError
	switch {
	case err != nil && errors.As(err, &oe) && oe.Op == "dial":
		return
	case err == nil && res.StatusCode == http.StatusNotFound && r.Header.Get("Mcp-Session-Id") != "":
		return
	}
	l.mu.Lock()
	l.reached = true
	l.mu.Unlock()
}

func (l *sendLog) mayHaveReached() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reached
}

// errNotResent is the failure of a call that is not sent again on a new
// session because the server may have run it.
type errNotResent struct{ err error }

func (e *errNotResent) Error() string {
	return "the session ended while the server had the call (" + e.err.Error() +
		"); not sent again on a new session: the server may already have run it"
}
func (e *errNotResent) Unwrap() error { return e.err }

// do runs op on the current session and, when the session is gone, once
// more on a new one: when the server answers that it no longer knows the
// session (HTTP 404 for its Mcp-Session-Id: the spec has the client start
// a new one), on this call's request or on the resumption of its event
// stream, or when another call found the session gone and replaced it
// while this one was on it (closing the old session ended this call:
// "client is closing"), or when the session's connection ended under it
// (an SSE stream that ended, an answer the SDK took as fatal). once: op has effects (tools/call) and runs again
// only if its request is known not to have reached the server (never
// connected, or refused with the 404); otherwise it fails with
// errNotResent (the session is still renewed for the next calls). Other
// requests (tools/list) change nothing and are sent again.
func (s *Session) do(ctx context.Context, once bool, op func(context.Context, *sdk.ClientSession) error) error {
	cs := s.current()
	sl := &sendLog{}
	err := op(context.WithValue(ctx, sendLogKey{}, sl), cs)
	if err == nil {
		return nil
	}
	err = s.cut.explain(sl.authErr(err))
	next := s.current()
	gone := errors.Is(err, sdk.ErrSessionMissing) || s.closedSession(cs)
	if !gone {
		// Only "connection closed": another error (the call's own
		// failure) is the call's outcome.
		if ctx.Err() != nil || !errors.Is(err, sdk.ErrConnectionClosed) {
			return err
		}
		// Still the current session, its connection ended under it: the
		// SSE transport's when its event stream ends (an idle timeout
		// between rounds), any transport's on an answer the SDK takes for
		// the connection's end rather than one call's failure (callFailure
		// turns the known ones into the call's failure). Every later call
		// failed at once without reaching the server: it is replaced like
		// a session the server forgot.
		gone = next == cs
	}
	if gone {
		var rerr error
		if next, rerr = s.renew(ctx, cs); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	if once && sl.mayHaveReached() {
		return &errNotResent{err: err}
	}
	again := &sendLog{}
	return again.authErr(op(context.WithValue(ctx, sendLogKey{}, again), next))
}

// sameOrigin follows a redirect only to the same scheme and host. The
// transport adds the server's headers (credentials) to every request, so a
// redirect elsewhere would hand them to another host, and a request URL
// allowed by prefix must not lead the gateway to one that is not.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
		return fmt.Errorf("redirected to %s://%s: not followed (MCP redirects stay on %s://%s)", req.URL.Scheme, req.URL.Host, first.Scheme, first.Host)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// Close ends the session, once the cancellations of the calls abandoned by
// their context went out (at most cancelWait).
func (s *Session) Close() error {
	s.cancels.wait(cancelWait)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		for _, end := range s.ends {
			end()
		}
	}()
	errs := s.closeErrs
	if s.session != s.closed {
		errs = append(errs, s.session.Close())
	}
	return s.server.scrub(errors.Join(errs...))
}

// Name is the server's name.
func (s *Session) Name() string { return s.server.Name }

// maxToolPages bounds a tools/list walk: a server whose cursors never end
// (or come round again) is an error, not a loop.
const maxToolPages = 100

// Tools lists the server's tools (every page), filtered by AllowedTools,
// with their input schemas as JSON text exactly as the server sent them
// (key order and numbers kept; whitespace between tokens removed).
func (s *Session) Tools(ctx context.Context) ([]*llmrelayv1.Tool, error) {
	// A notification from here on is about a list this walk may not see.
	s.changed.Store(false)
	tools, err := s.tools(ctx)
	if err != nil {
		s.changed.Store(true) // not listed: still to do
	}
	return tools, err
}

func (s *Session) tools(ctx context.Context) ([]*llmrelayv1.Tool, error) {
	allowed := map[string]bool{}
	for _, n := range s.server.AllowedTools {
		allowed[n] = true
	}
	var out []*llmrelayv1.Tool
	cursors := map[string]bool{}
	params := &sdk.ListToolsParams{}
	for page := 1; ; page++ {
		s.wire.takeResults() // nothing older can answer this page
		var res *sdk.ListToolsResult
		err := s.do(ctx, false, func(ctx context.Context, cs *sdk.ClientSession) (err error) {
			res, err = cs.ListTools(ctx, params)
			return err
		})
		if err != nil {
			return nil, s.server.scrub(fmt.Errorf("mcp server %s: list tools: %w%s", s.server.Name, err, rpcCode(err)))
		}
		schemas := rawSchemas(res.Tools, s.wire.takeResults())
		s.mu.Lock()
		if page == 1 {
			s.safe = map[string]bool{}
		}
		for _, t := range res.Tools {
			if a := t.Annotations; a != nil && (a.ReadOnlyHint || a.IdempotentHint) {
				s.safe[t.Name] = true
			}
		}
		s.mu.Unlock()
		for i, t := range res.Tools {
			if len(allowed) > 0 && !allowed[t.Name] {
				continue
			}
			schema := schemas[i]
			if schema == "" && t.InputSchema != nil {
				b, err := json.Marshal(t.InputSchema)
				if err != nil {
					return nil, fmt.Errorf("mcp server %s: tool %s: input schema: %w", s.server.Name, t.Name, err)
				}
				schema = string(b)
			}
			out = append(out, &llmrelayv1.Tool{Name: t.Name, Description: t.Description, Parameters: schema})
		}
		next := res.NextCursor
		switch {
		case next == "":
			return out, nil
		case cursors[next]:
			return nil, fmt.Errorf("mcp server %s: list tools: page %d gives cursor %q again", s.server.Name, page, next)
		case page == maxToolPages:
			return nil, fmt.Errorf("mcp server %s: list tools: more than %d pages", s.server.Name, maxToolPages)
		}
		cursors[next] = true
		params = &sdk.ListToolsParams{Cursor: next}
	}
}

// rawSchemas finds, among the raw tools/list results the wire kept, the
// one that holds these tools (the same names in the same order) and
// returns each tool's inputSchema as sent, compacted; "" where none was
// found (the SDK's decoded schema is used then).
func rawSchemas(tools []*sdk.Tool, raws []json.RawMessage) []string {
	out := make([]string, len(tools))
	for _, raw := range raws {
		var page struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if json.Unmarshal(raw, &page) != nil || len(page.Tools) != len(tools) {
			continue
		}
		match := true
		for i, t := range page.Tools {
			match = match && t.Name == tools[i].Name
		}
		if !match {
			continue
		}
		for i, t := range page.Tools {
			var b bytes.Buffer
			if len(t.InputSchema) > 0 && string(t.InputSchema) != "null" && json.Compact(&b, t.InputSchema) == nil {
				out[i] = b.String()
			}
		}
		return out
	}
	return out
}

// Result is a tool call's outcome.
type Result struct {
	// Content is the text given to the model: the text contents, the
	// text of embedded text resources and resource links (as their MCP
	// JSON) joined by newlines, or the structured content as JSON when
	// there is none of those; then a note for each content the model
	// cannot receive (images, audio, binary resources).
	Content string
	IsError bool
	// Parts are the media given to the model, in the order the server
	// sent them (ToolResult.parts, after Content): images, embedded
	// binary resources and audio the caller's Media accepts.
	Parts []*llmrelayv1.Part
	// Omitted describes the contents left out of Content and Parts
	// (kind, MIME type, size) because the model cannot be given them, for
	// the caller's warnings; OverBound those of the media it could be
	// given that Server.MaxResultBytes left out.
	Omitted, OverBound []string
	// CutBytes is how much of the result text Server.MaxResultBytes cut
	// (0: none), of TextBytes.
	CutBytes, TextBytes int
	Duration            time.Duration
}

// Media says whether the model of a run can be given a medium of a tool
// result, as an image or file part of ToolResult.parts; nil accepts none.
type Media func(*llmrelayv1.Part) bool

// Call calls a tool with the model's arguments (JSON text; empty means no
// arguments). A tool that reports an error is a Result with IsError; a
// transport or protocol failure is an error. Media reach the model as text
// notes only (CallMedia gives them).
func (s *Session) Call(ctx context.Context, name, arguments string) (Result, error) {
	return s.CallMedia(ctx, name, arguments, nil)
}

// CallMedia is Call, giving the model the media of the result that media
// accepts (Result.Parts): ImageContent as an image part, AudioContent and
// an embedded resource's blob as an image part (image/* types) or a file
// part. Any other medium, and one media refuses, stays a note in Content.
func (s *Session) CallMedia(ctx context.Context, name, arguments string, media Media) (Result, error) {
	start := time.Now()
	var args json.RawMessage
	switch trimmed := strings.TrimSpace(arguments); {
	case trimmed == "" || trimmed == "null":
		// No arguments: the SDK sends {}. A JSON null went out as
		// "arguments": null, which servers refuse (-32602: the spec's
		// arguments are an object, optional but never null).
	case !json.Valid([]byte(trimmed)):
		return Result{Content: "the arguments are not valid JSON", IsError: true}, nil
	case trimmed[0] != '{':
		// Not sent: the server would refuse it (arguments are an object
		// of named parameters), or worse, take it apart its own way.
		return Result{Content: "the arguments must be a JSON object of named parameters, not " + jsonKind(trimmed[0]), IsError: true}, nil
	default:
		args = json.RawMessage(arguments)
	}
	p := &sdk.CallToolParams{Name: name}
	if args != nil {
		p.Arguments = args
	}
	// A read-only or idempotent tool (as the server annotated it) has no
	// effect a second run would repeat: its call is sent again on a new
	// session like tools/list, where another call fails with
	// errNotResent when the old session may have had it.
	s.mu.Lock()
	once := !s.safe[name]
	s.mu.Unlock()
	var res *sdk.CallToolResult
	err := s.do(ctx, once, func(ctx context.Context, cs *sdk.ClientSession) (err error) {
		res, err = cs.CallTool(ctx, p)
		return err
	})
	d := time.Since(start)
	if err != nil && ctx.Err() != nil {
		s.cancels.owe() // the SDK tells the server, after this returns
	}
	if err != nil {
		return Result{Duration: d}, s.server.scrub(fmt.Errorf("mcp server %s: call %s: %w%s", s.server.Name, name, err, rpcCode(err)))
	}
	var (
		parts, omitted []string
		// media2 are the media media accepted, given to the model
		// within the bound below.
		media2 []mediaItem
	)
	offer := func(p *llmrelayv1.Part, desc string) {
		if media != nil && media(p) {
			media2 = append(media2, mediaItem{part: p, desc: desc})
			return
		}
		omitted = append(omitted, desc)
	}
	for _, c := range res.Content {
		switch x := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.EmbeddedResource:
			if r := x.Resource; r != nil && r.Blob == nil {
				parts = append(parts, r.Text)
			} else if r != nil {
				offer(blobPart(r.Blob, r.MIMEType), fmt.Sprintf("resource %s (%s, %d bytes)", r.URI, orUnknown(r.MIMEType), len(r.Blob)))
			}
		case *sdk.ResourceLink:
			// As the SDK writes it, less its icons (data: URIs of whole
			// images) and _meta, which are the client's, not the model's.
			link := *x
			link.Icons, link.Meta = nil, nil
			b, err := json.Marshal(&link)
			if err != nil {
				return Result{Duration: d}, fmt.Errorf("mcp server %s: call %s: resource link: %w", s.server.Name, name, err)
			}
			parts = append(parts, string(b))
		case *sdk.ImageContent:
			offer(&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: x.Data}, MimeType: x.MIMEType}}},
				fmt.Sprintf("image (%s, %d bytes)", orUnknown(x.MIMEType), len(x.Data)))
		case *sdk.AudioContent:
			offer(&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: x.Data}, MimeType: x.MIMEType}}},
				fmt.Sprintf("audio (%s, %d bytes)", orUnknown(x.MIMEType), len(x.Data)))
		default:
			omitted = append(omitted, fmt.Sprintf("content of type %T", c))
		}
	}
	content := strings.Join(parts, "\n")
	if len(parts) == 0 && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return Result{Duration: d}, fmt.Errorf("mcp server %s: call %s: structured content: %w", s.server.Name, name, err)
		}
		content = string(b)
	}
	// A text longer than the bound is cut (the rest would have to reach
	// the model, and the client in the gateway's events, whole); the
	// model is told, before the notes below, which stay whole.
	textBytes, cut := len(content), 0
	if bound := s.server.MaxResultBytes; bound > 0 && len(content) > bound {
		kept := cutUTF8(content, bound)
		cut = len(content) - len(kept)
		content = kept + fmt.Sprintf("\n[result cut: %d of %d bytes omitted]", cut, textBytes)
	}
	// The media the model can be given, within what the bound leaves of
	// the text: each whole or left out with a note.
	var given []*llmrelayv1.Part
	var overBound []string
	used := len(content)
	for _, m := range media2 {
		n := mediaBytes(m.part)
		if bound := s.server.MaxResultBytes; bound > 0 && used+n > bound {
			overBound = append(overBound, m.desc)
			continue
		}
		used += n
		given = append(given, m.part)
	}
	if res.IsError && content == "" && len(omitted) == 0 && len(given) == 0 && len(overBound) == 0 {
		// An empty error would reach the model as an error with nothing
		// to act on, and Anthropic refuses the next model call ("content
		// cannot be empty if is_error is true").
		content = EmptyError
	}
	// The model is told what it does not see, rather than handed an empty
	// result it would take for "nothing found".
	why := "tool results reach the model as text"
	if media != nil {
		why = "the model cannot be given it in a tool result"
	}
	for _, o := range omitted {
		if content != "" {
			content += "\n"
		}
		content += "[" + o + " omitted: " + why + "]"
	}
	for _, o := range overBound {
		if content != "" {
			content += "\n"
		}
		content += "[" + o + " omitted: the result would pass its bound of " + strconv.Itoa(s.server.MaxResultBytes) + " bytes]"
	}
	return Result{Content: content, IsError: res.IsError, Parts: given, Omitted: omitted, OverBound: overBound, CutBytes: cut, TextBytes: textBytes, Duration: d}, nil
}

// mediaItem is a medium of a result media accepted, and its description
// for a note.
type mediaItem struct {
	part *llmrelayv1.Part
	desc string
}

// blobPart is an embedded resource's blob as a part: an image part for an
// image/* type, a file part otherwise.
func blobPart(blob []byte, mimeType string) *llmrelayv1.Part {
	if strings.HasPrefix(strings.ToLower(mimeType), "image/") {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: blob}, MimeType: mimeType}}}
	}
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: blob}, MimeType: mimeType}}}
}

// mediaBytes is the size of a medium's data.
func mediaBytes(p *llmrelayv1.Part) int {
	if img := p.GetImage(); img != nil {
		return len(img.GetData())
	}
	return len(p.GetFile().GetData())
}

// jsonKind names the kind of a JSON value by its first byte (not an object).
func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// EmptyError is the result text the model gets for a tool error that came
// without a message.
const EmptyError = "the tool reported an error without a message"

// cutUTF8 is the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// rpcCode names the JSON-RPC error code of a server's error answer, which
// the SDK's error text leaves out (it is the message alone); "" for other
// errors.
func rpcCode(err error) string {
	var re *jsonrpc.Error
	if !errors.As(err, &re) {
		return ""
	}
	if re.Code == httpFailureCode && bytes.HasPrefix(re.Data, []byte(`{"httpStatus":`)) {
		return "" // an HTTP failure callFailure wrote, not the server's JSON-RPC error
	}
	if name := rpcCodeNames[re.Code]; name != "" {
		return fmt.Sprintf(" (JSON-RPC error %d: %s)", re.Code, name)
	}
	return fmt.Sprintf(" (JSON-RPC error %d)", re.Code)
}

// rpcCodeNames are the JSON-RPC 2.0 codes' meanings: the model reads the
// error as the tool's result, and "-32602" alone does not tell it that
// the server refused its arguments (invalid params, what servers answer
// for arguments that fail the tool's schema or for an unknown tool)
// rather than failed on its own (internal error).
var rpcCodeNames = map[int64]string{
	jsonrpc.CodeParseError:     "parse error",
	jsonrpc.CodeInvalidRequest: "invalid request",
	jsonrpc.CodeMethodNotFound: "method not found",
	jsonrpc.CodeInvalidParams:  "invalid params",
	jsonrpc.CodeInternalError:  "internal error",
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
