package provider

import (
	"regexp"
	"strings"
)

// capabilityRefusalRE matches, whole, the providers' own words for a
// capability the deployment's model (or server) lacks, each as a client
// quoted it from the provider's answer (the testdata READMEs cite them):
//
//   - DeepSeek's 400 invalid_request_error "deepseek-reasoner does not
//     support Function Calling" (spring-projects/spring-ai#2643,
//     evalstate/fast-agent#91; "…Calling." since September 2025,
//     AstrBotDevs/AstrBot#2697);
//   - vLLM's 400 BadRequestError "\"auto\" tool choice requires
//     --enable-auto-tool-choice and --tool-call-parser to be set" (a server
//     started without a tool parser: langchain4j/langchain4j#3475);
//   - vLLM's 400 "<model> is not a multimodal model" (images to a model
//     without vision: NVIDIA NIM's {"message":"/config/models/
//     squirtle_instruct is not a multimodal model","type":
//     "BadRequestError","param":null,"code":400},
//     Alishahryar1/free-claude-code#1233);
//   - OpenAI's 400 "Invalid parameter: 'response_format' of type
//     'json_object' is not supported with this model." (a model without
//     JSON mode: openai/openai-node#439 for gpt-3.5-turbo, idootop/mi-gpt#142
//     for gpt-4);
//   - Groq's 400 invalid_request_error "This model does not support
//     response format `json_schema`. See supported models at
//     https://console.groq.com/docs/structured-outputs#supported-models"
//     (structured outputs on some models only: maruel/genai's Groq
//     cassettes, testdata/real_maruel_groq_*_json_schema_*err.http in the
//     openai adapter);
//   - OpenAI's 400 unsupported_parameter "Unsupported parameter:
//     'reasoning_effort' is not supported with this model." (Chat
//     Completions) and "… 'reasoning.effort' …" (Responses), reasoning asked
//     of a model without it (gpt-4o, gpt-4.1-mini: curios-devops/curios
//     API_PARAMETER_FIXES_SUMMARY.md quotes the Responses one). Only the
//     reasoning parameter: another unsupported parameter (temperature,
//     stop) is the caller's to drop, an invalid request;
//   - OpenAI's (and Azure's) 400 "Invalid content type. image_url is only
//     supported by certain models." (a model without vision:
//     vllm-project/vllm#11629 quotes it whole, browser-use/web-ui#274);
//   - DashScope's 400 invalid_parameter_error "<400>
//     InternalError.Algo.InvalidParameter: The tool call is not supported."
//     (deepseek-v3 there without tools: agno-agi/agno#2929);
//   - xAI's 400 "Invalid request content: The model does not support tool
//     use or function calling but tools or tool_choice have been specified
//     on the request." (google/adk-python#952);
//   - Anthropic's 400 invalid_request_error "'claude-3-5-sonnet-20241022'
//     does not support thinking." (anthropics/claude-code#2245; #2507
//     quotes the name without quotes);
//   - the Gemini API's 400 INVALID_ARGUMENT "Function calling is not
//     enabled for models/gemma-3-12b-it" (agno-agi/agno#3505), "Developer
//     instruction is not enabled for models/gemma-3-27b-it" (a model
//     without system instructions: 0xPlaygrounds/rig#788) and "Json mode is
//     not enabled for models/gemini-pro" (google-gemini/
//     deprecated-generative-ai-python#137);
//   - Groq's 400 invalid_request_error "tool calling is not supported with
//     this model" (param "tool calling": langflow-ai/langflow#11120), "`tool
//     calling` is not supported with this model" (vercel/ai#11516, for
//     meta-llama/llama-guard-4-12b) and "`reasoning_effort` is not
//     supported with this model" (iamsrikanthnani/pluely#242, a Llama
//     model asked for reasoning);
//   - OpenAI's 400 "tools is not supported in this model. For a list of
//     supported models, refer to https://platform.openai.com/docs/guides/
//     function-calling#models-supporting-function-calling." (gpt-5-chat-
//     latest with tools: sbintuitions/flexeval#242);
//   - LM Studio's {"error":"Model does not support images. Please use a
//     model that does."} (an image to a model without a vision adapter:
//     lmstudio-ai/lmstudio-bug-tracker#908, #362);
//   - Azure OpenAI's 400 "Functions are not supported for this API version
//     or this model version. To learn how to user use function calling
//     with Azure OpenAI Service. Please refer to this wiki  https://…"
//     (MicrosoftDocs/azure-docs#121504: a deployment whose model or API
//     version has no tools; another deployment serves the request);
//   - GitHub Copilot's 400 unsupported_value "The use of the web search
//     tool is not supported." (Anthropic's server-side web search sent to
//     its Messages or Responses endpoint, which does not run it:
//     caozhiyuan/copilot-api#185, #82, #189); Anthropic's own API runs the
//     same tool.
//
// Each is anchored at both ends: a message that only mentions a capability
// (a malformed tool schema, a proxy's own words around the provider's) is
// not one.
var capabilityRefusalRE = regexp.MustCompile(`^(?:` +
	`deepseek-[\w.-]+ does not support Function Calling\.?` +
	`|"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set` +
	`|\S+ is not a multimodal model` +
	`|Invalid parameter: 'response_format' of type 'json_object' is not supported with this model\.?` +
	"|This model does not support response format `[a-z_]+`\\.(?: See supported models at \\S+)?" +
	`|Unsupported parameter: 'reasoning(?:_effort|\.effort)' is not supported with this model\.?` +
	`|Invalid content type\. image_url is only supported by certain models\.?` +
	`|<400> InternalError\.Algo\.InvalidParameter: The tool call is not supported\.?` +
	`|Invalid request content: The model does not support tool use or function calling but tools or tool_choice have been specified on the request\.?` +
	`|'[\w.:@/-]+' does not support thinking\.?|claude-[\w.:@-]+ does not support thinking\.?` +
	`|(?:Function calling|Developer instruction|(?i:json) mode) is not enabled for models/[\w.-]+` +
	"|`?tool calling`? is not supported with this model|`reasoning_effort` is not supported with this model" +
	`|tools is not supported in this model\. For a list of supported models, refer to https://platform\.openai\.com/docs/guides/function-calling#models-supporting-function-calling\.?` +
	`|Model does not support images\. Please use a model that does\.?` +
	`|This model doesn't support tool use in streaming mode\.` +
	`|Functions are not supported for this API version or this model version\. To learn how to user use function calling with Azure OpenAI Service\. Please refer to this wiki\s+https://learn\.microsoft\.com/\S+` +
	`|The use of the web search tool is not supported\.?` +
	`)$`)

// capabilityRefusalStatusRE matches, whole, the refusals of a capability
// that come under a status other than 400, each only under its own:
//
//   - llama.cpp's server's 500 server_error for tools on a server started
//     without --jinja, "tools param requires --jinja flag"
//     (containers/ramalama#988, defilantech/LLMKube#126), and before
//     that, "Unsupported param: tools" (ggml-org/llama.cpp#10920,
//     QwenLM/Qwen3#822): the server fails the same request every time,
//     no fault to retry;
//   - SGLang's 500 InternalServerError for tools on a server started
//     without --tool-call-parser, "Internal server error: Unsupported
//     tool_call_parser: None" (sgl-project/sglang#10184);
//   - Amazon Bedrock's "This model doesn't support tool use in streaming
//     mode." (Llama 4 Scout with tools in a stream), as a Bedrock-backed
//     gateway answers it with 500 (obot-platform/obot#6740) and Bedrock
//     itself with its 400 ValidationException (the 400 words);
//   - DeepInfra's 405 for tools to a model without them (below).
var capabilityRefusalStatusRE = map[int]*regexp.Regexp{
	500: regexp.MustCompile(`^(?:tools param requires --jinja flag|Unsupported param: tools` +
		`|Internal server error: Unsupported tool_call_parser: None` +
		`|This model doesn't support tool use in streaming mode\.)$`),
	// DeepInfra's "Tool calling is not supported for model:
	// mistralai/Mistral-Small-24B-Instruct-2501" under 405, as
	// TrueFoundry's gateway relayed it (truefoundry/models#944).
	405: regexp.MustCompile(`^Tool calling is not supported for model: \S+$`),
}

// CapabilityRefusal reports whether msg is a provider's refusal of a
// capability its model lacks (capabilityRefusalRE): tools, vision,
// thinking, system instructions, JSON mode. That is the deployment's
// model, not the request (a model with the capability serves the same
// request): the adapters read it as KindCapability, never retried, a
// reason to fall back, where a status would make it an invalid request.
func CapabilityRefusal(msg string) bool {
	return capabilityRefusalRE.MatchString(strings.TrimSpace(msg))
}

// CapabilityRefusalAt is CapabilityRefusal for an answer of the given
// HTTP status (0 inside a stream): the 400s' words at 400 or 0, and the
// words of the refusals that come under another status (llama.cpp's
// 500, DeepInfra's 405: capabilityRefusalStatusRE) at that status only;
// OpenRouter's 404 is OpenRouterNoEndpoints.
func CapabilityRefusalAt(status int, msg string) bool {
	if status == 400 || status == 0 {
		return CapabilityRefusal(msg)
	}
	if status == 404 && OpenRouterNoEndpoints(msg) {
		return true
	}
	re := capabilityRefusalStatusRE[status]
	return re != nil && re.MatchString(strings.TrimSpace(msg))
}

// openrouterNoEndpointsRE matches OpenRouter's 404 when none of the
// model's providers (endpoints) has a capability the request needs: "No
// endpoints found that support tool use. To learn more about provider
// routing, visit: https://openrouter.ai/docs/provider-routing"
// ({"error":{"message":…,"code":404}}: evalstate/fast-agent#122,
// FoundationAgents/OpenManus#55; the newer link
// …/docs/guides/routing/provider-selection: bobrware/bobrchat#60), with
// "Try disabling \"question\"." naming a tool of the request
// (Kilo-Org/kilocode#9006), "No endpoints found that support image input"
// (images to a text model: anomalyco/opencode's and others' vision
// fallbacks key on it) and "No endpoints found that support the provided
// 'tool_choice' value." (zed-industries/zed#36094). Whole: a message that
// only contains the words is not one.
var openrouterNoEndpointsRE = regexp.MustCompile(`^No endpoints found that support (?:tool use|image input|the provided 'tool_choice' value)\.?(?: Try disabling "[^"]*"\.)?(?: To learn more about provider routing, visit: \S+)?$`)

// OpenRouterNoEndpoints reports whether msg is OpenRouter's refusal of a
// capability none of the model's providers has (openrouterNoEndpointsRE):
// a 404, which by status reads as a model not found, but the model exists
// and lacks the capability (tools, vision), as DeepSeek's "does not
// support Function Calling" and Ollama's "does not support tools" say in a
// 400. The adapters read it as KindCapability (FailedPrecondition
// CAPABILITY_NOT_SUPPORTED): never retried, a route falls back, as it did
// on the 404.
func OpenRouterNoEndpoints(msg string) bool {
	return openrouterNoEndpointsRE.MatchString(strings.TrimSpace(msg))
}
