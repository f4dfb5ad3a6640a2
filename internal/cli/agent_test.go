package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// runAgent runs the agent command as Run would, returning its error.
func runAgent(ctx context.Context, args []string, stdout, stderr *bytes.Buffer) error {
	return agent(ctx, &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr}, args[1:])
}

func startTestServer(t *testing.T) string {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return lis.Addr().String()
}

// TestAgentCommand: tools from a file, one answered by its fixed result and
// one by a command that sees the arguments, the tool's name and call id.
func TestAgentCommand(t *testing.T) {
	addr := startTestServer(t)
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`[
  {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, "result": "sunny"},
  {"name": "get_time", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-tools", tools,
		"-exec", `printf '%s|%s|' "$LLMRELAY_TOOL_NAME" "$LLMRELAY_TOOL_CALL_ID"; cat`, "Oslo"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	// The built-in model summarizes the results it received.
	if !strings.Contains(out.String(), "=sunny") || !strings.Contains(out.String(), `=get_time|call_builtin_`) || !strings.Contains(out.String(), `|{"city":"Oslo"}`) {
		t.Errorf("output %q", out.String())
	}
	if !strings.Contains(errOut.String(), "[round 1] get_time") || !strings.Contains(errOut.String(), "FINISH_REASON_STOP: 2 model calls, 1 tool rounds") {
		t.Errorf("stderr %q", errOut.String())
	}

	out.Reset()
	err = runAgent(context.Background(), []string{"agent", "-addr", addr, "-tools", tools, "-exec", "echo broken >&2; exit 3", "-json", "Oslo"}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	// protojson varies its spacing on purpose: compare the compact form.
	var compact bytes.Buffer
	if err := json.Compact(&compact, out.Bytes()); err != nil {
		t.Fatalf("-json output is not JSON: %v\n%s", err, out.String())
	}
	if !strings.Contains(compact.String(), `"isError":true`) || !strings.Contains(compact.String(), `"content":"broken"`) {
		t.Errorf("a failing command is not an error result: %s", out.String())
	}

	if err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-tools", tools, "Oslo"}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "get_time has no result") {
		t.Errorf("error %v", err)
	}
	if err := runAgent(context.Background(), []string{"agent", "-addr", addr}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "prompt is required") {
		t.Errorf("error %v", err)
	}
}

// TestAgentCommandFailure: a tool result missing past --tool-timeout fails
// the run: the error says why, stderr says where the run stopped, and with
// -json stdout has the failure event's conversation to retry from.
func TestAgentCommandFailure(t *testing.T) {
	addr := startTestServer(t)
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`[{"name": "get_weather", "parameters": {"type": "object"}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	start := time.Now()
	err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-tools", tools, "-exec", "sleep 30; echo late",
		"-tool-timeout", "100ms", "-json", "Oslo"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "tool_timeout") {
		t.Fatalf("error %v", err)
	}
	// Not a timing measurement: the tool command (and the sleep its shell
	// started) is killed when the run fails, instead of the CLI waiting
	// the 30 s out for its output.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the CLI waited %v for a tool command of a failed run", d)
	}
	if !strings.Contains(errOut.String(), "[round 1] the run failed after 1 model calls; 1 messages of conversation kept") {
		t.Errorf("stderr %q", errOut.String())
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out.Bytes()); err != nil {
		t.Fatalf("-json output is not JSON: %v\n%s", err, out.String())
	}
	if !strings.Contains(compact.String(), `"round":1`) || !strings.Contains(compact.String(), `"text":"Oslo"`) {
		t.Errorf("failure %s", compact.String())
	}
	if err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-tool-timeout", "-1s", "Oslo"}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "--tool-timeout") {
		t.Errorf("error %v", err)
	}
}

// TestAgentCommandToolTimeoutResult: with --on-tool-timeout error-result a
// command past --tool-timeout is killed when the server withdraws its call
// (stderr says so), the model gets an error result and the run ends
// normally.
func TestAgentCommandToolTimeoutResult(t *testing.T) {
	addr := startTestServer(t)
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`[{"name": "get_weather", "parameters": {"type": "object"}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	start := time.Now()
	err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-tools", tools, "-exec", "sleep 30; echo late",
		"-tool-timeout", "100ms", "-on-tool-timeout", "error-result", "Oslo"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	// Not a timing measurement: the command is killed when its call is
	// withdrawn, not waited out.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the CLI waited %v for a withdrawn tool command", d)
	}
	if !strings.Contains(errOut.String(), "[round 1] cancelled call_builtin_") || !strings.Contains(errOut.String(), "(tool_timeout)") ||
		!strings.Contains(errOut.String(), "FINISH_REASON_STOP: 2 model calls, 1 tool rounds") {
		t.Errorf("stderr %q", errOut.String())
	}
	if !strings.Contains(out.String(), "the tool did not answer within 100ms") || strings.Contains(out.String(), "late") {
		t.Errorf("output %q", out.String())
	}
	if err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-on-tool-timeout", "retry", "Oslo"}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "--on-tool-timeout") {
		t.Errorf("error %v", err)
	}
	if err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-keep-recent-tool-media", "-2", "Oslo"}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "--keep-recent-tool-media -2") {
		t.Errorf("error %v", err)
	}
}

// TestAgentCommandMCP: -mcp names configured servers; each MCP execution
// is a stderr line, with the transport error when the server failed (here
// it is gone by the time of the call).
func TestAgentCommandMCP(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "pop", Version: "test"}, nil)
	s.AddTool(&sdk.Tool{Name: "lookup_population", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"population":522000}`}}}, nil
		})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	defer mcpSrv.Close()
	// Once armed, the endpoint fails every tools/call: the server is gone
	// by the time of the call, after the setup's handshake and listing.
	var armed atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		if armed.Load() && bytes.Contains(body, []byte(`"tools/call"`)) {
			http.Error(w, "gone", http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mcpSrv.Config.Handler.ServeHTTP(w, r)
	}))
	defer front.Close()
	cfg, err := config.Parse([]byte(`
providers:
  - {name: builtin, type: builtin}
models:
  - name: echo
    provider: builtin
    upstream_model: echo
    capabilities: {tools: {format: builtin}}
mcp_servers:
  - {name: pop, url: "`+front.URL+`"}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var out, errOut bytes.Buffer
	if err := runAgent(context.Background(), []string{"agent", "-addr", lis.Addr().String(), "-model", "echo", "-mcp", "pop", "Lyon"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), `[round 1] mcp pop/lookup_population {"city":"Lyon"} -> error=false (`) ||
		!strings.Contains(out.String(), `{"population":522000}`) {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	armed.Store(true)
	if err := runAgent(context.Background(), []string{"agent", "-addr", lis.Addr().String(), "-model", "echo", "-mcp", "pop", "Lyon"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "-> error=true (") || !strings.Contains(errOut.String(), "): mcp server pop: call lookup_population: ") {
		t.Errorf("stderr %q", errOut.String())
	}
}

// TestAgentCommandRefusedSetup: a setup the server refuses (an unknown
// model) is the error alone: no "the run failed" line, no failure JSON.
func TestAgentCommandRefusedSetup(t *testing.T) {
	addr := startTestServer(t)
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`[{"name": "get_weather", "result": "sunny"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := runAgent(context.Background(), []string{"agent", "-addr", addr, "-model", "nope", "-tools", tools, "-json", "Oslo"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `"nope" is not configured`) {
		t.Fatalf("error %v", err)
	}
	if out.Len() != 0 || strings.Contains(errOut.String(), "the run failed") {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}
