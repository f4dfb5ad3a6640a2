package catalog

import (
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Format is a request format: the wire dialect a capability speaks, which
// provider types speak it, and the options it knows.
type Format struct {
	Name          string
	ProviderTypes []string
	Protocols     []llmrelayv1.Protocol
	// Options are the option names the format accepts (proto field names
	// of GenerationOptions, plus "dimensions" for embeddings).
	Options map[string]bool
	// Reasoning marks formats for reasoning models.
	Reasoning bool
}

var (
	chatProtocols  = []llmrelayv1.Protocol{llmrelayv1.Protocol_PROTOCOL_CHAT, llmrelayv1.Protocol_PROTOCOL_VISION, llmrelayv1.Protocol_PROTOCOL_TOOLS}
	embedProtocols = []llmrelayv1.Protocol{llmrelayv1.Protocol_PROTOCOL_EMBEDDINGS}
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Formats are the known formats by name.
var Formats = map[string]*Format{
	"builtin": {Name: "builtin", ProviderTypes: []string{"builtin"},
		Protocols: append(append([]llmrelayv1.Protocol{}, chatProtocols...), embedProtocols...),
		Options: set("temperature", "top_p", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed",
			"response_format", "dimensions")},
	"openai-chat": {Name: "openai-chat", ProviderTypes: []string{"openai", "azure"}, Protocols: chatProtocols,
		Options: set("temperature", "top_p", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed",
			"response_format", "presence_penalty", "frequency_penalty", "reasoning_effort")},
	"openai-tools": {Name: "openai-tools", ProviderTypes: []string{"openai", "azure"}, Protocols: chatProtocols,
		Options: set("temperature", "top_p", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed",
			"response_format", "presence_penalty", "frequency_penalty", "reasoning_effort")},
	"openai-reasoning": {Name: "openai-reasoning", ProviderTypes: []string{"openai", "azure"}, Protocols: chatProtocols, Reasoning: true,
		Options: set("max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed", "response_format", "reasoning_effort")},
	"openai-responses": {Name: "openai-responses", ProviderTypes: []string{"openai", "azure"}, Protocols: chatProtocols,
		Options: set("temperature", "top_p", "max_tokens", "tool_choice", "parallel_tool_calls", "response_format", "reasoning_effort")},
	"openai-embeddings": {Name: "openai-embeddings", ProviderTypes: []string{"openai", "azure"}, Protocols: embedProtocols,
		Options: set("dimensions")},
	"anthropic-messages": {Name: "anthropic-messages", ProviderTypes: []string{"anthropic"}, Protocols: chatProtocols,
		Options: set("temperature", "top_p", "top_k", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "response_format")},
	"gemini": {Name: "gemini", ProviderTypes: []string{"gemini"}, Protocols: chatProtocols,
		Options: set("temperature", "top_p", "top_k", "max_tokens", "stop", "seed", "tool_choice", "response_format",
			"presence_penalty", "frequency_penalty", "reasoning_effort")},
	"gemini-embeddings": {Name: "gemini-embeddings", ProviderTypes: []string{"gemini"}, Protocols: embedProtocols,
		Options: set("dimensions")},
	"ollama": {Name: "ollama", ProviderTypes: []string{"ollama"}, Protocols: chatProtocols,
		Options: set("temperature", "top_p", "top_k", "max_tokens", "stop", "seed", "response_format",
			"presence_penalty", "frequency_penalty")},
	"ollama-embeddings": {Name: "ollama-embeddings", ProviderTypes: []string{"ollama"}, Protocols: embedProtocols,
		Options: set("dimensions")},
}
