package ollama

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound22EmbedNaN: Ollama's 500 when the embedding model computes a NaN
// for an input (testdata/error_500_embed_nan.http: the body as
// hang-in/seCall#5 quotes it for bge-m3, "failed to encode response: json:
// unsupported value: NaN"; ollama/ollama#9639 and #14657 show the same
// input failing every time). It was retried as any 500; it stays
// unavailable (the route may fall back to another model) but is not
// retried on the same server, and the message says why; a batch's says
// that one input fails the whole batch.
func TestRound22EmbedNaN(t *testing.T) {
	t.Parallel()
	const recorded = "failed to encode response: json: unsupported value: NaN"
	for _, inputs := range [][]string{
		{"Let me read the InputArea file in sections and look for more bang command information:"},
		{"Why is the sky blue?", "Let me read the InputArea file in sections and look for more bang command information:", "why is the grass green"},
	} {
		srv := providertest.ReplayFile(t, td("error_500_embed_nan.http"))
		_, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "bge-m3", Inputs: inputs})
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v", err)
		}
		if pe.Kind != provider.KindUnavailable || pe.HTTPStatus != 500 || pe.ShouldRetry != provider.RetryDiscouraged {
			t.Errorf("%d inputs: error %+v, want unavailable, not retried", len(inputs), pe)
		}
		if !strings.HasPrefix(pe.Message, recorded+" (the model computed a NaN for this input") {
			t.Errorf("%d inputs: message %q", len(inputs), pe.Message)
		}
		if batch := strings.Contains(pe.Message, "one of the 3 inputs fails the whole batch"); batch != (len(inputs) == 3) {
			t.Errorf("%d inputs: message %q", len(inputs), pe.Message)
		}
		// What the gateway does with it: no retry, a fallback.
		if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
			t.Errorf("%d inputs: retryable %v, fallback-worthy %v", len(inputs), pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
	}
	// What the matcher takes: the NaN or infinity refusal, not other 500s.
	for _, tc := range []struct {
		msg    string
		advice provider.RetryAdvice
	}{
		{recorded, provider.RetryDiscouraged},
		{"failed to encode response: json: unsupported value: +Inf", provider.RetryDiscouraged},
		{"llama runner process has terminated: exit status 2", provider.RetryUnsaid},
		{"NaN", provider.RetryUnsaid},
	} {
		if got := modelNaN(tc.msg); got != (tc.advice == provider.RetryDiscouraged) {
			t.Errorf("modelNaN(%q) = %v", tc.msg, got)
		}
	}
}

// TestRound22EmbedUnsupportedModel: Ollama's 500 when the model cannot
// embed (a chat model on Ollama's own engine; the runner's words since
// ollama/ollama#9742, "this model does not support embeddings").
// chunkhound/chunkhound#41 quotes the answer of Ollama 0.12.3's
// /v1/embeddings, {'error': {'message': 'this model does not support
// embeddings', 'type': 'api_error', ...}}, which its OpenAI middleware
// wraps around /api/embed's message; /api/embed's own body is quoted whole
// in ollama/ollama#9739 (May 2025, gemma3:latest): {"error":"this model
// does not support embeddings"}. error_500_embed_unsupported.http is that
// body with the 500 of the /v1 answer (headers written by hand).
// It was retried as a server fault; it is an operation the model does not
// have (round 25: KindUnsupported, as Azure's OperationNotSupported; it was
// an invalid request), not retried, and a route falls back to another
// deployment's model.
func TestRound22EmbedUnsupportedModel(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("error_500_embed_unsupported.http"))
	_, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "gemma3:4b", Inputs: []string{"hello"}})
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	if pe.Kind != provider.KindUnsupported || pe.HTTPStatus != 500 || pe.ShouldRetry != provider.RetryDiscouraged ||
		pe.Message != "this model does not support embeddings" {
		t.Errorf("error %+v, want an unsupported operation, not retried", pe)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback-worthy %v", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
}

// TestRound22EmbedNullVector: Ollama 0.6.0's /api/embed for gemma3:1b,
// which its own engine could not embed with, as ollama/ollama#9739 quotes
// the curl output whole (testdata/embed_null_gemma3.http; headers written
// by hand, the log's 13:49:34 as the Date): a 200 with "embeddings":
// [null] and the counters. It is a bad response that says the model gave
// no vector, not an empty vector passed on; not retried (the same model
// answers the same way).
func TestRound22EmbedNullVector(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_null_gemma3.http"))
	res, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "gemma3:1b", Inputs: []string{"Llamas are members of the camelid family"}})
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("result %v, error %v", res, err)
	}
	if pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "embedding 0 is empty (null or []): the model gave no vector") {
		t.Errorf("error %+v", pe)
	}
	if pipeline.Retryable(err) {
		t.Error("retried")
	}
}
