package interceptor

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recoveryHandler turns a panic into Internal with the details masked; the
// panic and its stack go to the log only.
func recoveryHandler(log *slog.Logger) recovery.RecoveryHandlerFuncContext {
	return func(ctx context.Context, p any) error {
		id := ""
		if info := InfoFrom(ctx); info != nil {
			id = info.RequestID
		}
		log.ErrorContext(ctx, "panic in handler", slog.String("request_id", id), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
		st := status.New(codes.Internal, "internal error (request id "+id+")")
		if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: "INTERNAL", Domain: "llmrelay.dev"}); err == nil {
			return d.Err()
		}
		return st.Err()
	}
}

// RecoveryUnary recovers panics in unary handlers.
func RecoveryUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(recoveryHandler(log)))
}

// RecoveryStream recovers panics in stream handlers.
func RecoveryStream(log *slog.Logger) grpc.StreamServerInterceptor {
	return recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(recoveryHandler(log)))
}
