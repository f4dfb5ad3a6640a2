package catalog

import (
	"fmt"
	"math"

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
	// ReasoningRules: the format follows OpenAI's split between reasoning
	// models (no temperature or top_p) and the others (no
	// reasoning_effort), and model names with a reasoning prefix
	// (ReasoningPrefixes) are reasoning models by default. Other formats
	// judge reasoning_effort and temperature by what their API accepts:
	// Gemini takes both on any model, Ollama maps reasoning_effort to
	// `think`, Anthropic thinks by budget (provider_options).
	ReasoningRules bool
	// Ranges bound the number options as the format's API documents them;
	// an option without a range must only be finite.
	Ranges map[string]Range
	// MaxStop is the most stop sequences the format's API takes (0: no
	// documented limit). OpenAI's 4 is its own API's, not the format's
	// (compatible servers take more): the openai adapter checks it for
	// api.openai.com and Azure.
	MaxStop int
	// Int32Seed: the API's seed is a 32-bit integer (Gemini's
	// GenerationConfig.seed is an int32; the contract's is an int64).
	Int32Seed bool
}

// Range is the accepted interval of a number option: [Min, Max], or
// [Min, Max) with MaxOpen.
type Range struct {
	Min, Max float64
	MaxOpen  bool
}

// Contains reports whether v is in the range (never for NaN).
func (r Range) Contains(v float64) bool {
	if r.MaxOpen {
		return v >= r.Min && v < r.Max
	}
	return v >= r.Min && v <= r.Max
}

func (r Range) String() string {
	hi := "]"
	if r.MaxOpen {
		hi = ")"
	}
	return fmt.Sprintf("[%v, %v%s", r.Min, r.Max, hi)
}

// The documented ranges. OpenAI (API reference, Chat Completions and
// Responses): temperature 0-2, top_p 0-1, penalties -2.0-2.0. Anthropic
// (Messages API reference): temperature 0.0-1.0, top_p 0-1. Gemini
// (GenerationConfig reference): temperature 0.0-2.0, topP 0-1, penalties
// from -2.0 up to, not including, 2.0. Ollama documents no bounds beyond
// a non-negative temperature and top_p as a probability.
// geminiMaxStop: GenerationConfig.stopSequences is "the set of character
// sequences (up to 5) that will stop output generation" (Gemini API
// reference).
const geminiMaxStop = 5

var (
	openAIRanges = map[string]Range{
		"temperature": {Min: 0, Max: 2}, "top_p": {Min: 0, Max: 1},
		"presence_penalty": {Min: -2, Max: 2}, "frequency_penalty": {Min: -2, Max: 2},
	}
	anthropicRanges = map[string]Range{"temperature": {Min: 0, Max: 1}, "top_p": {Min: 0, Max: 1}}
	geminiRanges    = map[string]Range{
		"temperature": {Min: 0, Max: 2}, "top_p": {Min: 0, Max: 1},
		"presence_penalty": {Min: -2, Max: 2, MaxOpen: true}, "frequency_penalty": {Min: -2, Max: 2, MaxOpen: true},
	}
	ollamaRanges  = map[string]Range{"temperature": {Min: 0, Max: math.Inf(1)}, "top_p": {Min: 0, Max: 1}}
	builtinRanges = map[string]Range{"temperature": {Min: 0, Max: 2}, "top_p": {Min: 0, Max: 1}}
)

var (
	chatProtocols = []llmrelayv1.Protocol{llmrelayv1.Protocol_PROTOCOL_CHAT, llmrelayv1.Protocol_PROTOCOL_VISION, llmrelayv1.Protocol_PROTOCOL_TOOLS}
	// The formats with file input: documents (PDF, text) everywhere but
	// Ollama; audio on Chat Completions (input_audio) and Gemini only (the
	// Responses API and Anthropic take no audio).
	docProtocols   = append(append([]llmrelayv1.Protocol{}, chatProtocols...), llmrelayv1.Protocol_PROTOCOL_DOCUMENTS)
	audioProtocols = append(append([]llmrelayv1.Protocol{}, docProtocols...), llmrelayv1.Protocol_PROTOCOL_AUDIO)
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
		Protocols: append(append([]llmrelayv1.Protocol{}, audioProtocols...), embedProtocols...),
		Options: set("temperature", "top_p", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed",
			"response_format", "dimensions"), Ranges: builtinRanges},
	"openai-chat": {Name: "openai-chat", ProviderTypes: []string{"openai", "azure"}, Protocols: audioProtocols,
		ReasoningRules: true, Ranges: openAIRanges,
		Options: set("temperature", "top_p", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed",
			"response_format", "presence_penalty", "frequency_penalty", "reasoning_effort")},
	"openai-tools": {Name: "openai-tools", ProviderTypes: []string{"openai", "azure"}, Protocols: audioProtocols,
		ReasoningRules: true, Ranges: openAIRanges,
		Options: set("temperature", "top_p", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed",
			"response_format", "presence_penalty", "frequency_penalty", "reasoning_effort")},
	"openai-reasoning": {Name: "openai-reasoning", ProviderTypes: []string{"openai", "azure"}, Protocols: audioProtocols, Reasoning: true,
		ReasoningRules: true, Ranges: openAIRanges,
		Options: set("temperature", "top_p", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "seed", "response_format", "reasoning_effort")},
	"openai-responses": {Name: "openai-responses", ProviderTypes: []string{"openai", "azure"}, Protocols: docProtocols,
		ReasoningRules: true, Ranges: openAIRanges,
		Options: set("temperature", "top_p", "max_tokens", "tool_choice", "parallel_tool_calls", "response_format", "reasoning_effort")},
	"openai-embeddings": {Name: "openai-embeddings", ProviderTypes: []string{"openai", "azure"}, Protocols: embedProtocols,
		Options: set("dimensions")},
	"anthropic-messages": {Name: "anthropic-messages", ProviderTypes: []string{"anthropic"}, Protocols: docProtocols,
		Options: set("temperature", "top_p", "top_k", "max_tokens", "stop", "tool_choice", "parallel_tool_calls", "response_format",
			"reasoning_effort"),
		Ranges: anthropicRanges},
	"gemini": {Name: "gemini", ProviderTypes: []string{"gemini"}, Protocols: audioProtocols,
		Options: set("temperature", "top_p", "top_k", "max_tokens", "stop", "seed", "tool_choice", "response_format",
			"presence_penalty", "frequency_penalty", "reasoning_effort"),
		Ranges: geminiRanges, MaxStop: geminiMaxStop, Int32Seed: true},
	"gemini-embeddings": {Name: "gemini-embeddings", ProviderTypes: []string{"gemini"}, Protocols: embedProtocols,
		Options: set("dimensions")},
	"ollama": {Name: "ollama", ProviderTypes: []string{"ollama"}, Protocols: chatProtocols,
		Options: set("temperature", "top_p", "top_k", "max_tokens", "stop", "seed", "response_format",
			"presence_penalty", "frequency_penalty", "reasoning_effort"),
		Ranges: ollamaRanges},
	"ollama-embeddings": {Name: "ollama-embeddings", ProviderTypes: []string{"ollama"}, Protocols: embedProtocols,
		Options: set("dimensions")},
}
