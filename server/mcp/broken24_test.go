package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/server/mcp"
)

// TestWireOneAnswerKeepsSession: an answer the SDK does not take as one
// call's failure ended the whole connection: a 401 or 403 without a
// JSON-RPC body (an expired token, a WAF refusing one payload), a 4xx such
// as 413 from a proxy, a 200 whose body is an HTML page. Every later call
// of the run failed at once with "connection closed: client is closing",
// never reaching the server. The call that met the answer fails with it
// (status or content type, and the start of the body); the session goes
// on, and the next calls reach the server.
func TestWireOneAnswerKeepsSession(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   string
	}{
		{"401", func(w http.ResponseWriter) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="The access token expired"`)
			w.WriteHeader(http.StatusUnauthorized)
		}, `HTTP 401 Unauthorized: rejected by transport: Unauthorized (HTTP 401; WWW-Authenticate: Bearer error="invalid_token", error_description="The access token expired"; check the server's Authorization header)`},
		{"403 text", func(w http.ResponseWriter) { http.Error(w, "Request blocked.\nReference #18.2f", http.StatusForbidden) },
			"HTTP 403 Forbidden: Request blocked. Reference #18.2f: rejected by transport: Forbidden (HTTP 403)"},
		{"413 proxy", func(w http.ResponseWriter) {
			http.Error(w, "<html>413 Request Entity Too Large</html>", http.StatusRequestEntityTooLarge)
		}, "HTTP 413 Request Entity Too Large: <html>413 Request Entity Too Large</html>: rejected by transport: Request Entity Too Large"},
		{"200 html", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Sign in</body></html>")
		}, `the server answered HTTP 200 with Content-Type "text/html", neither JSON nor an event stream: <html><body>Sign in</body></html>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
				var p struct{ Name string }
				if err := json.Unmarshal(m.Params, &p); err != nil {
					t.Errorf("params %s: %v", m.Params, err)
				}
				if p.Name == "upload" {
					tc.answer(w)
					return
				}
				writeJSON(w, m.ID, textResult)
			})
			s := connectWire(t, ws)
			defer s.Close()
			if _, err := s.Call(callCtx(t), "upload", `{"file":"big"}`); err == nil || !strings.HasPrefix(err.Error(), "mcp server wire: call upload: ") || !strings.HasSuffix(err.Error(), tc.want) {
				t.Fatalf("upload: error %v, want it to end %q", err, tc.want)
			}
			for i := range 2 {
				res, err := s.Call(callCtx(t), "weather", `{"city":"Paris"}`)
				if err != nil || res.Content != "sunny" {
					t.Fatalf("call %d after the answer: %+v, %v (requests %v)", i+1, res, err, ws.methods())
				}
			}
			if n := toolCalls(ws, "weather"); n != 2 {
				t.Errorf("weather reached the server %d times, want 2 (requests %v)", n, ws.methods())
			}
			if n := toolCalls(ws, "upload"); n != 1 {
				t.Errorf("upload reached the server %d times, want 1", n)
			}
			if got := strings.Join(ws.methods(), ","); got != "server/discover,initialize,notifications/initialized,tools/call,tools/call,tools/call" {
				t.Errorf("requests %s", got)
			}
		})
	}
}

// TestWireParallelCallsSurviveOneAnswer: two calls are running on the
// server (their event streams open) when a third meets a proxy's 413. The
// 413 ended the connection, and the two running calls failed with it
// ("Request Entity Too Large") though the server ran them and answered;
// now each gets its own answer.
func TestWireParallelCallsSurviveOneAnswer(t *testing.T) {
	started, release := make(chan struct{}, 2), make(chan struct{})
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		if strings.Contains(string(m.Params), `"name":"upload"`) {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		sse := startSSE(w)
		started <- struct{}{}
		<-release
		sse.event(`data: {"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + textResult + `}`)
	})
	s := connectWire(t, ws)
	defer s.Close()
	type outcome struct {
		res mcp.Result
		err error
	}
	out := make(chan outcome, 2)
	for range 2 {
		go func() {
			res, err := s.Call(callCtx(t), "lookup", `{}`)
			out <- outcome{res, err}
		}()
	}
	<-started
	<-started
	_, err := s.Call(callCtx(t), "upload", `{}`)
	close(release)
	if err == nil || !strings.Contains(err.Error(), "HTTP 413 Request Entity Too Large: too large") {
		t.Errorf("upload: %v", err)
	}
	for range 2 {
		if o := <-out; o.err != nil || o.res.Content != "sunny" {
			t.Errorf("running call: %+v, %v", o.res, o.err)
		}
	}
}

// TestSSEStreamEndedBetweenCalls: a legacy SSE server whose event stream
// ends between two calls (a load balancer's idle timeout while the client
// ran its own tools): the session's connection is over, and every later
// call failed with "connection closed" without reaching the server. The
// next call now opens a new session (a new event stream) and is answered.
func TestSSEStreamEndedBetweenCalls(t *testing.T) {
	s := testServer()
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var (
		mu      sync.Mutex
		streams []context.CancelFunc
		ended   []chan struct{} // closed when the stream's handler returned
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			done := make(chan struct{})
			mu.Lock()
			streams, ended = append(streams, cancel), append(ended, done)
			mu.Unlock()
			defer close(done)
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	sess, err := mcp.Connect(callCtx(t), mcp.Server{Name: "t", URL: srv.URL, Transport: mcp.SSE}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if res, err := sess.Call(callCtx(t), "echo", `{"q":"one"}`); err != nil || res.Content != "echo: one" {
		t.Fatalf("first call: %+v, %v", res, err)
	}
	mu.Lock()
	streams[0]() // the proxy ends the event stream
	first := ended[0]
	mu.Unlock()
	<-first // ended for the server: no answer goes out on it any more (the handler notices its context when it next looks)
	var res mcp.Result
	for i := 0; ; i++ {
		// The client learns that the stream ended when it reads its end:
		// a call sent before may still go out on the old session and fail
		// (its answer would have come on the stream), never more than one.
		res, err = sess.Call(callCtx(t), "echo", `{"q":"two"}`)
		if err == nil || i == 1 {
			break
		}
	}
	if err != nil || res.Content != "echo: two" {
		t.Fatalf("call after the stream ended: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(streams) != 2 {
		t.Errorf("%d event streams, want 2", len(streams))
	}
}

// TestWireCallRefusedCredentials: a tools/call the server refuses with 401
// and a challenge (a token that expired during the run) fails with an
// AuthError carrying the status and the challenge, which the SDK's error
// ("Unauthorized") leaves out; the model and the client see why.
func TestWireCallRefusedCredentials(t *testing.T) {
	const challenge = `Bearer error="insufficient_scope", scope="files:write"`
	ws := newWireServer(t, "2025-11-25", func(w http.ResponseWriter, r *http.Request, m rpc) {
		w.Header().Set("WWW-Authenticate", challenge)
		w.WriteHeader(http.StatusForbidden)
	})
	s := connectWire(t, ws)
	defer s.Close()
	_, err := s.Call(callCtx(t), "upload", `{}`)
	var ae *mcp.AuthError
	if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || ae.Challenge != challenge ||
		!strings.Contains(err.Error(), "Forbidden (HTTP 403; WWW-Authenticate: "+challenge+")") {
		t.Fatalf("error %v", err)
	}
}

// TestCallArgumentsNotObject: MCP tool arguments are an object of named
// parameters. A model's "null" went out as "arguments": null (servers
// answer -32602), and an array, string, number or boolean went to the
// server as they were; now null is no arguments ({}), and the others are
// an error result for the model, not sent.
func TestCallArgumentsNotObject(t *testing.T) {
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || string(p.Arguments) != "{}" {
			writeError(w, m.ID, -32602, "Invalid params: arguments must be an object, got "+string(p.Arguments))
			return
		}
		writeJSON(w, m.ID, textResult)
	})
	s := connectWire(t, ws)
	defer s.Close()
	if res, err := s.Call(callCtx(t), "weather", " null "); err != nil || res.IsError || res.Content != "sunny" {
		t.Fatalf("null: %+v, %v", res, err)
	}
	for args, kind := range map[string]string{`["Paris"]`: "an array", `"Paris"`: "a string", `42`: "a number", `true`: "a boolean"} {
		res, err := s.Call(callCtx(t), "weather", args)
		if err != nil || !res.IsError || res.Content != "the arguments must be a JSON object of named parameters, not "+kind {
			t.Errorf("%s: %+v, %v", args, res, err)
		}
	}
	if n := toolCalls(ws, "weather"); n != 1 {
		t.Errorf("%d calls reached the server, want 1 (the null one)", n)
	}
}

// TestCallEmptyError: a tool error without content ({"content": [],
// "isError": true}) reached the model as an empty error result, which
// Anthropic refuses in the next model call ("tool_result: content cannot
// be empty if is_error is true", bytedance/trae-agent#230). The model gets
// a message saying the tool failed without one; an empty success stays
// empty.
func TestCallEmptyError(t *testing.T) {
	ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
		if strings.Contains(string(m.Params), `"name":"fails"`) {
			writeJSON(w, m.ID, `{"content":[],"isError":true}`)
			return
		}
		writeJSON(w, m.ID, `{"content":[]}`)
	})
	s := connectWire(t, ws)
	defer s.Close()
	res, err := s.Call(callCtx(t), "fails", `{}`)
	if err != nil || !res.IsError || res.Content != "the tool reported an error without a message" {
		t.Fatalf("empty error: %+v, %v", res, err)
	}
	res, err = s.Call(callCtx(t), "quiet", `{}`)
	if err != nil || res.IsError || res.Content != "" {
		t.Fatalf("empty success: %+v, %v", res, err)
	}
}

// TestCallResentWhenReadOnly: a call whose session the server forgot after
// it had the call (its event stream primed, the resumption answered 404)
// is sent again on a new session when the server annotated the tool
// readOnlyHint or idempotentHint: running it twice changes nothing, and
// the model gets the answer instead of "not sent again". A tool without
// those hints still fails (TestCallNotResentAfterResumed404).
func TestCallResentWhenReadOnly(t *testing.T) {
	for _, annotations := range []string{`{"readOnlyHint":true}`, `{"readOnlyHint":false,"idempotentHint":true}`} {
		t.Run(annotations, func(t *testing.T) {
			ws := newWireServer(t, "2025-11-25", func(w http.ResponseWriter, r *http.Request, m rpc) {
				switch {
				case m.Method == "tools/list":
					writeJSON(w, m.ID, `{"tools":[{"name":"lookup","inputSchema":{"type":"object"},"annotations":`+annotations+`}]}`)
				case r.Header.Get("Mcp-Session-Id") == "sess-1":
					startSSE(w).event("id: call-1", "retry: 5", "data: ")
				default:
					writeJSON(w, m.ID, textResult)
				}
			})
			ws.get = func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Last-Event-ID") != "" {
					http.Error(w, "session not found", http.StatusNotFound)
					return
				}
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
			s := connectWire(t, ws)
			defer s.Close()
			if _, err := s.Tools(callCtx(t)); err != nil {
				t.Fatal(err)
			}
			res, err := s.Call(callCtx(t), "lookup", `{"q":"x"}`)
			if err != nil || res.Content != "sunny" {
				t.Fatalf("lookup: %+v, %v (requests %v)", res, err, ws.methods())
			}
			if n := toolCalls(ws, "lookup"); n != 2 {
				t.Errorf("the tool was sent %d times, want 2 (requests %v)", n, ws.methods())
			}
		})
	}
}

// TestSSEStreamBoundedByEvent: the legacy SSE transport carries every
// answer of a session on one GET event stream. limits.max_response_bytes
// bounded that whole body: once a run's answers added up to it (here 12
// answers of 1000 bytes under an 8 KiB bound), the call that crossed it
// failed with "larger than 8192 bytes" and the session was over. Each
// event is bounded now; one answer over the bound still fails.
func TestSSEStreamBoundedByEvent(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	s.AddTool(&sdk.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ N int }
			if err := json.Unmarshal(r.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", args.N)}}}, nil
		})
	srv := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	sess, err := mcp.Connect(callCtx(t), mcp.Server{Name: "t", URL: srv.URL, Transport: mcp.SSE, MaxResponseBytes: 8 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for i := range 12 {
		if res, err := sess.Call(callCtx(t), "big", `{"n":1000}`); err != nil || len(res.Content) != 1000 {
			t.Fatalf("call %d: %d bytes, %v", i+1, len(res.Content), err)
		}
	}
	if _, err := sess.Call(callCtx(t), "big", `{"n":20000}`); err == nil || !strings.Contains(err.Error(), "larger than 8192 bytes") {
		t.Fatalf("an answer over the bound: %v", err)
	}
}

// TestCallResourceLinkIcons: a resource link reaches the model as its MCP
// JSON, less its icons (2025-11-25: a data: URI is a whole base64 image)
// and _meta, which are for the client: they went to the model as text.
func TestCallResourceLinkIcons(t *testing.T) {
	icon := "data:image/png;base64," + strings.Repeat("iVBORw0KGgo", 200)
	ws := newWireServer(t, "2025-11-25", func(w http.ResponseWriter, r *http.Request, m rpc) {
		writeJSON(w, m.ID, `{"content":[{"type":"resource_link","uri":"file:///report.pdf","name":"report.pdf","mimeType":"application/pdf",`+
			`"icons":[{"src":"`+icon+`","mimeType":"image/png","sizes":["48x48"]}],"_meta":{"com.example/trace":"t-1"},"annotations":{"audience":["assistant"]}}]}`)
	})
	s := connectWire(t, ws)
	defer s.Close()
	res, err := s.Call(callCtx(t), "report", `{}`)
	want := `{"type":"resource_link","mimeType":"application/pdf","uri":"file:///report.pdf","name":"report.pdf","annotations":{"audience":["assistant"]}}`
	if err != nil || res.Content != want {
		t.Fatalf("%v, %d bytes: %.300s", err, len(res.Content), res.Content)
	}
}

// TestWireInvalidJSONAnswer: a call answered with something that is not a
// JSON-RPC message (JSON cut short: a proxy closing the body early, a
// server crashing mid-write; an event whose data is not JSON-RPC) while
// another call runs: decoding it, the SDK ended the connection, and the
// running call failed too though the server answered it. The answer is
// that call's failure, quoting its start; the other call gets its answer.
func TestWireInvalidJSONAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, id json.RawMessage)
		quote  string
	}{
		{"json cut short", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"par`, id)
		}, `"result":{"content":[{"type":"text","text":"par`},
		{"event not JSON", func(w http.ResponseWriter, id json.RawMessage) {
			startSSE(w).event("data: keepalive")
		}, "keepalive"},
		{"event not JSON-RPC", func(w http.ResponseWriter, id json.RawMessage) {
			startSSE(w).event(`data: {"status":"working"}`)
		}, `{"status":"working"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started, release := make(chan struct{}, 1), make(chan struct{})
			ws := newWireServer(t, "2025-06-18", func(w http.ResponseWriter, r *http.Request, m rpc) {
				if strings.Contains(string(m.Params), `"name":"broken"`) {
					tc.answer(w, m.ID)
					return
				}
				sse := startSSE(w)
				started <- struct{}{}
				<-release
				sse.event(`data: {"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + textResult + `}`)
			})
			s := connectWire(t, ws)
			defer s.Close()
			type outcome struct {
				res mcp.Result
				err error
			}
			out := make(chan outcome, 1)
			go func() {
				res, err := s.Call(callCtx(t), "lookup", `{}`)
				out <- outcome{res, err}
			}()
			<-started
			_, err := s.Call(callCtx(t), "broken", `{}`)
			close(release)
			if err == nil || !strings.Contains(err.Error(), `calling "tools/call": the server sent a message that is not JSON-RPC: `) ||
				!strings.HasSuffix(err.Error(), tc.quote) {
				t.Errorf("broken: %v", err)
			}
			if o := <-out; o.err != nil || o.res.Content != "sunny" {
				t.Errorf("running call: %+v, %v", o.res, o.err)
			}
		})
	}
}
