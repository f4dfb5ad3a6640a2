package interceptor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// headerStream records the headers a handler sets.
type headerStream struct{ md metadata.MD }

func (h *headerStream) Method() string                  { return info.FullMethod }
func (h *headerStream) SetHeader(md metadata.MD) error  { h.md = metadata.Join(h.md, md); return nil }
func (h *headerStream) SendHeader(md metadata.MD) error { return h.SetHeader(md) }
func (h *headerStream) SetTrailer(metadata.MD) error    { return nil }

type ctxKey struct{}

// TestUnaryChainAgrees: the fused Unary does what grpc's chain of
// TimingUnary, RequestIDUnary, LoggingUnary, RecoveryUnary and inner does:
// the same response, status, headers, request id, log lines, panics
// recovered and inner's context passed on.
func TestUnaryChainAgrees(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { return start }
	handlers := map[string]grpc.UnaryHandler{
		"ok": func(ctx context.Context, req any) (any, error) {
			InfoFrom(ctx).SetTarget("m", "p")
			return fmt.Sprint(req, ctx.Value(ctxKey{}), InfoFrom(ctx).RequestID, InfoFrom(ctx).Start), nil
		},
		"error": func(context.Context, any) (any, error) {
			return "partial", status.Error(codes.NotFound, "no such model")
		},
		"canceled": func(context.Context, any) (any, error) { return nil, status.Error(codes.Canceled, "gone") },
		"plain":    func(context.Context, any) (any, error) { return nil, errors.New("plain") },
		"panic":    func(context.Context, any) (any, error) { panic("boom") },
	}
	inners := map[string]grpc.UnaryServerInterceptor{
		"none": nil,
		"ctx": func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(context.WithValue(ctx, ctxKey{}, "inner"), req)
		},
		"refuse": func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
			return nil, status.Error(codes.Unauthenticated, "no token")
		},
		"panic": func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) { panic("inner boom") },
	}
	// Stack traces and durations differ between runs.
	clean := regexp.MustCompile(`(stack|duration)=("(\\.|[^"])*"|\S+)`)
	run := func(fused bool, level slog.Level, id string, h grpc.UnaryHandler, inner grpc.UnaryServerInterceptor) string {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		hs := &headerStream{}
		ctx := grpc.NewContextWithServerTransportStream(context.Background(), hs)
		if id != "" {
			ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(RequestIDHeader, id))
		}
		var resp any
		var err error
		if fused {
			resp, err = Unary(now, log, inner)(ctx, "req", info, h)
		} else {
			last := RecoveryUnary(log)
			if inner != nil {
				rec := last
				last = func(ctx context.Context, req any, i *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
					return rec(ctx, req, i, func(ctx context.Context, req any) (any, error) { return inner(ctx, req, i, h) })
				}
			}
			chain := []grpc.UnaryServerInterceptor{TimingUnary(now), RequestIDUnary(), LoggingUnary(log), last}
			var call func(int, context.Context, any) (any, error)
			call = func(k int, ctx context.Context, req any) (any, error) {
				if k == len(chain) {
					return h(ctx, req)
				}
				return chain[k](ctx, req, info, func(ctx context.Context, req any) (any, error) { return call(k+1, ctx, req) })
			}
			resp, err = call(0, ctx, "req")
		}
		st := status.Convert(err)
		return fmt.Sprintf("resp=%v err=%v code=%v msg=%q headers=%v\n%s", resp, err != nil, st.Code(), st.Message(), hs.md.Get(RequestIDHeader),
			clean.ReplaceAllString(logs.String(), "$1=X"))
	}
	for hname, h := range handlers {
		for iname, inner := range inners {
			for _, level := range []slog.Level{slog.LevelDebug, slog.LevelWarn} {
				for _, id := range []string{"req-fixed-1", ""} {
					a, b := run(false, level, id, h, inner), run(true, level, id, h, inner)
					if id == "" { // a fresh UUID each run
						uuidRE := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
						if !uuidRE.MatchString(b) {
							t.Errorf("%s/%s: no version 4 UUID in %s", hname, iname, b)
						}
						a, b = uuidRE.ReplaceAllString(a, "UUID"), uuidRE.ReplaceAllString(b, "UUID")
					}
					if a != b {
						t.Errorf("%s/%s/%v/%q:\nchain: %s\nfused: %s", hname, iname, level, id, a, b)
					}
				}
			}
		}
	}
}

func TestNewRequestID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id || !validID(id) {
			t.Fatalf("%q: %v %v %v", id, err, u.Version(), u.Variant())
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
}
