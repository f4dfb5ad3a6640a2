package interceptor

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// RequestIDHeader is the metadata key of the request id, read from the
// caller and echoed in the response headers.
const RequestIDHeader = "x-request-id"

// validID keeps log-safe ids only (1 to 128 of A-Z a-z 0-9 . _ : / + = -);
// anything else is replaced.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.' || c == '_' || c == ':' || c == '/' || c == '+' || c == '=' || c == '-':
		default:
			return false
		}
	}
	return true
}

func requestID(ctx context.Context) context.Context {
	ctx, info := ensureInfo(ctx)
	// ValueFromIncomingContext reads the one key without copying all the
	// metadata as FromIncomingContext does.
	if v := metadata.ValueFromIncomingContext(ctx, RequestIDHeader); len(v) > 0 && validID(v[0]) {
		info.RequestID = v[0]
	}
	if info.RequestID == "" {
		info.RequestID = newRequestID()
	}
	return ctx
}

// RequestIDUnary takes the request id from incoming x-request-id metadata
// (or makes a UUID) and sends it back as a response header.
func RequestIDUnary() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx = requestID(ctx)
		// SetHeader only fails after headers were sent, which cannot have
		// happened before the handler ran.
		_ = grpc.SetHeader(ctx, metadata.MD{RequestIDHeader: {InfoFrom(ctx).RequestID}})
		return handler(ctx, req)
	}
}

// RequestIDStream is RequestIDUnary for streams.
func RequestIDStream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := requestID(ss.Context())
		if err := ss.SetHeader(metadata.MD{RequestIDHeader: {InfoFrom(ctx).RequestID}}); err != nil {
			return err
		}
		return handler(srv, &wrappedStream{ServerStream: ss, ctx: ctx})
	}
}

// wrappedStream replaces a stream's context.
type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }
