package openai

import (
	"context"
	"math"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound22EmbedOpenAI3SmallBase64: OpenAI's /v1/embeddings for one input
// with text-embedding-3-small, asked with encoding_format base64 by the
// Python SDK (pydantic/pydantic-ai's TestOpenAI.test_query cassette,
// March 2026; testdata/README.md, "Round 22 embeddings"): one 1536-value
// vector as 8192 base64 characters (of unit length: the transcription is
// whole), prompt_tokens and total_tokens 4, the model as sent. The
// cassette kept no x-request-id and no rate-limit headers: none is made
// up. Every value is compared bit for bit with the recording decoded
// apart; the golden keeps the meta.
func TestRound22EmbedOpenAI3SmallBase64(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_embed_openai_3small_base64"
	rec := providertest.Load(t, td(name+".http"))
	srv := providertest.Replay(t, rec)
	res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"Hello, world!"}})
	if err != nil {
		t.Fatal(err)
	}
	want := recordedVectors(t, rec.Body)
	if len(want) != 1 || len(res.Embeddings) != 1 || res.Meta.GetEmbeddingsCount() != 1 {
		t.Fatalf("%d embeddings (count %d), recording %d", len(res.Embeddings), res.Meta.GetEmbeddingsCount(), len(want))
	}
	got := res.Embeddings[0].GetValues()
	if res.Embeddings[0].GetIndex() != 0 || len(got) != 1536 || len(want[0]) != 1536 {
		t.Fatalf("index %d, %d values, recording %d", res.Embeddings[0].GetIndex(), len(got), len(want[0]))
	}
	var norm float64
	for j, v := range got {
		if math.Float32bits(v) != math.Float32bits(want[0][j]) {
			t.Fatalf("value %d: %v, recorded %v", j, v, want[0][j])
		}
		norm += float64(v) * float64(v)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("the vector's length is %v, not 1", math.Sqrt(norm))
	}
	// Read off the recording: the first and last four bytes of the
	// decoded base64 (b0 3a 9d bc from "sDqdvH…", 14 fa 2d bc from
	// "…uDsU+i28"), as little-endian float32 bits.
	if math.Float32bits(got[0]) != 0xbc9d3ab0 || math.Float32bits(got[1535]) != 0xbc2dfa14 {
		t.Errorf("first %#x last %#x", math.Float32bits(got[0]), math.Float32bits(got[1535]))
	}
	m := res.Meta
	if m.GetResolvedModel() != "text-embedding-3-small" || m.GetProviderRequestId() != "" || m.GetRateLimit() != nil || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if u := m.GetUsage(); u.GetInputTokens() != 4 || u.GetTotalTokens() != 4 || u.GetOutputTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	providertest.Golden(t, td(name+".golden"), renderResult(t, &provider.Result{Meta: m}))
}

// TestRound22EmbedOllamaV1MiniLM: Ollama's /v1/embeddings (October 2024)
// for one input with all-minilm:33m (elastic/elastic-otel-python-
// instrumentations' test_all_the_client_options cassette; testdata/
// README.md, "Round 22 embeddings"): one 384-value vector written as Go
// writes float32 (exponent forms below 1e-6: 6.7117274e-33, plain
// otherwise: 0.0000632459), of unit length; usage 4 and 4; the model as
// asked; no id, no request id (Ollama sends none), no warning. Every value
// is compared bit for bit with the recording parsed apart.
func TestRound22EmbedOllamaV1MiniLM(t *testing.T) {
	t.Parallel()
	const name = "real_elastic_embed_ollama_minilm"
	rec := providertest.Load(t, td(name+".http"))
	srv := providertest.Replay(t, rec)
	res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "all-minilm:33m", Inputs: []string{"South Atlantic Ocean."}})
	if err != nil {
		t.Fatal(err)
	}
	want := recordedVectors(t, rec.Body)
	if len(want) != 1 || len(res.Embeddings) != 1 || len(want[0]) != 384 || len(res.Embeddings[0].GetValues()) != 384 {
		t.Fatalf("%d embeddings, recording %d", len(res.Embeddings), len(want))
	}
	got := res.Embeddings[0].GetValues()
	for j, v := range got {
		if math.Float32bits(v) != math.Float32bits(want[0][j]) {
			t.Fatalf("value %d: %v, recorded %v", j, v, want[0][j])
		}
	}
	// Read off the recording by hand.
	if got[0] != 0.020238575 || got[383] != 0.047098454 || got[223] != 6.7117274e-33 || got[166] != 0.0000632459 || got[319] != -4.5183865e-33 {
		t.Errorf("values %v %v %v %v %v", got[0], got[383], got[223], got[166], got[319])
	}
	m := res.Meta
	if m.GetResolvedModel() != "all-minilm:33m" || m.GetProviderRequestId() != "" || m.GetResponseId() != "" || len(m.GetWarnings()) != 0 || m.GetEmbeddingsCount() != 1 {
		t.Errorf("meta %v", m)
	}
	if u := m.GetUsage(); u.GetInputTokens() != 4 || u.GetTotalTokens() != 4 || u.GetOutputTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	providertest.Golden(t, td(name+".golden"), renderResult(t, &provider.Result{Meta: m}))
}
