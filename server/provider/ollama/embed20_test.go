package ollama

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestEmbed20NoEmbedRoute: an Ollama that predates /api/embed answers it
// with its router's plain-text "404 page not found" (gin's, for any
// unknown route); the error says so (it read as if the model were
// unknown), while a 404 for an unknown model keeps Ollama's own words.
func TestEmbed20NoEmbedRoute(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, ct, body, want string
		hint                 bool
	}{
		{"old server", "text/plain", "404 page not found", "404 page not found (POST /api/embed: the server has no such route;", true},
		{"unknown model", "application/json; charset=utf-8", `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`, `model "nomic-embed-text" not found, try pulling it first`, false},
	}
	for _, tc := range cases {
		srv := providertest.Replay(t, providertest.Recording{Status: 404, Header: http.Header{"Content-Type": {tc.ct}}, Body: []byte(tc.body)})
		_, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"a"}})
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindNotFound || !strings.HasPrefix(pe.Message, tc.want) || strings.Contains(pe.Message, "/api/embeddings") != tc.hint {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
