package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
)

// TestEmbed17InputLimit: the per-request input limit of a provider is
// max_embedding_inputs when set, else what the adapter knows of its API:
// 1000 for Voyage AI (docs.voyageai.com/reference/embeddings-api: "The
// maximum length of the list is 1,000"), none for OpenAI (2048, the
// gateway's own) or Ollama (none documented).
func TestEmbed17InputLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pc   config.Provider
		want int
	}{
		{config.Provider{Name: "v", Type: "openai", BaseURL: "https://api.voyageai.com/v1"}, 1000},
		{config.Provider{Name: "v", Type: "openai", BaseURL: "https://api.voyageai.com/v1", MaxEmbeddingInputs: 128}, 128},
		{config.Provider{Name: "o", Type: "openai", BaseURL: "https://api.openai.com/v1"}, 0},
		{config.Provider{Name: "tei", Type: "openai", BaseURL: "http://tei.internal:8080/v1", MaxEmbeddingInputs: 32}, 32},
		{config.Provider{Name: "l", Type: "ollama", BaseURL: "http://127.0.0.1:11434"}, 0},
	} {
		impl, err := newProvider(tc.pc, "k", http.DefaultClient)
		if err != nil {
			t.Fatal(err)
		}
		if got := embedInputLimit(tc.pc, impl); got != tc.want {
			t.Errorf("%s %s (%d): %d, want %d", tc.pc.Type, tc.pc.BaseURL, tc.pc.MaxEmbeddingInputs, got, tc.want)
		}
	}
}

// TestEmbed17InputLimitConfig: a negative max_embedding_inputs is refused.
func TestEmbed17InputLimitConfig(t *testing.T) {
	t.Parallel()
	_, err := config.Parse([]byte(`
providers:
  - {name: tei, type: openai, base_url: "http://tei:8080/v1", api_key: k, max_embedding_inputs: -1}
models:
  - {name: m, provider: tei, capabilities: {embeddings: {format: openai-embeddings}}}
`), "t.yaml")
	if err == nil || !strings.Contains(err.Error(), "max_embedding_inputs: must be at least 1") {
		t.Errorf("err %v", err)
	}
}
