// Package provider is what every provider adapter implements and imports:
// the normalized request, result and stream event types, the typed provider
// error, and small helpers for the HTTP details all providers share. It is to
// llmrelay what database/sql/driver is to database/sql. Adapters never import
// the server, grpc/status, or each other.
package provider

import (
	"context"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Provider is a provider adapter. It only translates: no retries, no timing,
// no raw capture (the server's call pipeline does those around it).
type Provider interface {
	// Generate calls the provider's non-streaming endpoint.
	Generate(ctx context.Context, req *Request) (*Result, error)
	// Stream calls the provider's streaming endpoint. It returns once the
	// provider has answered with a success status; an error status is
	// returned as an *Error.
	Stream(ctx context.Context, req *Request) (Stream, error)
}

// Embedder is implemented by providers with an embeddings API.
type Embedder interface {
	Embed(ctx context.Context, req *EmbedRequest) (*Result, error)
}

// Request is one normalized generation request, after the server merged and
// validated the options. Adapters must not modify it.
type Request struct {
	// PROTOCOL_CHAT, PROTOCOL_VISION, PROTOCOL_DOCUMENTS, PROTOCOL_AUDIO or
	// PROTOCOL_TOOLS.
	Protocol llmrelayv1.Protocol
	// The provider's model id (or Azure deployment name).
	Model string
	// The configured request format, e.g. "openai-chat", "openai-reasoning".
	Format string
	// Reasoning is true for reasoning models (OpenAI o-series, gpt-5):
	// max_completion_tokens instead of max_tokens, no temperature/top_p.
	Reasoning bool
	// NativeStructuredOutput: the model takes a JSON schema response_format
	// natively where the provider has two mechanisms (Anthropic: the
	// model's structured_output setting, output_config.format instead of a
	// forced tool).
	NativeStructuredOutput bool
	// The conversation, oldest first.
	Messages []*llmrelayv1.Message
	// Tools offered to the model (PROTOCOL_TOOLS only).
	Tools []*llmrelayv1.Tool
	// The merged options; never nil.
	Options *llmrelayv1.GenerationOptions
	// Provider-specific options; may be nil.
	ProviderOptions *llmrelayv1.ProviderOptions
	// HostedMCP are MCP servers the provider calls itself (agent runs on the
	// OpenAI Responses API only; the server refuses them elsewhere).
	HostedMCP []HostedMCP
	// DropSignatures: the deployment refused the conversation's reasoning
	// state as not its own (Error.SignatureRefused), and this attempt
	// sends the conversation without it, the way its provider documents
	// for history it did not produce: Gemini's placeholder
	// thoughtSignature on function calls (other signatures left out),
	// Anthropic without thinking and redacted_thinking blocks, the
	// Responses API without reasoning items. Each change is a warning.
	DropSignatures bool
}

// HostedMCP is an MCP server passed to the provider as a hosted tool.
type HostedMCP struct {
	// Label names the server for the model (OpenAI server_label).
	Label        string
	URL          string
	AllowedTools []string
	// Headers for the server; Authorization is mapped to the provider's own
	// field. Secrets: never logged.
	Headers map[string]string
}

// EmbedRequest is one normalized embeddings request.
type EmbedRequest struct {
	Model  string
	Format string
	Inputs []string
	// Requested output dimensions; nil for the model's default.
	Dimensions      *int32
	ProviderOptions *llmrelayv1.ProviderOptions
}

// Result is a normalized provider answer.
type Result struct {
	// The assistant message (Generate); nil for embeddings.
	Message *llmrelayv1.Message
	// The embeddings (Embed), in input order.
	Embeddings []*llmrelayv1.Embedding
	// What the format and the provider layers know: response_id,
	// create_time, resolved_model, usage, finish_reason,
	// provider_finish_reason, provider_request_id, rate_limit, extended,
	// tool_call_count, embeddings_count, warnings. The server fills the rest.
	Meta *llmrelayv1.ResponseMeta
}
