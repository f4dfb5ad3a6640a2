package telemetry

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// The server span's attributes: the RPC semantic conventions as otelgrpc
// (v0.72, semconv 1.43) sets them on its server spans.
const (
	rpcSystemName     = attribute.Key("rpc.system.name")
	rpcMethod         = attribute.Key("rpc.method")
	rpcResponseStatus = attribute.Key("rpc.response.status_code")
	serverAddress     = attribute.Key("server.address")
	serverPort        = attribute.Key("server.port")
)

var (
	rpcSystemGRPC = rpcSystemName.String("grpc")
	serverKind    = trace.WithSpanKind(trace.SpanKindServer)
	// statusAttrs is rpc.response.status_code for each gRPC code, in the
	// conventions' spelling (the code's name in the proto enum).
	statusAttrs = func() [codes.Unauthenticated + 1]attribute.KeyValue { // indexed by code
		names := [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
			"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
			"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}
		var out [codes.Unauthenticated + 1]attribute.KeyValue
		for i, n := range names {
			out[i] = rpcResponseStatus.String(n)
		}
		return out
	}()
)

// serverSpans makes the server span of each RPC from a pair of
// interceptors instead of otelgrpc's stats handler: once a stats handler
// is installed, grpc-go builds a stats event per header, message and
// trailer of every RPC and otelgrpc copies the incoming metadata to read
// traceparent, which cost more than the span itself
// (docs/decisions.md). The span is the one otelgrpc made: named after the
// method, of kind server, continuing the caller's trace context, with the
// same rpc.* and server.* attributes and the same status rule.
type serverSpans struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	attrs  startAttrs
}

// traced reports whether an RPC gets a span: health checks do not.
func traced(fullMethod string) bool {
	return !strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/")
}

func (s *serverSpans) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !traced(info.FullMethod) {
		return handler(ctx, req)
	}
	ctx, span := s.start(ctx, info.FullMethod)
	resp, err := handler(ctx, req)
	s.end(span, err)
	return resp, err
}

func (s *serverSpans) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !traced(info.FullMethod) {
		return handler(srv, ss)
	}
	ctx, span := s.start(ss.Context(), info.FullMethod)
	err := handler(srv, &spanStream{ServerStream: ss, ctx: ctx})
	s.end(span, err)
	return err
}

// spanStream is a server stream whose context holds the server span.
type spanStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *spanStream) Context() context.Context { return s.ctx }

// start continues the caller's trace context (traceparent, tracestate,
// baggage in the incoming metadata) and starts the server span, named
// after the method, with the attributes known at the start (made once per
// method and local address).
func (s *serverSpans) start(ctx context.Context, fullMethod string) (context.Context, trace.Span) {
	ctx = s.prop.Extract(ctx, incomingCarrier{ctx})
	ctx, span := s.tracer.Start(ctx, strings.TrimPrefix(fullMethod, "/"), serverKind)
	if span.IsRecording() {
		var local net.Addr
		if p, ok := peer.FromContext(ctx); ok {
			local = p.LocalAddr
		}
		span.SetAttributes(s.attrs.get(fullMethod, local)...)
	}
	return ctx, span
}

// end sets rpc.response.status_code and the span status (an error only
// for the codes that are the server's fault, with the status message, as
// otelgrpc does), then ends the span.
func (s *serverSpans) end(span trace.Span, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err) // how grpc-go reports a handler's non-status error
	}
	if c := st.Code(); c < codes.Code(len(statusAttrs)) {
		span.SetAttributes(statusAttrs[c : c+1]...) // no slice made
	} else {
		span.SetAttributes(rpcResponseStatus.String("CODE(" + strconv.Itoa(int(c)) + ")"))
	}
	switch st.Code() {
	case codes.Unknown, codes.DeadlineExceeded, codes.Unimplemented, codes.Internal, codes.Unavailable, codes.DataLoss:
		span.SetStatus(otelcodes.Error, st.Message())
	}
	span.End()
}

// incomingCarrier reads the trace context from the incoming metadata
// without copying all of it (metadata.FromIncomingContext would).
type incomingCarrier struct{ ctx context.Context }

func (c incomingCarrier) Get(key string) string {
	if v := metadata.ValueFromIncomingContext(c.ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set does nothing: the incoming metadata is read only.
func (incomingCarrier) Set(string, string) {}

func (c incomingCarrier) Keys() []string {
	md, _ := metadata.FromIncomingContext(c.ctx)
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	return keys
}

// startAttrs holds the attributes a server span starts with (rpc.method,
// rpc.system.name, server.address, server.port) for each method and local
// address the server is reached on (a few: its listeners' addresses), so
// that a call neither parses its address from text nor makes a slice. It
// stops growing at maxStartAttrs; past that, they are made per call.
type startAttrs struct {
	mu sync.RWMutex
	m  map[attrsKey][]attribute.KeyValue
}

type attrsKey struct {
	method string
	tcp    netip.AddrPort // a TCP address, without making its text
	other  string         // any other address's text (bufconn, unix sockets)
}

const maxStartAttrs = 1024

func (c *startAttrs) get(fullMethod string, local net.Addr) []attribute.KeyValue {
	k := attrsKey{method: fullMethod}
	switch a := local.(type) {
	case nil:
	case *net.TCPAddr:
		k.tcp = a.AddrPort()
	default:
		k.other = a.String()
	}
	c.mu.RLock()
	kv, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return kv
	}
	name := strings.TrimPrefix(fullMethod, "/")
	kv = []attribute.KeyValue{rpcMethod.String(name), rpcSystemGRPC}
	if local != nil {
		kv = append(kv, addrAttrs(local.String())...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[attrsKey][]attribute.KeyValue{}
	}
	if len(c.m) < maxStartAttrs {
		c.m[k] = kv
	}
	return kv
}

// addrAttrs is server.address and server.port of host:port (the address
// alone when there is no numeric port), as otelgrpc reads LocalAddr.
func addrAttrs(hostport string) []attribute.KeyValue {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return []attribute.KeyValue{serverAddress.String(hostport)}
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return []attribute.KeyValue{serverAddress.String(h)}
	}
	return []attribute.KeyValue{serverAddress.String(h), serverPort.Int(port)}
}
