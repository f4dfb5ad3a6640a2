package openai

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 25: maruel/genai's go-vcr recordings of llama.cpp's server
// (/v1/embeddings, embeddinggemma-2 Q8_0; testdata/README.md, "Round 25
// embeddings: llama.cpp"): three texts answered with base64 vectors (the
// recorded client asked encoding_format base64), each data entry carrying
// an encoding_format of its own beside index and object, model and usage
// before data; once in one order, once in another. Every value is compared
// bit for bit with the recording decoded apart, and the two answers with
// each other.

const (
	r25LcQuery   = "task: search result | query: What causes the northern lights?"
	r25LcLights  = "title: none | text: The northern lights are caused by charged particles from the sun."
	r25LcBananas = "title: none | text: Bananas are a popular tropical fruit."
	r25LcModel   = "ggml-org/embeddinggemma-2-GGUF/embeddinggemma-2-Q8_0.gguf"
)

func r25LlamacppEmbed(t *testing.T, name string, inputs ...string) map[string][]float32 {
	t.Helper()
	rec := providertest.Load(t, td(name+".http"))
	srv := providertest.Replay(t, rec)
	res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: r25LcModel, Inputs: inputs})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sent map[string]any
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	// The recorded request sent encoding_format base64 (maruel/genai's
	// choice); ours sends none to a server other than OpenAI's or Azure's.
	if want := map[string]any{"model": r25LcModel, "input": []any{inputs[0], inputs[1], inputs[2]}}; providertest.MustJSON(sent) != providertest.MustJSON(want) {
		t.Errorf("%s: request %v", name, sent)
	}
	recorded := recordedVectors(t, rec.Body)
	m := res.Meta
	if len(res.Embeddings) != 3 || len(recorded) != 3 || m.GetEmbeddingsCount() != 3 {
		t.Fatalf("%s: %d embeddings (count %d), recorded %d", name, len(res.Embeddings), m.GetEmbeddingsCount(), len(recorded))
	}
	if u := m.GetUsage(); u.GetInputTokens() != 51 || u.GetTotalTokens() != 51 || u.GetOutputTokens() != 0 {
		t.Errorf("%s: usage %v", name, u)
	}
	if m.GetResolvedModel() != r25LcModel || m.GetProviderRequestId() != "" || m.GetResponseId() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("%s: meta %v", name, m)
	}
	out := map[string][]float32{}
	for i, e := range res.Embeddings {
		v := e.GetValues()
		if e.GetIndex() != int32(i) || len(v) != 768 || len(recorded[i]) != 768 {
			t.Fatalf("%s: embedding %d: index %d, %d values, recorded %d", name, i, e.GetIndex(), len(v), len(recorded[i]))
		}
		var norm float64
		for j := range v {
			if math.Float32bits(v[j]) != math.Float32bits(recorded[i][j]) {
				t.Fatalf("%s: embedding %d value %d: %v, recorded %v", name, i, j, v[j], recorded[i][j])
			}
			norm += float64(v[j]) * float64(v[j])
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("%s: embedding %d has length %v", name, i, math.Sqrt(norm))
		}
		out[inputs[i]] = v
	}
	return out
}

func TestRound25EmbedLlamacppMaruel(t *testing.T) {
	t.Parallel()
	batch := r25LlamacppEmbed(t, "real_maruel_llamacpp_embed_batch", r25LcQuery, r25LcLights, r25LcBananas)
	order := r25LlamacppEmbed(t, "real_maruel_llamacpp_embed_order", r25LcBananas, r25LcLights, r25LcQuery)
	// Read off the recording by hand: "YzBQPN…" is 63 30 50 3c, the
	// query's first value, little-endian.
	if math.Float32bits(batch[r25LcQuery][0]) != 0x3c503063 {
		t.Errorf("query's first value %#x", math.Float32bits(batch[r25LcQuery][0]))
	}
	for text, v := range batch {
		w := order[text]
		for j := range v {
			if math.Float32bits(v[j]) != math.Float32bits(w[j]) {
				t.Fatalf("%q value %d: %v in one order, %v in the other", text, j, v[j], w[j])
			}
		}
	}
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	if ql, qb := cos(batch[r25LcQuery], batch[r25LcLights]), cos(batch[r25LcQuery], batch[r25LcBananas]); ql <= qb {
		t.Errorf("the query is nearer the bananas (%v) than the lights (%v)", qb, ql)
	}
}
