package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys: the OpenTelemetry GenAI semantic conventions, and
// llmrelay's own under llmrelay.*.
const (
	OperationName       = attribute.Key("gen_ai.operation.name")
	ProviderNameKey     = attribute.Key("gen_ai.provider.name")
	RequestModel        = attribute.Key("gen_ai.request.model")
	RequestTemperature  = attribute.Key("gen_ai.request.temperature")
	RequestTopP         = attribute.Key("gen_ai.request.top_p")
	RequestMaxTokens    = attribute.Key("gen_ai.request.max_tokens")
	ResponseModel       = attribute.Key("gen_ai.response.model")
	ResponseID          = attribute.Key("gen_ai.response.id")
	FinishReasons       = attribute.Key("gen_ai.response.finish_reasons")
	InputTokens         = attribute.Key("gen_ai.usage.input_tokens")
	OutputTokens        = attribute.Key("gen_ai.usage.output_tokens")
	InputMessages       = attribute.Key("gen_ai.input.messages")
	OutputMessages      = attribute.Key("gen_ai.output.messages")
	ToolName            = attribute.Key("gen_ai.tool.name")
	ToolCallID          = attribute.Key("gen_ai.tool.call.id")
	ToolType            = attribute.Key("gen_ai.tool.type")
	AgentName           = attribute.Key("gen_ai.agent.name")
	ErrorType           = attribute.Key("error.type")
	Attempt             = attribute.Key("llmrelay.attempt")
	RetryReason         = attribute.Key("llmrelay.retry_reason")
	ProviderRequestID   = attribute.Key("llmrelay.provider_request_id")
	Deployment          = attribute.Key("llmrelay.deployment")
	Provider            = attribute.Key("llmrelay.provider")
	Model               = attribute.Key("llmrelay.model")
	FallbackTaken       = attribute.Key("llmrelay.fallback")
	CostNanos           = attribute.Key("llmrelay.cost.amount_nanos")
	CostCurrency        = attribute.Key("llmrelay.cost.currency")
	AgentRound          = attribute.Key("llmrelay.agent.round")
	CachedInputTokens   = attribute.Key("llmrelay.usage.cached_input_tokens")
	ReasoningTokensUsed = attribute.Key("llmrelay.usage.reasoning_tokens")
)

// ProviderName is gen_ai.provider.name for a provider type: the
// convention's well-known values where there is one.
func ProviderName(providerType string) string {
	switch providerType {
	case "azure":
		return "azure.ai.openai"
	case "gemini":
		return "gcp.gemini"
	case "builtin":
		return "llmrelay.builtin"
	default:
		return providerType // openai, anthropic, ollama
	}
}

// noSpan is what the span helpers return when tracing is off: a span that
// records nothing and whose End does nothing.
var noSpan = trace.SpanFromContext(context.Background())

// StartAgentRound starts the span of one round of an agent run (a model
// call and the tool executions it asks for), as a child of the span in
// ctx. round counts from 1. With tracing off it returns ctx and a span
// that does nothing.
func (t *Telemetry) StartAgentRound(ctx context.Context, agent string, round int) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, noSpan
	}
	name := "invoke_agent"
	if agent != "" {
		name += " " + agent
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		OperationName.String("invoke_agent"), AgentName.String(agent), AgentRound.Int(round)))
}

// StartToolExecution starts the span of one tool execution
// ("execute_tool <name>") as a child of the span in ctx. End it with
// EndToolExecution.
func (t *Telemetry) StartToolExecution(ctx context.Context, tool, callID string) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, noSpan
	}
	return t.tracer.Start(ctx, "execute_tool "+tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		OperationName.String("execute_tool"), ToolName.String(tool), ToolCallID.String(callID), ToolType.String("function")))
}

// EndToolExecution ends a tool execution span; errType (a short, bounded
// class such as "timeout" or "tool_error", never the tool's output) marks
// it failed when not empty.
func EndToolExecution(span trace.Span, errType string) {
	if errType != "" {
		span.SetAttributes(ErrorType.String(errType))
		span.SetStatus(codes.Error, errType)
	}
	span.End()
}
