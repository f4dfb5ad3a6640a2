package ollama

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound14EmbedMixedDims: vectors of different lengths for one request
// are no embedding list (they were passed on).
func TestRound14EmbedMixedDims(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed_mixed_dims.http"))
	_, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"a", "b"}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "embedding 1 has 3 values where the first has 2") {
		t.Fatalf("err %v", err)
	}
}

// TestRound14EmbedDimensionsIgnored: the real nomic-embed-text answer
// (768 values) replayed to a request for 256 dimensions: the vector is
// passed on whole, with a warning (cutting it would not make a shortened
// embedding); "dimensions" was sent.
func TestRound14EmbedDimensionsIgnored(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_lcg_embed_nomic.http"))
	d := int32(256)
	res, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"Hello, world!"}, Dimensions: &d})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Embeddings[0].GetValues()); n != 768 {
		t.Errorf("%d values", n)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != "asked for 256 dimensions, got 768" {
		t.Errorf("warnings %q", w)
	}
	if body := string(srv.Last(t).Body); !strings.Contains(body, `"dimensions":256`) {
		t.Errorf("sent %s", body)
	}
}
