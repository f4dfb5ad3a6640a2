package interceptor

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// quiet methods are logged at debug level only (health probes).
func quiet(method string) bool { return strings.HasPrefix(method, "/grpc.health.v1.") }

func logCall(ctx context.Context, log *slog.Logger, method string, err error) {
	info := InfoFrom(ctx)
	level := slog.LevelInfo
	if quiet(method) {
		level = slog.LevelDebug
	}
	code := status.Code(err)
	if err != nil && level < slog.LevelWarn && code != 1 /* Canceled */ {
		level = slog.LevelWarn
	}
	if !log.Enabled(ctx, level) {
		return // nothing built for a line nobody reads
	}
	attrs := []slog.Attr{slog.String("method", method), slog.String("code", code.String())}
	if info != nil {
		model, prov := info.Target()
		attrs = append(attrs, slog.String("request_id", info.RequestID))
		if c := info.Caller(); c != "" {
			attrs = append(attrs, slog.String("caller", c))
		}
		if model != "" {
			attrs = append(attrs, slog.String("model", model), slog.String("provider", prov))
		}
		if labels := info.Labels(); len(labels) > 0 {
			attrs = append(attrs, slog.Any("labels", labels))
		}
		if !info.Start.IsZero() {
			attrs = append(attrs, slog.Duration("duration", time.Since(info.Start)))
		}
	}
	if err != nil {
		// The status message is already what the client sees: masked for
		// internal errors and redacted of secrets.
		attrs = append(attrs, slog.String("error", status.Convert(err).Message()))
	}
	log.LogAttrs(ctx, level, "rpc", attrs...)
}

// LoggingUnary writes one line per RPC: request id, method, model,
// provider, code, duration.
func LoggingUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, i *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		logCall(ctx, log, i.FullMethod, err)
		return resp, err
	}
}

// LoggingStream is LoggingUnary for streams.
func LoggingStream(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, i *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		err := handler(srv, ss)
		logCall(ss.Context(), log, i.FullMethod, err)
		return err
	}
}
