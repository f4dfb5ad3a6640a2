package openai

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24EmbedDashScopeBatchLimit: DashScope's compatible-mode
// /v1/embeddings takes at most 10 inputs per request for
// text-embedding-v3 and v4 and refuses more with a 400 whose message
// states the limit ("batch size is invalid, it should not be larger than
// 10.", the body jjyaoao/HelloAgents#27 quotes whole; memodb-io/memobase#142
// and zilliztech/claude-context#177 the same words, n4ze3m/page-assist#371
// the same with 20). It failed the call; it is a refusal of the inputs
// together that names the limit (BatchLimit 10): the gateway sends the
// inputs again in parts of at most 10 (server/embed.go). A request of 10
// inputs or fewer refused so has nothing to split.
func TestRound24EmbedDashScopeBatchLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		inputs int
		want   bool
		limit  int
	}{{20, true, 10}, {11, true, 10}, {10, false, 0}, {1, false, 0}} {
		srv := providertest.ReplayFile(t, td("embed_error_dashscope_400_batch.http"))
		_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-v4", Inputs: make([]string, tc.inputs)})
		pe := providerError(t, err)
		if pe.BatchTooLarge != tc.want || pe.BatchLimit != tc.limit || pe.BatchParts != 0 {
			t.Errorf("%d inputs: batch too large %v, limit %d, parts %d; want %v, %d", tc.inputs, pe.BatchTooLarge, pe.BatchLimit, pe.BatchParts, tc.want, tc.limit)
		}
		if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "InvalidParameter" || pe.RequestID != "318cff27-38bd-4289-8f70-18d8d37bded9" {
			t.Errorf("%d inputs: %+v", tc.inputs, pe)
		}
	}
	for msg, want := range map[string]int{
		"<400> InternalError.Algo.InvalidParameter: Value error, batch size is invalid, it should not be larger than 20.: input.contents": 20,
		"batch size is invalid, it should not be larger than 25.: payload.input.contents":                                                 25,
		"Too many inputs. The max number of inputs is 16.":                                                                                16,
		"Value error, batch size is invalid":                                                                                              0,
	} {
		if got := batchLimit(msg); got != want {
			t.Errorf("batchLimit(%q) = %d, want %d", msg, got, want)
		}
	}
}

// TestRound24EmbedDimensionsRefused: a model that cannot shorten its
// vectors refuses "dimensions" whatever the size, its own included:
// OpenAI's and Azure's "This model does not support specifying
// dimensions." for text-embedding-ada-002 (Canner/WrenAI#583 quotes
// Azure's body, microsoft/kernel-memory#805 the same for 1536), vLLM's
// "does not support matryoshka representation" (coze-dev/coze-studio#484
// quotes the body). A call (or a catalog default) asking the model's own
// size failed; it is sent again without dimensions and served when the
// vectors have the size asked for (the second answer here is OpenAI's
// real ada-002 answer, 1536 base64 float32s, standing for the
// deployment's). Another size fails as the refusal did, naming
// dimensions and the model's size, with the usage the second request
// spent. On api.openai.com ada-002 is known: its own size is not sent.
func TestRound24EmbedDimensionsRefused(t *testing.T) {
	t.Parallel()
	refusal := providertest.Load(t, td("embed_error_azure_400_dimensions.http"))
	ada := providertest.Load(t, td("real_oll_embed_ada_base64.http"))
	in := []string{"Tell me a joke about opentelemetry"}

	srv := providertest.Replay(t, refusal, ada)
	res, err := newTestProvider(t, kAzure, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "ada-embeddings", Inputs: in, Dimensions: proto.Int32(1536)})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0].Body), `"dimensions":1536`) || strings.Contains(string(reqs[1].Body), "dimensions") {
		t.Fatalf("%d requests: %q", len(reqs), reqs)
	}
	if len(res.Embeddings) != 1 || len(res.Embeddings[0].GetValues()) != 1536 || math.Float32bits(res.Embeddings[0].GetValues()[0]) != 0x3ccdfbaa {
		t.Errorf("embeddings %d", len(res.Embeddings))
	}
	want := `the server refused dimensions for this model ("This model does not support specifying dimensions."): sent again without them, its vectors have the 1536 values asked for`
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q", w)
	}
	if res.Meta.GetProviderRequestId() != "req_d4be275b923814571b3813ae58e029c5" || res.Meta.GetUsage().GetInputTokens() != 8 {
		t.Errorf("meta %v", res.Meta)
	}

	srv = providertest.Replay(t, refusal, ada)
	_, err = newTestProvider(t, kAzure, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "ada-embeddings", Inputs: in, Dimensions: proto.Int32(256)})
	pe := providerError(t, err)
	if pe.Kind != provider.KindInvalidRequest || pe.Param != "dimensions" || pe.HTTPStatus != 400 || pe.RequestID != "9f3c1e72-6b4d-4a85-b0d9-31e7c5a82f46" ||
		pe.Message != "This model does not support specifying dimensions. (sent again without dimensions, the model's vectors have 1536 values, not the 256 asked for: ask for 1536 or none)" {
		t.Errorf("error %+v", pe)
	}
	if pe.Meta.GetUsage().GetInputTokens() != 8 || len(srv.Requests()) != 2 {
		t.Errorf("meta %v, %d requests", pe.Meta, len(srv.Requests()))
	}

	// vLLM's words; the server refuses the request without dimensions
	// too (the replay repeats): that refusal is the answer, no third
	// request.
	srv = providertest.ReplayFile(t, td("embed_error_vllm_400_matryoshka.http"))
	_, err = newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "embedding", Inputs: in, Dimensions: proto.Int32(1024)})
	pe = providerError(t, err)
	if pe.Kind != provider.KindInvalidRequest || len(srv.Requests()) != 2 || strings.Contains(string(srv.Last(t).Body), "dimensions") {
		t.Errorf("error %+v, %d requests", pe, len(srv.Requests()))
	}
	// Without dimensions asked, the refusal is the answer.
	srv = providertest.ReplayFile(t, td("embed_error_azure_400_dimensions.http"))
	_, err = newTestProvider(t, kAzure, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "ada-embeddings", Inputs: in})
	if pe = providerError(t, err); pe.Param != "" || len(srv.Requests()) != 1 {
		t.Errorf("error %+v, %d requests", pe, len(srv.Requests()))
	}

	// api.openai.com: ada-002's own size is not sent; another is refused
	// before any request.
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, warnings, err := p.buildEmbedRequest(&provider.EmbedRequest{Model: "text-embedding-ada-002", Inputs: in, Dimensions: proto.Int32(1536)})
	if err != nil || strings.Contains(string(body), "dimensions") || len(warnings) != 1 || warnings[0] != "text-embedding-ada-002 takes no dimensions: not sent (its vectors have the 1536 values asked for)" {
		t.Errorf("ada-002 at 1536: %s %q %v", body, warnings, err)
	}
	if _, _, err := p.buildEmbedRequest(&provider.EmbedRequest{Model: "text-embedding-ada-002", Inputs: in, Dimensions: proto.Int32(512)}); providerError(t, err).Param != "dimensions" {
		t.Errorf("ada-002 at 512: %v", err)
	}
}

// TestRound24EmbedMistralBatchRefusals: Mistral's /v1/embeddings refuses
// more than 256 inputs ("Too many inputs in request, split into more
// batches.", code 3210, no count; the body as a public failure report of
// edgequake quotes it, raphaelmansuy/edgequake-llm#74 the message and
// code) and a request's tokens over its cap in the same words ("Too many
// tokens overall, split into more batches."). Each failed the call; each
// is a refusal of the inputs together, which the gateway sends again in
// halves (no limit stated). On Mistral's hosts the gateway sends at most
// 256 inputs a request from the start (MaxEmbedInputs).
func TestRound24EmbedMistralBatchRefusals(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_error_mistral_400_too_many_inputs.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "mistral-embed", Inputs: make([]string, 300)})
	pe := providerError(t, err)
	if !pe.BatchTooLarge || pe.BatchLimit != 0 || pe.BatchParts != 0 || pe.Kind != provider.KindInvalidRequest || pe.Code != "3210" || pe.RequestID != "019a6c3e-5d27-7b41-9e0f-2c8d4a71b6e3" {
		t.Errorf("too many inputs: %+v", pe)
	}
	tokens := providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"object":"error","message":"Too many tokens overall, split into more batches.","type":"invalid_request_prompt","code":"3210","raw_status_code":400}`)}
	for _, n := range []int{40, 1} {
		srv = providertest.Replay(t, tokens)
		_, err = newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "mistral-embed", Inputs: make([]string, n)})
		if pe = providerError(t, err); pe.BatchTooLarge != (n > 1) || pe.Kind != provider.KindContextLength {
			t.Errorf("too many tokens, %d inputs: %+v", n, pe)
		}
	}
	for base, want := range map[string]int{"https://api.mistral.ai/v1": 256, "https://codestral.mistral.ai/v1": 256, "https://api.voyageai.com/v1": 1000, "https://api.openai.com/v1": 0} {
		p, err := New(testKey, WithBaseURL(base))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MaxEmbedInputs(); got != want {
			t.Errorf("%s: MaxEmbedInputs %d, want %d", base, got, want)
		}
	}
}

// TestRound24EmbedNIMTokenSize: NVIDIA NIM refuses an embedding input
// over the model's tokens (nv-embedqa-e5-v5: 512) with 400 {"error":
// "Input length 1728 exceeds maximum allowed token size 512"}. It was an
// invalid request; it is a context-length error, as OpenAI's "maximum
// input length" is: not retried, and another deployment's model may take
// the input.
func TestRound24EmbedNIMTokenSize(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_error_nim_400_token_size.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "nvidia/nv-embedqa-e5-v5", Inputs: []string{"a", "b"}})
	pe := providerError(t, err)
	if pe.Kind != provider.KindContextLength || pe.HTTPStatus != 400 || pe.BatchTooLarge || pe.RequestID != "6d2f8a41-93c7-4e05-b1a8-5f0e7c3d9b26" ||
		pe.Message != "Input length 1728 exceeds maximum allowed token size 512" {
		t.Errorf("%+v", pe)
	}
}

// TestRound24EmbedGeminiCompatBatch: the Gemini API's OpenAI-compatible
// /embeddings embeds with batchEmbedContents and refuses more than 100
// inputs (400 INVALID_ARGUMENT "* BatchEmbedContentsRequest.requests: at
// most 100 requests can be in one batch", the body geldata/gel#9032 quotes
// from that endpoint). It failed the call; the refusal states the limit
// (BatchLimit 100), and on generativelanguage.googleapis.com the gateway
// sends at most 100 inputs a request from the start. Vertex AI's hosts
// are not that API.
func TestRound24EmbedGeminiCompatBatch(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("gemini_compat_embed_err_400_batch.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: make([]string, 150)})
	pe := providerError(t, err)
	if !pe.BatchTooLarge || pe.BatchLimit != 100 || pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 {
		t.Errorf("%+v", pe)
	}
	for base, want := range map[string]int{
		"https://generativelanguage.googleapis.com/v1beta/openai":                                             100,
		"https://dashscope.aliyuncs.com/compatible-mode/v1":                                                   10,
		"https://dashscope-intl.aliyuncs.com/compatible-mode/v1":                                              10,
		"https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi": 0,
	} {
		p, err := New(testKey, WithBaseURL(base))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MaxEmbedInputs(); got != want {
			t.Errorf("%s: MaxEmbedInputs %d, want %d", base, got, want)
		}
	}
}

// TestRound24EmbedGitHubModelsTokenCap: GitHub Models (Azure AI inference
// behind models.github.ai) caps a request's tokens and answers more with
// 413 tokens_limit_reached ("Request body too large for gpt-4o model. Max
// size: 8000 tokens.", the body eslint/tsc-meetings#593 quotes; 64000 for
// text-embedding-3-small, nlweb-ai/NLWeb#164). For an embeddings request
// of several inputs it is a refusal of the inputs together, which the
// gateway sends again in halves (no count asked is given); one input over
// it has nothing to split.
func TestRound24EmbedGitHubModelsTokenCap(t *testing.T) {
	t.Parallel()
	for _, n := range []int{40, 1} {
		srv := providertest.ReplayFile(t, td("github_models_embed_err_413_tokens.http"))
		_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "openai/text-embedding-3-small", Inputs: make([]string, n)})
		pe := providerError(t, err)
		if pe.BatchTooLarge != (n > 1) || pe.BatchParts != 0 || pe.BatchLimit != 0 || pe.HTTPStatus != 413 || pe.Code != "tokens_limit_reached" || pe.RequestID != "C4F1:2B7A9E:5D03F1:61A2C8:6840E3B1" {
			t.Errorf("%d inputs: %+v", n, pe)
		}
	}
	for msg, want := range map[string]bool{
		"Request body too large for gpt-4o model. Max size: 8000 tokens.":            true,
		"Request body too large for text-embedding-3-small - Max size: 64000 tokens": true,
		"Request body too large": false,
	} {
		if got := batchTokensRE.MatchString(msg); got != want {
			t.Errorf("%q: %v", msg, got)
		}
	}
}

// TestRound24EmbedTPMTooLarge: OpenAI answers a request of more tokens
// than the organization's whole per-minute budget with 429 "Request too
// large for … on tokens per min (TPM): Limit 30000, Requested 36278."
// (testdata/err_429_request_too_large.http, Aider-AI/aider#1880's body; the
// same words for embedding models). No wait lets that request pass, and
// it failed the call; for an embeddings request of several inputs it is a
// refusal of the inputs together, sent again in the parts its counts need
// (36278 over 30000: 2), each then within the budget. One input has
// nothing to split.
func TestRound24EmbedTPMTooLarge(t *testing.T) {
	t.Parallel()
	for _, n := range []int{20, 1} {
		srv := providertest.ReplayFile(t, td("err_429_request_too_large.http"))
		_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: make([]string, n)})
		pe := providerError(t, err)
		wantParts := 0
		if n > 1 {
			wantParts = 2
		}
		if pe.BatchTooLarge != (n > 1) || pe.BatchParts != wantParts || pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 429 {
			t.Errorf("%d inputs: %+v", n, pe)
		}
	}
	for msg, want := range map[string]int{
		"Request too large for text-embedding-3-small in organization org-x on tokens per min (TPM): Limit 1000000, Requested 1003160. The input or output tokens must be reduced in order to run successfully.": 2,
		"Request too large for text-embedding-ada-002 in organization org-x on tokens per min (TPM): Limit 40000, Requested 130000.":                                                                             4,
		"Rate limit reached for text-embedding-3-small in organization org-x on tokens per min (TPM): Limit 1000000, Used 976163, Requested 70716. Please try again in 2.812s.":                                  0,
	} {
		if got := tpmParts(msg); got != want {
			t.Errorf("tpmParts(%q) = %d, want %d", msg, got, want)
		}
	}
}
