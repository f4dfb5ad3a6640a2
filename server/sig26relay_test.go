package server_test

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestSig26OpenRouterClaudeRetryThinkingOff: through OpenRouter (an
// openai deployment replaying reasoning_details), Claude on Amazon
// Bedrock refuses the tool loop's thinking block as another platform's
// (OpenRouter's 400 with Bedrock's "Invalid signature in thinking block"
// in metadata.raw, linanwx/nagobot#21); the one retry goes without the
// thinking block and, the loop's turn then beginning without one, with
// OpenRouter's reasoning off (reasoning.enabled false, no
// reasoning_effort), which Anthropic requires of such a turn ("Expected
// `thinking` or `redacted_thinking`, but found `tool_use`. … To avoid
// this requirement, disable `thinking`."). The first attempt asked for
// effort high.
func TestSig26OpenRouterClaudeRetryThinkingOff(t *testing.T) {
	t.Parallel()
	up := sig25Serve(t,
		sig25Step{400, "application/json", `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"message\":\"messages.1.content.0: Invalid signature in thinking block\"}","provider_name":"Amazon Bedrock","is_byok":false}}}`},
		sig25Step{200, "application/json", openaiChat.okBody})
	yaml := strings.Replace(sig25Yaml("openai", "anthropic/claude-sonnet-4.5", "openai-chat", "1"), "    api_key:", "    reasoning_replay: reasoning_details\n    api_key:", 1)
	yaml = strings.Replace(yaml, "upstream_model: anthropic/claude-sonnet-4.5,", "upstream_model: anthropic/claude-sonnet-4.5, reasoning: true,", 1)
	c := f13Start(t, yaml, up.URL, &f13Clock{})
	res, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Tools: []*llmrelayv1.Tool{sig25Tool},
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH},
		Messages: sig25Loop("", &llmrelayv1.Reasoning{Text: "Check Oslo.", Signature: "EqQBsig26gwBedrockOtherAccount==", Format: "anthropic-claude-v1", Provider: "openai"})})
	if err != nil {
		t.Fatal(err)
	}
	sig25Meta(t, res.GetMeta(), "reasoning off for this attempt (reasoning.enabled false)")
	b := up.seen()
	if len(b) != 2 {
		t.Fatalf("upstream saw %d requests", len(b))
	}
	if !strings.Contains(b[0], "EqQBsig26gwBedrockOtherAccount==") || !strings.Contains(b[0], `"reasoning_effort":"high"`) || strings.Contains(b[0], `"reasoning":{`) {
		t.Errorf("first request: %s", b[0])
	}
	if strings.Contains(b[1], "sig26gw") || strings.Contains(b[1], "reasoning_effort") || !strings.Contains(b[1], `"reasoning":{"enabled":false}`) {
		t.Errorf("second request: %s", b[1])
	}
}
