package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound22EmbedOllamaNaN: Ollama's /v1/embeddings when the model computes
// a NaN for an input (ollama/ollama#14657: bge-m3 on some documents, a
// 500 "failed to encode response: json: unsupported value: NaN"). The
// fixture is hand-built: the message as the issue and hang-in/seCall#5
// quote it, in the /v1 error shape of real_elastic_embed_ollama_model_not_found
// (Ollama's OpenAI middleware writes every error as type api_error with
// null param and code). It was retried as any 500; the same input fails
// the same way every time with this model, so it is unavailable (a route
// falls back) but not retried, and the message says why and, for a batch,
// that one input fails them all.
func TestRound22EmbedOllamaNaN(t *testing.T) {
	t.Parallel()
	const recorded = "failed to encode response: json: unsupported value: NaN"
	for _, inputs := range [][]string{
		{"Bitcoin: A Peer-to-Peer Electronic Cash System."},
		{"This is a test sentence.", "Bitcoin: A Peer-to-Peer Electronic Cash System."},
	} {
		srv := providertest.ReplayFile(t, td("embed_error_ollama_500_nan.http"))
		_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "bge-m3", Inputs: inputs})
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v", err)
		}
		if pe.Kind != provider.KindUnavailable || pe.HTTPStatus != 500 || pe.ShouldRetry != provider.RetryDiscouraged || pe.Code != "api_error" {
			t.Errorf("%d inputs: error %+v, want unavailable, not retried", len(inputs), pe)
		}
		if !strings.HasPrefix(pe.Message, recorded+" (the model computed a NaN for this input") {
			t.Errorf("%d inputs: message %q", len(inputs), pe.Message)
		}
		if batch := strings.Contains(pe.Message, "one of the 2 inputs fails the whole batch"); batch != (len(inputs) == 2) {
			t.Errorf("%d inputs: message %q", len(inputs), pe.Message)
		}
		if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
			t.Errorf("%d inputs: retryable %v, fallback-worthy %v", len(inputs), pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
	}
	for msg, want := range map[string]bool{
		recorded: true, "json: unsupported value: -Inf": true,
		"llama runner process has terminated: exit status 2": false, "NaN": false,
	} {
		if ollamaNaN(msg) != want {
			t.Errorf("ollamaNaN(%q) = %v", msg, !want)
		}
	}
}

// TestRound22EmbedOllamaUnsupportedModel: Ollama 0.12.3's /v1/embeddings
// for a model that cannot embed, as chunkhound/chunkhound#41 quotes it
// (the OpenAI SDK's "Error code: 500 - {'error': {'message': 'this model
// does not support embeddings', 'type': 'api_error', 'param': None,
// 'code': None}}", written back as the JSON Ollama's middleware sends,
// with the line break real_elastic_embed_ollama_model_not_found ends in;
// headers written by hand). It was unavailable and retried; it is an
// operation the model does not have (round 25: KindUnsupported, as Azure's
// OperationNotSupported; it was an invalid request), not retried, a reason
// to fall back, the message and the type kept.
func TestRound22EmbedOllamaUnsupportedModel(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_error_ollama_500_unsupported.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "dengcao/Qwen3-Embedding-8B:Q5_K_M", Inputs: []string{"test connection"}})
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	if pe.Kind != provider.KindUnsupported || pe.HTTPStatus != 500 || pe.ShouldRetry != provider.RetryDiscouraged ||
		pe.Message != "this model does not support embeddings" || pe.Code != "api_error" {
		t.Errorf("error %+v, want an unsupported operation, not retried", pe)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback-worthy %v", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
}
