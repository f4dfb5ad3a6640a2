package telemetry

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmrelay/llmrelay/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNewOffByDefault(t *testing.T) {
	t.Parallel()
	tel, err := New(context.Background(), config.Telemetry{}, env(nil))
	if err != nil || tel != nil {
		t.Fatalf("New = %v, %v; want nil, nil", tel, err)
	}
	// Every method is safe on nil and reports off.
	if tel.Tracing() || tel.Tracer() != nil || tel.Propagator() != nil || tel.Metrics() != nil || tel.RecordContent() || tel.ServerOptions() != nil {
		t.Error("nil telemetry reports something on")
	}
	ctx := context.Background()
	if c, s := tel.StartAgentRound(ctx, "a", 1); c != ctx || s.SpanContext().IsValid() {
		t.Error("agent round span with tracing off")
	}
	tel.Metrics().ObserveCall(Call{}) // nil-safe
	tel.Metrics().StreamStarted("m")()
	tel.Metrics().Fallback("m", "d")
}

func TestNewFromEnvironmentAndFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  config.Telemetry
		env  map[string]string
	}{
		{"env otlp http", config.Telemetry{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}},
		{"env otlp grpc", config.Telemetry{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{"file grpc endpoint", config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true), Protocol: "grpc", Endpoint: "http://127.0.0.1:4317"}}, nil},
		{"file http endpoint", config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true), Endpoint: "http://127.0.0.1:4318"}}, nil},
		{"file none", config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true), Exporter: "none"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tel, err := New(ctx, tc.cfg, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if !tel.Tracing() || tel.Propagator() == nil || tel.Metrics() != nil || len(tel.ServerOptions()) != 2 { // the span interceptors, unary and stream
				t.Errorf("tracing %v, metrics %v, %d server options", tel.Tracing(), tel.Metrics(), len(tel.ServerOptions()))
			}
			_, span := tel.Tracer().Start(ctx, "x")
			if !span.SpanContext().IsSampled() {
				t.Error("span not sampled at the default ratio 1")
			}
			span.End()
			sctx, cancel := context.WithTimeout(ctx, 0) // nothing listens: do not wait for the export
			defer cancel()
			tel.Shutdown(sctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
		})
	}
	if _, err := New(ctx, config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true)}}, env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})); err == nil {
		t.Error("an unknown OTLP protocol from the environment was accepted")
	}
	tel, err := New(ctx, config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true), Exporter: "none", SampleRatio: ptr(0.0)}}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, span := tel.Tracer().Start(ctx, "x"); span.SpanContext().IsSampled() {
		t.Error("sample_ratio 0 sampled a new trace")
	}
}

func ptr[T any](v T) *T { return &v }

func TestAgentSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tel, err := New(context.Background(), config.Telemetry{}, env(nil), WithSpanProcessor(rec))
	if err != nil {
		t.Fatal(err)
	}
	ctx, round := tel.StartAgentRound(context.Background(), "planner", 2)
	_, ok := tel.StartToolExecution(ctx, "get_weather", "call_1")
	EndToolExecution(ok, "")
	_, bad := tel.StartToolExecution(ctx, "get_time", "call_2")
	EndToolExecution(bad, "timeout")
	round.End()
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	roundSpan := spans[2]
	if roundSpan.Name() != "invoke_agent planner" || roundSpan.SpanKind() != trace.SpanKindInternal {
		t.Errorf("round span %q %v", roundSpan.Name(), roundSpan.SpanKind())
	}
	want := map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner", "llmrelay.agent.round": "2"}
	for _, kv := range roundSpan.Attributes() {
		delete(want, string(kv.Key)) // present
	}
	if len(want) > 0 {
		t.Errorf("round span lacks %v", want)
	}
	for i, s := range spans[:2] {
		if s.Parent().SpanID() != roundSpan.SpanContext().SpanID() || !strings.HasPrefix(s.Name(), "execute_tool get_") {
			t.Errorf("tool span %d %q not a child of the round", i, s.Name())
		}
	}
	if spans[0].Status().Code == codes.Error || spans[1].Status().Code != codes.Error || spans[1].Status().Description != "timeout" {
		t.Errorf("tool statuses %v %v", spans[0].Status(), spans[1].Status())
	}
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	get := func(t *testing.T, url string) int {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name       string
		metrics    config.Metrics
		pprofCode  int
		wantWarn   bool
		warnsPprof bool
	}{
		{"loopback without pprof", config.Metrics{Enabled: true, Listen: "127.0.0.1:0"}, http.StatusNotFound, false, false},
		{"loopback with pprof", config.Metrics{Enabled: true, Listen: "127.0.0.1:0", Pprof: true}, http.StatusOK, false, false},
		{"all interfaces with pprof", config.Metrics{Enabled: true, Listen: ":0", Pprof: true}, http.StatusOK, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tel, err := New(context.Background(), config.Telemetry{Metrics: tc.metrics}, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if tel.Tracing() || len(tel.ServerOptions()) != 2 {
				t.Errorf("metrics only: tracing %v, %d server options", tel.Tracing(), len(tel.ServerOptions()))
			}
			var logs bytes.Buffer
			srv, lis, err := tel.ListenMetrics(slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			go ServeHTTP(srv, lis, slog.New(slog.NewTextHandler(io.Discard, nil)))
			t.Cleanup(func() { srv.Close() })
			base := "http://127.0.0.1:" + strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)
			if code := get(t, base+"/metrics"); code != http.StatusOK {
				t.Errorf("/metrics: %d", code)
			}
			if code := get(t, base+"/debug/pprof/"); code != tc.pprofCode {
				t.Errorf("/debug/pprof/: %d, want %d", code, tc.pprofCode)
			}
			warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "non-loopback")
			if warned != tc.wantWarn || tc.warnsPprof != strings.Contains(logs.String(), "profile the process") {
				t.Errorf("start-up log: %s", logs.String())
			}
		})
	}
	tel, err := New(context.Background(), config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true), Exporter: "none"}}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if srv, lis, err := tel.ListenMetrics(slog.New(slog.NewTextHandler(io.Discard, nil))); srv != nil || lis != nil || err != nil {
		t.Errorf("metrics off: ListenMetrics = %v, %v, %v", srv, lis, err)
	}
}

func TestProviderName(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{"openai": "openai", "azure": "azure.ai.openai", "anthropic": "anthropic", "gemini": "gcp.gemini", "ollama": "ollama", "builtin": "llmrelay.builtin"} {
		if got := ProviderName(typ); got != want {
			t.Errorf("ProviderName(%s) = %s", typ, got)
		}
	}
}
