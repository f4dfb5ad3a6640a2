package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26VertexCompatPublisherModel: Vertex AI's OpenAI-compatible
// endpoint refuses a model the project may not use with Google's array of
// one google.rpc.Status, 400 FAILED_PRECONDITION "Project `…` is not
// allowed to use Publisher Model `…`"
// (testdata/vertex26_compat_err_400_publisher_model.http). **Bug:** an
// invalid request, never a fallback. Now permission denied, as the
// gemini and anthropic adapters read the same words
// (provider.ModelAccessRefused) and Google's other FAILED_PRECONDITIONs
// refusing the project: never retried, worth a fallback; Bedrock's words
// relayed in an OpenAI-shaped 400 too. Other FAILED_PRECONDITIONs and
// a proxy's sentence around the words keep their kinds.
func TestRound26VertexCompatPublisherModel(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("vertex26_compat_err_400_publisher_model.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("google/gemini-1.5-pro-002"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindPermissionDenied || pe.HTTPStatus != 400 || pe.Code != "FAILED_PRECONDITION" ||
		pe.Message != "Project `*********` is not allowed to use Publisher Model `projects/*****-*****-********-m8/locations/asia-southeast1/publishers/google/models/gemini-1.5-pro-002`" {
		t.Errorf("kind %v status %d code %q message %q", pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
	checkKinds(t, []kindCase{
		{400, `{"error":{"message":"You don't have access to the model with the specified model ID.","type":"invalid_request_error"}}`, provider.KindPermissionDenied},
		{400, `[{"error":{"code":400,"message":"Precondition check failed.","status":"FAILED_PRECONDITION"}}]`, provider.KindInvalidRequest},
		{400, `{"error":{"message":"upstream said: You don't have access to the model with the specified model ID. Try again","type":"invalid_request_error"}}`, provider.KindInvalidRequest},
	})
}

// TestRound26OpenRouterNoEndpointsCapability: OpenRouter answers a request
// needing a capability none of the model's providers has with a 404, "No
// endpoints found that support tool use. To learn more about provider
// routing, visit: …" (testdata/dialect_openrouter_err_404_no_tool_endpoints.http,
// bobrware/bobrchat#60's body). **Bug:** by its status a model not found
// (NotFound MODEL_NOT_FOUND naming a model that exists); the model lacks
// tool use: KindCapability (FailedPrecondition CAPABILITY_NOT_SUPPORTED),
// as DeepSeek's and Ollama's refusals of tools are, still never retried and
// still a fallback. GitHub Copilot's 400 unsupported_value "The use of the
// web search tool is not supported." (its Responses endpoint,
// caozhiyuan/copilot-api#82) was an invalid request: a capability of the
// deployment too. OpenRouter's "No allowed providers are available for the
// selected model." (the account's provider settings allow none of the
// model's providers) stays not found.
func TestRound26OpenRouterNoEndpointsCapability(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_openrouter_err_404_no_tool_endpoints.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("openai/gpt-4o"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindCapability || pe.HTTPStatus != 404 ||
		pe.Message != "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/guides/routing/provider-selection" {
		t.Errorf("kind %v status %d message %q", pe.Kind, pe.HTTPStatus, pe.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
	checkKinds(t, []kindCase{
		{400, `{"error":{"message":"The use of the web search tool is not supported.","code":"unsupported_value","param":"tools","type":"invalid_request_error"}}`, provider.KindCapability},
		{404, `{"error":{"message":"No endpoints found that support image input","code":404}}`, provider.KindCapability},
		{404, `{"error":{"message":"No allowed providers are available for the selected model.","code":404,"metadata":{"available_providers":["deepseek","together"],"requested_providers":["xai"]}}}`, provider.KindNotFound},
		{404, `{"error":{"message":"No endpoints found for bad/model.","code":404}}`, provider.KindNotFound},
		{404, `{"error":{"message":"No endpoints found that support the provided 'tool_choice' value. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing","code":404}}`, provider.KindCapability},
	})
}

// TestRound26DeepSeekModelNotExist: DeepSeek answers a model name it does
// not serve ("deepseek-r1", "deepseek-v3") with a 400 whose whole message
// is "Model Not Exist" (testdata/dialect_deepseek_err_400_model_not_exist.http,
// deepwn/addi#13's body). **Bug:** an invalid request, never a fallback,
// where its other wording ("The supported API model names are …") and
// every other provider's unknown model are not found. Now not found: never
// retried, a route falls back; a message that only contains the words is
// not one.
func TestRound26DeepSeekModelNotExist(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_deepseek_err_400_model_not_exist.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("deepseek-r1"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindNotFound || pe.HTTPStatus != 400 || pe.Code != "invalid_request_error" || pe.Message != "Model Not Exist" {
		t.Errorf("kind %v status %d code %q message %q", pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
	srv = providertest.Replay(t, providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"error":{"message":"Tool schema: Model Not Exist in enum","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`)})
	_, err = newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("deepseek-chat"))
	if pe := providerError(t, err); pe.Kind != provider.KindInvalidRequest {
		t.Errorf("other words: kind %v", pe.Kind)
	}
}

// TestRound26GroqModelRefusals: Groq's three refusals of what a model
// cannot do for this request, as langflow-ai/langflow#11120 quotes them
// from its chat completions (400 invalid_request_error each;
// testdata/dialect_groq_err_400_model_terms_required.http for the first):
// a model whose terms the organization has not accepted (code
// model_terms_required), a model that does not chat ("The model … does not
// support chat completions"), a model without tools ("tool calling is not
// supported with this model", param "tool calling"). **Bug:** all three
// were invalid requests, which never fall back. Now permission denied (the
// model refused to the organization, as Groq's 403 for a model blocked at
// the organization level), unsupported (the operation, as Azure's
// OperationNotSupported) and a capability: never retried, worth a
// fallback.
func TestRound26GroqModelRefusals(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_groq_err_400_model_terms_required.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("canopylabs/orpheus-arabic-saudi"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindPermissionDenied || pe.HTTPStatus != 400 || pe.Code != "model_terms_required" ||
		!strings.HasPrefix(pe.Message, "The model canopylabs/orpheus-arabic-saudi requires terms acceptance.") {
		t.Errorf("kind %v status %d code %q message %q", pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback %v; want false, true", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
	checkKinds(t, []kindCase{
		{400, `{"error":{"message":"The model canopylabs/orpheus-arabic-saudi does not support chat completions","type":"invalid_request_error"}}`, provider.KindUnsupported},
		{400, `{"error":{"message":"tool calling is not supported with this model","type":"invalid_request_error","param":"tool calling"}}`, provider.KindCapability},
		{400, `{"error":{"message":"Please note: tool calling is not supported with this model in some regions","type":"invalid_request_error"}}`, provider.KindInvalidRequest},
	})
}

// kindCase is an error answer given inline and the kind it must read as.
type kindCase struct {
	status int
	body   string
	want   provider.Kind
}

// checkKinds replays each answer and checks its kind, and that a route
// falls back from it unless it is the caller's invalid request.
func checkKinds(t *testing.T, cases []kindCase) {
	t.Helper()
	for _, tc := range cases {
		srv := providertest.Replay(t, providertest.Recording{Status: tc.status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tc.body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("m"))
		if pe := providerError(t, err); pe.Kind != tc.want {
			t.Errorf("%s: kind %v, want %v", tc.body, pe.Kind, tc.want)
		}
		if !pipeline.FallbackWorthy(err) != (tc.want == provider.KindInvalidRequest) {
			t.Errorf("%s: fallback %v", tc.body, pipeline.FallbackWorthy(err))
		}
	}
}
