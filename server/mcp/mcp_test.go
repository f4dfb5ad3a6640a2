package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/server/mcp"
)

// testServer is an MCP server with three tools: echo (text), stats
// (structured content only) and fail (a tool error).
func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes q", InputSchema: schema}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct{ Q string }
		if err := json.Unmarshal(r.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + args.Q}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "stats", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"count": 3}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "quota exceeded"}}}, nil
	})
	return s
}

// headerRecorder keeps the Authorization headers the server received.
type headerRecorder struct {
	mu   sync.Mutex
	auth []string
	next http.Handler
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

// TestSession: over both transports, tools are listed (filtered by
// allowed_tools, schemas as JSON text), calls return text, structured
// content or a tool error, and the configured headers reach the server.
func TestSession(t *testing.T) {
	s := testServer()
	for _, transport := range []string{mcp.Streamable, mcp.SSE} {
		t.Run(transport, func(t *testing.T) {
			var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
			if transport == mcp.SSE {
				h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
			}
			rec := &headerRecorder{next: h}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			ctx := context.Background()
			sess, err := mcp.Connect(ctx, mcp.Server{Name: "t", URL: srv.URL, Transport: transport,
				Headers: map[string]string{"Authorization": "Bearer mcp-test-token"}, AllowedTools: []string{"echo", "stats", "fail"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			tools, err := sess.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 3 || tools[0].GetName() != "echo" || tools[0].GetDescription() != "Echoes q" ||
				!strings.Contains(tools[0].GetParameters(), `"required":["q"]`) {
				t.Fatalf("tools %v", tools)
			}
			res, err := sess.Call(ctx, "echo", `{"q":"hi"}`)
			if err != nil || res.Content != "echo: hi" || res.IsError {
				t.Fatalf("echo: %+v, %v", res, err)
			}
			res, err = sess.Call(ctx, "stats", "")
			if err != nil || res.Content != `{"count":3}` {
				t.Fatalf("stats: %+v, %v", res, err)
			}
			res, err = sess.Call(ctx, "fail", "{}")
			if err != nil || !res.IsError || res.Content != "quota exceeded" {
				t.Fatalf("fail: %+v, %v", res, err)
			}
			res, err = sess.Call(ctx, "echo", `{"q":`)
			if err != nil || !res.IsError {
				t.Fatalf("malformed arguments: %+v, %v", res, err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, a := range rec.auth {
				if a != "Bearer mcp-test-token" {
					t.Fatalf("request without the header: %q", a)
				}
			}
		})
	}
}

// TestAllowedTools: tools outside allowed_tools are not offered.
func TestAllowedTools(t *testing.T) {
	s := testServer()
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL, AllowedTools: []string{"stats"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tools, err := sess.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].GetName() != "stats" {
		t.Fatalf("tools %v", tools)
	}
}

// TestConnectErrors: an unknown transport and an unreachable server are errors
// naming the server.
func TestConnectErrors(t *testing.T) {
	if _, err := mcp.Connect(context.Background(), mcp.Server{Name: "x", URL: "http://127.0.0.1:1", Transport: "ws"}, nil); err == nil || !strings.Contains(err.Error(), `"ws"`) {
		t.Fatalf("error %v", err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	if _, err := mcp.Connect(context.Background(), mcp.Server{Name: "down", URL: down.URL}, nil); err == nil || !strings.Contains(err.Error(), "mcp server down") {
		t.Fatalf("error %v", err)
	}
}

// TestCallContents: every content kind of a tool result reaches the model
// as text or as a note saying what was left out (with Omitted listing it):
// text and embedded text resources as their text, resource links as their
// MCP JSON, images, audio and binary resources as notes; the structured
// content stands in only when nothing textual came.
func TestCallContents(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&sdk.Tool{Name: "mixed", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "chart:"},
			&sdk.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"},
			&sdk.AudioContent{Data: []byte("WAVE"), MIMEType: "audio/wav"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.bin", Blob: []byte{1, 2}}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "alpha"}},
		}, StructuredContent: map[string]any{"ignored": true}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "image_and_data", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"}},
			StructuredContent: map[string]any{"count": 3}}, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.Call(context.Background(), "mixed", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "chart:\nalpha\n[image (image/png, 3 bytes) omitted: tool results reach the model as text]\n" +
		"[audio (audio/wav, 4 bytes) omitted: tool results reach the model as text]\n" +
		"[resource file:///a.bin (unknown type, 2 bytes) omitted: tool results reach the model as text]"
	if res.Content != want || len(res.Omitted) != 3 || res.IsError {
		t.Errorf("content %q, omitted %q", res.Content, res.Omitted)
	}
	res, err = sess.Call(context.Background(), "image_and_data", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"count":3}` + "\n[image (image/png, 3 bytes) omitted: tool results reach the model as text]"; res.Content != want {
		t.Errorf("content %q, want %q", res.Content, want)
	}
}

// TestCloseAfterCancelledCall: a call abandoned by its context is
// cancelled on the server (notifications/cancelled) even when the session
// is closed right after: Close waits for the SDK to send it.
func TestCloseAfterCancelledCall(t *testing.T) {
	started, cancelled, release := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	s.AddTool(&sdk.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
		case <-release:
		}
		return nil, ctx.Err()
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer srv.Close()
	defer close(release) // a tool never cancelled must not keep srv.Close waiting
	sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	if _, err := sess.Call(ctx, "slow", "{}"); err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's tool was not cancelled")
	}
}

// TestRedirectElsewhere: an MCP endpoint that redirects to another host is
// not followed there: the configured headers (credentials), which the
// transport adds to every request, never reach the other host.
func TestRedirectElsewhere(t *testing.T) {
	var leaked []string
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	_, err := mcp.Connect(context.Background(), mcp.Server{Name: "r", URL: redirect.URL, Headers: map[string]string{"Authorization": "Bearer mcp-secret"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("error %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) != 0 {
		t.Errorf("the other host was called with %q", leaked)
	}
}

// TestSessionOutlivesConnectContext: over both transports, a session stays
// usable after the context it was connected with ends (the agent bounds
// the handshake with a timeout it cancels right after); over SSE, the event
// stream lived in that context and every later call failed with EOF.
func TestSessionOutlivesConnectContext(t *testing.T) {
	s := testServer()
	for _, transport := range []string{mcp.Streamable, mcp.SSE} {
		t.Run(transport, func(t *testing.T) {
			var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
			if transport == mcp.SSE {
				h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			sess, err := mcp.Connect(ctx, mcp.Server{Name: "t", URL: srv.URL, Transport: transport}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sess.Tools(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
			res, err := sess.Call(context.Background(), "echo", `{"q":"after"}`)
			if err != nil || res.Content != "echo: after" {
				t.Fatalf("call after the connect context ended: %v, %v", res, err)
			}
			if err := sess.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestErrorsHideURLQuery: a server URL's query (hosted MCP services put
// keys there) is not in the errors of a failed connect or call, whose text
// reaches callers and logs.
func TestErrorsHideURLQuery(t *testing.T) {
	for _, transport := range []string{mcp.Streamable, mcp.SSE} {
		_, err := mcp.Connect(context.Background(), mcp.Server{Name: "h", URL: "http://127.0.0.1:1/mcp?key=sk-mcp-7Qx2Lm9&team=a", Transport: transport}, nil)
		if err == nil || strings.Contains(err.Error(), "sk-mcp-7Qx2Lm9") || !strings.Contains(err.Error(), "http://127.0.0.1:1/mcp?REDACTED") {
			t.Errorf("%s: error %v", transport, err)
		}
	}
	s := testServer()
	var closed bool
	var mu sync.Mutex
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c := closed
		mu.Unlock()
		if c {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "h", URL: srv.URL + "/mcp?key=sk-mcp-7Qx2Lm9"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	closed = true
	mu.Unlock()
	_, err = sess.Call(context.Background(), "echo", `{"q":"x"}`)
	if err == nil || strings.Contains(err.Error(), "sk-mcp-7Qx2Lm9") || !strings.Contains(err.Error(), "/mcp?REDACTED") {
		t.Errorf("call error %v", err)
	}
	if err := sess.Close(); err != nil && strings.Contains(err.Error(), "sk-mcp-7Qx2Lm9") { // the server is gone: an error
		t.Errorf("close error %v", err)
	}
}

// TestMaxResponseBytes: a tool answer larger than the bound fails the call
// (an error the agent turns into an error result) instead of being read
// whole; one within it is read as usual.
func TestMaxResponseBytes(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "test"}, nil)
	s.AddTool(&sdk.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ N int }
			if err := json.Unmarshal(r.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", args.N)}}}, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true}))
	defer srv.Close()
	sess, err := mcp.Connect(context.Background(), mcp.Server{Name: "t", URL: srv.URL, MaxResponseBytes: 64 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if res, err := sess.Call(context.Background(), "big", `{"n":1000}`); err != nil || len(res.Content) != 1000 {
		t.Fatalf("small answer: %d bytes, %v", len(res.Content), err)
	}
	if _, err := sess.Call(context.Background(), "big", `{"n":1000000}`); err == nil || !strings.Contains(err.Error(), "larger than 65536 bytes") {
		t.Fatalf("large answer: %v", err)
	}
}
