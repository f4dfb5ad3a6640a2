package openai

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25bCapabilityRefused: the compatible servers' refusals of a
// capability the deployment's model (or server) lacks, each body as a
// client quoted it (testdata/README.md, "Round 25: capability refusals"):
// DeepSeek's "deepseek-reasoner does not support Function Calling"
// (spring-projects/spring-ai#2643), vLLM without a tool parser ("\"auto\"
// tool choice requires --enable-auto-tool-choice and --tool-call-parser to
// be set", langchain4j/langchain4j#3475), OpenAI's "Invalid content type.
// image_url is only supported by certain models." (vllm-project/vllm#11629)
// and xAI's tool refusal (google/adk-python#952). They were invalid
// requests, which never fall back; a model (or server) with the capability
// serves the same request: KindCapability, never retried, a reason to fall
// back, unary and before a stream. The provider's words, status, param and
// code are kept.
func TestRound25bCapabilityRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, msg, param, code string
	}{
		{"dialect_deepseek_err_400_function_calling.http", "deepseek-reasoner does not support Function Calling", "", "invalid_request_error"},
		{"dialect_vllm_err_400_auto_tool_choice.http", `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`, "", "400"},
		{"err_400_reasoning_effort_unsupported.http", "Unsupported parameter: 'reasoning_effort' is not supported with this model.", "reasoning_effort", "unsupported_parameter"},
		{"err_400_image_url_unsupported.http", "Invalid content type. image_url is only supported by certain models.", "messages.[0].content.[1].type", "invalid_request_error"},
		{"dialect_vllm_err_400_not_multimodal.http", "/config/models/squirtle_instruct is not a multimodal model", "", "400"},
		{"dialect_dashscope_err_400_tool_call_unsupported.http", "<400> InternalError.Algo.InvalidParameter: The tool call is not supported.", "", "invalid_parameter_error"},
		{"dialect_xai_err_400_tools_unsupported.http", "Invalid request content: The model does not support tool use or function calling but tools or tool_choice have been specified on the request.", "", ""},
	} {
		for _, stream := range []bool{false, true} {
			srv := providertest.ReplayFile(t, td(tc.file))
			p := newTestProvider(t, kOpenAI, srv.URL)
			var err error
			if stream {
				var s provider.Stream
				if s, err = p.Stream(context.Background(), simpleRequest("m")); err == nil {
					for err == nil {
						_, err = s.Recv()
					}
					s.Close()
				}
			} else {
				_, err = p.Generate(context.Background(), simpleRequest("m"))
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s stream %v: error %v", tc.file, stream, err)
			}
			if pe.Kind != provider.KindCapability || pe.HTTPStatus != 400 || pe.Message != tc.msg || pe.Param != tc.param || pe.Code != tc.code {
				t.Errorf("%s stream %v: error kind %v status %d message %q param %q code %q", tc.file, stream, pe.Kind, pe.HTTPStatus, pe.Message, pe.Param, pe.Code)
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream %v: retryable %v, fallback-worthy %v", tc.file, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
}

// TestRound25bCapabilityWordsTight: only the providers' exact words are a
// capability refusal; a 400 that mentions a capability in other words, the
// same words inside a proxy's sentence, or at another status stays what its
// status says. Ollama's runner refusing an image for a model without vision
// ("this model is missing data required for image input", a 500 through
// /v1 as natively) is a capability now too; an image it cannot decode
// stays the request's.
func TestRound25bCapabilityWordsTight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		msg    string
		kind   provider.Kind
	}{
		{400, "deepseek-reasoner does not support Function Calling.", provider.KindCapability},                                         // AstrBotDevs/AstrBot#2697's later wording
		{400, "Function calling is not enabled for models/gemma-3-12b-it", provider.KindCapability},                                    // Gemini's compatible endpoint
		{400, "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.", provider.KindCapability}, // idootop/mi-gpt#142
		{400, "GLM-5.2 is not a multimodal model", provider.KindCapability},
		{400, "Invalid parameter: 'response_format' must be one of json_object, json_schema, text.", provider.KindInvalidRequest},
		{400, "The model is not a multimodal model", provider.KindInvalidRequest},
		{400, "Unsupported parameter: 'reasoning.effort' is not supported with this model.", provider.KindCapability}, // the Responses API's
		{400, "Unsupported parameter: 'temperature' is not supported with this model.", provider.KindInvalidRequest},
		{400, "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.", provider.KindInvalidRequest},
		{400, "Invalid 'tools[0].function.name': string does not match pattern.", provider.KindInvalidRequest},
		{400, "Thinking mode does not support this tool_choice", provider.KindInvalidRequest},
		{400, "litellm.BadRequestError: deepseek-reasoner does not support Function Calling", provider.KindInvalidRequest},
		{400, "The model does not support tool use", provider.KindInvalidRequest},
		{500, "Invalid content type. image_url is only supported by certain models.", provider.KindUnavailable},
		{500, "Failed to create new sequence: failed to process inputs: this model is missing data required for image input", provider.KindCapability},
		{500, "Failed to create new sequence: failed to process inputs: image: unknown format", provider.KindInvalidRequest},
	} {
		body := providertest.MustJSON(map[string]any{"error": map[string]any{"message": tc.msg, "type": "invalid_request_error", "param": nil, "code": nil}})
		srv := providertest.Replay(t, providertest.Recording{Status: tc.status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("m"))
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%q: error %v", tc.msg, err)
		}
		if pe.Kind != tc.kind {
			t.Errorf("%d %q: kind %v, want %v", tc.status, tc.msg, pe.Kind, tc.kind)
		}
		if tc.kind == provider.KindCapability && (pipeline.Retryable(err) || !pipeline.FallbackWorthy(err)) {
			t.Errorf("%q: retryable %v, fallback-worthy %v", tc.msg, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
	}
}
