package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// relay26Err sends a request to the recording, unary or as a stream, and
// returns the provider error.
func relay26Err(t *testing.T, file string, stream bool) (*provider.Error, error) {
	t.Helper()
	srv := providertest.ReplayFile(t, td(file))
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
		t.Fatalf("%s stream %v: error %v", file, stream, err)
	}
	return pe, err
}

// TestRelay26CapabilityRefused: more providers' refusals of a capability
// the deployment's model (or server) lacks, each body as a client quoted
// it (testdata/README.md, "Round 26: capability refusals and relays'
// wrappers"): Groq's "tool calling is not supported with this model"
// (langflow-ai/langflow#11120), OpenRouter's 404 "No endpoints found that
// support tool use. …" (bobrware/bobrchat#60) and llama.cpp's 500s for
// tools without --jinja (containers/ramalama#988) or before it
// (QwenLM/Qwen3#822). They were an invalid request, an unknown model
// (not found) and a server fault retried: KindCapability, never retried,
// a reason to fall back, unary and before a stream, the provider's
// status, words and code kept.
func TestRelay26CapabilityRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, msg, param, code string
		status                 int
	}{
		{"dialect_groq_err_400_tool_calling_unsupported.http", "tool calling is not supported with this model", "tool calling", "invalid_request_error", 400},
		{"dialect_openrouter_err_404_no_tool_endpoints.http", "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/guides/routing/provider-selection", "", "404", 404},
		{"dialect_llamacpp_err_500_tools_requires_jinja.http", "tools param requires --jinja flag", "", "500", 500},
		{"dialect_llamacpp_err_500_unsupported_param_tools.http", "Unsupported param: tools", "", "500", 500},
	} {
		for _, stream := range []bool{false, true} {
			pe, err := relay26Err(t, tc.file, stream)
			if pe.Kind != provider.KindCapability || pe.HTTPStatus != tc.status || pe.Message != tc.msg || pe.Param != tc.param || pe.Code != tc.code {
				t.Errorf("%s stream %v: kind %v status %d message %q param %q code %q", tc.file, stream, pe.Kind, pe.HTTPStatus, pe.Message, pe.Param, pe.Code)
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream %v: retryable %v, fallback-worthy %v", tc.file, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
}

// TestRelay26AzureFunctionsUnsupported: Azure OpenAI's 400 for tools on a
// deployment whose model or API version has none
// (MicrosoftDocs/azure-docs#121504, testdata/
// azure_err_400_functions_unsupported.http): a capability of the
// deployment (it was an invalid request, never falling back), Azure's
// words and request id kept.
func TestRelay26AzureFunctionsUnsupported(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("azure_err_400_functions_unsupported.http"))
	_, err := newTestProvider(t, kAzure, srv.URL).Generate(context.Background(), simpleRequest("gpt-35-turbo"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindCapability || pe.HTTPStatus != 400 || !strings.HasPrefix(pe.Message, "Functions are not supported for this API version or this model version.") ||
		pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("error %+v", pe)
	}
}

// TestRelay26CapabilityWordsTight: the new words are matched whole and
// under their own status only; a message around them, a neighbouring
// refusal of the request's form, or another status is not a capability.
func TestRelay26CapabilityWordsTight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		msg    string
		want   bool
	}{
		{400, "`tool calling` is not supported with this model", true}, // vercel/ai#11516; real_maruel_groq_compound_tools_err
		{400, "`reasoning_effort` is not supported with this model", true},
		{400, "tools is not supported in this model. For a list of supported models, refer to https://platform.openai.com/docs/guides/function-calling#models-supporting-function-calling.", true},
		{400, "Model does not support images. Please use a model that does.", true},
		{404, `No endpoints found that support tool use. Try disabling "question". To learn more about provider routing, visit: https://openrouter.ai/docs/guides/routing/provider-selection`, true},
		{404, "No endpoints found that support the provided 'tool_choice' value. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing", true},
		{500, "tools param requires --jinja flag", true},
		{0, "tool calling is not supported with this model", true},
		{500, "Internal server error: Unsupported tool_call_parser: None", true}, // sgl-project/sglang#10184
		{500, "This model doesn't support tool use in streaming mode.\n", true},  // obot-platform/obot#6740
		{400, "This model doesn't support tool use in streaming mode.", true},
		{405, "Tool calling is not supported for model: mistralai/Mistral-Small-24B-Instruct-2501", true},
		{400, "Tool calling is not supported for model: mistralai/Mistral-Small-24B-Instruct-2501", false},
		// Bedrock's refusal of a tool_choice form (vercel/ai#4396): the
		// request's to drop, as round 25 decided for tool_choice values.
		{400, "This model doesn't support the toolConfig.toolChoice.tool field. Remove toolConfig.toolChoice.tool and try again.", false},
		{500, "Internal server error: Unsupported tool_call_parser: qwen25", false},
		// Not capabilities.
		{400, "`logprobs` is not supported with this model", false},
		{400, "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing", false},
		{404, "No endpoints found for bad/model.", false},
		{404, "No endpoints found matching your data policy (Free model publication). Configure: https://openrouter.ai/settings/privacy", false},
		{400, "tools param requires --jinja flag", false},
		{503, "tools param requires --jinja flag", false},
		{500, "Unsupported param: tool_choice", false},
		{400, "Error: tool calling is not supported with this model", false},
	} {
		if got := provider.CapabilityRefusalAt(tc.status, tc.msg); got != tc.want {
			t.Errorf("%d %q: %v, want %v", tc.status, tc.msg, got, tc.want)
		}
	}
}

// TestRelay26LiteLLMWrapped: LiteLLM's proxy wraps the provider's answer
// in its own 400 ("litellm.BadRequestError: <Provider>Exception - …",
// type and param null, code "400"); the provider's words classify it and
// are the message, the provider named in the meta: Anthropic's context
// limit (BrokkAi/brokk-app#540: context length, as before, now with
// Anthropic's own message), Azure's content filter through
// litellm.ContentPolicyViolationError (meta-llama/PurpleLlama#109: was an
// invalid request) and Anthropic's spend limit (BerriAI/litellm#37599: was
// an invalid request; the account's quota, not retried, a reason to fall
// back).
func TestRelay26LiteLLMWrapped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, msg, upstream string
		kind                provider.Kind
	}{
		{"litellm_err_400_context_limit_anthropic.http", "input length and `max_tokens` exceed context limit: 179413 + 32768 > 200000, decrease input length or `max_tokens` and try again", "Anthropic", provider.KindContextLength},
		{"litellm_err_400_content_policy_azure.http", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766", "Azure", provider.KindContentFilter},
		{"litellm_err_400_anthropic_usage_limits.http", "You have reached your specified API usage limits. You will regain access on 2026-09-01 at 00:00 UTC.", "Anthropic", provider.KindRateLimited},
	} {
		for _, stream := range []bool{false, true} {
			pe, err := relay26Err(t, tc.file, stream)
			if pe.Kind != tc.kind || pe.HTTPStatus != 400 || pe.Message != tc.msg || pe.Extended[extUpstreamProvider] != tc.upstream {
				t.Errorf("%s stream %v: kind %v status %d message %q upstream %v", tc.file, stream, pe.Kind, pe.HTTPStatus, pe.Message, pe.Extended[extUpstreamProvider])
			}
			if pipeline.Retryable(err) {
				t.Errorf("%s stream %v: retryable", tc.file, stream)
			}
		}
	}
}

// TestRelay26LiteLLMUnwrap: the wrapper's parts, on LiteLLM's shapes with
// the providers' real words inside: a capability, a signature refusal and
// a plain 400 read as they would unwrapped; a message that is not
// LiteLLM's, or whose inner answer is Python's repr of a dict, is not
// read.
func TestRelay26LiteLLMUnwrap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg, inner, provider string
		names                int
	}{
		{"litellm.BadRequestError: AnthropicException - b'{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.1.content.0: Invalid `signature` in `thinking` block\"}}'. Received Model Group=claude\nAvailable Model Group Fallbacks=None",
			"messages.1.content.0: Invalid `signature` in `thinking` block", "Anthropic", 1},
		{"litellm.BadRequestError: DeepseekException - {\"error\":{\"message\":\"deepseek-reasoner does not support Function Calling\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_request_error\"}}\nReceived Model Group=ds\nAvailable Model Group Fallbacks=None",
			"deepseek-reasoner does not support Function Calling", "Deepseek", 1},
		{"litellm.BadRequestError: litellm.ContentPolicyViolationError: litellm.ContentPolicyViolationError: AzureException - The response was filtered.\nmodel=gpt-35-turbo. content_policy_fallback=None.",
			"The response was filtered.", "Azure", 3},
		{"litellm.BadRequestError: OpenAIException - Error code: 400 - {'error': {'message': 'x'}}", "", "", 1},
		{"BadRequestError: AnthropicException - b'{}'", "", "", 0},
	} {
		up, names := litellmUpstream(tc.msg)
		if len(names) != tc.names {
			t.Errorf("%q: names %v", tc.msg, names)
		}
		if tc.inner == "" {
			if up != nil {
				t.Errorf("%q: read %+v", tc.msg, up)
			}
			continue
		}
		if up == nil || string(up.err.Message) != tc.inner || up.provider != tc.provider {
			t.Errorf("%q: %+v", tc.msg, up)
		}
	}
	// Classified as unwrapped: DeepSeek's capability refusal through the
	// proxy is a capability; a 400 of LiteLLM's own words stays invalid.
	p := newTestProvider(t, kOpenAI, "http://litellm.invalid")
	for _, tc := range []struct {
		body string
		kind provider.Kind
	}{
		{`{"message":"litellm.BadRequestError: DeepseekException - {\"error\":{\"message\":\"deepseek-reasoner does not support Function Calling\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_request_error\"}}\nReceived Model Group=ds\nAvailable Model Group Fallbacks=None","type":null,"param":null,"code":"400"}`, provider.KindCapability},
		{`{"message":"litellm.BadRequestError: Invalid model name passed in model=bad. Call /v1/models to view available models for your key.","type":null,"param":null,"code":"400"}`, provider.KindInvalidRequest},
	} {
		e := p.errorFromObject([]byte(tc.body), 400, "m", &provider.Error{Provider: "openai", HTTPStatus: 400, Kind: provider.KindInvalidRequest})
		if e.Kind != tc.kind {
			t.Errorf("%s: kind %v (%q)", tc.body, e.Kind, e.Message)
		}
	}
}

// TestRelay26GatewayPrefixed: Portkey's gateway and TrueFoundry's keep
// the provider's error object but prefix its message with the provider
// ("deepseek error: …", Portkey-AI/gateway src/providers/utils.ts;
// truefoundry/models#944's DeepInfra body): the provider's own words
// classify it and are the message, the provider named in the meta. A
// capability refusal was an invalid request (Portkey, a 400) or an
// unknown 405; a gateway's own message, without the prefix, stays its
// own.
func TestRelay26GatewayPrefixed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, msg, upstream string
		status              int
	}{
		{"portkey_err_400_deepseek_function_calling.http", "deepseek-reasoner does not support Function Calling", "deepseek", 400},
		{"truefoundry_err_405_deepinfra_tools.http", "Tool calling is not supported for model: mistralai/Mistral-Small-24B-Instruct-2501", "deepinfra", 405},
	} {
		for _, stream := range []bool{false, true} {
			pe, err := relay26Err(t, tc.file, stream)
			if pe.Kind != provider.KindCapability || pe.HTTPStatus != tc.status || pe.Message != tc.msg || pe.Extended[extUpstreamProvider] != tc.upstream {
				t.Errorf("%s stream %v: kind %v status %d message %q upstream %v", tc.file, stream, pe.Kind, pe.HTTPStatus, pe.Message, pe.Extended[extUpstreamProvider])
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream %v: retryable %v, fallback-worthy %v", tc.file, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
	env := map[string]json.RawMessage{"provider": json.RawMessage(`"openai"`)}
	if _, prov := gatewayPrefixed(env, json.RawMessage(`{"message":"Invalid API Key","type":null}`)); prov != "" {
		t.Error("a message without the prefix was read")
	}
	if _, prov := gatewayPrefixed(map[string]json.RawMessage{}, json.RawMessage(`{"message":"openai error: x"}`)); prov != "" {
		t.Error("a body without provider was read")
	}
}
