package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
)

func withLimits(limits string) string {
	return string(config.DefaultYAML()) + "limits:\n" + limits
}

// limitOf checks err is code with ErrorInfo.metadata.limit = limit.
func limitOf(t *testing.T, err error, code codes.Code, limit string) {
	t.Helper()
	st, info, _ := statusDetails(t, err)
	if st.Code() != code || info.GetMetadata()["limit"] != limit || !strings.Contains(st.Message(), limit) {
		t.Errorf("want %v naming %s, got %v %v", code, limit, st, info)
	}
}

func TestLabelsBounded(t *testing.T) {
	t.Parallel()
	c, logs := startWith(t, withLimits("  max_labels: 3\n  max_label_bytes: 8\n"), "")
	many := map[string]string{}
	for i := range 10000 {
		many[fmt.Sprintf("k%d", i)] = strings.Repeat("v", 50)
	}
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")},
		Call: &llmrelayv1.CallOptions{Labels: many}})
	limitOf(t, err, codes.InvalidArgument, "limits.max_labels")
	_, _, br := statusDetails(t, err)
	if br.GetFieldViolations()[0].GetField() != "call.labels" {
		t.Errorf("BadRequest %v", br)
	}
	_, err = c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"x"},
		Call: &llmrelayv1.CallOptions{Labels: map[string]string{"team": "a-very-long-value"}}})
	limitOf(t, err, codes.InvalidArgument, "limits.max_label_bytes")
	if _, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")},
		Call: &llmrelayv1.CallOptions{Labels: map[string]string{"team": "search"}}}); err != nil {
		t.Fatal(err)
	}
	// The refused labels never reached the log; the accepted ones did.
	if l := logs.String(); len(l) > 4096 || !strings.Contains(l, "team:search") || !strings.Contains(l, "limits.max_labels") {
		t.Errorf("log (%d bytes): %.2000s", len(l), l)
	}
}

func TestMessageSizes(t *testing.T) {
	t.Parallel()
	c, logs := startWith(t, withLimits("  max_recv_message_bytes: 4096\n  max_send_message_bytes: 3000\n"), "")
	ctx := context.Background()
	_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user(strings.Repeat("a ", 3000))}})
	// grpc refuses it before any interceptor runs: its own status, which
	// names the sizes, and our stats handler's log line.
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "larger than max") {
		t.Errorf("request over the receive limit: %v", err)
	}
	waitFor(t, func() bool { return strings.Contains(logs.String(), "request over limits.max_recv_message_bytes") }, "the log line of the refused request")

	// Raw capture makes the answer too large: dropped, with a warning.
	raw := &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(true)}
	resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user(strings.Repeat("b ", 500))}, Call: raw})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetMeta().GetRaw() != nil || len(resp.GetMeta().GetWarnings()) == 0 || !strings.Contains(resp.GetMeta().GetWarnings()[0], "limits.max_send_message_bytes") {
		t.Errorf("meta %v", resp.GetMeta())
	}
	// An answer too large by itself fails naming the limit.
	_, err = c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user(strings.Repeat("c ", 1800))}})
	limitOf(t, err, codes.ResourceExhausted, "limits.max_send_message_bytes")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRawCaptureOnRequest: off by default; on for a model that asks for
// it; a call's preserve_raw wins over both.
func TestRawCaptureOnRequest(t *testing.T) {
	t.Parallel()
	y := strings.Replace(string(config.DefaultYAML()), "    upstream_model: echo\n", "    upstream_model: echo\n    preserve_raw_data: true\n", 1)
	c, _ := startWith(t, y, "")
	ctx := context.Background()
	chat := func(call *llmrelayv1.CallOptions) *llmrelayv1.ResponseMeta {
		resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("x")}, Call: call})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetMeta()
	}
	if chat(nil).GetRaw() == nil {
		t.Error("the model's preserve_raw_data: true gave no raw capture")
	}
	if chat(&llmrelayv1.CallOptions{PreserveRaw: proto.Bool(false)}).GetRaw() != nil {
		t.Error("call.preserve_raw false did not win over the model")
	}
	emb, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "builtin/embed", Inputs: []string{"x"}})
	if err != nil || emb.GetMeta().GetRaw() != nil {
		t.Errorf("another model captured raw data by default: %v %v", emb.GetMeta().GetRaw(), err)
	}
}
