package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19: elastic/elastic-otel-python-instrumentations' cassettes of the
// OpenAI instrumentation's tests (testdata/README.md, "Round 19").

// TestRound19ElasticEmbedNotFound replays test_model_not_found of the
// embeddings tests against Azure OpenAI and Ollama's OpenAI route: the
// same request ({"input": ["South Atlantic Ocean."], "model":
// "not-found-model", "encoding_format": "base64"}), two answers.
//
// Azure's deployment route answers 404 DeploymentNotFound (the code beside
// the message, no type): not found, the apim-request-id as the request
// id, and in the failure's meta the deployment (our model) and the region
// that answered (x-ms-region "East US").
//
// Ollama answers 404 with type api_error and a null code: not found (the
// status says it; the type is the code we keep), no request id (Ollama
// sends none), the message as sent.
func TestRound19ElasticEmbedNotFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		k         kind
		path      string
		code, msg string
		requestID string
		ext       map[string]any
	}{
		{"real_elastic_embed_azure_deployment_not_found", kAzure, "/openai/deployments/not-found-model/embeddings", "DeploymentNotFound",
			"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
			"975b7870-9f64-4e72-9d3d-ecfd22f4a68d", map[string]any{extAzureDeployment: "not-found-model", extAzureRegion: "East US"}},
		{"real_elastic_embed_ollama_model_not_found", kOpenAI, "/v1/embeddings", "api_error",
			`model "not-found-model" not found, try pulling it first`, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			p := newTestProvider(t, tc.k, srv.URL)
			_, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "not-found-model", Inputs: []string{"South Atlantic Ocean."}})
			pe := providerError(t, err)
			if pe.Kind != provider.KindNotFound || pe.HTTPStatus != 404 || pe.Code != tc.code || pe.Message != tc.msg ||
				pe.RequestID != tc.requestID || pe.RetryAfter != 0 || pe.Param != "" {
				t.Errorf("%s", renderErr(err))
			}
			c := srv.Last(t)
			if c.Path != tc.path {
				t.Errorf("request to %s", c.Path)
			}
			var body map[string]any
			if err := json.Unmarshal(c.Body, &body); err != nil {
				t.Fatal(err)
			}
			if in, _ := body["input"].([]any); len(in) != 1 || in[0] != "South Atlantic Ocean." || body["model"] != "not-found-model" {
				t.Errorf("request %s", c.Body)
			}
			ext := pe.Meta.GetExtended().AsMap()
			if pe.Meta.GetProviderRequestId() != tc.requestID {
				t.Errorf("meta request id %q", pe.Meta.GetProviderRequestId())
			}
			for k, v := range tc.ext {
				if ext[k] != v {
					t.Errorf("meta extended %s = %v, want %v (%v)", k, ext[k], v, ext)
				}
			}
			if len(tc.ext) == 0 && len(ext) != 0 {
				t.Errorf("meta extended %v, want none", ext)
			}
		})
	}
}
