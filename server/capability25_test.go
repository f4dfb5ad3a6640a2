package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound25ProviderCapabilityRefusal: a provider's refusal of a
// capability its model lacks (KindCapability: Ollama's "registry.ollama.ai/
// library/gemma3:1b does not support tools", the ollama package's
// real_lcg_tool_call_unsupported) reaches the client as the gateway's own
// capability check answers: FailedPrecondition CAPABILITY_NOT_SUPPORTED,
// with the provider's words and status. It was InvalidArgument
// INVALID_REQUEST, which said the request was malformed.
func TestRound25ProviderCapabilityRefusal(t *testing.T) {
	t.Parallel()
	const msg = "registry.ollama.ai/library/gemma3:1b does not support tools"
	pe := &provider.Error{Provider: "ollama", Kind: provider.KindCapability, HTTPStatus: 400, Message: msg}
	st := status.Convert(toStatus(context.Background(), pe, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
	if st.Code() != codes.FailedPrecondition {
		t.Fatalf("code %v, message %q", st.Code(), st.Message())
	}
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if d, ok := d.(*errdetails.ErrorInfo); ok {
			info = d
		}
	}
	if info == nil || info.GetReason() != "CAPABILITY_NOT_SUPPORTED" {
		t.Fatalf("error info %v", info)
	}
	if !strings.Contains(st.Message(), msg) {
		t.Errorf("message %q", st.Message())
	}
}
