package openai

import (
	"context"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26VertexCompatPublisherModel: Vertex AI's OpenAI-compatible
// endpoint refuses a model the project may not use with Google's array of
// one google.rpc.Status, 400 FAILED_PRECONDITION "Project `…` is not
// allowed to use Publisher Model `…`"
// (testdata/vertex26_compat_err_400_publisher_model.http). **Bug:** an
// invalid request, never a fallback, where the gemini and anthropic
// adapters read the same words (provider.ModelAccessRefused) and
// OpenAI's own "does not exist or you do not have access to it" are not
// found. Now not found, never retried, worth a fallback; Bedrock's words
// relayed in an OpenAI-shaped error too. Other FAILED_PRECONDITIONs and
// a proxy's sentence around the words keep their kinds.
func TestRound26VertexCompatPublisherModel(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("vertex26_compat_err_400_publisher_model.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("google/gemini-1.5-pro-002"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindNotFound || pe.HTTPStatus != 400 || pe.Code != "FAILED_PRECONDITION" ||
		pe.Message != "Project `*********` is not allowed to use Publisher Model `projects/*****-*****-********-m8/locations/asia-southeast1/publishers/google/models/gemini-1.5-pro-002`" {
		t.Errorf("kind %v status %d code %q message %q", pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
	for _, tc := range []struct {
		status int
		body   string
		want   provider.Kind
	}{
		{400, `{"error":{"message":"You don't have access to the model with the specified model ID.","type":"invalid_request_error"}}`, provider.KindNotFound},
		{400, `[{"error":{"code":400,"message":"Precondition check failed.","status":"FAILED_PRECONDITION"}}]`, provider.KindInvalidRequest},
		{400, `{"error":{"message":"upstream said: You don't have access to the model with the specified model ID. Try again","type":"invalid_request_error"}}`, provider.KindInvalidRequest},
	} {
		srv := providertest.Replay(t, providertest.Recording{Status: tc.status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tc.body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("m"))
		if pe := providerError(t, err); pe.Kind != tc.want {
			t.Errorf("%s: kind %v, want %v", tc.body, pe.Kind, tc.want)
		}
	}
}
