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
// OpenAI's refusal of one input over the model's context; and a refusal
// of the number of inputs that states the limit (BatchLimit). The counts
// of a token refusal give the fewest parts (BatchParts: 453357 over 300000
// is 2; 1086442 over 300000, the words topoteretes/cognee#703 quotes with
// 600000, is 4). The bodies are the issues' quotes; the status and headers
// are ours.
func TestRound23EmbedBatchTooLarge(t *testing.T) {
	t.Parallel()
	const (
		openaiBody  = `{"error":{"message":"Requested 453357 tokens, max 300000 tokens per request","type":"max_tokens_per_request","param":null,"code":"max_tokens_per_request"}}`
		mistralBody = `{"object":"error","message":"Too many tokens in batch. Max is 16384 got 17555","type":"invalid_request_error","param":null,"code":null}`
		inputBody   = `{"error":{"message":"Invalid 'input[0]': maximum input length is 8192 tokens.","type":"invalid_request_error","param":null,"code":null}}`
		azureBody   = `{"error":{"message":"Too many inputs. The max number of inputs is 16.  We hope to increase the number of inputs per request soon. Please contact us through an Azure support request at: https://go.microsoft.com/fwlink/?linkid=2213926 for further questions.","type":"invalid_request_error","param":null,"code":null}}`
		teiBody     = `{"message":"batch size 64 > maximum allowed batch size 32","code":413,"type":"Validation"}`
	)
	cases := []struct {
		body   string
		status int
		inputs int
		want   bool
		limit  int
		kind   provider.Kind
		parts  int
	}{
		{openaiBody, 400, 2, true, 0, provider.KindInvalidRequest, 2},
		{openaiBody, 400, 1, false, 0, provider.KindInvalidRequest, 0},
		{mistralBody, 400, 3, true, 0, provider.KindContextLength, 2},
		{`{"error":{"message":"Requested 1086442 tokens, max 300000 tokens per request","type":"max_tokens_per_request","param":null,"code":"max_tokens_per_request"}}`, 400, 900, true, 0, provider.KindInvalidRequest, 4},
		{mistralBody, 400, 1, false, 0, provider.KindContextLength, 0},
		{inputBody, 400, 2, false, 0, provider.KindContextLength, 0},
		// Azure OpenAI's input limit of old (Mintplex-Labs/anything-llm#184
		// quotes the body), TEI's batch size (its 413): the limit read.
		{azureBody, 400, 20, true, 16, provider.KindInvalidRequest, 0},
		{azureBody, 400, 16, false, 0, provider.KindInvalidRequest, 0},
		{teiBody, 413, 64, true, 32, provider.KindInvalidRequest, 0},
		// Voyage AI's token cap per request (sigoden/aichat#825 quotes the
		// body; kenn-io/agentsview#1356 the 128000 of four inputs).
		{`{"detail":"Request to model 'voyage-large-2-instruct' failed. The max allowed tokens per submitted batch is 120000. Your batch has 121138 tokens after truncation. Please lower the number of tokens in the batch."}`, 400, 40, true, 0, provider.KindInvalidRequest, 2},
		{`{"detail":"Request to model 'voyage-4-large' failed. The max allowed tokens per submitted batch is 120000. Your batch has 1280000 tokens after truncation. Please lower the number of tokens in the batch."}`, 400, 40, true, 0, provider.KindInvalidRequest, 11},
		// Cohere's words (misbahsy/RAGTune#2 quotes the body).
		{`{"message":"invalid request: total number of texts must be at most 96 - received 131"}`, 400, 131, true, 96, provider.KindInvalidRequest, 0},
	}
	for _, tc := range cases {
		srv := providertest.Replay(t, providertest.Recording{Status: tc.status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tc.body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: make([]string, tc.inputs)})
		pe := providerError(t, err)
		if pe.BatchTooLarge != tc.want || pe.BatchLimit != tc.limit || pe.BatchParts != tc.parts || pe.Kind != tc.kind || pe.HTTPStatus != tc.status {
			t.Errorf("%s with %d inputs: batch too large %v limit %d parts %d, kind %v", tc.body, tc.inputs, pe.BatchTooLarge, pe.BatchLimit, pe.BatchParts, pe.Kind)
		}
	}
}
