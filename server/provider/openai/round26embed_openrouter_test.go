package openai

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26EmbedOpenRouter: node-llm's recording of OpenRouter's
// /api/v1/embeddings (text-embedding-3-small, one input): the body opens
// with OpenRouter's whitespace padding, the usage has its cost, and
// "provider" names the upstream that served it ("OpenAI"), which the chat
// answers keep as extended.upstream_provider and the embeddings answer
// dropped. Every value is the float32 of its decimal; the id, model and
// usage are kept.
func TestRound26EmbedOpenRouter(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, td("real_nodellm_openrouter_embed.http"))
	srv := providertest.Replay(t, rec)
	res, err := newTestProvider(t, kOpenAI, srv.URL+"/api").Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"Hello, world!"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Last(t).Path; got != "/api/v1/embeddings" {
		t.Errorf("path %q", got)
	}
	var apart struct {
		Data []struct {
			Embedding []json.Number `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body, &apart); err != nil || len(apart.Data) != 1 {
		t.Fatalf("recording: %v", err)
	}
	got := res.Embeddings[0].GetValues()
	if len(got) != len(apart.Data[0].Embedding) {
		t.Fatalf("%d values, recorded %d", len(got), len(apart.Data[0].Embedding))
	}
	for i, n := range apart.Data[0].Embedding {
		want, _ := strconv.ParseFloat(string(n), 32)
		if math.Float32bits(got[i]) != math.Float32bits(float32(want)) {
			t.Errorf("value %d: %v, recorded %s", i, got[i], n)
		}
	}
	m := res.Meta
	ext := m.GetExtended().AsMap()
	if m.GetResponseId() != "gen-emb-1767423526-l3UVZGh08Txmj8I26x2Z" || m.GetResolvedModel() != "text-embedding-3-small" ||
		m.GetUsage().GetInputTokens() != 4 || m.GetUsage().GetTotalTokens() != 4 || ext[extUpstreamProvider] != "OpenAI" {
		t.Errorf("meta %s", protoCompact(t, m))
	}
	if d, _ := ext["usage_details"].(map[string]any); d["cost"] != 8e-8 {
		t.Errorf("usage details %v", ext["usage_details"])
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
	if strings.Contains(string(srv.Last(t).Body), "encoding_format") {
		t.Errorf("request %s", srv.Last(t).Body)
	}
}
