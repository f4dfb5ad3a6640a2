package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/auth"
	"github.com/llmrelay/llmrelay/server/interceptor"
)

// limitError is a request refused by one of the gateway's own limits;
// limit is the configuration key that decides it.
type limitError struct {
	code  codes.Code
	limit string
	msg   string
	field string // the request field, for InvalidArgument
}

func (e *limitError) Error() string { return e.msg }

// admission counts the RPCs and streams in flight against the limits.
type admission struct {
	limits         config.Limits
	calls, streams atomic.Int64
}

func isHealth(method string) bool { return strings.HasPrefix(method, "/grpc.health.v1.") }

// enter admits one RPC (a stream when stream is set), or says which limit
// refuses it; leave undoes a successful enter.
func (a *admission) enter(ctx context.Context, stream bool) (leave func(), err error) {
	if n := a.calls.Add(1); n > int64(a.limits.MaxConcurrentCalls) {
		a.calls.Add(-1)
		return nil, &limitError{code: codes.ResourceExhausted, limit: "limits.max_concurrent_calls",
			msg: fmt.Sprintf("the gateway has limits.max_concurrent_calls (%d) calls in flight; retry later", a.limits.MaxConcurrentCalls)}
	}
	if stream {
		if n := a.streams.Add(1); n > int64(a.limits.MaxConcurrentStreams) {
			a.streams.Add(-1)
			a.calls.Add(-1)
			return nil, &limitError{code: codes.ResourceExhausted, limit: "limits.max_concurrent_streams",
				msg: fmt.Sprintf("the gateway has limits.max_concurrent_streams (%d) streams open; retry later", a.limits.MaxConcurrentStreams)}
		}
	}
	c := auth.CallerFrom(ctx)
	if c != nil {
		if err := c.Enter(); err != nil {
			if stream {
				a.streams.Add(-1)
			}
			a.calls.Add(-1)
			return nil, err
		}
	}
	return func() {
		if c != nil {
			c.Leave()
		}
		if stream {
			a.streams.Add(-1)
		}
		a.calls.Add(-1)
	}, nil
}

// limitInterceptors admit RPCs (after auth, so that the caller's own limit
// applies) and bound what a response may weigh: over
// limits.max_send_message_bytes a response drops its raw capture, with a
// warning, and fails if it still does not fit.
func (s *Server) limitInterceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if isHealth(info.FullMethod) {
			return handler(ctx, req)
		}
		leave, err := s.admission.enter(ctx, false)
		if err != nil {
			return nil, s.limitStatus(ctx, err)
		}
		defer leave()
		ctx, cancel, slot := s.endable(ctx)
		defer release(cancel, slot)
		resp, err := handler(ctx, req)
		if err != nil {
			return resp, err
		}
		if m, ok := resp.(proto.Message); ok {
			if err := s.fitResponse(m); err != nil {
				return nil, s.limitStatus(ctx, err)
			}
		}
		return resp, nil
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if isHealth(info.FullMethod) {
			return handler(srv, ss)
		}
		leave, err := s.admission.enter(ss.Context(), true)
		if err != nil {
			return s.limitStatus(ss.Context(), err)
		}
		defer leave()
		ctx, cancel, slot := s.endable(ss.Context())
		defer release(cancel, slot)
		return handler(srv, &fittedStream{ServerStream: ss, s: s, ctx: ctx})
	}
	return unary, stream
}

func (s *Server) limitStatus(ctx context.Context, err error) error {
	return toStatus(ctx, err, nil, s.gateway.state.Load().redact, s.log)
}

// fittedStream applies fitResponse to every message sent, and carries the
// endable context.
type fittedStream struct {
	grpc.ServerStream
	s   *Server
	ctx context.Context
}

func (f *fittedStream) Context() context.Context { return f.ctx }

func (f *fittedStream) SendMsg(m any) error {
	if pm, ok := m.(proto.Message); ok {
		if err := f.s.fitResponse(pm); err != nil {
			le, _ := err.(*limitError)
			return &sendLimitError{st: f.s.limitStatus(f.Context(), err), limit: le}
		}
	}
	return f.ServerStream.SendMsg(m)
}

// sendLimitError is a message SendMsg refused for limits.max_send_message_bytes:
// its status for whoever returns it as is, and (Unwrap) the limit, so that
// a stream relay tells it from a client gone away: the client is still
// there and gets the call's status with the failed call's meta.
type sendLimitError struct {
	st    error
	limit *limitError
}

func (e *sendLimitError) Error() string              { return e.st.Error() }
func (e *sendLimitError) GRPCStatus() *status.Status { return status.Convert(e.st) }
func (e *sendLimitError) Unwrap() error {
	if e.limit == nil {
		return nil
	}
	return e.limit
}

// metaOf finds the meta of a response or of a stream's end event.
func metaOf(m proto.Message) *llmrelayv1.ResponseMeta {
	switch x := m.(type) {
	case interface {
		GetMeta() *llmrelayv1.ResponseMeta
	}:
		return x.GetMeta()
	case interface{ GetEnd() *llmrelayv1.StreamEnd }:
		return x.GetEnd().GetMeta()
	}
	return nil
}

// fitResponse makes m fit limits.max_send_message_bytes: the raw capture
// goes first (noted in meta.warnings); a response still too large is a
// ResourceExhausted naming the limit.
func (s *Server) fitResponse(m proto.Message) error {
	max := s.admission.limits.MaxSendMessageBytes
	size := sizeOf(m)
	if size <= max {
		return nil
	}
	if meta := metaOf(m); meta != nil && meta.Raw != nil {
		meta.Raw = nil
		meta.Warnings = append(meta.Warnings, fmt.Sprintf("raw capture dropped: the response (%d bytes) would exceed limits.max_send_message_bytes (%d)", size, max))
		if size = sizeOf(m); size <= max {
			s.log.Warn("raw capture dropped to fit limits.max_send_message_bytes", slog.String("request_id", meta.GetRequestId()), slog.Int("max", max))
			return nil
		}
	}
	return &limitError{code: codes.ResourceExhausted, limit: "limits.max_send_message_bytes",
		msg: fmt.Sprintf("the response (%d bytes) exceeds limits.max_send_message_bytes (%d)", size, max)}
}

// sizeOf is the encoded size of m: the generated vtprotobuf size (no
// reflection: it runs for every stream event) where there is one.
func sizeOf(m proto.Message) int {
	if v, ok := m.(interface{ SizeVT() int }); ok {
		return v.SizeVT()
	}
	return proto.Size(m)
}

// checkLabels bounds call.labels before they reach a log line.
func checkLabels(l config.Limits, labels map[string]string) error {
	if len(labels) > l.MaxLabels {
		return &limitError{code: codes.InvalidArgument, limit: "limits.max_labels", field: "call.labels",
			msg: fmt.Sprintf("call.labels: %d labels, more than limits.max_labels (%d)", len(labels), l.MaxLabels)}
	}
	for k, v := range labels {
		if len(k) > l.MaxLabelBytes || len(v) > l.MaxLabelBytes {
			return &limitError{code: codes.InvalidArgument, limit: "limits.max_label_bytes", field: "call.labels",
				msg: fmt.Sprintf("call.labels: a key or value is longer than limits.max_label_bytes (%d bytes)", l.MaxLabelBytes)}
		}
	}
	return nil
}

// recvLimitLog logs requests grpc refuses for their size before any
// interceptor runs (unary requests are decoded before the chain), so that
// the log says what the client was told.
type recvLimitLog struct {
	log *slog.Logger
	max int
}

type methodKey struct{}

func (h recvLimitLog) TagRPC(ctx context.Context, i *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, i.FullMethodName)
}

func (h recvLimitLog) HandleRPC(ctx context.Context, s stats.RPCStats) {
	end, ok := s.(*stats.End)
	if !ok || end.Error == nil {
		return
	}
	st := status.Convert(end.Error)
	if st.Code() != codes.ResourceExhausted || !strings.HasPrefix(st.Message(), "grpc: received message larger than max") {
		return
	}
	method, _ := ctx.Value(methodKey{}).(string)
	h.log.Warn("request over limits.max_recv_message_bytes", slog.String("method", method), slog.Int("max", h.max),
		slog.String("error", st.Message()))
}

func (recvLimitLog) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (recvLimitLog) HandleConn(context.Context, stats.ConnStats)                       {}

var _ stats.Handler = recvLimitLog{}

// labelsGate is the check of call.labels in the handlers, before the labels
// are recorded for the log line.
func (g *gateway) labelsGate(ctx context.Context, call *llmrelayv1.CallOptions) error {
	if err := checkLabels(g.limits, call.GetLabels()); err != nil {
		return err
	}
	interceptor.InfoFrom(ctx).SetLabels(call.GetLabels())
	return nil
}
