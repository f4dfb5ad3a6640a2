package openai

import (
	"time"

	"google.golang.org/protobuf/proto"

	"context"
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"

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

// TestRound19ElasticAzureStreamIncludeUsage: Azure OpenAI's gpt-4-32k
// deployment (api-version 2024-08-01-preview, November 2024) streamed with
// include_usage. The first chunk is the prompt's filter verdicts with no
// choices, created 0, id and model "" (neither a response id nor a create
// time of 1970: the next chunk gives both); the answer "Atlantic Ocean"
// in two chunks, each with its four "safe" verdicts (one meta event: the
// second's are the same), then "stop" and a usage chunk without choices:
// 24 in, 2 out. The request id is apim-request-id (x-request-id, another
// id, is the upstream's; x-ms-client-request-id repeats apim's), the
// region x-ms-region; Azure sent only the remaining counts of its rate
// limits (72 requests, 79740 tokens), no limits or resets.
func TestRound19ElasticAzureStreamIncludeUsage(t *testing.T) {
	t.Parallel()
	const name = "real_elastic_azure_stream_include_usage"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "test-azure-deployment",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Answer in up to 3 words: Which ocean contains the falkland islands?"))}}
	s, err := newTestProvider(t, kAzure, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Atlantic Ocean")); !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 24, OutputTokens: 2, TotalTokens: 26}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-ASxkLviKAQt414bmMPfpr2DfNYgKt" || m.GetResolvedModel() != "gpt-4-32k" ||
		m.GetProviderRequestId() != "5e2a8895-103f-499a-90bf-1c4693d5fc6a" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1731466213, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	rl := m.GetRateLimit()
	if rl.GetRequestsRemaining() != 72 || rl.GetTokensRemaining() != 79740 || rl.RequestsLimit != nil || rl.TokensLimit != nil ||
		rl.GetRequestsResetTime() != nil || rl.GetTokensResetTime() != nil {
		t.Errorf("rate limit %v", rl)
	}
	ext := m.GetExtended().AsMap()
	if ext[extAzureRegion] != "Switzerland North" || ext[extAzureDeployment] != "test-azure-deployment" {
		t.Errorf("extended %v", ext)
	}
	safe := `{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}`
	var verdicts, prompts int
	for _, ev := range evs {
		if ev.Kind != provider.EventMeta {
			continue
		}
		e := ev.Meta.GetExtended().AsMap()
		if v, ok := e["content_filter_results"]; ok {
			verdicts++
			if !jsonEqualAny(v, r19Decode(t, safe)) {
				t.Errorf("verdicts %v", v)
			}
		}
		if v, ok := e["prompt_filter_results"]; ok {
			prompts++
			if !jsonEqualAny(v, r19Decode(t, `[{"content_filter_results":`+safe+`,"prompt_index":0}]`)) {
				t.Errorf("prompt verdicts %v", v)
			}
		}
	}
	if verdicts != 1 || prompts != 1 {
		t.Errorf("%d verdict and %d prompt verdict events, want one of each", verdicts, prompts)
	}
	c := srv.Last(t)
	if c.Path != "/openai/deployments/test-azure-deployment/chat/completions" {
		t.Errorf("request to %s", c.Path)
	}
	if so, _ := r19JSONField(t, c.Body, "stream_options").(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v in %s", so, c.Body)
	}
}

// r19Decode decodes a JSON text.
func r19Decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
