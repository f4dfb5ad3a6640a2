package server

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/peer"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// decodeTarget is what a wrapped handler asks the codec to decode into: the
// request message, and the codec's decoding error, kept here instead of
// being returned. grpc-go turns any error of a codec's Unmarshal into
// Internal ("failed to unmarshal the received message"), but a request the
// server cannot decode (invalid UTF-8 in a string, garbage bytes, nesting
// beyond the decoder's limit) is the caller's mistake: InvalidArgument.
type decodeTarget struct {
	msg any
	err error
}

// Unmarshal decodes data for the server codec: into a decodeTarget's
// message, recording the error there, or into v itself.
func (c *codec) Unmarshal(data mem.BufferSlice, v any) error {
	if t, ok := v.(*decodeTarget); ok {
		t.err = c.std.Unmarshal(data, t.msg)
		return nil
	}
	return c.std.Unmarshal(data, v)
}

// undecodable is the request error of a message the codec rejected.
func undecodable(err error) error {
	return &requestError{code: codes.InvalidArgument, reason: llmrelayv1.ErrorReason_ERROR_REASON_INVALID_REQUEST,
		msg: "the request message could not be decoded: " + err.Error()}
}

// decodeErrors returns a copy of desc whose handlers decode requests
// through a decodeTarget and report what the codec rejects as
// InvalidArgument, with a log line (for unary calls the codec runs before
// the interceptors, so the logging interceptor never sees these calls).
func (s *Server) decodeErrors(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	out := *desc
	out.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		method, h := "/"+desc.ServiceName+"/"+m.MethodName, m.Handler
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, func(v any) error { return s.decode(ctx, method, dec, v) }, ic)
		}
		out.Methods[i] = m
	}
	out.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, sd := range desc.Streams {
		method, h := "/"+desc.ServiceName+"/"+sd.StreamName, sd.Handler
		sd.Handler = func(srv any, ss grpc.ServerStream) error {
			return h(srv, &decodingStream{ServerStream: ss, s: s, method: method})
		}
		out.Streams[i] = sd
	}
	return &out
}

// decode receives one request into v through recv.
func (s *Server) decode(ctx context.Context, method string, recv func(any) error, v any) error {
	t := decodeTarget{msg: v}
	if err := recv(&t); err != nil {
		return err
	}
	if t.err == nil {
		return nil
	}
	return s.rejectUndecodable(ctx, method, t.err)
}

// rejectUndecodable logs and reports a request the codec rejected. It is
// apart from decode, which keeps a small frame: the request is decoded
// below decode, nested messages recursing, at the bottom of the
// interceptors' frames (docs/decisions.md, "An open stream's goroutine
// stays within 8 KiB").
//
//go:noinline
func (s *Server) rejectUndecodable(ctx context.Context, method string, err error) error {
	attrs := []any{slog.String("method", method), slog.String("error", err.Error())}
	if id := requestIDOf(ctx); id != "" { // streams: the interceptors ran first
		attrs = append(attrs, slog.String("request_id", id))
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, slog.String("peer", p.Addr.String()))
	}
	s.log.WarnContext(ctx, "undecodable request", attrs...)
	return toStatus(ctx, undecodable(err), nil, s.gateway.state.Load().redact, s.log)
}

// decodingStream is a server stream whose RecvMsg reports undecodable
// messages as InvalidArgument. It is used by pointer: a value in the
// handler's interface would be reached through the compiler's pointer
// wrapper, one more frame under every request's decoding.
type decodingStream struct {
	grpc.ServerStream
	s      *Server
	method string
}

func (d *decodingStream) RecvMsg(m any) error {
	return d.s.decode(d.ServerStream.Context(), d.method, d.ServerStream.RecvMsg, m)
}
