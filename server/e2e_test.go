package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
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
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const geminiKey = "AIzaSyTEST-e2e-secret-key-0123456789"

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWith runs a server from YAML (with {{URL}} replaced) and returns a
// client and the server's log.
func startWith(t *testing.T, yaml, url string) (llmrelayv1.GatewayServiceClient, *syncBuffer) {
	t.Helper()
	cfg, err := config.Parse([]byte(strings.ReplaceAll(yaml, "{{URL}}", url)), "test")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	conn := serveBufconn(t, srv)
	return llmrelayv1.NewGatewayServiceClient(conn), logs
}

const geminiYAML = `
defaults:
  retry: {max_attempts: 3, base_delay: 1ms, max_delay: 5ms}
providers:
  - name: google
    type: gemini
    base_url: {{URL}}
    api_key: ` + geminiKey + `
models:
  - name: flash
    provider: google
    upstream_model: gemini-2.5-flash
    capabilities:
      chat: {format: gemini}
      tools: {format: gemini}
`

func rec(t *testing.T, name string) providertest.Recording {
	t.Helper()
	return providertest.Load(t, "provider/gemini/testdata/"+name+".http")
}

func chatReq() *llmrelayv1.ChatRequest {
	return &llmrelayv1.ChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("What is the capital of France?")}}
}

func TestE2ERetryThenSuccess(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, rec(t, "error_503"), rec(t, "error_500"), rec(t, "plain"))
	c, logs := startWith(t, geminiYAML, up.URL)
	req := chatReq()
	req.Call = &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(true)}
	resp, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	m := resp.GetMeta()
	if m.GetAttempts() != 3 || len(m.GetRetryReasons()) != 2 || m.GetRetryReasons()[0].GetReason() != "http_503" || m.GetRetryReasons()[1].GetReason() != "http_500" {
		t.Fatalf("attempts %d reasons %v", m.GetAttempts(), m.GetRetryReasons())
	}
	if got := resp.GetMessage().GetParts()[0].GetText(); got != "The capital of France is Paris." {
		t.Errorf("text = %q", got)
	}
	if m.GetProvider() != "google" || m.GetResolvedModel() != "gemini-2.5-flash" || m.GetResponseId() == "" ||
		m.GetUsage().GetReasoningTokens() != 27 || m.GetUsage().GetOutputTokens() != 34 || m.GetFormat() != "gemini" {
		t.Errorf("meta = %v", m)
	}
	// Raw data is the last attempt's exact bytes, redacted.
	raw := m.GetRaw()
	if raw.GetResponseStatus() != 200 || !bytes.Contains(raw.GetResponse(), []byte(`"responseId": "a3RkkEBaRksg8QxJ_KDc8ZB"`)) ||
		!bytes.Contains(raw.GetRequest(), []byte(`"contents"`)) || raw.GetRequestHeaders()["x-goog-api-key"] != "[REDACTED]" {
		t.Errorf("raw = %v", raw)
	}
	if len(up.Requests()) != 3 {
		t.Errorf("upstream saw %d requests", len(up.Requests()))
	}
	assertNoSecret(t, protojson.Format(resp), logs.String())
}

func assertNoSecret(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, geminiKey) {
			t.Fatalf("the API key leaked: %s", s)
		}
	}
}

func TestE2EErrorsCarryDetails(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rec    string
		code   codes.Code
		reason string
		tries  int
	}{
		{"error_400", codes.InvalidArgument, "INVALID_REQUEST", 1},
		{"error_401", codes.Unauthenticated, "UPSTREAM_UNAUTHENTICATED", 1},
		{"error_403", codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED", 1},
		{"error_404", codes.NotFound, "MODEL_NOT_FOUND", 1},
		{"error_context_length", codes.InvalidArgument, "CONTEXT_LENGTH_EXCEEDED", 1},
		{"error_503", codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
	}
	for _, tc := range cases {
		t.Run(tc.rec, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, rec(t, tc.rec))
			c, logs := startWith(t, geminiYAML, up.URL)
			_, err := c.Chat(context.Background(), chatReq())
			st, info, _ := statusDetails(t, err)
			if st.Code() != tc.code || info.GetReason() != tc.reason {
				t.Fatalf("got %v %s: %s\n%s", st.Code(), info.GetReason(), st.Message(), logs.String())
			}
			if info.GetMetadata()["provider"] != "google" || info.GetMetadata()["model"] != "flash" || info.GetMetadata()["upstreamStatus"] == "" {
				t.Errorf("ErrorInfo metadata = %v", info.GetMetadata())
			}
			var failed *llmrelayv1.FailedCallMeta
			for _, d := range st.Details() {
				if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
					failed = f
				}
			}
			if failed == nil || failed.GetMeta().GetAttempts() != int32(tc.tries) || len(failed.GetMeta().GetRetryReasons()) != tc.tries {
				t.Errorf("FailedCallMeta = %v, want %d attempts", failed, tc.tries)
			}
			if len(up.Requests()) != tc.tries {
				t.Errorf("upstream saw %d requests, want %d", len(up.Requests()), tc.tries)
			}
			assertNoSecret(t, st.Message(), protojson.Format(st.Proto()), logs.String())
		})
	}
}

// TestE2ERetryAfterBeyondDeadline: the provider asks for ~34s, the caller
// allows 2s: fail fast with ResourceExhausted and RetryInfo.
func TestE2ERetryAfterBeyondDeadline(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, rec(t, "error_429"), rec(t, "plain"))
	c, _ := startWith(t, geminiYAML, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Chat(ctx, chatReq())
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.ResourceExhausted || info.GetReason() != "UPSTREAM_RATE_LIMITED" {
		t.Fatalf("got %v %s: %s", st.Code(), info.GetReason(), st.Message())
	}
	var ri *errdetails.RetryInfo
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			ri = r
		}
	}
	if ri == nil || ri.GetRetryDelay().AsDuration() < 30*time.Second {
		t.Errorf("RetryInfo = %v, want the provider's ~34s", ri)
	}
	if ctx.Err() != nil {
		// Sleeping into the deadline would have ended in DeadlineExceeded;
		// the answer must come back while the caller still waits.
		t.Errorf("did not fail fast: the answer came after the caller's deadline")
	}
	if len(up.Requests()) != 1 {
		t.Errorf("upstream saw %d requests, want 1", len(up.Requests()))
	}
}

// TestE2ECancelReachesUpstream: a client that goes away mid-stream closes
// the upstream request.
func TestE2ECancelReachesUpstream(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body: Go's HTTP/1 server notices a closed connection only
		// once the request body is consumed.
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"candidates": [{"content": {"parts": [{"text": "Once"}],"role": "model"},"index": 0}],"responseId": "r1","modelVersion": "gemini-2.5-flash"}`+"\r\n\r\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(closed)
		case <-time.After(10 * time.Second):
		}
	}))
	defer up.Close()
	c, _ := startWith(t, geminiYAML, up.URL)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("story")}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // start, first text delta
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request still open after the client cancelled")
	}
	if _, err := s.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("after cancel: %v", err)
	}
}

// TestE2EDeadlineReachesUpstream: the gRPC deadline bounds the provider call.
func TestE2EDeadlineReachesUpstream(t *testing.T) {
	t.Parallel()
	gone := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select { // hang past the deadline
		case <-r.Context().Done():
			close(gone)
		case <-time.After(10 * time.Second):
		}
	}))
	defer up.Close()
	c, _ := startWith(t, geminiYAML, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, chatReq())
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request still open after the deadline")
	}
}

// fallbackYAML routes model flash to two Gemini deployments: east (BAD,
// replaced by a failing replay's URL) then west ({{URL}}).
const fallbackYAML = `
defaults:
  retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}
providers:
  - {name: east, type: gemini, base_url: BAD, api_key: k-east-0000}
  - {name: west, type: gemini, base_url: {{URL}}, api_key: k-west-0000}
models:
  - name: flash
    deployments:
      - {provider: east, upstream_model: gemini-2.5-flash}
      - {provider: west, upstream_model: gemini-2.5-flash}
    capabilities:
      chat: {format: gemini}
`

// TestE2EFallbackRoute: a routed model answers from the second deployment
// when the first keeps returning 503, and the meta says so.
func TestE2EFallbackRoute(t *testing.T) {
	t.Parallel()
	bad := providertest.Replay(t, rec(t, "error_503"))
	good := providertest.Replay(t, rec(t, "plain"))
	yaml := strings.ReplaceAll(fallbackYAML, "BAD", bad.URL)
	c, logs := startWith(t, yaml, good.URL)
	resp, err := c.Chat(context.Background(), chatReq())
	if err != nil {
		t.Fatal(err)
	}
	// The RPC's log line names the deployment that served it.
	if l := logs.String(); !strings.Contains(l, "msg=rpc") || !strings.Contains(l, "provider=west") || strings.Contains(l, "provider=east") {
		t.Errorf("log: %s", l)
	}
	m := resp.GetMeta()
	if m.GetRouting().GetDeployment() != "west" || len(m.GetRouting().GetTried()) != 1 || m.GetRouting().GetTried()[0] != "east" || m.GetProvider() != "west" {
		t.Errorf("routing = %v, provider %s", m.GetRouting(), m.GetProvider())
	}
	if m.GetAttempts() != 3 || len(m.GetRetryReasons()) != 2 || m.GetRetryReasons()[0].GetDeployment() != "east" {
		t.Errorf("attempts %d reasons %v", m.GetAttempts(), m.GetRetryReasons())
	}
	if len(bad.Requests()) != 2 || len(good.Requests()) != 1 {
		t.Errorf("east saw %d, west %d", len(bad.Requests()), len(good.Requests()))
	}
	// A non-retryable error does not fall back.
	bad400 := providertest.Replay(t, rec(t, "error_400"))
	c, _ = startWith(t, strings.ReplaceAll(yaml, bad.URL, bad400.URL), good.URL)
	if _, err := c.Chat(context.Background(), chatReq()); status.Code(err) != codes.InvalidArgument {
		t.Errorf("400 on the first deployment: %v", err)
	}
	if len(good.Requests()) != 1 {
		t.Errorf("a 400 fell back to the second deployment")
	}
}

// TestE2EFallbackOnDeploymentFault: what is the first deployment's own
// fault (its key: 401; its quota: 429) falls back to the next without
// retrying the first, and a 503 whose x-should-retry says not to retry is
// tried once, then falls back.
func TestE2EFallbackOnDeploymentFault(t *testing.T) {
	t.Parallel()
	discouraged := rec(t, "error_503")
	discouraged.Header = discouraged.Header.Clone()
	discouraged.Header.Set("X-Should-Retry", "false")
	for name, first := range map[string]providertest.Recording{
		"401": rec(t, "error_401"), "429": rec(t, "error_429"), "503 x-should-retry false": discouraged,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bad := providertest.Replay(t, first)
			good := providertest.Replay(t, rec(t, "plain"))
			// Three attempts allowed: one request to east shows the fault
			// was not retried there (the 429 asks for a delay beyond
			// max_retry_after, so it gives up at once too).
			yaml := strings.ReplaceAll(strings.Replace(fallbackYAML, "max_attempts: 2, base_delay: 1ms, max_delay: 2ms",
				"max_attempts: 3, base_delay: 1ms, max_delay: 2ms, max_retry_after: 1ms", 1), "BAD", bad.URL)
			c, _ := startWith(t, yaml, good.URL)
			resp, err := c.Chat(context.Background(), chatReq())
			if err != nil {
				t.Fatal(err)
			}
			if r := resp.GetMeta().GetRouting(); r.GetDeployment() != "west" || len(r.GetTried()) != 1 || r.GetTried()[0] != "east" {
				t.Errorf("routing = %v", r)
			}
			if n := len(bad.Requests()); name != "429" && n != 1 {
				t.Errorf("east saw %d requests, want 1 (not retried)", n)
			}
			if len(good.Requests()) != 1 {
				t.Errorf("west saw %d requests", len(good.Requests()))
			}
		})
	}
}

// TestReloadKeepsOpenStreams: a reload takes effect for new calls, a stream
// opened before it finishes on the old configuration, and an invalid
// configuration is rejected.
func TestReloadKeepsOpenStreams(t *testing.T) {
	t.Parallel()
	up, release := heldStream(t)
	cfg, err := config.Parse([]byte(strings.ReplaceAll(geminiYAML, "{{URL}}", up.URL)), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	conn := serveBufconn(t, srv)
	c := llmrelayv1.NewGatewayServiceClient(conn)
	s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("story")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil { // start
		t.Fatal(err)
	}
	// Reload to a configuration where "flash" no longer exists.
	next, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(next); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(context.Background(), chatReq()); status.Code(err) != codes.NotFound {
		t.Errorf("new call after reload: %v, want NotFound", err)
	}
	release()
	if text := readText(t, s); text != "Once upon" {
		t.Errorf("open stream across a reload: %q", text)
	}
	bad := *next
	bad.Models = append(bad.Models, config.Model{Name: "x", Provider: "missing", Capabilities: map[string]config.Capability{"chat": {Format: "builtin"}}})
	if err := srv.Reload(&bad); err == nil {
		t.Error("invalid configuration accepted")
	}
	if _, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}}); err != nil {
		t.Errorf("old configuration lost after a rejected reload: %v", err)
	}
}

// TestGracefulDrainAndUnixSocket: the server listens on TCP and a unix
// socket; on shutdown health turns NOT_SERVING, an open stream finishes
// within the grace period, and Serve returns.
func TestGracefulDrainAndUnixSocket(t *testing.T) {
	t.Parallel()
	up, release := heldStream(t)
	sock := filepath.Join(t.TempDir(), "llmrelay.sock")
	yaml := strings.ReplaceAll(geminiYAML, "{{URL}}", up.URL) + "server:\n  listen: 127.0.0.1:0\n  unix_socket: " + sock + "\n  shutdown_grace: 5s\n  drain_delay: 200ms\n"
	cfg, err := config.Parse([]byte(yaml), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := srv.Listeners()
	if err != nil || len(lis) != 2 {
		t.Fatalf("listeners %v %v", lis, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := llmrelayv1.NewGatewayServiceClient(conn)
	s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("story")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	stop() // SIGTERM
	h := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(3 * time.Second)
	for {
		r, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatalf("health during the drain delay: %v", err)
		}
		if r.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("health still SERVING while draining")
		}
		time.Sleep(10 * time.Millisecond)
	}
	release()
	if text := readText(t, s); text != "Once upon" {
		t.Errorf("in-flight stream across the drain: %q", text)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the drain")
	}
}

// heldStream is a Gemini upstream that streams "Once", then holds the
// stream open until release is called, then sends " upon" and the finish.
func heldStream(t *testing.T) (*httptest.Server, func()) {
	t.Helper()
	ch := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body: Go's HTTP/1 server notices a closed connection only
		// once the request body is consumed.
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"candidates": [{"content": {"parts": [{"text": "Once"}],"role": "model"},"index": 0}],"responseId": "r1","modelVersion": "gemini-2.5-flash"}`+"\r\n\r\n")
		w.(http.Flusher).Flush()
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, `data: {"candidates": [{"content": {"parts": [{"text": " upon"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 3,"candidatesTokenCount": 2,"totalTokenCount": 5},"responseId": "r1","modelVersion": "gemini-2.5-flash"}`+"\r\n\r\n")
	}))
	t.Cleanup(up.Close)
	var once sync.Once
	return up, func() { once.Do(func() { close(ch) }) }
}

// readText reads a StreamChat to its end and returns the text.
func readText(t *testing.T, s llmrelayv1.GatewayService_StreamChatClient) string {
	t.Helper()
	var text string
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return text
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		text += ev.GetTextDelta().GetText()
	}
}

// TestE2ENonUTF8Headers: header bytes outside ASCII are legal on the wire;
// a request id or a raw-capture header carrying them must not break the
// answer's encoding (proto strings are UTF-8), for unary calls and streams.
func TestE2ENonUTF8Headers(t *testing.T) {
	t.Parallel()
	plain := providertest.Load(t, "provider/openai/testdata/chat_plain.http")
	stream := providertest.Load(t, "provider/openai/testdata/chat_plain_stream.http")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req_\xff\xfe1")
		w.Header().Set("X-Odd", "caf\xe9")
		body, _ := io.ReadAll(r.Body)
		rec := plain
		if bytes.Contains(body, []byte(`"stream":true`)) {
			rec = stream
		}
		w.Header().Set("Content-Type", rec.Header.Get("Content-Type"))
		w.Write(rec.Body)
	}))
	defer up.Close()
	c, _ := startWith(t, `
providers:
  - {name: oai, type: openai, base_url: {{URL}}, api_key: sk-test-0000000000}
models:
  - {name: m, provider: oai, upstream_model: gpt-4o-mini, capabilities: {chat: {format: openai-chat}}}
`, up.URL)
	resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")},
		Call: &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(true)}})
	if err != nil {
		t.Fatal(err)
	}
	m := resp.GetMeta()
	if m.GetProviderRequestId() != "req_\uFFFD1" || m.GetRaw().GetResponseHeaders()["x-odd"] != "caf\uFFFD" {
		t.Errorf("request id %q, raw headers %q", m.GetProviderRequestId(), m.GetRaw().GetResponseHeaders())
	}
	// Without preserve_raw_data in the file, raw capture is off.
	resp, err = c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}})
	if err != nil || resp.GetMeta().GetRaw() != nil {
		t.Errorf("raw capture by default: %v %v", resp.GetMeta().GetRaw(), err)
	}
	s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	var end *llmrelayv1.StreamEnd
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
	if end.GetMeta().GetProviderRequestId() != "req_\uFFFD1" {
		t.Errorf("stream end meta %v", end.GetMeta())
	}
}

// TestUnixSocketPathKept: a stale socket at unix_socket is replaced, but a
// regular file there is refused and left as it was.
func TestUnixSocketPathKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	listeners := func(path string) ([]net.Listener, error) {
		cfg, err := config.Parse([]byte("server:\n  listen: \"\"\n  unix_socket: "+path+"\n"), "test")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return srv.Listeners()
	}
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := listeners(file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a regular file at unix_socket: %v", err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep me" {
		t.Errorf("the file was touched: %q %v", b, err)
	}
	sock := filepath.Join(dir, "stale.sock")
	old, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	old.(*net.UnixListener).SetUnlinkOnClose(false)
	old.Close() // leaves the socket file behind, as a crashed run does
	lis, err := listeners(sock)
	if err != nil || len(lis) != 1 {
		t.Fatalf("stale socket: %v %v", lis, err)
	}
	lis[0].Close()
}

// TestE2EEchoedKeyRedacted: a provider that echoes the key in its error
// texts (it happens: "Incorrect API key provided: sk-...") never gets it to
// the caller, for every provider type: not in the status message, not in
// the details, not in the retry reasons of a call that then succeeded.
func TestE2EEchoedKeyRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-echoed-SECRET-key-0123456789"
	echo := regexp.MustCompile(`("(?:message|error)"\s*:\s*")`)
	load := func(path string) providertest.Recording {
		rec := providertest.Load(t, path)
		rec.Body = echo.ReplaceAll(rec.Body, []byte("${1}bad key "+key+" "))
		if !bytes.Contains(rec.Body, []byte(key)) {
			t.Fatalf("%s: no error text to echo the key in", path)
		}
		return rec
	}
	for _, c := range []struct{ typ, format, e500, e400, ok string }{
		{"openai", "openai-chat", "openai/testdata/err_500.http", "openai/testdata/err_400.http", "openai/testdata/chat_plain.http"},
		{"anthropic", "anthropic-messages", "anthropic/testdata/error_500.http", "anthropic/testdata/error_400.http", "anthropic/testdata/plain.http"},
		{"gemini", "gemini", "gemini/testdata/error_500.http", "gemini/testdata/error_400.http", "gemini/testdata/plain.http"},
		{"ollama", "ollama", "ollama/testdata/error_500.http", "ollama/testdata/error_400_tools.http", "ollama/testdata/chat_text.http"},
	} {
		t.Run(c.typ, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, load("provider/"+c.e500), providertest.Load(t, "provider/"+c.ok), load("provider/"+c.e400))
			yaml := `
defaults:
  retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}
providers:
  - {name: p, type: ` + c.typ + `, base_url: {{URL}}, api_key: ` + key + `}
models:
  - {name: m, provider: p, upstream_model: some-model, capabilities: {chat: {format: ` + c.format + `}}}
`
			cl, logs := startWith(t, yaml, up.URL)
			req := &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}}
			resp, err := cl.Chat(context.Background(), req) // 500 echoing the key, then success
			if err != nil {
				t.Fatal(err)
			}
			if rr := resp.GetMeta().GetRetryReasons(); len(rr) != 1 || !strings.Contains(rr[0].GetMessage(), "[REDACTED]") {
				t.Errorf("retry reasons %v", rr)
			}
			_, err = cl.Chat(context.Background(), req) // 400 echoing the key
			st := status.Convert(err)
			if st.Code() == codes.OK || len(st.Details()) == 0 {
				t.Fatalf("status %v", st)
			}
			for _, text := range []string{protojson.Format(resp), st.Message(), protojson.Format(st.Proto()), logs.String()} {
				for _, d := range st.Details() {
					if m, ok := d.(proto.Message); ok {
						text += protojson.Format(m)
					}
				}
				if strings.Contains(text, key) {
					t.Errorf("the key reached the caller or the logs: %s", text)
				}
			}
		})
	}
}
