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
	// serverStart is the options of a server span's start, made once: a
	// variadic argument to an interface method is a new slice each call.
	serverStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
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

// serverInterceptor is the server span and the gRPC metrics of an RPC,
// either of which may be off (nil).
type serverInterceptor struct {
	spans   *serverSpans
	metrics *grpcMetrics
}

func (i *serverInterceptor) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if i.spans == nil || !traced(info.FullMethod) {
		return i.unaryMetrics(ctx, req, info, handler)
	}
	ctx, span, attrs := i.spans.start(ctx, info.FullMethod)
	resp, err := i.unaryMetrics(ctx, req, info, handler)
	i.spans.end(span, attrs, err)
	return resp, err
}

func (i *serverInterceptor) unaryMetrics(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if i.metrics == nil {
		return handler(ctx, req)
	}
	return i.metrics.unary(ctx, req, info, handler)
}

func (i *serverInterceptor) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if i.spans == nil || !traced(info.FullMethod) {
		return i.streamMetrics(srv, ss, info, handler)
	}
	ctx, span, attrs := i.spans.start(ss.Context(), info.FullMethod)
	err := i.streamMetrics(srv, &spanStream{ServerStream: ss, ctx: ctx}, info, handler)
	i.spans.end(span, attrs, err)
	return err
}

func (i *serverInterceptor) streamMetrics(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if i.metrics == nil {
		return handler(srv, ss)
	}
	return i.metrics.stream(srv, ss, info, handler)
}

// unary and stream are the server span alone (metrics off).
func (s *serverSpans) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return (&serverInterceptor{spans: s}).unary(ctx, req, info, handler)
}

func (s *serverSpans) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return (&serverInterceptor{spans: s}).stream(srv, ss, info, handler)
}

// spanStream is a server stream whose context holds the server span.
type spanStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *spanStream) Context() context.Context { return s.ctx }

// start continues the caller's trace context (traceparent, tracestate,
// baggage in the incoming metadata) and starts the server span, named
// after the method. The attributes known at the start (made once per
// method and local address) are not set yet: they go in the span's
// rpcAttrs, in the returned context, with what the handler adds
// (AddServerSpanAttributes), and are set in one call when the span ends.
// The SDK grows its attribute slice and copies on every SetAttributes
// call: start, the gateway's summary and the status took three
// allocations (1.8 KB) where one of the right size (0.8 KB) does.
// rpcAttrs is nil when the span is not recording; else it is also the
// returned context (one allocation for the carrier, the attributes and
// the context value).
func (s *serverSpans) start(ctx context.Context, fullMethod string) (context.Context, trace.Span, *rpcAttrs) {
	a := &rpcAttrs{carrier: incomingCarrier{ctx}}
	ctx = s.prop.Extract(ctx, &a.carrier) // a pointer: no carrier made per call
	ctx, span := s.tracer.Start(ctx, strings.TrimPrefix(fullMethod, "/"), serverStart...)
	if !span.IsRecording() {
		return ctx, span, nil
	}
	var local net.Addr
	if p, ok := peer.FromContext(ctx); ok {
		local = p.LocalAddr
	}
	buf := serverAttrsPool.Get().(*[]attribute.KeyValue)
	*buf = append((*buf)[:0], s.attrs.get(fullMethod, local)...)
	a.Context, a.carrier, a.span, a.attrs = ctx, incomingCarrier{}, span, buf
	return a, span, a
}

// end sets the span's attributes with rpc.response.status_code and the
// span status (an error only for the codes that are the server's fault,
// with the status message, as otelgrpc does), then ends the span.
func (s *serverSpans) end(span trace.Span, a *rpcAttrs, err error) {
	if a == nil {
		span.End()
		return
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err) // how grpc-go reports a handler's non-status error
	}
	var code attribute.KeyValue
	if c := st.Code(); c < codes.Code(len(statusAttrs)) {
		code = statusAttrs[c]
	} else {
		code = rpcResponseStatus.String("CODE(" + strconv.Itoa(int(c)) + ")")
	}
	a.mu.Lock()
	buf := a.attrs
	a.attrs = nil // what is added from now on goes to the span itself
	a.mu.Unlock()
	*buf = append(*buf, code)
	span.SetAttributes(*buf...) // copied by the SDK
	putServerAttrs(buf)
	switch st.Code() {
	case codes.Unknown, codes.DeadlineExceeded, codes.Unimplemented, codes.Internal, codes.Unavailable, codes.DataLoss:
		span.SetStatus(otelcodes.Error, st.Message())
	}
	span.End()
}

// rpcAttrs are the attributes of an RPC's recording server span, gathered
// until it ends. It is the context of the RPC's handler: the context
// with the server span, which it answers for but for rpcAttrsKey (the
// same as context.WithValue without a second allocation; grpc-go's and
// the context package's look-ups, cancellation included, go through
// Value).
type rpcAttrs struct {
	context.Context
	carrier incomingCarrier // the trace context's carrier, until the span starts
	span    trace.Span
	mu      sync.Mutex
	attrs   *[]attribute.KeyValue // from serverAttrsPool; nil once set on the span
}

// Value is a's for rpcAttrsKey, else its context's.
func (a *rpcAttrs) Value(key any) any {
	if _, ok := key.(rpcAttrsKey); ok {
		return a
	}
	return a.Context.Value(key)
}

type rpcAttrsKey struct{}

// serverSpanAttrs is the capacity of serverAttrsPool's slices: the 4
// start attributes, up to 9 of the gateway's summary (observe.go), the
// status.
const serverSpanAttrs = 16

var serverAttrsPool = sync.Pool{New: func() any {
	s := make([]attribute.KeyValue, 0, serverSpanAttrs)
	return &s
}}

// putServerAttrs clears buf (no values kept alive by the pool) and gives
// it back, unless an unusual RPC grew it far.
func putServerAttrs(buf *[]attribute.KeyValue) {
	if cap(*buf) > 4*serverSpanAttrs {
		return
	}
	clear(*buf)
	*buf = (*buf)[:0]
	serverAttrsPool.Put(buf)
}

// AddServerSpanAttributes adds kv to the attributes of the RPC's server
// span when span is that span (the one ctx's RPC started, not yet ended)
// and reports whether it did: they are set with the others when the span
// ends. kv is copied, not kept. When it reports false, set them with
// span.SetAttributes.
func AddServerSpanAttributes(ctx context.Context, span trace.Span, kv ...attribute.KeyValue) bool {
	a, _ := ctx.Value(rpcAttrsKey{}).(*rpcAttrs)
	if a == nil || a.span != span {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.attrs == nil {
		return false
	}
	*a.attrs = append(*a.attrs, kv...)
	return true
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
