package telemetry

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/internal/config"
)

// collector keeps the span names it received.
type collector struct {
	collectorpb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *collector) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	c.add(req)
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

func (c *collector) add(req *collectorpb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.names = append(c.names, s.GetName())
			}
		}
	}
}

func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.names...)
}

// exportOne makes one span and flushes it through the configured exporter.
func exportOne(t *testing.T, cfg config.Tracing) {
	t.Helper()
	tel, err := New(context.Background(), config.Telemetry{Tracing: cfg}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.Tracer().Start(context.Background(), "chat gpt-test")
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tel.Shutdown(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// The configured OTLP/HTTP exporter posts the spans to endpoint/v1/traces.
func TestExportOTLPHTTP(t *testing.T) {
	t.Parallel()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.URL.Path != "/v1/traces" {
			t.Errorf("collector: %s %v", r.URL.Path, err)
			return
		}
		var req collectorpb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("collector: %v", err)
			return
		}
		c.add(&req)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	exportOne(t, config.Tracing{Enabled: ptr(true), Protocol: "http/protobuf", Endpoint: srv.URL})
	if got := c.got(); len(got) != 1 || got[0] != "chat gpt-test" {
		t.Errorf("collector received %v", got)
	}
}

// The configured OTLP/gRPC exporter calls the collector's Export.
func TestExportOTLPGRPC(t *testing.T) {
	t.Parallel()
	c := &collector{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(gs, c)
	go func() {
		if err := gs.Serve(lis); err != nil {
			t.Errorf("collector: %v", err)
		}
	}()
	defer gs.Stop()
	exportOne(t, config.Tracing{Enabled: ptr(true), Protocol: "grpc", Endpoint: "http://" + lis.Addr().String()})
	if got := c.got(); len(got) != 1 || got[0] != "chat gpt-test" {
		t.Errorf("collector received %v", got)
	}
}

func TestTracesURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://c:4318":                "http://c:4318/v1/traces",
		"http://c:4318/":               "http://c:4318/v1/traces",
		"https://c/otlp":               "https://c/otlp/v1/traces",
		"http://c:4318/v1/traces":      "http://c:4318/v1/traces",
		"https://c/otlp/v1/traces?x=1": "https://c/otlp/v1/traces?x=1",
	} {
		if got := tracesURL(in); got != want {
			t.Errorf("tracesURL(%s) = %s, want %s", in, got, want)
		}
	}
}
