package interceptor

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

// TimingUnary marks the start of the call, so that total_duration covers
// the gateway's whole handling. Place it first in the chain.
func TimingUnary(now func() time.Time) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, info := ensureInfo(ctx)
		info.Start = now()
		return handler(ctx, req)
	}
}

// TimingStream is TimingUnary for streams.
func TimingStream(now func() time.Time) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, info := ensureInfo(ss.Context())
		info.Start = now()
		return handler(srv, &wrappedStream{ServerStream: ss, ctx: ctx})
	}
}
