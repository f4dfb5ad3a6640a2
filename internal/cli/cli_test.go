package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// startServer serves the embedded default on a TCP port and a unix socket.
func startServer(t *testing.T) (addr, socket string) {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	socket = filepath.Join(t.TempDir(), "llmrelay.sock")
	cfg.Server.UnixSocket = socket
	listen := "127.0.0.1:0"
	cfg.Server.Listen = &listen
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := srv.Listeners()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return lis[0].Addr().String(), socket
}

func TestHelpOnEveryCommand(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "--help")
	if r.code != ExitOK || !strings.Contains(r.stdout, "exit codes:") {
		t.Fatalf("llmrelay --help: %+v", r)
	}
	for _, c := range commands() {
		if !strings.Contains(r.stdout, "  "+c.name+" ") {
			t.Errorf("top-level help does not list %s", c.name)
		}
		for _, form := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			r := runCLI(t, "", form...)
			if r.code != ExitOK || !strings.Contains(r.stdout, "usage: llmrelay "+c.name) || !strings.Contains(r.stdout, "flags:") || r.stderr != "" {
				t.Errorf("%v: code %d\nstdout:\n%s\nstderr:\n%s", form, r.code, r.stdout, r.stderr)
			}
		}
	}
	chat := runCLI(t, "", "chat", "--help")
	for _, flag := range []string{"-model", "-m ", "-system", "-image", "-file", "-o ", "-json", "-meta", "-addr", "-local", "-timeout"} {
		if !strings.Contains(chat.stdout, flag) {
			t.Errorf("chat --help lacks %s:\n%s", flag, chat.stdout)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"chat", "--bogus", "-m", "builtin/echo", "hi"}, "flag provided but not defined: -bogus"},
		{[]string{"chat", "--local", "hi"}, "-m MODEL is required"},
		{[]string{"chat", "--local", "-m", "builtin/echo", "-o", "temprature=1", "hi"}, "unknown option; the options are temperature, top_p"},
		{[]string{"chat", "--local", "-m", "builtin/echo", "-o", "max_tokens=many", "hi"}, "-o max_tokens=many: want an integer"},
		{[]string{"chat", "--local", "-m", "builtin/echo", "-o", "novalue", "hi"}, "want key=value"},
		{[]string{"chat", "-m", "builtin/echo", "--config", "x.yaml", "hi"}, "--config needs --local"},
		{[]string{"models", "--local", "extra"}, `unexpected argument "extra"`},
		{[]string{"version", "now"}, `unexpected argument "now"`},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"config"}, `want "check FILE..." or "default"`},
		{[]string{"config", "check"}, "name at least one file"},
		{[]string{"config", "frob"}, `unknown subcommand "frob"`},
		{[]string{"tools", "--local", "-m", "builtin/echo", "hi"}, "--tools FILE is required"},
		{[]string{"embed", "--local", "-m", "builtin/embed", "--dimensions", "-3", "a"}, "--dimensions -3"},
	} {
		r := runCLI(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: code %d, stderr:\n%s\nwant %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestNoPromptFromATerminal(t *testing.T) {
	t.Parallel()
	tty, err := os.Open("/dev/null") // a character device, as a terminal is
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"chat", "--local", "-m", "builtin/echo"}, tty, &out, &errOut); code != ExitUsage || !strings.Contains(errOut.String(), "no prompt") {
		t.Errorf("code %d: %s", code, errOut.String())
	}
	errOut.Reset()
	if code := Run(context.Background(), []string{"embed", "--local", "-m", "builtin/embed"}, tty, &out, &errOut); code != ExitUsage || !strings.Contains(errOut.String(), "no input") {
		t.Errorf("embed: code %d: %s", code, errOut.String())
	}
}

func TestChatLocal(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "hi")
	if r.code != ExitOK || r.stdout != "You said: hi\n" || r.stderr != "" {
		t.Errorf("%+v", r)
	}
	// Flags after the prompt, and the prompt from stdin.
	r = runCLI(t, "from stdin\n", "chat", "--local", "--meta", "-m", "builtin/echo", "--system", "be brief")
	if r.code != ExitOK || r.stdout != "You said: from stdin\n" {
		t.Errorf("stdin: %+v", r)
	}
	r = runCLI(t, "", "chat", "hello", "world", "--local", "-m", "builtin/echo", "--", "-not-a-flag")
	if r.code != ExitOK || r.stdout != "You said: hello world -not-a-flag\n" {
		t.Errorf("interspersed: %+v", r)
	}
}

// recorder keeps every write separately, to see that the answer arrives
// in pieces rather than at the end.
type recorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func TestChatStreamsOverTCPAndUnixSocket(t *testing.T) {
	t.Parallel()
	addr, socket := startServer(t)
	for _, target := range []string{addr, "unix://" + socket} {
		var out recorder
		var errOut bytes.Buffer
		code := Run(context.Background(), []string{"chat", "--addr", target, "-m", "builtin/echo", "--meta", "one two three four"},
			strings.NewReader(""), &out, &errOut)
		if code != ExitOK {
			t.Fatalf("%s: code %d: %s", target, code, errOut.String())
		}
		if got := strings.Join(out.writes, ""); got != "You said: one two three four\n" {
			t.Errorf("%s: answer %q", target, got)
		}
		if len(out.writes) < 6 {
			t.Errorf("%s: the answer came in %d writes, want one per word: %q", target, len(out.writes), out.writes)
		}
		meta := errOut.String()
		for _, want := range []string{"meta: builtin/echo via builtin", "tokens 5 in, 6 out, 11 total", "attempts 1", "provider request id builtin-req-", "first token", "finish STOP"} {
			if !strings.Contains(meta, want) || strings.Count(meta, "\n") != 1 {
				t.Errorf("%s: --meta line lacks %q: %q", target, want, meta)
			}
		}
	}
}

func TestChatJSON(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "--json", "-o", "max_tokens=2", "a b c d")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	var resp llmrelayv1.ChatResponse
	if err := protojson.Unmarshal([]byte(r.stdout), &resp); err != nil {
		t.Fatalf("not a ChatResponse: %v\n%s", err, r.stdout)
	}
	if resp.GetMeta().GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || resp.GetMeta().GetUsage().GetOutputTokens() != 2 {
		t.Errorf("max_tokens not applied: %v", resp.GetMeta())
	}
}

func TestChatImage(t *testing.T) {
	t.Parallel()
	png := filepath.Join(t.TempDir(), "dot.png")
	// A PNG signature is enough for the content sniffing and the echo model.
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "--image", png, "look")
	if r.code != ExitOK || !strings.Contains(r.stdout, "[1 image(s)]") {
		t.Errorf("%+v", r)
	}
	r = runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "--image", "/nonexistent.png", "look")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--image") {
		t.Errorf("missing image: %+v", r)
	}
}

// --file attaches documents and audio: the type from the extension, else
// sniffed from the content (a wav without extension), sent as File parts
// the echo model describes.
func TestChatFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pdf := filepath.Join(dir, "report.pdf")
	wav := filepath.Join(dir, "voice")
	for path, data := range map[string]string{pdf: "%PDF-1.4 tiny", wav: "RIFF\x24\x00\x00\x00WAVEfmt "} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "--file", pdf, "--file", wav, "summarise")
	if want := "You said: summarise [file application/pdf, 13 bytes] [file audio/wave, 16 bytes]"; r.code != ExitOK || !strings.Contains(r.stdout, want) {
		t.Errorf("want %q: %+v", want, r)
	}
	// Files alone are a prompt too.
	r = runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "--file", pdf)
	if r.code != ExitOK || !strings.Contains(r.stdout, "[file application/pdf, 13 bytes]") {
		t.Errorf("file without text: %+v", r)
	}
	r = runCLI(t, "", "chat", "--local", "-m", "builtin/echo", "--file", filepath.Join(dir, "missing.pdf"), "x")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--file") {
		t.Errorf("missing file: %+v", r)
	}
}

func TestReadFileMediaType(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, c := range map[string]struct{ data, want string }{
		"a.txt":   {"hello", "text/plain"},
		"a.PDF":   {"%PDF-1.7", "application/pdf"},
		"noext":   {"%PDF-1.7", "application/pdf"},
		"song":    {"ID3\x03\x00\x00\x00", "audio/mpeg"},
		"unknown": {"\x00\x01\x02", "application/octet-stream"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := readFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.GetMimeType() != c.want || f.GetFilename() != name || string(f.GetData()) != c.data {
			t.Errorf("%s: %v, want type %s", name, f, c.want)
		}
	}
}

func TestTools(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tools.json")
	spec := `[{"name": "get_weather", "description": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]`
	if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "tools", "--local", "-m", "builtin/echo", "--tools", file, "Paris")
	if r.code != ExitOK || !regexpMatch(`^tool call get_weather \[\S+\]: \{"city":\s*"Paris"\}\n$`, r.stdout) {
		t.Errorf("%+v", r)
	}
	// A call the token limit cut is marked, not shown as runnable (the
	// built-in provider cuts calls at max_tokens as a model would).
	r = runCLI(t, "", "tools", "--local", "-m", "builtin/echo", "--tools", file, "-o", "max_tokens=1", "Paris")
	if r.code != ExitOK || !regexpMatch(`^tool call get_weather \[\S+\] \(arguments incomplete or not a JSON object: do not run\): \{"city":\n$`, r.stdout) {
		t.Errorf("cut call: %+v", r)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"name": "x", "parameters": [1]}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "tools", "--local", "-m", "builtin/echo", "--tools", bad, "Paris")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "tool x: parameters") {
		t.Errorf("bad tools file: %+v", r)
	}
}

func TestEmbedAndModels(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "embed", "--local", "-m", "builtin/embed", "--dimensions", "4", "a", "b")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != ExitOK || len(lines) != 2 {
		t.Fatalf("%+v", r)
	}
	for _, l := range lines {
		var v []float64
		if err := json.Unmarshal([]byte(l), &v); err != nil || len(v) != 4 {
			t.Errorf("line %q: %v %v", l, v, err)
		}
	}
	r = runCLI(t, "x\ny\nz\n", "embed", "--local", "-m", "builtin/embed")
	if r.code != ExitOK || strings.Count(r.stdout, "\n") != 3 {
		t.Errorf("stdin inputs: %+v", r)
	}
	r = runCLI(t, "", "models", "--local")
	if r.code != ExitOK || !regexpMatch(`(?m)^builtin/echo\s+builtin\s+echo\s+chat:builtin`, r.stdout) || !strings.Contains(r.stdout, "builtin/embed") {
		t.Errorf("models: %+v", r)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-request-id", "req-upstream-1")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}`)
	}))
	t.Cleanup(upstream.Close)
	cfg := filepath.Join(t.TempDir(), "openai.yaml")
	yaml := fmt.Sprintf(`
providers:
  - {name: oai, type: openai, base_url: %q, api_key: sk-cli-test-secret}
models:
  - {name: gpt, provider: oai, capabilities: {chat: {format: openai-chat}}}
`, upstream.URL)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unknown model", []string{"chat", "--local", "-m", "nope", "hi"}, ExitInvalidRequest,
			[]string{"NotFound: ", "reason: MODEL_NOT_FOUND (llmrelay.dev)", "model: nope", "invalid field model"}},
		{"invalid option", []string{"chat", "--local", "-m", "builtin/echo", "-o", "top_k=-4", "hi"}, ExitInvalidRequest,
			[]string{"InvalidArgument: ", "reason: INVALID_OPTION"}},
		{"no server", []string{"chat", "--addr", "127.0.0.1:1", "--timeout", "2s", "-m", "builtin/echo", "hi"}, ExitUnavailable,
			[]string{"Unavailable: ", "\n  no server answered: start one (llmrelay serve), name its address with --addr or $LLMRELAY_ADDR, or run the call in process with --local"}},
		{"provider refuses the key", []string{"chat", "--local", "--config", cfg, "-m", "gpt", "hi"}, ExitProvider,
			[]string{"Unauthenticated: ", "reason: UPSTREAM_UNAUTHENTICATED", "upstreamStatus: 401", "provider request id: req-upstream-1", "attempts: 1"}},
		{"health of nothing", []string{"health", "--addr", "127.0.0.1:1", "--timeout", "300ms"}, ExitUnavailable, []string{"health: "}},
		{"invalid config with --local", []string{"chat", "--local", "--config", "/nonexistent.yaml", "-m", "x", "hi"}, ExitFailure, []string{"nonexistent.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("code %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "--token TOKEN") && tc.name == "provider refuses the key" {
				t.Errorf("a provider's rejected key is not the caller's token:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, "sk-cli-test-secret") {
				t.Errorf("the key is shown:\n%s", r.stderr)
			}
		})
	}
}

func TestDescribeEveryDetail(t *testing.T) {
	t.Parallel()
	st, err := status.New(codes.ResourceExhausted, "rate limited by openai").WithDetails(
		&errdetails.ErrorInfo{Reason: "UPSTREAM_RATE_LIMITED", Domain: "llmrelay.dev", Metadata: map[string]string{"provider": "oai", "model": "gpt"}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(7 * time.Second)},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "messages", Description: "at least one"},
			{Field: "tools[1].parameters", Description: "tools[1].parameters: not a valid JSON Schema"}}},
		&llmrelayv1.FailedCallMeta{Meta: &llmrelayv1.ResponseMeta{Attempts: 2, RequestId: "r1", RetryReasons: []*llmrelayv1.RetryReason{
			{Attempt: 1, Reason: "http_429", Message: "slow down", Deployment: "azure"}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	got := describe(st.Err())
	want := `ResourceExhausted: rate limited by openai
  reason: UPSTREAM_RATE_LIMITED (llmrelay.dev)
  model: gpt
  provider: oai
  retry after: 7s
  invalid field messages: at least one
  invalid field tools[1].parameters: not a valid JSON Schema
  request id: r1
  attempts: 2
  attempt 1 on azure failed (http_429): slow down`
	if got != want {
		t.Errorf("describe:\n%s\nwant:\n%s", got, want)
	}
	if c := exitCode(st.Err()); c != ExitProvider {
		t.Errorf("exit code %d", c)
	}
}

func TestHealthVersionConfig(t *testing.T) {
	t.Parallel()
	addr, socket := startServer(t)
	for _, target := range []string{addr, "unix://" + socket} {
		if r := runCLI(t, "", "health", "--addr", target); r.code != ExitOK || r.stdout != "SERVING\n" {
			t.Errorf("health %s: %+v", target, r)
		}
	}
	if r := runCLI(t, "", "health", "--local", "--service", "no.such.Service"); r.code != ExitInvalidRequest || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("health of an unknown service: %+v", r)
	}
	if r := runCLI(t, "", "version"); r.code != ExitOK || !regexpMatch(`^llmrelay \S+.* go1\.\d+`, r.stdout) {
		t.Errorf("version: %+v", r)
	}
	def := runCLI(t, "", "config", "default")
	if def.code != ExitOK || !strings.Contains(def.stdout, "builtin/echo") {
		t.Fatalf("config default: %+v", def)
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(def.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("providers:\n  - {name: x, type: nope}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "config", "check", good, bad)
	if r.code != ExitFailure || !strings.Contains(r.stdout, good+": ok") || !strings.Contains(r.stderr, `providers[0] (x).type: "nope"`) {
		t.Errorf("config check: %+v", r)
	}
	r = runCLI(t, "", "serve", "-config", bad)
	if r.code != ExitFailure || !strings.Contains(r.stderr, bad+`:2:15: providers[0] (x).type: "nope"`) {
		t.Errorf("serve on an invalid file: %+v", r)
	}
	badModel := filepath.Join(dir, "model.yaml")
	if err := os.WriteFile(badModel, []byte("providers: [{name: b, type: builtin}]\nmodels:\n  - {name: m, provider: b, capabilities: {chat: {format: nope}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "config", "check", bad, badModel)
	if r.code != ExitFailure || !strings.Contains(r.stderr, bad+":2:15: ") || !strings.Contains(r.stderr, badModel+":3:50: ") {
		t.Errorf("config check of two invalid files must report both: %+v", r)
	}
	r = runCLI(t, "", "serve", "--config", badModel, "--listen", "127.0.0.1:0")
	if r.code != ExitFailure || !strings.Contains(r.stderr, badModel+`:3:50: models[0] (m).capabilities.chat.format: unknown format "nope"`) {
		t.Errorf("serve on an invalid model: %+v", r)
	}
}

func TestAnswerWriterReportsWriteErrors(t *testing.T) {
	t.Parallel()
	var e env
	e.stdout, e.stderr, e.stdin = failingWriter{}, io.Discard, strings.NewReader("")
	err := chat(context.Background(), &e, []string{"--local", "-m", "builtin/echo", "hi"})
	if err == nil || !strings.Contains(err.Error(), "write the answer: disk full") {
		t.Errorf("err = %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
