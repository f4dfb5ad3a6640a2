package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"
)

// wire watches the JSON-RPC traffic below the SDK for what its typed API
// loses or mishandles:
//
//   - tools/list results as the server sent them: the SDK decodes each
//     tool's inputSchema into a map[string]any, which loses the key order
//     (and the spelling of numbers) that the contract promises to pass on
//     byte for byte;
//   - a call answered (as JSON) with another id than its own, which the
//     SDK would drop, leaving the call waiting until its deadline;
//   - a call answered with a JSON-RPC error whose id is null, which the
//     SDK cannot decode (on an event stream it ended the session over
//     it): it is handed on with the call's id, so the call fails with
//     the server's code and message.
type wire struct {
	mu sync.Mutex
	// lists holds the ids (JSON text) of the tools/list requests sent and
	// not yet answered; results the raw results that answered them, in
	// the order they came.
	lists   map[string]bool
	results []json.RawMessage
}

// maxTap bounds what the wire keeps of one message while it looks for a
// tools/list result: a larger event is passed on untouched, not recorded
// (a tools/list result that large gets the SDK's decoded schemas), and
// the events after it are looked at again.
const maxTap = 8 << 20

type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// idKey is an id's JSON text without insignificant whitespace.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, id); err != nil {
		return string(id)
	}
	return b.String()
}

// sent notes a request going out (body: one JSON-RPC message) and returns
// its id when it is a call.
func (w *wire) sent(body []byte) (id json.RawMessage) {
	var m envelope
	if json.Unmarshal(body, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil
	}
	if m.Method == "tools/list" {
		w.mu.Lock()
		if w.lists == nil {
			w.lists = map[string]bool{}
		}
		w.lists[idKey(m.ID)] = true
		w.mu.Unlock()
	}
	return m.ID
}

// received looks at one message from the server and keeps the result of
// a tools/list. On a call's own stream (call: its id), a response for
// another id is an error, and an error response with id null (JSON-RPC's
// answer to a request whose id the server could not read; some servers
// send it for every error) is the call's: replace is the message to hand
// on instead, the same error with the call's id (the SDK would take it
// for an invalid message, and end the whole session over it on an event
// stream).
func (w *wire) received(data []byte, call json.RawMessage) (replace []byte, err error) {
	w.mu.Lock()
	watching := len(w.lists) > 0
	w.mu.Unlock()
	if (!watching && call == nil) || len(data) == 0 {
		return nil, nil // nothing to look for, or a priming event (no data: the SDK skips it)
	}
	var m envelope
	if json.Unmarshal(data, &m) != nil || (m.Method == "" && len(m.ID) == 0) {
		if call == nil {
			return nil, nil
		}
		// Not a JSON-RPC message (not JSON, or an object neither a
		// request nor a response): the SDK, failing to decode it, would
		// end the connection and every call on it; it is this call's
		// failure.
		b, err := httpFailure(call, http.StatusOK, "the server sent a message that is not JSON-RPC: "+quoteBody(data))
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	if m.Method != "" || len(m.ID) == 0 {
		return nil, nil
	}
	if call != nil && idKey(m.ID) == "null" && len(m.Error) > 0 && string(m.Error) != "null" {
		b, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   json.RawMessage `json:"error"`
		}{"2.0", call, m.Error})
		if err != nil {
			return nil, fmt.Errorf("the server answered request %s with an error without an id: %s", idKey(call), m.Error)
		}
		return b, nil
	}
	if call != nil && idKey(m.ID) != idKey(call) {
		return nil, fmt.Errorf("the server answered request %s with a response for id %s", idKey(call), idKey(m.ID))
	}
	if len(m.Result) == 0 {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := idKey(m.ID); w.lists[k] {
		delete(w.lists, k)
		w.results = append(w.results, m.Result)
	}
	return nil, nil
}

// takeResults returns the tools/list results received since the last take
// and stops waiting for the others (a request that failed): the messages
// that follow are not looked into.
func (w *wire) takeResults() []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.results
	w.results = nil
	clear(w.lists)
	return r
}

// response checks and taps the answer to a request (a POST whose body was
// a call with this id; nil for notifications, responses and GETs).
func (w *wire) response(req *http.Request, id json.RawMessage, res *http.Response) error {
	if res.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
		// The server no longer knows the session; the spec has the client
		// start a new one. The SDK reads a 404 that carries a JSON-RPC
		// error (the typescript-sdk server sends -32001 "Session not
		// found") as an ordinary failed call and only a bare 404 as the
		// session's end (ErrSessionMissing): the body goes.
		_, err := io.Copy(io.Discard, res.Body)
		if cerr := res.Body.Close(); err == nil {
			err = cerr
		}
		res.Body = http.NoBody
		return err
	}
	ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if id != nil {
		if err := callFailure(req, res, id, ct); err != nil {
			return err
		}
		ct, _, _ = mime.ParseMediaType(res.Header.Get("Content-Type"))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil
	}
	switch ct {
	case "text/event-stream":
		res.Body = &sseTap{ReadCloser: res.Body, w: w, call: id}
	case "application/json":
		if id == nil {
			return nil
		}
		body, err := io.ReadAll(res.Body)
		if cerr := res.Body.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		replace, err := w.received(body, id)
		if replace != nil {
			body = replace
			res.ContentLength = int64(len(body))
			res.Header.Del("Content-Length")
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		return err
	}
	return nil
}

// sseTap passes an event stream through and shows each event's data to
// the wire. It hands each event on once it has read all of it (the blank
// line that ends it), so that an event can be replaced (an error answered
// with id null, given the call's id); an event larger than maxTap goes on
// as it is read, unlooked at. On a call's stream, a response for another
// id ends the stream with an error (the SDK then fails the call, rather
// than let it wait for a response the server sent elsewhere).
type sseTap struct {
	io.ReadCloser
	w    *wire
	call json.RawMessage
	err  error
	// held is the raw bytes of the event being read; out the bytes ready
	// to hand on; srcErr the source's error (io.EOF), once out is empty.
	held   []byte
	out    []byte
	srcErr error
	buf    []byte
	line   []byte
	data   []byte
	typ    []byte
	id     []byte
	hasID  bool
	has    bool
	// skipLF is set after a CR ending a read: a LF opening the next one
	// belongs to it.
	skipLF bool
	// lineHas: the line being read is not empty (its bytes may not be
	// kept: skip).
	lineHas bool
	// skip: the event being read outgrew maxTap; it is handed on as read
	// and not looked at, and the tap starts again with the next event
	// (after the blank line that ends this one).
	skip bool
}

func (t *sseTap) Read(p []byte) (int, error) {
	for {
		if t.err != nil {
			return 0, t.err
		}
		if len(t.out) > 0 {
			n := copy(p, t.out)
			t.out = t.out[n:]
			return n, nil
		}
		if t.srcErr != nil {
			return 0, t.srcErr
		}
		if t.buf == nil {
			t.buf = make([]byte, 32<<10)
		}
		n, err := t.ReadCloser.Read(t.buf)
		t.feed(t.buf[:n])
		if err != nil {
			// The end (or a broken stream): what is held goes on as it
			// is, an event cut short included.
			t.out = append(t.out, t.held...)
			t.held = t.held[:0]
			t.srcErr = err
		}
	}
}

// hold keeps raw bytes of the event being read, or hands them on when it
// is skipped.
func (t *sseTap) hold(b []byte) {
	if t.skip {
		t.out = append(t.out, b...)
		return
	}
	t.held = append(t.held, b...)
}

func (t *sseTap) feed(b []byte) {
	if t.skipLF && len(b) > 0 {
		t.skipLF = false
		if b[0] == '\n' {
			t.hold(b[:1])
			b = b[1:]
		}
	}
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			t.add(b)
			t.hold(b)
			break
		}
		t.add(b[:i])
		if b[i] == '\r' {
			if i+1 == len(b) {
				t.skipLF = true // a LF opening the next read ends nothing
			} else if b[i+1] == '\n' {
				i++
			}
		}
		t.hold(b[:i+1])
		b = b[i+1:]
		t.endLine()
		t.line, t.lineHas = t.line[:0], false
	}
}

// add appends b to the line being read, unless the event is skipped;
// past maxTap it starts skipping the event, handing on what it held.
func (t *sseTap) add(b []byte) {
	if len(b) == 0 {
		return
	}
	t.lineHas = true
	if t.skip {
		return
	}
	t.line = append(t.line, b...)
	if len(t.line)+len(t.data) > maxTap {
		t.skip = true
		t.line, t.data = t.line[:0], t.data[:0]
		t.out = append(t.out, t.held...)
		t.held = t.held[:0]
	}
}

// endLine interprets one line of the stream (SSE: LF, CR LF or CR ends a
// line; an empty line dispatches the event).
func (t *sseTap) endLine() {
	line := t.line
	if !t.lineHas {
		t.dispatch()
		return
	}
	if t.skip {
		return
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "data":
		if t.has {
			t.data = append(t.data, '\n')
		}
		t.data = append(t.data, value...)
		t.has = true
	case "event":
		t.typ = append(t.typ[:0], value...)
	case "id":
		t.id, t.hasID = append(t.id[:0], value...), true
	}
}

// dispatch ends the event: looked at (unless skipped) and handed on, or
// its replacement.
func (t *sseTap) dispatch() {
	ev := t.held
	if !t.skip && t.has && (len(t.typ) == 0 || string(t.typ) == "message") && t.err == nil {
		replace, err := t.w.received(t.data, t.call)
		t.err = err
		if replace != nil {
			var b bytes.Buffer
			if t.hasID {
				b.WriteString("id: ")
				b.Write(t.id)
				b.WriteString("\n")
			}
			b.WriteString("data: ")
			b.Write(replace)
			b.WriteString("\n\n")
			ev = b.Bytes()
		}
	}
	t.out = append(t.out, ev...)
	t.held = t.held[:0]
	t.skip = false
	t.data, t.typ, t.id, t.has, t.hasID = t.data[:0], t.typ[:0], t.id[:0], false, false
}

// httpFailureCode is the JSON-RPC code of the errors callFailure writes;
// their data holds the HTTP status ({"httpStatus": 413}), by which they are
// told from a server's own JSON-RPC errors (rpcCode).
const httpFailureCode = -32000

// maxFailureBody bounds how much of a failed answer's body is read, and
// maxFailureText how much of it the error quotes.
const (
	maxFailureBody = 4 << 10
	maxFailureText = 200
)

// callFailure makes an answer to a call that the SDK would take for the end
// of the whole connection the call's own failure. The SDK fails a call
// alone for a JSON-RPC error, a 404 for the session or a transient status
// (429, 500, 502, 503, 504); any other non-2xx (a 401 or 403 without a
// JSON-RPC body, a proxy's 413, a WAF's 406) and a 2xx neither JSON nor an
// event stream (an HTML sign-in page) ended the connection: the calls in
// flight on it failed with that answer's error though the server ran them
// and was answering, and every later call failed at once. Such an answer
// becomes a JSON-RPC error for the call's id (application/json, the same
// status), naming the status or content type and quoting the start of the
// body; the connection goes on.
func callFailure(req *http.Request, res *http.Response, id json.RawMessage, ct string) error {
	var what string
	switch ok := res.StatusCode >= 200 && res.StatusCode <= 299; {
	case ok && (ct == "application/json" || ct == "text/event-stream"):
		return nil
	case ok:
		what = fmt.Sprintf("the server answered HTTP %d with Content-Type %q, neither JSON nor an event stream", res.StatusCode, res.Header.Get("Content-Type"))
	case res.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "",
		res.StatusCode == http.StatusTooManyRequests, res.StatusCode == http.StatusInternalServerError,
		res.StatusCode == http.StatusBadGateway, res.StatusCode == http.StatusServiceUnavailable, res.StatusCode == http.StatusGatewayTimeout:
		return nil // the SDK's own: the session's end, or a failure of this call alone
	default:
		what = fmt.Sprintf("HTTP %d %s", res.StatusCode, http.StatusText(res.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxFailureBody+1))
	if cerr := res.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if res.StatusCode > 299 && len(body) <= maxFailureBody {
		var m struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil && len(m.Error) > 0 && string(m.Error) != "null" {
			res.Body = io.NopCloser(bytes.NewReader(body)) // a JSON-RPC error: the SDK fails the call with it
			return nil
		}
	}
	if text := quoteBody(body); text != "" {
		what += ": " + text
	}
	b, err := httpFailure(id, res.StatusCode, what)
	if err != nil {
		return err
	}
	res.Header.Set("Content-Type", "application/json")
	res.Header.Del("Content-Length")
	res.ContentLength = int64(len(b))
	res.Body = io.NopCloser(bytes.NewReader(b))
	return nil
}

// httpFailure is a JSON-RPC error answering id for an HTTP answer the
// call cannot use (see callFailure).
func httpFailure(id json.RawMessage, status int, what string) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, map[string]any{"code": httpFailureCode, "message": what, "data": map[string]int{"httpStatus": status}}})
}

// quoteBody is the start of a failed answer's body as one line of valid
// UTF-8, at most maxFailureText bytes ("…" when cut).
func quoteBody(body []byte) string {
	text := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\uFFFD")), " ")
	if len(text) > maxFailureText {
		n := maxFailureText
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n] + "…"
	}
	return text
}
