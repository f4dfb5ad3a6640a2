package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// msgStream is a server stream whose sends and receives fail with the
// given errors, in turn (nil: success).
type msgStream struct {
	grpc.ServerStream
	sends, recvs []error
}

func (s *msgStream) Context() context.Context { return context.Background() }

func (s *msgStream) SendMsg(any) error {
	err := s.sends[0]
	s.sends = s.sends[1:]
	return err
}

func (s *msgStream) RecvMsg(any) error {
	err := s.recvs[0]
	s.recvs = s.recvs[1:]
	return err
}

// exposition is what a registry exposes, as comparable text: family,
// help, type, then each series' labels and value (counters) or count
// and bucket bounds (histograms; not the sum and the bucket counts,
// which are time).
func exposition(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range fams {
		lines = append(lines, fmt.Sprintf("%s %q %v", f.GetName(), f.GetHelp(), f.GetType()))
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := fmt.Sprint(m.GetCounter().GetValue())
			if h := m.GetHistogram(); h != nil {
				v = fmt.Sprint(h.GetSampleCount())
				for _, b := range h.GetBucket() {
					v += fmt.Sprintf(" le%g", b.GetUpperBound()) // the bounds; which bucket a call falls in is time
				}
			}
			lines = append(lines, "  "+f.GetName()+"{"+strings.Join(labels, ",")+"} "+v)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Our gRPC server metrics expose what go-grpc-middleware's do, for the
// same calls: registered methods at zero, unary calls that succeed or
// fail (status, context and other errors), a stream's messages sent and
// received (failed ones not counted), a method not registered.
func TestGRPCMetricsAsGoGRPCMiddleware(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())

	theirs := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	theirReg := prometheus.NewRegistry()
	theirReg.MustRegister(theirs)
	theirs.InitializeMetrics(srv)
	ours := newGRPCMetrics()
	ourReg := prometheus.NewRegistry()
	ourReg.MustRegister(ours)
	ours.register(srv)
	if a, b := exposition(t, theirReg), exposition(t, ourReg); a != b {
		t.Fatalf("registered:\n%s\nwant (go-grpc-middleware):\n%s", b, a)
	}

	ctx := context.Background()
	unaryErrs := []error{nil, status.Error(codes.Unavailable, "down"), context.Canceled, errors.New("plain"), status.Error(codes.Code(42), "odd")}
	run := func(u grpc.UnaryServerInterceptor, s grpc.StreamServerInterceptor) {
		for _, method := range []string{"/grpc.health.v1.Health/Check", "/x.v1.Unknown/Call"} {
			for _, err := range unaryErrs {
				_, _ = u(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, func(context.Context, any) (any, error) { return nil, err })
			}
		}
		for _, method := range []string{"/grpc.health.v1.Health/Watch", "/x.v1.Unknown/Stream"} {
			for _, herr := range []error{nil, status.Error(codes.Internal, "boom")} {
				st := &msgStream{sends: []error{nil, nil, io.EOF, nil}, recvs: []error{nil, io.EOF}}
				_ = s(nil, st, &grpc.StreamServerInfo{FullMethod: method, IsServerStream: true}, func(_ any, ss grpc.ServerStream) error {
					_ = ss.RecvMsg(nil)
					_ = ss.RecvMsg(nil)
					for range 4 {
						_ = ss.SendMsg(nil)
					}
					return herr
				})
			}
		}
	}
	run(theirs.UnaryServerInterceptor(), theirs.StreamServerInterceptor())
	run(ours.unary, ours.stream)
	if a, b := exposition(t, theirReg), exposition(t, ourReg); a != b {
		t.Errorf("after calls:\n%s\nwant (go-grpc-middleware):\n%s", b, a)
	}
	fams, err := ourReg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "grpc_server_handling_seconds" {
			continue
		}
		var sum float64
		for _, m := range f.GetMetric() {
			sum += m.GetHistogram().GetSampleSum()
		}
		if sum <= 0 || sum > 10 { // 28 calls that return at once, in seconds
			t.Errorf("handling time %g s in all", sum)
		}
	}
}
