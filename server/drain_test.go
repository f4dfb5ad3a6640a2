package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// TestGraceOverEndsStreamsCleanly: a stream still open when the grace
// period ends gets Unavailable / SHUTTING_DOWN with its meta, not a
// transport EOF, and the log line says the same.
func TestGraceOverEndsStreamsCleanly(t *testing.T) {
	t.Parallel()
	up, release := heldStream(t)
	defer release()
	cfg, err := config.Parse([]byte(strings.ReplaceAll(geminiYAML, "{{URL}}", up.URL)+"server:\n  listen: 127.0.0.1:0\n  shutdown_grace: 300ms\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := srv.Listeners()
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	conn, err := grpc.NewClient(lis[0].Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := llmrelayv1.NewGatewayServiceClient(conn).StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("story")}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetTextDelta() != nil {
			break
		}
	}
	stop() // SIGTERM; the upstream holds the stream past the grace period
	_, err = s.Recv()
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.Unavailable || info.GetReason() != "SHUTTING_DOWN" || !strings.Contains(st.Message(), "shutting down") {
		t.Fatalf("stream end: %v %v", st, info)
	}
	var meta *llmrelayv1.ResponseMeta
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			meta = f.GetMeta()
		}
	}
	if meta.GetProvider() != "google" || meta.GetTimeToFirstToken() == nil {
		t.Errorf("failed call meta: %v", meta)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	if l := logs.String(); !strings.Contains(l, "code=Unavailable") || !strings.Contains(l, "shutting down") || strings.Contains(l, "closing the connections") {
		t.Errorf("log: %s", l)
	}
}
