package interceptor

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Unary is TimingUnary, RequestIDUnary, LoggingUnary and RecoveryUnary,
// in this order, then inner (when not nil), as one interceptor: grpc's
// chain allocates a closure per interceptor and call, and every unary
// call passes here. Each step is the one of the separate interceptor
// (TestUnaryChainAgrees runs both on the same calls).
func Unary(now func() time.Time, log *slog.Logger, inner grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	recovered := recoveryHandler(log)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, ci := ensureInfo(ctx)
		ci.Start = now()
		ctx = requestID(ctx)
		_ = grpc.SetHeader(ctx, metadata.MD{RequestIDHeader: {ci.RequestID}})
		resp, err := recoverUnary(ctx, req, info, handler, inner, recovered)
		logCall(ctx, log, info.FullMethod, err)
		return resp, err
	}
}

// recoverUnary is RecoveryUnary's body around inner and handler.
func recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler,
	inner grpc.UnaryServerInterceptor, recovered func(context.Context, any) error) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, recovered(ctx, r)
		}
	}()
	if inner != nil {
		return inner(ctx, req, info, handler)
	}
	return handler(ctx, req)
}

// newRequestID is a random (version 4) UUID, as uuid.NewString makes, from
// the runtime's ChaCha8 generator instead of a getrandom call per RPC: a
// request id must be unique, not secret (it is sent back and logged).
func newRequestID() string {
	var u uuid.UUID
	hi, lo := rand.Uint64(), rand.Uint64()
	for i := range 8 {
		u[i], u[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant RFC 4122
	return u.String()
}
