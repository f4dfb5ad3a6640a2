package telemetry

import (
	"context"
	"errors"
	"net"
	"sort"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// The start attributes are kept per method and local address, whatever
// the address type, and stop being kept at maxStartAttrs.
func TestStartAttrs(t *testing.T) {
	t.Parallel()
	var c startAttrs
	tcp := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 50051}
	unix := &net.UnixAddr{Name: "/run/llmrelay.sock", Net: "unix"}
	for _, tc := range []struct {
		addr net.Addr
		want map[string]string
	}{
		{tcp, map[string]string{"rpc.method": "s.v1.S/M", "rpc.system.name": "grpc", "server.address": "10.0.0.1", "server.port": "50051"}},
		{unix, map[string]string{"rpc.method": "s.v1.S/M", "rpc.system.name": "grpc", "server.address": "/run/llmrelay.sock"}},
		{nil, map[string]string{"rpc.method": "s.v1.S/M", "rpc.system.name": "grpc"}},
	} {
		for range 2 { // made, then kept
			got := map[string]string{}
			for _, kv := range c.get("/s.v1.S/M", tc.addr) {
				got[string(kv.Key)] = kv.Value.String()
			}
			if len(got) != len(tc.want) {
				t.Errorf("%v: %v, want %v", tc.addr, got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%v: %s = %q, want %q", tc.addr, k, got[k], v)
				}
			}
		}
	}
	for i := range maxStartAttrs + 5 {
		c.get("/s.v1.S/M"+strconv.Itoa(i), tcp)
	}
	if len(c.m) != maxStartAttrs {
		t.Errorf("%d kept, want at most %d", len(c.m), maxStartAttrs)
	}
}

// The carrier reads single keys of the incoming metadata and lists them
// all.
func TestIncomingCarrier(t *testing.T) {
	t.Parallel()
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("traceparent", "00-x", "baggage", "k=v"))
	c := incomingCarrier{ctx}
	if c.Get("traceparent") != "00-x" || c.Get("tracestate") != "" {
		t.Errorf("Get: %q, %q", c.Get("traceparent"), c.Get("tracestate"))
	}
	keys := c.Keys()
	sort.Strings(keys)
	if len(keys) != 2 || keys[0] != "baggage" || keys[1] != "traceparent" {
		t.Errorf("Keys = %v", keys)
	}
	if k := (incomingCarrier{context.Background()}).Keys(); len(k) != 0 {
		t.Errorf("Keys without metadata = %v", k)
	}
}

// A handler's plain error is reported the way grpc-go reports it
// (Unknown, a server error; a context error as its code), and an unknown
// code by its number.
func TestServerSpanStatus(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := &serverSpans{tracer: tp.Tracer("t"), prop: propagation.TraceContext{}}
	ctx := peer.NewContext(context.Background(), &peer.Peer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}})
	for _, tc := range []struct {
		err       error
		code      string
		errStatus bool
	}{
		{errors.New("boom"), "UNKNOWN", true},
		{context.Canceled, "CANCELLED", false},
		{status.Error(codes.Code(42), "odd"), "CODE(42)", false},
		{nil, "OK", false},
	} {
		_, err := s.unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/s.v1.S/M"}, func(context.Context, any) (any, error) { return nil, tc.err })
		if !errors.Is(err, tc.err) {
			t.Fatalf("error %v, want the handler's %v", err, tc.err)
		}
		spans := rec.Ended()
		sp := spans[len(spans)-1]
		got := ""
		for _, kv := range sp.Attributes() {
			if kv.Key == rpcResponseStatus {
				got = kv.Value.AsString()
			}
		}
		if got != tc.code || (sp.Status().Code == otelcodes.Error) != tc.errStatus {
			t.Errorf("%v: status code %q, span status %v; want %q, error %v", tc.err, got, sp.Status(), tc.code, tc.errStatus)
		}
	}
	_, _ = s.unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/grpc.health.v1.Health/Check"}, func(context.Context, any) (any, error) { return nil, nil })
	if n := len(rec.Ended()); n != 4 {
		t.Errorf("%d spans, want none for the health check", n-4)
	}
}

// fakeStream is a server stream with only a context.
type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (f fakeStream) Context() context.Context { return f.ctx }

// A stream handler sees the server span in its stream's context, and the
// span ends with the handler's status.
func TestServerSpanStream(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := &serverSpans{tracer: tp.Tracer("t"), prop: propagation.TraceContext{}}
	var inHandler trace.SpanContext
	err := s.stream(nil, fakeStream{ctx: context.Background()}, &grpc.StreamServerInfo{FullMethod: "/s.v1.S/Stream"},
		func(_ any, ss grpc.ServerStream) error {
			inHandler = trace.SpanContextFromContext(ss.Context())
			return status.Error(codes.Unavailable, "upstream down")
		})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("error %v, want the handler's", err)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	sp := spans[0]
	if sp.SpanContext().SpanID() != inHandler.SpanID() || sp.Name() != "s.v1.S/Stream" || sp.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q kind %v; the handler saw %v", sp.Name(), sp.SpanKind(), inHandler.SpanID())
	}
	if sp.Status().Code != otelcodes.Error || sp.Status().Description != "upstream down" {
		t.Errorf("status %v", sp.Status())
	}
}

// What the handler adds to the server span is set with the start
// attributes and the status when it ends, each RPC's on its own span
// (the gathering slices are pooled); a child span, or the server span
// once ended, is not gathered for: the caller sets its attributes itself.
func TestServerSpanGathersAttributes(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := &serverSpans{tracer: tp.Tracer("t"), prop: propagation.TraceContext{}}
	ctx := peer.NewContext(context.Background(), &peer.Peer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}})
	var kept context.Context
	for _, model := range []string{"m1", "m2"} {
		_, _ = s.unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/s.v1.S/M"}, func(ctx context.Context, _ any) (any, error) {
			span := trace.SpanFromContext(ctx)
			if !AddServerSpanAttributes(ctx, span, Model.String(model), Provider.String("p-"+model)) {
				t.Error("the server span's attributes were not gathered")
			}
			cctx, child := tp.Tracer("t").Start(ctx, "child")
			if AddServerSpanAttributes(cctx, child, Model.String("child")) {
				t.Error("a child span's attributes went to the server span")
			}
			child.End()
			kept = ctx
			return nil, nil
		})
	}
	if AddServerSpanAttributes(kept, trace.SpanFromContext(kept), Model.String("late")) {
		t.Error("attributes gathered for an ended span")
	}
	var servers []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == "s.v1.S/M" {
			servers = append(servers, sp)
		}
	}
	if len(servers) != 2 {
		t.Fatalf("%d server spans", len(servers))
	}
	for i, model := range []string{"m1", "m2"} {
		got := map[string]string{}
		for _, kv := range servers[i].Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		want := map[string]string{"rpc.method": "s.v1.S/M", "rpc.system.name": "grpc", "server.address": "127.0.0.1", "server.port": "1",
			"llmrelay.model": model, "llmrelay.provider": "p-" + model, "rpc.response.status_code": "OK"}
		if len(got) != len(want) {
			t.Errorf("span %d: %v, want %v", i, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("span %d: %s = %q, want %q", i, k, got[k], v)
			}
		}
	}
	buf := serverAttrsPool.Get().(*[]attribute.KeyValue)
	*buf = append(*buf, Model.String("secret"))
	full := (*buf)[:cap(*buf)]
	putServerAttrs(buf)
	for _, kv := range full {
		if kv.Key != "" {
			t.Fatalf("a pooled slice keeps %s", kv.Key)
		}
	}
}

type parentKey struct{}

// The handler's context (the server span's attributes are its value)
// behaves as the RPC's: its values and deadline, cancellation reaching the
// contexts made from it, the span in it; the attributes are found from
// those contexts too.
func TestServerSpanContext(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	s := &serverSpans{tracer: tp.Tracer("t"), prop: propagation.TraceContext{}}
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), parentKey{}, "v"), deadline)
	defer cancel()
	_, _ = s.unary(parent, nil, &grpc.UnaryServerInfo{FullMethod: "/s.v1.S/M"}, func(ctx context.Context, _ any) (any, error) {
		if ctx.Value(parentKey{}) != "v" {
			t.Error("the RPC context's value is gone")
		}
		if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
			t.Errorf("deadline %v %v", d, ok)
		}
		span := trace.SpanFromContext(ctx)
		if !span.SpanContext().IsValid() {
			t.Error("no span in the handler's context")
		}
		child, cancelChild := context.WithCancel(ctx)
		defer cancelChild()
		if !AddServerSpanAttributes(child, span, Model.String("m")) {
			t.Error("attributes not gathered from a child context")
		}
		cancel()
		select {
		case <-child.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the RPC's cancellation did not reach a child context")
		}
		if !errors.Is(context.Cause(child), context.Canceled) {
			t.Errorf("cause %v", context.Cause(child))
		}
		return nil, nil
	})
	if got := rec.Ended(); len(got) != 1 || !hasAttr(got[0], "llmrelay.model", "m") {
		t.Errorf("spans %v", got)
	}
}

func hasAttr(s sdktrace.ReadOnlySpan, key, value string) bool {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key && kv.Value.String() == value {
			return true
		}
	}
	return false
}
