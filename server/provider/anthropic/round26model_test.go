package anthropic

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26ModelAccessRefused: Amazon Bedrock answers a Claude model
// whose access the account has not been granted (in that region) with a
// 403 AccessDeniedException, {"message":"You don't have access to the
// model with the specified model ID."}
// (testdata/bedrock26_error_403_model_access.http; the words as
// gaiin-platform/amplify-genai-backend#62 quotes them through Anthropic's
// Bedrock SDK), and Vertex AI a Claude model the project may not use with a
// 400 FAILED_PRECONDITION, "Project `…` is not allowed to use Publisher
// Model `…`" (TestRound26VertexErrorBodies). **Bug:** the second was an
// invalid request (InvalidArgument, never a fallback). Both are the
// model refused to this deployment (provider.ModelAccessRefused):
// PermissionDenied whatever the status, never retried, worth a fallback.
// The first was so by its 403 already; the words make it so in any
// envelope.
func TestRound26ModelAccessRefused(t *testing.T) {
	t.Parallel()
	_, err := newTestProvider(t, providertest.ReplayFile(t, "testdata/bedrock26_error_403_model_access.http").URL).Generate(context.Background(), plainRequest())
	var e *provider.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v, want a provider error", err)
	}
	if e.Kind != provider.KindPermissionDenied || e.HTTPStatus != 403 || e.Message != "You don't have access to the model with the specified model ID." {
		t.Errorf("kind %v status %d message %q", e.Kind, e.HTTPStatus, e.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
}

// TestRound26CopilotWebSearchRefused: GitHub Copilot's Messages endpoint
// refuses Anthropic's server-side web search with a 400 whose JSON comes
// as text/plain, {"error":{"message":"The use of the web search tool is
// not supported.","code":"unsupported_value"}}
// (testdata/copilot26_error_400_web_search_unsupported.http;
// caozhiyuan/copilot-api#185's body, #189's head). **Bug:** an invalid
// request (never a fallback), though Anthropic's own API runs the tool:
// the deployment lacks a capability the request needs, as round 25 reads
// "does not support thinking". Now KindCapability (FailedPrecondition
// CAPABILITY_NOT_SUPPORTED): never retried, a route falls back.
// OpenRouter's 404 "No endpoints found that support tool use. …" through
// its Messages endpoint was a model not found (MODEL_NOT_FOUND, though the
// model exists): a capability too.
func TestRound26CopilotWebSearchRefused(t *testing.T) {
	t.Parallel()
	_, err := newTestProvider(t, providertest.ReplayFile(t, "testdata/copilot26_error_400_web_search_unsupported.http").URL).Generate(context.Background(), plainRequest())
	var e *provider.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v, want a provider error", err)
	}
	if e.Kind != provider.KindCapability || e.HTTPStatus != 400 || e.Code != "unsupported_value" || e.Message != "The use of the web search tool is not supported." {
		t.Errorf("kind %v status %d code %q message %q", e.Kind, e.HTTPStatus, e.Code, e.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}

	for body, want := range map[string]provider.Kind{
		`{"error":{"message":"No endpoints found that support tool use. Try disabling \"question\". To learn more about provider routing, visit: https://openrouter.ai/docs/guides/routing/provider-selection","code":404}}`: provider.KindCapability,
		`{"error":{"message":"No allowed providers are available for the selected model.","code":404,"metadata":{"available_providers":["z-ai"],"requested_providers":["anthropic"]}}}`:                                      provider.KindNotFound,
		`{"error":{"message":"Sorry: No endpoints found that support tool use. Really.","code":404}}`:                                                                                                                        provider.KindNotFound,
	} {
		rec := providertest.Recording{Status: 404, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
		_, err := newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), plainRequest())
		if !errors.As(err, &e) || e.Kind != want {
			t.Errorf("%s: %v, want kind %v", body, err, want)
		}
	}
}
