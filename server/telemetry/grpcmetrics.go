package telemetry

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// grpcMetrics are the gRPC server metrics go-grpc-middleware's
// providers/prometheus makes (ServerMetrics with the handling time
// histogram): the same families, help, labels and buckets, counted the
// same way. Its interceptors look each series up by its labels on every
// event (hashing 3 or 4 label values under a lock, and making the label
// slices): five look-ups per unary call and one per streamed message.
// These keep each registered method's series, made once in Registered,
// in a map the RPCs only read. TestGRPCMetricsAsGoGRPCMiddleware runs
// both on the same calls and compares what they expose.
type grpcMetrics struct {
	started, handled, received, sent *prometheus.CounterVec
	handling                         *prometheus.HistogramVec

	// methods holds each registered method's series by full method name;
	// made by register before the server serves, then only read. A
	// method not in it (none, with the methods registered) is looked up
	// per event, as go-grpc-middleware does.
	methods atomic.Pointer[map[string]*methodSeries]
}

// methodSeries are one method's series.
type methodSeries struct {
	started, received, sent prometheus.Counter
	handling                prometheus.Observer
	handled                 [codes.Unauthenticated + 1]prometheus.Counter // by code
}

func newGRPCMetrics() *grpcMetrics {
	labels := []string{"grpc_type", "grpc_service", "grpc_method"}
	return &grpcMetrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_started_total", Help: "Total number of RPCs started on the server.",
		}, labels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total", Help: "Total number of RPCs completed on the server, regardless of success or failure.",
		}, append(labels[:3:3], "grpc_code")),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_received_total", Help: "Total number of RPC stream messages received on the server.",
		}, labels),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_sent_total", Help: "Total number of gRPC stream messages sent by the server.",
		}, labels),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "grpc_server_handling_seconds", Help: "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: prometheus.DefBuckets,
		}, labels),
	}
}

// Describe and Collect make grpcMetrics a prometheus.Collector, as
// go-grpc-middleware's ServerMetrics is.
func (g *grpcMetrics) Describe(ch chan<- *prometheus.Desc) {
	g.started.Describe(ch)
	g.handled.Describe(ch)
	g.received.Describe(ch)
	g.sent.Describe(ch)
	g.handling.Describe(ch)
}

func (g *grpcMetrics) Collect(ch chan<- prometheus.Metric) {
	g.started.Collect(ch)
	g.handled.Collect(ch)
	g.received.Collect(ch)
	g.sent.Collect(ch)
	g.handling.Collect(ch)
}

// register makes the series of every method of s, at zero (so that each
// shows before its first call), and keeps them for the interceptors.
func (g *grpcMetrics) register(s *grpc.Server) {
	m := map[string]*methodSeries{}
	for service, info := range s.GetServiceInfo() {
		for _, mi := range info.Methods {
			typ := grpcType(mi.IsClientStream, mi.IsServerStream)
			ms := &methodSeries{
				started:  g.started.WithLabelValues(typ, service, mi.Name),
				received: g.received.WithLabelValues(typ, service, mi.Name),
				sent:     g.sent.WithLabelValues(typ, service, mi.Name),
				handling: g.handling.WithLabelValues(typ, service, mi.Name),
			}
			for c := range ms.handled {
				ms.handled[c] = g.handled.WithLabelValues(typ, service, mi.Name, codes.Code(c).String())
			}
			m["/"+service+"/"+mi.Name] = ms
		}
	}
	g.methods.Store(&m)
}

// grpcType is the grpc_type label.
func grpcType(clientStream, serverStream bool) string {
	switch {
	case !clientStream && !serverStream:
		return "unary"
	case clientStream && !serverStream:
		return "client_stream"
	case !clientStream && serverStream:
		return "server_stream"
	default:
		return "bidi_stream"
	}
}

// series returns the method's series: the registered ones, else made
// from the vectors (per call, as go-grpc-middleware does).
func (g *grpcMetrics) series(fullMethod, typ string) *methodSeries {
	if m := g.methods.Load(); m != nil {
		if ms, ok := (*m)[fullMethod]; ok {
			return ms
		}
	}
	service, method := splitMethod(fullMethod)
	return &methodSeries{
		started:  g.started.WithLabelValues(typ, service, method),
		received: g.received.WithLabelValues(typ, service, method),
		sent:     g.sent.WithLabelValues(typ, service, method),
		handling: g.handling.WithLabelValues(typ, service, method),
	}
}

// splitMethod is the service and method of /service/method, as
// go-grpc-middleware splits it.
func splitMethod(fullMethod string) (string, string) {
	name := strings.TrimPrefix(fullMethod, "/")
	if i := strings.Index(name, "/"); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "unknown", "unknown"
}

// done counts the RPC handled with err's code and observes its time.
func (g *grpcMetrics) done(ms *methodSeries, fullMethod, typ string, err error, start time.Time) {
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err) // as grpc-go reports a handler's other errors
	}
	c := st.Code()
	if c < codes.Code(len(ms.handled)) && ms.handled[c] != nil {
		ms.handled[c].Inc()
	} else {
		service, method := splitMethod(fullMethod)
		g.handled.WithLabelValues(typ, service, method, c.String()).Inc()
	}
	ms.handling.Observe(time.Since(start).Seconds())
}

func (g *grpcMetrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	ms := g.series(info.FullMethod, "unary")
	ms.started.Inc()
	ms.received.Inc()
	resp, err := handler(ctx, req)
	if err == nil {
		ms.sent.Inc()
	}
	g.done(ms, info.FullMethod, "unary", err, start)
	return resp, err
}

func (g *grpcMetrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	typ := grpcType(info.IsClientStream, info.IsServerStream)
	ms := g.series(info.FullMethod, typ)
	ms.started.Inc()
	err := handler(srv, &countedStream{ServerStream: ss, ms: ms})
	g.done(ms, info.FullMethod, typ, err, start)
	return err
}

// countedStream counts the messages sent and received without error.
type countedStream struct {
	grpc.ServerStream
	ms *methodSeries
}

func (s *countedStream) SendMsg(m any) error {
	err := s.ServerStream.SendMsg(m)
	if err == nil {
		s.ms.sent.Inc()
	}
	return err
}

func (s *countedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		s.ms.received.Inc()
	}
	return err
}
