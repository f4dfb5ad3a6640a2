package gemini

import (
	"errors"
	"path/filepath"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// FuzzEmbeddings: any body gives n embeddings or a bad-response error,
// never a panic; the usage read from it is never negative.
func FuzzEmbeddings(f *testing.F) {
	for _, name := range []string{"embed_single", "embed_batch", "real_llm_embedding_batch"} {
		f.Add(providertest.Load(f, filepath.Join("testdata", name+".http")).Body, uint8(2))
	}
	f.Add([]byte(`{"embedding":{"values":[1]},"usageMetadata":{"promptTokenCount":-3,"totalTokenCount":1e30}}`), uint8(1))
	f.Add([]byte(`{"embeddings":[{"values":[0.5]},null],"usageMetadata":{"promptTokenDetails":[{"modality":"TEXT"}]}}`), uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		count := int(n%4) + 1
		embs, usage, err := parseEmbeddings(body, count)
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse {
				t.Fatalf("err %v", err)
			}
			return
		}
		if len(embs) != count {
			t.Fatalf("%d embeddings for %d inputs", len(embs), count)
		}
		for i, e := range embs {
			if e.GetIndex() != int32(i) || len(e.GetValues()) == 0 {
				t.Fatalf("embedding %d: %v", i, e)
			}
		}
		meta := &llmrelayv1.ResponseMeta{Usage: embedUsage(usage)}
		usageDetails(usage).Set(meta)
		if u := meta.GetUsage(); u.GetInputTokens() < 0 || u.GetOutputTokens() != 0 || u.GetTotalTokens() < u.GetInputTokens() {
			t.Fatalf("usage %v", u)
		}
	})
}
