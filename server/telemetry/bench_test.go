package telemetry

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/llmrelay/llmrelay/internal/config"
)

// BenchmarkServerSpan: the server span of a unary RPC with tracing on and
// spans batched to the discarding exporter (exporter: none), the
// gateway's attributes included (the configured model and the cost),
// around a handler that does nothing: what the span itself costs.
func BenchmarkServerSpan(b *testing.B) {
	tel, err := New(context.Background(), config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true), Exporter: "none"}}, env(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer tel.Shutdown(context.Background(), slog.Default())
	s := &serverSpans{tracer: tel.tracer, prop: tel.prop}
	ctx := peer.NewContext(context.Background(), &peer.Peer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50051}})
	info := &grpc.UnaryServerInfo{FullMethod: "/llmrelay.v1.GatewayService/Chat"}
	handler := func(ctx context.Context, _ any) (any, error) {
		span := trace.SpanFromContext(ctx)
		var buf [9]attribute.KeyValue
		attrs := append(buf[:0], Model.String("m"), CostNanos.Int64(1200), CostCurrency.String("USD"))
		if !AddServerSpanAttributes(ctx, span, attrs...) {
			span.SetAttributes(attrs...)
		}
		return nil, nil
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = s.unary(ctx, nil, info, handler)
	}
}

// BenchmarkSDKSpanFloor: what the OpenTelemetry SDK alone costs for the
// two recording spans of a unary call (issue 15's server span and the
// attempt's client span, with 8 and 13 attributes, the counts of a plain
// Chat call), batched to a discarding exporter, without any of our code:
// the floor under telemetry's overhead per unary call.
func BenchmarkSDKSpanFloor(b *testing.B) {
	tel, err := New(context.Background(), config.Telemetry{Tracing: config.Tracing{Enabled: ptr(true), Exporter: "none"}}, env(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer tel.Shutdown(context.Background(), slog.Default())
	server := make([]attribute.KeyValue, 8)
	for i := range server {
		server[i] = attribute.Int("server.attr."+string(rune('a'+i)), i)
	}
	client := make([]attribute.KeyValue, 13)
	for i := range client {
		client[i] = attribute.Int("client.attr."+string(rune('a'+i)), i)
	}
	serverStart := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	clientStart := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sctx, s := tel.tracer.Start(ctx, "llmrelay.v1.GatewayService/Chat", serverStart...)
		_, c := tel.tracer.Start(sctx, "chat m", clientStart...)
		c.SetAttributes(client...)
		c.End()
		s.SetAttributes(server...)
		s.End()
	}
}
