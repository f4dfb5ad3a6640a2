package openai

import (
	"math"
	"testing"
)

// TestRound25EmbedOllamaV1MaruelKitten: maruel/genai's other recording of
// Ollama's /v1/embeddings with all-minilm at 32 dimensions
// (providers/ollama/testdata/TestClient/Embed.yaml, its second exchange;
// testdata/README.md, "Round 25 embeddings"): three other texts, usage 26.
// r23Embed checks the request, each vector bit for bit against the
// recording decoded apart, its index and unit length; the texts check the
// transcription once more: the kitten and the cat are nearer each other than
// either is to quantum field theory.
func TestRound25EmbedOllamaV1MaruelKitten(t *testing.T) {
	t.Parallel()
	const kitten, cat, qft = "A kitten plays with yarn.", "A cat plays with string.", "Quantum field theory predicts particle interactions."
	d := int32(32)
	v, res := r23Embed(t, "real_maruel_ollama_v1_embed_dims32_kitten", &d, kitten, cat, qft)
	if u := res.Meta.GetUsage(); u.GetInputTokens() != 26 || u.GetTotalTokens() != 26 || u.GetOutputTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	// "6+7Svc…" is eb ee d2 bd, the kitten's first value, little-endian.
	if len(v[0]) != 32 || math.Float32bits(v[0][0]) != 0xbdd2eeeb {
		t.Errorf("%d values, first %#x", len(v[0]), math.Float32bits(v[0][0]))
	}
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	if kc, kq, cq := cos(v[0], v[1]), cos(v[0], v[2]), cos(v[1], v[2]); kc <= kq || kc <= cq {
		t.Errorf("cosines: kitten-cat %v, kitten-qft %v, cat-qft %v", kc, kq, cq)
	}
}
