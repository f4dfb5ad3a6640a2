package provider

import "strings"

// AnthropicSpendLimit reports Anthropic's refusal for a spend limit
// reached, in its own words, a 400 invalid_request_error or a 429 whose
// status says nothing of a quota: "You have reached your specified API
// usage limits. You will regain access on 2026-04-01 at 00:00 UTC."
// (anthropics/claude-code#2127), the workspace's "You have reached your
// specified workspace API usage limits. …" (anthropics/claude-code#1047)
// and the tier's monthly cap "You have reached your API usage limits: …".
// The anthropic adapter reads them, and the openai adapter where a relay
// wraps Anthropic's answer (LiteLLM's proxy: BerriAI/litellm#37599). The
// account's quota: not retried before the date, a reason to fall back.
func AnthropicSpendLimit(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "reached your specified api usage limits") ||
		strings.Contains(m, "reached your specified workspace api usage limits") ||
		strings.Contains(m, "reached your api usage limits")
}
