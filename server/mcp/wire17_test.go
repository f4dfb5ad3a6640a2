package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/server/mcp"
)

// rpc is one JSON-RPC message as the scripted server reads it.
type rpc struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// seen is one HTTP request the scripted server received.
type seen struct {
	verb    string // POST, GET, DELETE
	session string // Mcp-Session-Id
	version string // MCP-Protocol-Version
	lastID  string // Last-Event-ID
	msg     rpc
}

// wireServer is an MCP server speaking streamable HTTP byte by byte as a
// test writes it: initialize answers version with a session id (new per
// initialize), notifications and responses get 202, GET 405, DELETE 200;
// every other request goes to handle (a JSON-RPC "method not found" when
// unset). It records every request, and the client's answers to the
// server's own requests arrive on answers.
type wireServer struct {
	t       *testing.T
	version string
	handle  func(w http.ResponseWriter, r *http.Request, m rpc)
	get     func(w http.ResponseWriter, r *http.Request) // GET (405 when unset)
	answers chan rpc

	mu       sync.Mutex
	log      []seen
	sessions int
	srv      *httptest.Server
}

func newWireServer(t *testing.T, version string, handle func(w http.ResponseWriter, r *http.Request, m rpc)) *wireServer {
	w := &wireServer{t: t, version: version, handle: handle, answers: make(chan rpc, 16)}
	w.srv = httptest.NewServer(w)
	t.Cleanup(w.srv.Close)
	return w
}

func (ws *wireServer) record(r *http.Request, m rpc) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.log = append(ws.log, seen{verb: r.Method, session: r.Header.Get("Mcp-Session-Id"), version: r.Header.Get("Mcp-Protocol-Version"),
		lastID: r.Header.Get("Last-Event-ID"), msg: m})
}

func (ws *wireServer) seen() []seen {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]seen(nil), ws.log...)
}

// methods lists the JSON-RPC methods (and "response" for the client's
// answers, "GET"/"DELETE" for those verbs) in the order they arrived.
func (ws *wireServer) methods() []string {
	var out []string
	for _, s := range ws.seen() {
		switch {
		case s.verb != http.MethodPost:
			out = append(out, s.verb)
		case s.msg.Method == "":
			out = append(out, "response")
		default:
			out = append(out, s.msg.Method)
		}
	}
	return out
}

func (ws *wireServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		ws.record(r, rpc{})
		if ws.get != nil {
			ws.get(w, r)
			return
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		ws.record(r, rpc{})
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		ws.t.Errorf("read body: %v", err)
		return
	}
	var m rpc
	if err := json.Unmarshal(body, &m); err != nil {
		ws.t.Errorf("body %s: %v", body, err)
		return
	}
	ws.record(r, m)
	switch {
	case m.Method == "": // the client's answer to a request of ours
		ws.answers <- m
		w.WriteHeader(http.StatusAccepted)
	case m.ID == nil: // a notification
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "initialize":
		ws.mu.Lock()
		ws.sessions++
		id := fmt.Sprintf("sess-%d", ws.sessions)
		ws.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
		writeJSON(w, m.ID, `{"protocolVersion":"`+ws.version+`","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"wire","version":"0.0.1"}}`)
	case m.Method == "server/discover" || ws.handle == nil:
		writeError(w, m.ID, -32601, "Method not found")
	default:
		ws.handle(w, r, m)
	}
}

func writeJSON(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func writeError(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

// sseWriter writes an event stream, flushing each event.
type sseWriter struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return sseWriter{w}
}

// event writes raw lines (e.g. "id: 1", "data: {...}") and the blank line.
func (s sseWriter) event(lines ...string) {
	fmt.Fprint(s.w, strings.Join(lines, "\n")+"\n\n")
	s.w.(http.Flusher).Flush()
}

const textResult = `{"content":[{"type":"text","text":"sunny"}],"isError":false}`

func connectWire(t *testing.T, ws *wireServer) *mcp.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcp.Connect(ctx, mcp.Server{Name: "wire", URL: ws.srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestWireHandshake: against a server answering the older 2025-03-26, the
// session speaks that version: notifications/initialized goes out after the
// initialize answer, every later request carries the session id and
// MCP-Protocol-Version: 2025-03-26, no GET stream is opened, and Close
// ends the session with a DELETE.
func TestWireHandshake(t *testing.T) {
	ws := newWireServer(t, "2025-03-26", func(w http.ResponseWriter, r *http.Request, m rpc) {
		writeJSON(w, m.ID, textResult)
	})
	s := connectWire(t, ws)
	res, err := s.Call(callCtx(t), "weather", `{"city":"Paris"}`)
	if err != nil || res.Content != "sunny" {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	log := ws.seen()
	init := -1
	for i, r := range log {
		if r.msg.Method == "initialize" {
			init = i
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if err := json.Unmarshal(r.msg.Params, &p); err != nil || p.ProtocolVersion == "" {
				t.Errorf("initialize params %s", r.msg.Params)
			}
			// No roots, no sampling, no elicitation.
			if !strings.Contains(string(r.msg.Params), `"capabilities":{}`) {
				t.Errorf("initialize capabilities: %s", r.msg.Params)
			}
			if r.session != "" {
				t.Errorf("initialize sent with session %q", r.session)
			}
		}
	}
	if init < 0 {
		t.Fatalf("no initialize: %v", ws.methods())
	}
	after := log[init+1:]
	want := []string{"notifications/initialized", "tools/call", "DELETE"}
	var got []string
	for _, r := range after {
		got = append(got, map[bool]string{true: r.verb, false: r.msg.Method}[r.verb != http.MethodPost])
		if r.session != "sess-1" || r.version != "2025-03-26" {
			t.Errorf("%s %s: session %q, protocol version %q", r.verb, r.msg.Method, r.session, r.version)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after initialize: %v, want %v", got, want)
	}
}

// TestWireUnsupportedVersion: a server answering a protocol version the
// client does not speak is refused at connect, naming the version.
func TestWireUnsupportedVersion(t *testing.T) {
	ws := newWireServer(t, "2023-01-01", nil)
	_, err := mcp.Connect(callCtx(t), mcp.Server{Name: "wire", URL: ws.srv.URL}, nil)
	if err == nil || !strings.Contains(err.Error(), "2023-01-01") {
		t.Fatalf("error %v", err)
	}
}

// TestWireSSEInterleaved: a tools/call answered as an event stream with
// id: and retry: lines, a priming event without data, a log and a progress
// notification, and the server's own requests (ping, sampling,
// elicitation, roots) before the result: each request is answered (ping
// with an empty result, the others refused with an error: the gateway has
// no model, user or roots to offer the server and declared none), and the
// result arrives.
func TestWireSSEInterleaved(t *testing.T) {
	var ws *wireServer
	ws = newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		s := startSSE(w)
		s.event("id: ev-0", "retry: 1000", "data: ")
		s.event("id: ev-1", `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"looking up"}}`)
		s.event("id: ev-2", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2}}`)
		reqs := []string{
			`{"jsonrpc":"2.0","id":"s-ping","method":"ping"}`,
			`{"jsonrpc":"2.0","id":"s-sample","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`,
			`{"jsonrpc":"2.0","id":"s-elicit","method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`,
			`{"jsonrpc":"2.0","id":"s-roots","method":"roots/list"}`,
		}
		for i, q := range reqs {
			s.event(fmt.Sprintf("id: ev-%d", 3+i), "data: "+q)
		}
		for range reqs {
			select {
			case a := <-ws.answers:
				var id string
				json.Unmarshal(a.ID, &id)
				switch id {
				case "s-ping":
					if string(a.Result) != "{}" || a.Error != nil {
						t.Errorf("ping answered %s %s", a.Result, a.Error)
					}
				case "s-sample", "s-elicit", "s-roots":
					if a.Error == nil {
						t.Errorf("%s answered %s, want an error", id, a.Result)
					}
				default:
					t.Errorf("answer to %s", a.ID)
				}
			case <-time.After(5 * time.Second):
				t.Error("the client did not answer the server's requests")
				return
			}
		}
		s.event("id: ev-9", fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, textResult))
	})
	s := connectWire(t, ws)
	defer s.Close()
	res, err := s.Call(callCtx(t), "weather", `{}`)
	if err != nil || res.Content != "sunny" {
		t.Fatalf("call: %+v, %v", res, err)
	}
}

// TestWireSSEPolling: a 2025-11-25 server closes a call's event stream
// after its priming event (id and retry, no data) and sends the result on
// the stream the client resumes with GET and Last-Event-ID after the retry
// delay (SEP-1699; the conformance suite's sse-retry scenario).
func TestWireSSEPolling(t *testing.T) {
	var callID json.RawMessage
	var closed time.Time
	var mu sync.Mutex
	ws := newWireServer(t, "2025-11-25", func(w http.ResponseWriter, r *http.Request, m rpc) {
		startSSE(w).event("id: call-1", "retry: 300", "data: ")
		mu.Lock()
		callID, closed = m.ID, time.Now()
		mu.Unlock()
	})
	ws.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "call-1" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		id, waited := callID, time.Since(closed)
		mu.Unlock()
		if waited < 250*time.Millisecond {
			t.Errorf("resumed after %v, not the 300ms retry", waited)
		}
		startSSE(w).event("id: call-2", fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%s,"result":%s}`, id, textResult))
	}
	s := connectWire(t, ws)
	defer s.Close()
	res, err := s.Call(callCtx(t), "weather", `{}`)
	if err != nil || res.Content != "sunny" {
		t.Fatalf("call: %+v, %v (requests %v)", res, err, ws.methods())
	}
}

// TestWireJSONRPCError: a JSON-RPC error answering tools/call (an unknown
// tool, -32602) fails that call with the server's code and message, and the
// session stays usable.
func TestWireJSONRPCError(t *testing.T) {
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		var p struct{ Name string }
		json.Unmarshal(m.Params, &p)
		if p.Name != "weather" {
			writeError(w, m.ID, -32602, "Unknown tool: "+p.Name)
			return
		}
		writeJSON(w, m.ID, textResult)
	})
	s := connectWire(t, ws)
	defer s.Close()
	_, err := s.Call(callCtx(t), "nope", `{}`)
	if err == nil || !strings.Contains(err.Error(), "Unknown tool: nope") {
		t.Fatalf("error %v", err)
	}
	if res, err := s.Call(callCtx(t), "weather", `{}`); err != nil || res.Content != "sunny" {
		t.Fatalf("next call: %+v, %v", res, err)
	}
}

// TestWireIDMismatch: a result whose id is not the call's (as JSON, or on
// the call's event stream, ended or left open) fails the call at once
// instead of leaving it waiting for an answer that will not come.
func TestWireIDMismatch(t *testing.T) {
	for _, mode := range []string{"json", "sse", "sse-open"} {
		t.Run(mode, func(t *testing.T) {
			ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
				switch mode {
				case "json":
					writeJSON(w, json.RawMessage("987654"), textResult)
				case "sse":
					startSSE(w).event(`data: {"jsonrpc":"2.0","id":987654,"result":` + textResult + `}`)
				default:
					startSSE(w).event(`data: {"jsonrpc":"2.0","id":987654,"result":` + textResult + `}`)
					<-r.Context().Done()
				}
			})
			s := connectWire(t, ws)
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			_, err := s.Call(ctx, "weather", `{}`)
			if err == nil || ctx.Err() != nil {
				t.Fatalf("error %v after %v", err, time.Since(start))
			}
		})
	}
}

// TestWireSessionExpired: a 404 for the session (the server forgot it)
// starts a new session once (initialize without the old id) and sends the
// call again; a second 404 right after is an error, not a loop. The 404
// comes bare, with the typescript-sdk server's body (JSON-RPC error
// -32001, id null, no Content-Type) or with the conformance suite's
// (session-renegotiation-404: the request's id, application/json): the
// SDK read a 404 with a JSON-RPC error as an ordinary failed call.
func TestWireSessionExpired(t *testing.T) {
	for name, body := range map[string]func(id json.RawMessage) (string, string){
		"bare": func(json.RawMessage) (string, string) { return "", "" },
		"typescript": func(json.RawMessage) (string, string) {
			return "", `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`
		},
		"conformance": func(id json.RawMessage) (string, string) {
			return "application/json", `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32001,"message":"Session not found"}}`
		},
	} {
		t.Run(name, func(t *testing.T) {
			var expire func(session string) bool
			ws := newWireServer(t, "2025-11-25", func(w http.ResponseWriter, r *http.Request, m rpc) {
				if expire(r.Header.Get("Mcp-Session-Id")) {
					ct, b := body(m.ID)
					if ct != "" {
						w.Header().Set("Content-Type", ct)
					}
					w.WriteHeader(http.StatusNotFound)
					io.WriteString(w, b)
					return
				}
				writeJSON(w, m.ID, textResult)
			})
			expire = func(session string) bool { return session == "sess-1" }
			s := connectWire(t, ws)
			defer s.Close()
			res, err := s.Call(callCtx(t), "weather", `{}`)
			if err != nil || res.Content != "sunny" {
				t.Fatalf("call: %+v, %v (requests %v)", res, err, ws.methods())
			}
			var inits []seen
			for _, r := range ws.seen() {
				if r.msg.Method == "initialize" {
					inits = append(inits, r)
				}
			}
			if len(inits) != 2 || inits[1].session != "" {
				t.Fatalf("initializations %+v", inits)
			}
			// The new session works for later calls too.
			if res, err := s.Call(callCtx(t), "weather", `{}`); err != nil || res.Content != "sunny" {
				t.Fatalf("later call: %+v, %v", res, err)
			}
			expire = func(string) bool { return true }
			if _, err := s.Call(callCtx(t), "weather", `{}`); err == nil {
				t.Fatal("a server that forgets every session: no error")
			}
			n := 0
			for _, r := range ws.seen() {
				if r.msg.Method == "initialize" {
					n++
				}
			}
			if n != 3 {
				t.Errorf("%d initializations, want 3 (one renewal per expiry)", n)
			}
		})
	}
}

// TestWireCancelled: a call abandoned by its context (the agent's tool
// timeout or a cancelled run) is cancelled on the server with
// notifications/cancelled naming the call's request id.
func TestWireCancelled(t *testing.T) {
	var callID json.RawMessage
	var mu sync.Mutex
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		mu.Lock()
		callID = m.ID
		mu.Unlock()
		startSSE(w)
		<-r.Context().Done()
	})
	s := connectWire(t, ws)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Call(ctx, "slow", `{}`); err == nil {
		t.Fatal("no error")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range ws.seen() {
		if r.msg.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if err := json.Unmarshal(r.msg.Params, &p); err != nil || !bytes.Equal(p.RequestID, callID) {
				t.Fatalf("cancelled %s, call id %s", r.msg.Params, callID)
			}
			return
		}
	}
	t.Fatalf("no notifications/cancelled: %v", ws.methods())
}

// schemaZ is an input schema whose keys are not in alphabetical order and
// whose numbers a float64 would respell: it must reach the contract as
// sent (whitespace aside).
const schemaZ = `{"type": "object", "properties": {"zeta": {"type": "number", "maximum": 1.50, "multipleOf": 0.10},
 "alpha": {"type": "integer", "maximum": 12345678901234567890}}, "required": ["zeta"], "additionalProperties": false}`

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWireToolPages: tools/list is followed through every nextCursor (as
// JSON and as event streams), tools keep the server's order, and input
// schemas are passed exactly: key order and numbers as the server wrote
// them (the SDK's decoded map sorted the keys and turned
// 12345678901234567890 into 12345678901234567000).
func TestWireToolPages(t *testing.T) {
	pages := map[string]string{
		"":   `{"tools":[{"name":"zulu","description":"Z","inputSchema":` + schemaZ + `}],"nextCursor":"p2"}`,
		"p2": `{"tools":[{"name":"alpha","inputSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}}},{"name":"mike","inputSchema":{"type":"object"}}],"nextCursor":"p3"}`,
		"p3": `{"tools":[{"name":"bravo","inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"object"}}]}`,
	}
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[sse], func(t *testing.T) {
			var cursors []string
			ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
				var p struct{ Cursor string }
				json.Unmarshal(m.Params, &p)
				cursors = append(cursors, p.Cursor)
				page, ok := pages[p.Cursor]
				if m.Method != "tools/list" || !ok {
					writeError(w, m.ID, -32602, "bad cursor")
					return
				}
				if sse {
					page = strings.ReplaceAll(page, "\n", "") // one event line
					s := startSSE(w)
					s.event(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"listing"}}`)
					// The result split over two data lines (SSE joins them with a LF).
					s.event("id: 7\r\nevent: message\r\ndata: "+fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,`, m.ID), "data: "+`"result":`+page+`}`)
					return
				}
				writeJSON(w, m.ID, page)
			})
			s := connectWire(t, ws)
			defer s.Close()
			tools, err := s.Tools(callCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(cursors, ",") != ",p2,p3" {
				t.Errorf("cursors sent %q", cursors)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.GetName())
			}
			if strings.Join(names, ",") != "zulu,alpha,mike,bravo" {
				t.Fatalf("tools %v", names)
			}
			if got, want := tools[0].GetParameters(), compact(t, schemaZ); got != want {
				t.Errorf("schema\n got %s\nwant %s", got, want)
			}
			if got := tools[1].GetParameters(); got != `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}}` {
				t.Errorf("alpha schema %s", got)
			}
		})
	}
}

// TestWireToolPagesBounded: a server whose cursor comes round again, or
// that never stops giving new ones, ends the listing with an error.
func TestWireToolPagesBounded(t *testing.T) {
	for name, next := range map[string]func(n int) string{
		"repeated": func(n int) string { return []string{"a", "b", "a"}[n%3] },
		"endless":  func(n int) string { return fmt.Sprintf("c%d", n) },
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
				writeJSON(w, m.ID, fmt.Sprintf(`{"tools":[{"name":"t%d","inputSchema":{"type":"object"}}],"nextCursor":%q}`, n, next(n)))
				n++
			})
			s := connectWire(t, ws)
			defer s.Close()
			_, err := s.Tools(callCtx(t))
			if err == nil || n > 100 {
				t.Fatalf("error %v after %d pages", err, n)
			}
		})
	}
}

// TestToolSchemaSDKServer: against the Go SDK's own server (which speaks
// 2026-07-28 over streamable HTTP: server/discover, no session), and over
// the SSE transport, where the tools/list result comes on the long-lived
// event stream, the schema is kept exactly too.
func TestToolSchemaSDKServer(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	s.AddTool(&sdk.Tool{Name: "zulu", InputSchema: json.RawMessage(schemaZ)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
	for _, transport := range []string{mcp.Streamable, mcp.SSE} {
		t.Run(transport, func(t *testing.T) {
			var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
			if transport == mcp.SSE {
				h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			sess, err := mcp.Connect(callCtx(t), mcp.Server{Name: "t", URL: srv.URL, Transport: transport}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			tools, err := sess.Tools(callCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 1 || tools[0].GetParameters() != compact(t, schemaZ) {
				t.Fatalf("tools %v", tools)
			}
		})
	}
}

// TestWireInitializeOverSSE: a server answering initialize as an event
// stream (a priming event, then the result as "event: message" with an id,
// the stream left open a while: the conformance suite's sse-retry server)
// and notifications with 200 and an empty JSON body instead of 202 is
// still usable.
func TestWireInitializeOverSSE(t *testing.T) {
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		writeJSON(w, m.ID, textResult)
	})
	plain := http.Handler(ws)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m rpc
		json.Unmarshal(body, &m)
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sse-init")
			s := startSSE(w)
			s.event("id: event-1", "retry: 2000", "data: ")
			s.event("event: message", "id: event-2", fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"sse-retry-test-server","version":"1.0.0"},"capabilities":{}}}`, m.ID))
			time.Sleep(100 * time.Millisecond)
		case m.Method == "notifications/initialized":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
		default:
			plain.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	s, err := mcp.Connect(callCtx(t), mcp.Server{Name: "wire", URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, err := s.Call(callCtx(t), "weather", `{}`); err != nil || res.Content != "sunny" {
		t.Fatalf("call: %+v, %v", res, err)
	}
	for _, r := range ws.seen() {
		if r.msg.Method == "tools/call" && (r.session != "sse-init" || r.version != "2025-06-18") {
			t.Errorf("call sent with session %q, version %q", r.session, r.version)
		}
	}
}

// TestWireSessionExpiredParallel: calls running together when the server
// forgets the session renew it once between them, and each is answered.
func TestWireSessionExpiredParallel(t *testing.T) {
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		if r.Header.Get("Mcp-Session-Id") == "sess-1" {
			time.Sleep(20 * time.Millisecond) // all three in flight before the first 404
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		writeJSON(w, m.ID, textResult)
	})
	s := connectWire(t, ws)
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Call(callCtx(t), "weather", `{}`)
			if err == nil && res.Content != "sunny" {
				err = fmt.Errorf("content %q", res.Content)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	n := 0
	for _, r := range ws.seen() {
		if r.msg.Method == "initialize" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d initializations, want 2 (%v)", n, ws.methods())
	}
}
