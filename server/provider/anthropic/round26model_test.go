package anthropic

import (
	"context"
	"errors"
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
// Model `…`" (TestRound26VertexErrorBodies). **Bug:** the first was a
// permission (PermissionDenied, the key's refusal), the second an invalid
// request (InvalidArgument, never a fallback), where Anthropic's own 404
// not_found_error and OpenAI's "does not exist or you do not have access
// to it" are not found. Both are now the model's absence from this
// deployment: KindNotFound, never retried, worth a fallback.
func TestRound26ModelAccessRefused(t *testing.T) {
	t.Parallel()
	_, err := newTestProvider(t, providertest.ReplayFile(t, "testdata/bedrock26_error_403_model_access.http").URL).Generate(context.Background(), plainRequest())
	var e *provider.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v, want a provider error", err)
	}
	if e.Kind != provider.KindNotFound || e.HTTPStatus != 403 || e.Message != "You don't have access to the model with the specified model ID." {
		t.Errorf("kind %v status %d message %q", e.Kind, e.HTTPStatus, e.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
}
