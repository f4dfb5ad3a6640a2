package provider

import "testing"

// TestCapabilityRefusal: the providers' exact words for a capability the
// model lacks (capabilityRefusalRE, each source cited there) are matched
// whole, with surrounding space; a message that only mentions a capability,
// wraps the provider's words in a proxy's, or refuses a value or a form of
// the request is not.
func TestCapabilityRefusal(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		"deepseek-reasoner does not support Function Calling",
		"deepseek-reasoner does not support Function Calling.",
		`"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`,
		"/config/models/squirtle_instruct is not a multimodal model",
		"Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.",
		"This model does not support response format `json_schema`. See supported models at https://console.groq.com/docs/structured-outputs#supported-models",
		"This model does not support response format `json_schema`.",
		"Unsupported parameter: 'reasoning_effort' is not supported with this model.",
		"Unsupported parameter: 'reasoning.effort' is not supported with this model.",
		"Invalid content type. image_url is only supported by certain models.",
		"<400> InternalError.Algo.InvalidParameter: The tool call is not supported.",
		"Invalid request content: The model does not support tool use or function calling but tools or tool_choice have been specified on the request.",
		"'claude-3-5-sonnet-20241022' does not support thinking.",
		"claude-3-5-sonnet-20241022 does not support thinking",
		"Function calling is not enabled for models/gemma-3-12b-it",
		"Developer instruction is not enabled for models/gemini-pro",
		"Json mode is not enabled for models/gemini-pro",
		"JSON mode is not enabled for models/gemini-pro",
		"  Function calling is not enabled for models/gemma-3-27b-it\n",
	} {
		if !CapabilityRefusal(msg) {
			t.Errorf("%q: not a capability refusal", msg)
		}
	}
	for _, msg := range []string{
		"",
		"litellm.BadRequestError: deepseek-reasoner does not support Function Calling",
		"Developer instruction is not enabled for models/gemini-2.0-flash-exp (request id: 20250422153215241482202V9CO7RnU)",
		"Function calling config is set without function_declarations.",
		"Function calling mode `ANY` is not enabled for api version v1beta",
		"Unsupported parameter: 'temperature' is not supported with this model.",
		"Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
		`"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`,
		"Thinking mode does not support this tool_choice",
		"The model is not a multimodal model",
		"Invalid parameter: 'response_format' must be one of json_object, json_schema, text.",
		"litellm.BadRequestError: This model does not support response format `json_schema`.",
		"This model does not support response format `json_schema`. See supported models at https://console.groq.com/docs (request id: 7)",
		"<400> InternalError.Algo.InvalidParameter: The value of the enable_thinking parameter is restricted to True.",
		"max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20241022",
	} {
		if CapabilityRefusal(msg) {
			t.Errorf("%q: read as a capability refusal", msg)
		}
	}
	// Ollama's own words, which OllamaRefusalKind reads.
	for msg, want := range map[string]Kind{
		"this model does not support image input (ref: b8bd630e-4a39-4b57-82af-9158ee9d5703)": KindCapability,
		"registry.ollama.ai/library/gemma3:1b does not support tools":                         KindCapability,
		`"all-minilm" does not support chat`:                                                  KindUnsupported,
		"this model does not support images, it said":                                         KindUnknown,
	} {
		if got := OllamaRefusalKind(msg); got != want {
			t.Errorf("OllamaRefusalKind(%q) = %v, want %v", msg, got, want)
		}
	}
}
