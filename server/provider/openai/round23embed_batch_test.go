package openai

import (
	"context"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23EmbedBatchTooLarge: an embeddings refusal of a request's
// inputs together is marked BatchTooLarge (the gateway then sends them in
// halves, server/embed.go): OpenAI's max_tokens_per_request (the body
// OpenDataBox/CrackSQL#27 quotes), Mistral's "Too many tokens in batch"
// (aurelio-labs/semantic-router#297), each of a request of two inputs or
// more; not the same words for a single input (nothing to split), nor
// OpenAI's refusal of one input over the model's context. The bodies are
// the issues' quotes; the status and headers are ours.
func TestRound23EmbedBatchTooLarge(t *testing.T) {
	t.Parallel()
	const (
		openaiBody  = `{"error":{"message":"Requested 453357 tokens, max 300000 tokens per request","type":"max_tokens_per_request","param":null,"code":"max_tokens_per_request"}}`
		mistralBody = `{"object":"error","message":"Too many tokens in batch. Max is 16384 got 17555","type":"invalid_request_error","param":null,"code":null}`
		inputBody   = `{"error":{"message":"Invalid 'input[0]': maximum input length is 8192 tokens.","type":"invalid_request_error","param":null,"code":null}}`
	)
	cases := []struct {
		body   string
		inputs int
		want   bool
		kind   provider.Kind
	}{
		{openaiBody, 2, true, provider.KindInvalidRequest},
		{openaiBody, 1, false, provider.KindInvalidRequest},
		{mistralBody, 3, true, provider.KindContextLength},
		{mistralBody, 1, false, provider.KindContextLength},
		{inputBody, 2, false, provider.KindContextLength},
	}
	for _, tc := range cases {
		srv := providertest.Replay(t, providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tc.body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: make([]string, tc.inputs)})
		pe := providerError(t, err)
		if pe.BatchTooLarge != tc.want || pe.Kind != tc.kind || pe.HTTPStatus != 400 {
			t.Errorf("%s with %d inputs: batch too large %v, kind %v", tc.body, tc.inputs, pe.BatchTooLarge, pe.Kind)
		}
	}
}
