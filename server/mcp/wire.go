package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
)

// wire watches the JSON-RPC traffic below the SDK for what its typed API
// loses or mishandles:
//
//   - tools/list results as the server sent them: the SDK decodes each
//     tool's inputSchema into a map[string]any, which loses the key order
//     (and the spelling of numbers) that the contract promises to pass on
//     byte for byte;
//   - a call answered (as JSON) with another id than its own, which the
//     SDK would drop, leaving the call waiting until its deadline.
type wire struct {
	mu sync.Mutex
	// lists holds the ids (JSON text) of the tools/list requests sent and
	// not yet answered; results the raw results that answered them, in
	// the order they came.
	lists   map[string]bool
	results []json.RawMessage
}

// maxTap bounds what the wire keeps of one message while it looks for a
// tools/list result: a larger event is passed on untouched, not recorded.
const maxTap = 8 << 20

type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
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
// another id is an error.
func (w *wire) received(data []byte, call json.RawMessage) error {
	w.mu.Lock()
	watching := len(w.lists) > 0
	w.mu.Unlock()
	if !watching && call == nil {
		return nil
	}
	var m envelope
	if json.Unmarshal(data, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return nil
	}
	if call != nil && idKey(m.ID) != idKey(call) {
		return fmt.Errorf("the server answered request %s with a response for id %s", idKey(call), idKey(m.ID))
	}
	if len(m.Result) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := idKey(m.ID); w.lists[k] {
		delete(w.lists, k)
		w.results = append(w.results, m.Result)
	}
	return nil
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
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil
	}
	ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
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
		res.Body = io.NopCloser(bytes.NewReader(body))
		return w.received(body, id)
	}
	return nil
}

// sseTap passes an event stream through unchanged and shows each event's
// data to the wire. On a call's stream, a response for another id ends the
// stream with an error (the SDK then fails the call, rather than let it
// wait for a response the server sent elsewhere).
type sseTap struct {
	io.ReadCloser
	w    *wire
	call json.RawMessage
	err  error
	line []byte
	data []byte
	typ  []byte
	has  bool
	// skipLF is set after a CR ending a read: a LF opening the next one
	// belongs to it.
	skipLF bool
	off    bool // an event outgrew maxTap: the rest is not looked at
}

func (t *sseTap) Read(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.ReadCloser.Read(p)
	if !t.off {
		t.feed(p[:n])
	}
	return n, err
}

func (t *sseTap) feed(b []byte) {
	if t.skipLF && len(b) > 0 {
		t.skipLF = false
		if b[0] == '\n' {
			b = b[1:]
		}
	}
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			t.line = append(t.line, b...)
			break
		}
		t.line = append(t.line, b[:i]...)
		if b[i] == '\r' {
			if i+1 == len(b) {
				t.skipLF = true // a LF opening the next read ends nothing
			} else if b[i+1] == '\n' {
				i++
			}
		}
		b = b[i+1:]
		t.endLine()
		t.line = t.line[:0]
	}
	if len(t.line)+len(t.data) > maxTap {
		t.off = true
	}
}

// endLine interprets one line of the stream (SSE: LF, CR LF or CR ends a
// line; an empty line dispatches the event).
func (t *sseTap) endLine() {
	line := t.line
	if len(line) == 0 {
		if t.has && (len(t.typ) == 0 || string(t.typ) == "message") && t.err == nil {
			t.err = t.w.received(t.data, t.call)
		}
		t.data, t.typ, t.has = t.data[:0], t.typ[:0], false
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
	}
}
