package openai

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 23: maruel/genai's go-vcr recordings of Ollama's /v1/embeddings
// with all-minilm (testdata/README.md, "Round 23 embeddings"): three inputs
// answered with base64 vectors (maruel/genai asks encoding_format base64),
// once asked for 32 dimensions and twice whole (384) in two other orders.
// The three answers check each other: a text's vector is the same in both
// whole answers, wherever the text stands, and its 32-value vector is the
// first 32 values of its whole one scaled back to unit length (Ollama cuts,
// then normalizes). Every value is also compared bit for bit with the
// recording decoded apart (recordedVectors).

const (
	r23Query   = "task: search result | query: What causes the northern lights?"
	r23Lights  = "title: none | text: The northern lights are caused by charged particles from the sun."
	r23Bananas = "title: none | text: Bananas are a popular tropical fruit."
)

// r23Embed replays a recording to an /embeddings request of inputs and
// returns each input's vector, checked against the recording bit for bit,
// in input order, with its index and unit length.
func r23Embed(t *testing.T, name string, dims *int32, inputs ...string) ([][]float32, *provider.Result) {
	t.Helper()
	rec := providertest.Load(t, td(name+".http"))
	srv := providertest.Replay(t, rec)
	res, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "all-minilm", Inputs: inputs, Dimensions: dims})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sent map[string]any
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	// The recorded request sent encoding_format base64 (maruel/genai's
	// choice); ours sends none to a server other than OpenAI's or Azure's.
	want := map[string]any{"model": "all-minilm", "input": []any{inputs[0], inputs[1], inputs[2]}}
	if dims != nil {
		want["dimensions"] = float64(*dims)
	}
	if providertest.MustJSON(sent) != providertest.MustJSON(want) {
		t.Errorf("%s: request %v", name, sent)
	}
	recorded := recordedVectors(t, rec.Body)
	if len(res.Embeddings) != len(inputs) || len(recorded) != len(inputs) || res.Meta.GetEmbeddingsCount() != int32(len(inputs)) {
		t.Fatalf("%s: %d embeddings (count %d), recorded %d", name, len(res.Embeddings), res.Meta.GetEmbeddingsCount(), len(recorded))
	}
	out := make([][]float32, len(inputs))
	for i, e := range res.Embeddings {
		if e.GetIndex() != int32(i) {
			t.Fatalf("%s: embedding %d has index %d", name, i, e.GetIndex())
		}
		v := e.GetValues()
		if len(v) != len(recorded[i]) {
			t.Fatalf("%s: embedding %d has %d values, recorded %d", name, i, len(v), len(recorded[i]))
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
		out[i] = v
	}
	m := res.Meta
	if m.GetResolvedModel() != "all-minilm" || m.GetProviderRequestId() != "" || m.GetResponseId() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("%s: meta %v", name, m)
	}
	return out, res
}

func TestRound23EmbedOllamaV1Maruel(t *testing.T) {
	t.Parallel()
	d := int32(32)
	small, res := r23Embed(t, "real_maruel_ollama_v1_embed_dims32", &d, r23Query, r23Lights, r23Bananas)
	if u := res.Meta.GetUsage(); u.GetInputTokens() != 50 || u.GetTotalTokens() != 50 || u.GetOutputTokens() != 0 {
		t.Errorf("dims32 usage %v", u)
	}
	// Read off the recording by hand: "nEDNPXRM…" is 9c 40 cd 3d, the
	// query's first value, little-endian.
	if len(small[0]) != 32 || math.Float32bits(small[0][0]) != 0x3dcd409c {
		t.Errorf("dims32: %d values, first %#x", len(small[0]), math.Float32bits(small[0][0]))
	}
	order, res := r23Embed(t, "real_maruel_ollama_v1_embed_order", nil, r23Bananas, r23Lights, r23Query)
	if u := res.Meta.GetUsage(); u.GetInputTokens() != 50 || u.GetTotalTokens() != 50 {
		t.Errorf("order usage %v", u)
	}
	rotate, _ := r23Embed(t, "real_maruel_ollama_v1_embed_rotate", nil, r23Lights, r23Bananas, r23Query)
	whole := map[string][]float32{r23Bananas: order[0], r23Lights: order[1], r23Query: order[2]}
	for text, v := range map[string][]float32{r23Lights: rotate[0], r23Bananas: rotate[1], r23Query: rotate[2]} {
		w := whole[text]
		if len(v) != 384 || len(w) != 384 {
			t.Fatalf("%q: %d and %d values", text, len(v), len(w))
		}
		for j := range v {
			if math.Float32bits(v[j]) != math.Float32bits(w[j]) {
				t.Fatalf("%q value %d: %v in one order, %v in the other", text, j, v[j], w[j])
			}
		}
	}
	for i, text := range []string{r23Query, r23Lights, r23Bananas} {
		w := whole[text][:32]
		var n float64
		for _, x := range w {
			n += float64(x) * float64(x)
		}
		n = math.Sqrt(n)
		for j, x := range small[i] {
			if math.Abs(float64(x)-float64(w[j])/n) > 1e-6 {
				t.Fatalf("%q value %d: %v asked for 32 dimensions, %v from the whole vector", text, j, x, float64(w[j])/n)
			}
		}
	}
}

// TestRound23EmbedOllamaV1NotFound: Ollama's /v1/embeddings for a model it
// does not have: 404 with its OpenAI-shaped error (type not_found_error,
// null param and code), the message whole: not found.
func TestRound23EmbedOllamaV1NotFound(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_maruel_ollama_v1_embed_err_404.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "genai-nonexistent-embedding-test", Inputs: []string{"hello"}})
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	if pe.Kind != provider.KindNotFound || pe.HTTPStatus != 404 || pe.Message != `model "genai-nonexistent-embedding-test" not found, try pulling it first` || pe.Param != "" {
		t.Errorf("error %+v", pe)
	}
}
