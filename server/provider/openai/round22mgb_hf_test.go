package openai

import (
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

const mgbHF = "https://router.huggingface.co/v1"

// TestRound22MgbHFFractionalTokenBudget: Qwen/Qwen3.5-397B-A17B through
// Hugging Face's router, served by Together (x-inference-provider, kept
// as the upstream provider), December 2025, square_root required. The
// call came back with "{}" arguments (maruel/genai had sent the schema
// under "arguments" instead of "parameters"; ours sends parameters), its
// id call_arjp1t9ebh0l2806ijd938a4, tool_calls, 284 in, 15 out. The
// router's rate limit: 100 requests, 195 remaining, reset 1 s (Together's
// bare triple), and a token budget in fractions: x-ratelimit-limit-tokens
// 33333.333333333336, remaining 33183.333333333336. **Bug:** the token
// budget was lost (not an integer); it is now its whole tokens, 33333 and
// 33183. The Date is pinned to x-api-call-end's second (the cassette kept
// none), and no request id was kept.
func TestRound22MgbHFFractionalTokenBudget(t *testing.T) {
	t.Parallel()
	const date = "Mon, 15 Dec 2025 23:16:28 GMT"
	res, body := mgbUnary(t, "real_maruel_hf_qwen35_sqrt_1", mgbHF, date, mgbSqrtReq("Qwen/Qwen3.5-397B-A17B", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if body["tool_choice"] != "required" || body["model"] != "Qwen/Qwen3.5-397B-A17B" {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != "call_arjp1t9ebh0l2806ijd938a4" || c.GetName() != "square_root" || c.GetArguments() != "{}" || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := res.Meta
	r22Meta(t, m, "oPNHatY-28Eivz-9ae9a61b7d4de610", "", "Qwen/Qwen3.5-397B-A17B", 1765840588,
		&llmrelayv1.Usage{InputTokens: 284, OutputTokens: 15, TotalTokens: 299}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, m, map[string]any{"upstream_provider": "together"})
	rl := m.GetRateLimit()
	at, _ := time.Parse(time.RFC1123, date)
	if rl.RequestsLimit != nil || rl.GetRequestsRemaining() != 195 || !rl.GetRequestsResetTime().AsTime().Equal(at.Add(time.Second)) ||
		rl.TokensLimit == nil || rl.GetTokensLimit() != 33333 || rl.GetTokensRemaining() != 33183 || rl.TokensResetTime != nil {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound22MgbHFNebiusThink: Qwen/Qwen3-4B through Hugging Face's
// router served by Nebius (August 2025; resolved model
// Qwen/Qwen3-4B-fast), maruel/genai's "/think" as a second text part:
// the content opens with a <think> block (Nebius does not parse it,
// "reasoning_content": null): the reasoning, then "\n\nHello."; 18 in,
// 251 out, stop; the router's x-request-id 3prrqNlrN2XKT_jQ, Nebius as
// the upstream provider, 600/600 requests and 400000/400000 tokens
// without resets. Round 26: the x-ratelimit-dynamic-* headers were
// dropped; now each period usage is a window (utilization 0, reset the
// Date plus the 899 s left; the Date is the body's created, added to the
// cassette's head, which had none) and the scale is
// meta.extended["rate_limit_dynamic_scale"].
func TestRound22MgbHFNebiusThink(t *testing.T) {
	t.Parallel()
	req := r22Ask("Qwen/Qwen3-4B", "")
	req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Say hello. Use only one word."), text("\n\n/think"))}
	res, body := mgbUnary(t, "real_maruel_hf_nebius_qwen3_think", mgbHF, "", req)
	if !mgbJSONEqual(t, body["messages"], `[{"role":"user","content":[{"type":"text","text":"Say hello. Use only one word."},{"type":"text","text":"\n\n/think"}]}]`) {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[1].GetText() != "\n\nHello." {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning().GetText(); !strings.HasPrefix(r, "\nOkay, the user said, \"Say hello. Use only one word.\"") || !strings.HasSuffix(r, "So the answer is \"Hello.\"\n") {
		t.Errorf("reasoning %q", r)
	}
	m := res.Meta
	r22Meta(t, m, "chatcmpl-aa4849373e8041e993320928ae8cacd1", "3prrqNlrN2XKT_jQ", "Qwen/Qwen3-4B-fast", 1755194869,
		&llmrelayv1.Usage{InputTokens: 18, OutputTokens: 251, TotalTokens: 269}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, m, map[string]any{"upstream_provider": "nebius"})
	rl := m.GetRateLimit()
	if rl.GetRequestsLimit() != 600 || rl.GetRequestsRemaining() != 600 || rl.GetTokensLimit() != 400000 || rl.GetTokensRemaining() != 400000 ||
		rl.RequestsResetTime != nil || rl.TokensResetTime != nil {
		t.Errorf("rate limit %v", rl)
	}
	reset := time.Unix(1755194869+899, 0)
	for _, b := range []string{"requests", "tokens"} {
		var w *llmrelayv1.RateLimitWindow
		for _, x := range rl.GetWindows() {
			if x.GetHeader() == "x-ratelimit-dynamic-period-"+b {
				w = x
			}
		}
		if w == nil || w.GetBudget() != b || w.Utilization == nil || w.GetUtilization() != 0 || !w.GetResetTime().AsTime().Equal(reset) || w.Limit != nil || w.Remaining != nil {
			t.Errorf("%s dynamic window %v", b, w)
		}
	}
	if got := m.GetExtended().GetFields()["rate_limit_dynamic_scale"].GetStructValue().AsMap(); got["requests"] != 1.0 || got["tokens"] != 1.0 {
		t.Errorf("dynamic scale %v", got)
	}
}
