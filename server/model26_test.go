package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/anthropic"
	"github.com/llmrelay/llmrelay/server/provider/gemini"
	"github.com/llmrelay/llmrelay/server/provider/openai"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26ModelUnavailableAcrossAdapters: a model this deployment may
// not use, a model the provider does not have, and a capability none of
// the deployment's endpoints has, answered by each provider in its own
// shape and status, reach the client alike: PermissionDenied
// UPSTREAM_PERMISSION_DENIED, NotFound MODEL_NOT_FOUND with the
// ResourceInfo of the upstream model, FailedPrecondition
// CAPABILITY_NOT_SUPPORTED; never retried on the same deployment, and
// worth a fallback (another key, project, region or provider may have the
// model). Vertex AI's 400 FAILED_PRECONDITION "is not allowed to use
// Publisher Model" was InvalidArgument INVALID_REQUEST (no fallback) in the
// gemini, anthropic and openai adapters alike, OpenRouter's 404 "No
// endpoints found that support tool use" a model not found, Copilot's 400
// web-search refusal an invalid request, DeepSeek's "Model Not Exist" an
// invalid request. The fixtures are the adapters' (their testdata READMEs cite
// them).
func TestRound26ModelUnavailableAcrossAdapters(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "m", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}}}
	type gen func(t *testing.T, url string) provider.Provider
	gem := func(t *testing.T, url string) provider.Provider {
		p, err := gemini.New("test-key", gemini.WithBaseURL(url+"/v1beta"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	anth := func(t *testing.T, url string) provider.Provider {
		p, err := anthropic.New("test-key", anthropic.WithBaseURL(url))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	oai := func(t *testing.T, url string) provider.Provider {
		p, err := openai.New("test-key", openai.WithBaseURL(url+"/v1"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file string
		new        gen
		code       codes.Code
		reason     string
	}{
		{"gemini vertex", "provider/gemini/testdata/vertex26_error_publisher_model_not_allowed.http", gem, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED"},
		{"gemini 404", "provider/gemini/testdata/error_404.http", gem, codes.NotFound, "MODEL_NOT_FOUND"},
		{"openai vertex compat", "provider/openai/testdata/vertex26_compat_err_400_publisher_model.http", oai, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED"},
		{"anthropic bedrock", "provider/anthropic/testdata/bedrock26_error_403_model_access.http", anth, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED"},
		{"deepseek", "provider/openai/testdata/dialect_deepseek_err_400_model_not_exist.http", oai, codes.NotFound, "MODEL_NOT_FOUND"},
		{"openrouter tools", "provider/openai/testdata/dialect_openrouter_err_404_no_tool_endpoints.http", oai, codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED"},
		{"copilot web search", "provider/anthropic/testdata/copilot26_error_400_web_search_unsupported.http", anth, codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED"},
	} {
		srv := providertest.ReplayFile(t, tc.file)
		_, err := tc.new(t, srv.URL).Generate(context.Background(), req)
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
			t.Errorf("%s: retryable %v, fallback %v; want false, true", tc.name, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
		meta := &llmrelayv1.ResponseMeta{RequestedModel: "m"}
		st := status.Convert(toStatus(context.Background(), err, meta, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
		var info *errdetails.ErrorInfo
		var res *errdetails.ResourceInfo
		for _, d := range st.Details() {
			switch d := d.(type) {
			case *errdetails.ErrorInfo:
				info = d
			case *errdetails.ResourceInfo:
				res = d
			}
		}
		if st.Code() != tc.code || info.GetReason() != tc.reason {
			t.Errorf("%s: %v %s, want %v %s (%s)", tc.name, st.Code(), info.GetReason(), tc.code, tc.reason, st.Message())
		}
		if (tc.code == codes.NotFound) != (res != nil) || (res != nil && (res.GetResourceName() != "m" || res.GetResourceType() != "model")) {
			t.Errorf("%s: resource info %v", tc.name, res)
		}
	}
}
