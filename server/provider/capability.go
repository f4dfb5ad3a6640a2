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
//   - GitHub Copilot's 400 unsupported_value "The use of the web search
//     tool is not supported." (Anthropic's server-side web search sent to
//     its Messages or Responses endpoint, which does not run it:
//     caozhiyuan/copilot-api#185, #82, #189); Anthropic's own API runs the
//     same tool;
//   - Groq's 400 invalid_request_error "tool calling is not supported with
//     this model" (param "tool calling": langflow-ai/langflow#11120).
//
// Each is anchored at both ends: a message that only mentions a capability
// (a malformed tool schema, a proxy's own words around the provider's) is
// not one.
var capabilityRefusalRE = regexp.MustCompile(`^(?:` +
	`deepseek-[\w.-]+ does not support Function Calling\.?` +
	`|"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set` +
	`|\S+ is not a multimodal model` +
	`|Invalid parameter: 'response_format' of type 'json_object' is not supported with this model\.?` +
	`|Unsupported parameter: 'reasoning(?:_effort|\.effort)' is not supported with this model\.?` +
	`|Invalid content type\. image_url is only supported by certain models\.?` +
	`|<400> InternalError\.Algo\.InvalidParameter: The tool call is not supported\.?` +
	`|Invalid request content: The model does not support tool use or function calling but tools or tool_choice have been specified on the request\.?` +
	`|'[\w.:@/-]+' does not support thinking\.?|claude-[\w.:@-]+ does not support thinking\.?` +
	`|(?:Function calling|Developer instruction|(?i:json) mode) is not enabled for models/[\w.-]+` +
	`|The use of the web search tool is not supported\.?` +
	`|tool calling is not supported with this model\.?` +
	`)$`)

// CapabilityRefusal reports whether msg is a provider's refusal of a
// capability its model lacks (capabilityRefusalRE): tools, vision,
// thinking, system instructions, JSON mode. That is the deployment's
// model, not the request (a model with the capability serves the same
// request): the adapters read it as KindCapability, never retried, a
// reason to fall back, where a status would make it an invalid request.
func CapabilityRefusal(msg string) bool {
	return capabilityRefusalRE.MatchString(strings.TrimSpace(msg))
}

// openrouterNoEndpointsRE matches OpenRouter's 404 when none of the
// model's providers (endpoints) has a capability the request needs: "No
// endpoints found that support tool use. To learn more about provider
// routing, visit: https://openrouter.ai/docs/provider-routing"
// (evalstate/fast-agent#122, FoundationAgents/OpenManus#55; the newer link
// …/docs/guides/routing/provider-selection: bobrware/bobrchat#60), with
// "Try disabling \"question\"." naming a tool of the request
// (Kilo-Org/kilocode#9006), and "No endpoints found that support image
// input" (images to a text model: anomalyco/opencode's and others' vision
// fallbacks key on it). Whole: a message that only contains the words is
// not one.
var openrouterNoEndpointsRE = regexp.MustCompile(`^No endpoints found that support (?:tool use|image input)\.?(?: Try disabling "[^"]*"\.)?(?: To learn more about provider routing, visit: \S+)?$`)

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
