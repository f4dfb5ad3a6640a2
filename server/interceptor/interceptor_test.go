package interceptor

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

var info = &grpc.UnaryServerInfo{FullMethod: "/llmrelay.v1.GatewayService/Chat"}

func TestRequestID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		keep bool
	}{
		{"req-abc_123", true},
		{"", false},
		{"has space", false},
		{strings.Repeat("x", 200), false},
		{"line\nbreak", false},
		{"A.b_c:d/e+f=g-0", true},
		{strings.Repeat("x", 128), true},
		{strings.Repeat("x", 129), false},
		{"é", false},
		{"a;b", false},
	}
	for _, tc := range cases {
		ctx := context.Background()
		if tc.in != "" {
			ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(RequestIDHeader, tc.in))
		}
		var got string
		_, err := RequestIDUnary()(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
			got = InfoFrom(ctx).RequestID
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if tc.keep && got != tc.in {
			t.Errorf("%q: got %q", tc.in, got)
		}
		if !tc.keep && (got == tc.in || len(got) != 36) {
			t.Errorf("%q: want a fresh UUID, got %q", tc.in, got)
		}
	}
}

func TestRecoveryMasksPanics(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := WithInfo(context.Background(), &Info{RequestID: "r-1"})
	_, err := RecoveryUnary(log)(ctx, nil, info, func(context.Context, any) (any, error) {
		panic("secret internal detail")
	})
	st := status.Convert(err)
	if st.Code() != codes.Internal || strings.Contains(st.Message(), "secret") || !strings.Contains(st.Message(), "r-1") {
		t.Errorf("status = %v", st)
	}
	if len(st.Details()) != 1 || st.Details()[0].(*errdetails.ErrorInfo).GetReason() != "INTERNAL" {
		t.Errorf("details = %v", st.Details())
	}
	if !strings.Contains(logs.String(), "secret internal detail") {
		t.Error("the panic must be logged")
	}
}

func TestLoggingOneLinePerRPC(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := WithInfo(context.Background(), &Info{RequestID: "r-2", Start: time.Now()})
	_, err := LoggingUnary(log)(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
		InfoFrom(ctx).SetTarget("gpt-4o", "openai")
		InfoFrom(ctx).SetLabels(map[string]string{"team": "search"})
		InfoFrom(ctx).SetCaller("search-svc")
		return nil, status.Error(codes.NotFound, "model \"x\" is not configured")
	})
	if status.Code(err) != codes.NotFound {
		t.Fatal(err)
	}
	line := logs.String()
	for _, want := range []string{"level=WARN", "method=/llmrelay.v1.GatewayService/Chat", "code=NotFound", "request_id=r-2", "model=gpt-4o", "provider=openai", "duration=", "labels=map[team:search]", "caller=search-svc"} {
		if !strings.Contains(line, want) {
			t.Errorf("missing %q in %q", want, line)
		}
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("want one line, got %q", line)
	}
}

// TestLoggingLevel: at level warn, successful and cancelled calls write
// nothing and failures still do.
func TestLoggingLevel(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx := WithInfo(context.Background(), &Info{RequestID: "r-3", Start: time.Now()})
	for _, err := range []error{nil, status.Error(codes.Canceled, "gone"), status.Error(codes.Unavailable, "down")} {
		_, _ = LoggingUnary(log)(ctx, nil, info, func(context.Context, any) (any, error) { return nil, err })
	}
	if got := logs.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "code=Unavailable") {
		t.Errorf("logs %q", got)
	}
}
