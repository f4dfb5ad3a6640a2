// Package telemetry sets up what llmrelay reports about itself: traces
// (OpenTelemetry, following the GenAI semantic conventions, exported over
// OTLP) and metrics (Prometheus, on an HTTP endpoint of their own, with
// pprof when enabled). Both are off by default; a nil *Telemetry is valid
// and means everything off, so the hot path tests one pointer.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/llmrelay/llmrelay/internal/config"
)

// instrumentation is the tracer's name.
const instrumentation = "github.com/llmrelay/llmrelay"

// Telemetry is the process's tracing and metrics. Methods on a nil
// *Telemetry do nothing.
type Telemetry struct {
	tp      *sdktrace.TracerProvider // nil: tracing off
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	content bool
	metrics *Metrics // nil: metrics off
	cfg     config.Metrics
}

// Option adjusts New.
type Option func(*options)

type options struct {
	processors []sdktrace.SpanProcessor
}

// WithSpanProcessor turns tracing on with spans going to p instead of an
// OTLP exporter (tests: tracetest.NewSpanRecorder()).
func WithSpanProcessor(p sdktrace.SpanProcessor) Option {
	return func(o *options) { o.processors = append(o.processors, p) }
}

// New builds the telemetry the configuration asks for; nil when both
// tracing and metrics are off. getenv is os.Getenv outside tests: the
// standard OTEL_* variables fill what the file leaves unset.
func New(ctx context.Context, cfg config.Telemetry, getenv func(string) string, opts ...Option) (*Telemetry, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tracing := cfg.Tracing.TracingOn(getenv) || len(o.processors) > 0
	if !tracing && !cfg.Metrics.Enabled {
		return nil, nil
	}
	t := &Telemetry{cfg: cfg.Metrics}
	if cfg.Metrics.Enabled {
		t.metrics = NewMetrics()
	}
	if tracing {
		tp, err := newTracerProvider(ctx, cfg.Tracing, getenv, o.processors)
		if err != nil {
			return nil, err
		}
		t.tp = tp
		t.tracer = tp.Tracer(instrumentation)
		t.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
		t.content = cfg.Tracing.RecordContent
	}
	return t, nil
}

func newTracerProvider(ctx context.Context, cfg config.Tracing, getenv func(string) string, processors []sdktrace.SpanProcessor) (*sdktrace.TracerProvider, error) {
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = cfg.ServiceName
	}
	if name == "" {
		name = "llmrelay"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", name)))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	// A caller's sampling decision is followed; new traces are sampled
	// at the ratio (AlwaysSample at 1: the same decision, cheaper).
	root := sdktrace.AlwaysSample()
	if r := cfg.SampleRatio; r != nil && *r < 1 {
		root = sdktrace.TraceIDRatioBased(*r)
	}
	topts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(root)),
	}
	for _, p := range processors {
		topts = append(topts, sdktrace.WithSpanProcessor(p))
	}
	if len(processors) == 0 {
		exp, err := newExporter(ctx, cfg, getenv)
		if err != nil {
			return nil, err
		}
		topts = append(topts, sdktrace.WithBatcher(exp))
	}
	return sdktrace.NewTracerProvider(topts...), nil
}

// newExporter is the OTLP exporter (or the discarding one for exporter
// none). Unset settings are read by the exporters themselves from the
// OTEL_EXPORTER_OTLP_* variables.
func newExporter(ctx context.Context, cfg config.Tracing, getenv func(string) string) (sdktrace.SpanExporter, error) {
	if cfg.ExporterName() == "none" {
		return discard{}, nil
	}
	switch p := cfg.ProtocolName(getenv); p {
	case "grpc":
		var o []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			o = append(o, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		exp, err := otlptracegrpc.New(ctx, o...)
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp grpc exporter: %w", err)
		}
		return exp, nil
	case "http/protobuf":
		var o []otlptracehttp.Option
		if cfg.Endpoint != "" {
			o = append(o, otlptracehttp.WithEndpointURL(tracesURL(cfg.Endpoint)))
		}
		exp, err := otlptracehttp.New(ctx, o...)
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp http exporter: %w", err)
		}
		return exp, nil
	default:
		return nil, fmt.Errorf("telemetry: OTLP protocol %q is not grpc or http/protobuf", p)
	}
}

// tracesURL is the OTLP/HTTP traces URL of a collector's base URL, as
// OTEL_EXPORTER_OTLP_ENDPOINT is read: /v1/traces is appended to its path
// (a URL already ending in /v1/traces is kept).
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || strings.HasSuffix(u.Path, "/v1/traces") {
		return endpoint // validated as an http(s) URL by the configuration; the exporter reports anything else
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	return u.String()
}

// discard is the exporter of `exporter: none`: spans are made, batched and
// dropped.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// Tracer is the tracer of llmrelay's spans; nil when tracing is off.
func (t *Telemetry) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tracer
}

// Propagator injects the trace context into upstream requests; nil when
// tracing is off.
func (t *Telemetry) Propagator() propagation.TextMapPropagator {
	if t == nil {
		return nil
	}
	return t.prop
}

// RecordContent reports whether message contents go on spans.
func (t *Telemetry) RecordContent() bool { return t != nil && t.content }

// Metrics are the Prometheus metrics; nil when metrics are off.
func (t *Telemetry) Metrics() *Metrics {
	if t == nil {
		return nil
	}
	return t.metrics
}

// Tracing reports whether spans are made.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// ServerOptions are the gRPC server options of the telemetry: the server
// span (a server span per RPC, the caller's traceparent continued;
// health checks left out; serverspan.go) and the gRPC server metrics
// (grpcmetrics.go), from one interceptor (one level of grpc-go's chain
// instead of two). Put them first: the span is the outermost, so that it
// sees the status the client gets (after recovery) and the metrics' time.
func (t *Telemetry) ServerOptions() []grpc.ServerOption {
	if t == nil {
		return nil
	}
	i := &serverInterceptor{}
	if t.tp != nil {
		i.spans = &serverSpans{tracer: t.tracer, prop: t.prop}
	}
	if m := t.metrics; m != nil {
		i.metrics = m.grpc
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(i.unary), grpc.ChainStreamInterceptor(i.stream)}
}

// Registered tells the gRPC metrics which methods the server has, so that
// every method shows up at zero before its first call.
func (t *Telemetry) Registered(s *grpc.Server) {
	if m := t.Metrics(); m != nil {
		m.grpc.register(s)
	}
}

// Shutdown flushes the spans not exported yet.
func (t *Telemetry) Shutdown(ctx context.Context, log *slog.Logger) {
	if t == nil || t.tp == nil {
		return
	}
	if err := t.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("telemetry: flushing spans", slog.String("error", err.Error()))
	}
}
