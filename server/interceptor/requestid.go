package interceptor

import (
	"context"
	"regexp"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// RequestIDHeader is the metadata key of the request id, read from the
// caller and echoed in the response headers.
const RequestIDHeader = "x-request-id"

// validID keeps log-safe ids only; anything else is replaced.
var validID = regexp.MustCompile(`^[A-Za-z0-9._:/+=-]{1,128}$`)

func requestID(ctx context.Context) context.Context {
	ctx, info := ensureInfo(ctx)
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(RequestIDHeader); len(v) > 0 && validID.MatchString(v[0]) {
			info.RequestID = v[0]
		}
	}
	if info.RequestID == "" {
		info.RequestID = uuid.NewString()
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
		_ = grpc.SetHeader(ctx, metadata.Pairs(RequestIDHeader, InfoFrom(ctx).RequestID))
		return handler(ctx, req)
	}
}

// RequestIDStream is RequestIDUnary for streams.
func RequestIDStream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := requestID(ss.Context())
		if err := ss.SetHeader(metadata.Pairs(RequestIDHeader, InfoFrom(ctx).RequestID)); err != nil {
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
