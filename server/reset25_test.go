package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound25BrokeMidAnswerCancelled: a body read that broke while the
// caller's context had ended (the cancellation closing the connection
// under the read) is the caller's cancellation, as a connection error is
// (the body read's failure was one before it became an answer cut in the
// middle); with the context live, it is the provider's: Unavailable.
func TestRound25BrokeMidAnswerCancelled(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	broke := func() error {
		return provider.BodyReadError("openai", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	}
	if st := status.Convert(toStatus(context.Background(), broke(), nil, nil, log)); st.Code() != codes.Unavailable {
		t.Errorf("live context: %v %q", st.Code(), st.Message())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if st := status.Convert(toStatus(ctx, broke(), nil, nil, log)); st.Code() != codes.Canceled {
		t.Errorf("cancelled context: %v %q", st.Code(), st.Message())
	}
}
