package faults_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const chunk = `data: {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"content": "word "}}]}` + "\n\n"

const okBody = `{"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}]}`

// hijack takes the raw connection (to reset it or write garbage).
func hijack(w http.ResponseWriter) net.Conn {
	c, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	return c
}

// hang holds the request until the gateway goes away (the body is read
// first: Go's HTTP/1 server notices a closed connection only then), or 10 s.
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// reset closes the connection with a TCP RST.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

type fault struct {
	name    string
	stream  bool
	handler http.HandlerFunc
	// refused: no upstream at all (a closed port).
	refused bool
	code    codes.Code
	reason  string
	// attempts the gateway made (0: not checked); events the stream
	// delivered before its status (streams only, -1: not checked).
	attempts int32
	minEvent int
	retry    bool // RetryInfo expected
}

var faults = []fault{
	{name: "refused", refused: true, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", attempts: 2},
	{name: "reset before headers", handler: func(w http.ResponseWriter, r *http.Request) { reset(hijack(w)) },
		code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", attempts: 2},
	{name: "reset mid-body", handler: func(w http.ResponseWriter, r *http.Request) {
		c := hijack(w)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(okBody), okBody[:40])
		reset(c)
	}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", attempts: 2},
	{name: "reset mid-stream", stream: true, handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk+chunk)
		w.(http.Flusher).Flush()
		reset(hijack(w))
	}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", attempts: 1, minEvent: 2},
	{name: "hang before headers", handler: func(w http.ResponseWriter, r *http.Request) { hang(r) },
		code: codes.DeadlineExceeded, reason: "UPSTREAM_TIMEOUT", attempts: 2},
	{name: "hang mid-stream", stream: true, handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk)
		w.(http.Flusher).Flush()
		hang(r)
	}, code: codes.DeadlineExceeded, reason: "UPSTREAM_TIMEOUT", attempts: 1, minEvent: 1},
	{name: "garbage", handler: func(w http.ResponseWriter, r *http.Request) {
		c := hijack(w)
		io.WriteString(c, "\x00\x01garbage that is not HTTP\r\n\r\n")
		c.Close()
	}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", attempts: 2},
	{name: "truncated JSON", handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okBody[:len(okBody)-10])
	}, code: codes.Unavailable, reason: "UPSTREAM_BAD_RESPONSE", attempts: 1},
	{name: "200 with an error body", handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"error": {"message": "The server had an error", "type": "server_error"}}`)
	}, code: codes.Unavailable, reason: "UPSTREAM_UNAVAILABLE", attempts: 2},
	{name: "429 storm with Retry-After", handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("retry-after-ms", "20")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}`)
	}, code: codes.ResourceExhausted, reason: "UPSTREAM_RATE_LIMITED", attempts: 2, retry: true},
	{name: "trickle", handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := range len(okBody) {
			w.Write([]byte{okBody[i]})
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
	}, code: codes.OK},
	{name: "endless stream", stream: true, handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}, code: codes.ResourceExhausted, reason: "RESOURCE_EXHAUSTED", attempts: 1, minEvent: 1},
	{name: "50 MB body", handler: func(w http.ResponseWriter, r *http.Request) {
		const size = 50 << 20
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		buf := []byte(strings.Repeat(" ", 1<<20))
		for i := 0; i < 50; i++ {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}, code: codes.ResourceExhausted, reason: "RESOURCE_EXHAUSTED", attempts: 1},
}

const yaml = `
defaults:
  connect_timeout: 1s
  first_byte_timeout: 300ms
  idle_timeout: 300ms
  retry: {max_attempts: 2, base_delay: 1ms, max_delay: 5ms}
providers:
  - {name: oai, type: openai, base_url: "%s", api_key: sk-fault-0000000000}
models:
  - {name: m, provider: oai, capabilities: {chat: {format: openai-chat}}}
limits: {max_response_bytes: 1048576}
`

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd: fd leaks are checked on Linux only")
	}
	return len(ents)
}

func TestFaults(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			fdsBefore := openFDs(t)
			run(t, f)
			// Everything the scenario opened is closed again (the
			// provider's idle connections close with the upstream).
			deadline := time.Now().Add(3 * time.Second)
			for openFDs(t) > fdsBefore {
				if time.Now().After(deadline) {
					ents, _ := os.ReadDir("/proc/self/fd")
					var links []string
					for _, e := range ents {
						l, _ := os.Readlink("/proc/self/fd/" + e.Name())
						links = append(links, e.Name()+"->"+l)
					}
					t.Fatalf("fd leak: %d open, %d before: %v", openFDs(t), fdsBefore, links)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func run(t *testing.T, f fault) {
	var upURL string
	var up *httptest.Server
	if f.refused {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		upURL = "http://" + l.Addr().String()
		l.Close()
	} else {
		up = httptest.NewServer(f.handler)
		upURL = up.URL
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(yaml, upURL)), "faults")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, []net.Listener{lis}) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		conn.Close()
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if up != nil {
			up.CloseClientConnections()
			up.Close()
		}
	}()
	c := llmrelayv1.NewGatewayServiceClient(conn)
	callCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	msgs := []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}}
	var events int
	if f.stream {
		s, err := c.StreamChat(callCtx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: msgs})
		if err == nil {
			for {
				var ev *llmrelayv1.StreamChatResponse
				if ev, err = s.Recv(); err != nil {
					break
				}
				if ev.GetTextDelta() != nil {
					events++
				}
			}
		}
		if err == io.EOF {
			err = nil
		}
		check(t, f, err)
		if events < f.minEvent {
			t.Errorf("%d text events before the status, want at least %d", events, f.minEvent)
		}
		return
	}
	_, err = c.Chat(callCtx, &llmrelayv1.ChatRequest{Model: "m", Messages: msgs})
	check(t, f, err)
}

func check(t *testing.T, f fault, err error) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != f.code {
		t.Fatalf("status %v, want %v", st, f.code)
	}
	if f.code == codes.OK {
		return
	}
	var info *errdetails.ErrorInfo
	var meta *llmrelayv1.ResponseMeta
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch x := d.(type) {
		case *errdetails.ErrorInfo:
			info = x
		case *llmrelayv1.FailedCallMeta:
			meta = x.GetMeta()
		case *errdetails.RetryInfo:
			retry = x
		}
	}
	if info.GetReason() != f.reason {
		t.Errorf("reason %q, want %q (%v)", info.GetReason(), f.reason, st.Message())
	}
	if meta == nil || meta.GetProvider() != "oai" || meta.GetTotalDuration() == nil {
		t.Errorf("failed call meta: %v", meta)
	}
	if f.attempts > 0 && meta.GetAttempts() != f.attempts {
		t.Errorf("attempts %d, want %d (%v)", meta.GetAttempts(), f.attempts, meta.GetRetryReasons())
	}
	if f.retry && retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("no RetryInfo: %v", st.Details())
	}
}
