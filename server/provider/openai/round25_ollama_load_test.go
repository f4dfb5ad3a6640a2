package openai

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25OllamaModelLoadFailed: Ollama's /v1/chat/completions when its
// runner fails to load the model: the native route's 500 (the ollama
// package's error_500_load_* fixtures, the messages users quote in
// ollama/ollama#11359 and meta-llama/llama-models#496) in the shape
// Ollama's OpenAI middleware writes every error (type api_error, null
// param and code: embed_error_ollama_500_nan). It was retried as any 500,
// each attempt loading the model again; it stays unavailable (a route falls
// back) but is not retried, and an unknown architecture says a newer Ollama
// may run the model. A runner's exit without a loader error is still
// retried.
func TestRound25OllamaModelLoadFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg, suffix string
		retried     bool
	}{
		{msg: "llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer"},
		{msg: "llama-server process has terminated: exit status 1: error loading model: unknown model architecture: 'mllama'",
			suffix: " (this Ollama's runner does not know the model's architecture: a newer Ollama may run it; loading it again here fails the same way)"},
		{msg: "llama runner process has terminated: exit status 2", retried: true},
	} {
		body := providertest.MustJSON(map[string]any{"error": map[string]any{"message": tc.msg, "type": "api_error", "param": nil, "code": nil}}) + "\n"
		srv := providertest.Replay(t, providertest.Recording{Status: 500, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("llama3.2-vision"))
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%q: error %v", tc.msg, err)
		}
		if pe.Kind != provider.KindUnavailable || pe.HTTPStatus != 500 || pe.Message != tc.msg+tc.suffix || pe.Code != "api_error" {
			t.Errorf("%q: error %+v", tc.msg, pe)
		}
		if pipeline.Retryable(err) != tc.retried || !pipeline.FallbackWorthy(err) {
			t.Errorf("%q: retryable %v, fallback-worthy %v", tc.msg, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
	}
}

// TestRound25OllamaCapabilityRefused: Ollama's /v1/chat/completions refusing
// tools for a model without them, the native route's 400 (the ollama
// package's real_lcg_tool_call_unsupported: "registry.ollama.ai/library/
// gemma3:1b does not support tools") in the shape Ollama's OpenAI middleware
// writes a 400 (type invalid_request_error, null param and code). It was an
// invalid request, which never falls back; it is the deployment's model, a
// capability it lacks (KindCapability, the gateway's FailedPrecondition
// CAPABILITY_NOT_SUPPORTED): not retried, a reason to fall back. Another
// server's 400 with other words stays an invalid request.
func TestRound25OllamaCapabilityRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg  string
		kind provider.Kind
	}{
		{"registry.ollama.ai/library/gemma3:1b does not support tools", provider.KindCapability},
		{`"gemma3:1b" does not support thinking`, provider.KindCapability},
		{"tools is not supported with this model's parser", provider.KindInvalidRequest},
	} {
		body := providertest.MustJSON(map[string]any{"error": map[string]any{"message": tc.msg, "type": "invalid_request_error", "param": nil, "code": nil}}) + "\n"
		srv := providertest.Replay(t, providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("gemma3:1b"))
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%q: error %v", tc.msg, err)
		}
		if pe.Kind != tc.kind || pe.HTTPStatus != 400 || pe.Message != tc.msg {
			t.Errorf("%q: error %+v", tc.msg, pe)
		}
		if pipeline.Retryable(err) || pipeline.FallbackWorthy(err) != (tc.kind != provider.KindInvalidRequest) {
			t.Errorf("%q: retryable %v, fallback-worthy %v", tc.msg, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
	}
}
