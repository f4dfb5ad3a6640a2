package openai

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound25DashScopeEffortBesideBudget: DashScope refuses
// reasoning_effort beside thinking_budget (400 invalid_parameter_error
// "'reasoning_effort' and 'thinking_budget' cannot be set simultaneously",
// qwen3.8-max, anomalyco/opencode#41531). Bug: a reasoning effort went as
// reasoning_effort beside the caller's extra_body thinking_budget, so
// every such call was refused. The budget wins: reasoning_effort is left
// out with a warning, enable_thinking still follows the effort; effort
// none (enable_thinking false, no reasoning_effort) needs no warning, and
// other hosts are left alone.
func TestRound25DashScopeEffortBesideBudget(t *testing.T) {
	t.Parallel()
	const intl = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
	for _, tc := range []struct {
		name, host string
		effort     llmrelayv1.ReasoningEffort
		extra      string
		effortSent any // reasoning_effort in the body, nil when absent
		thinking   any // enable_thinking in the body
		warned     bool
	}{
		{"high with budget", intl, llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, `{"thinking_budget":2048}`, nil, true, true},
		{"max with budget", intl, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, `{"thinking_budget":2048}`, nil, true, true},
		{"none with budget", intl, llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"thinking_budget":2048}`, nil, false, false},
		{"budget alone", intl, 0, `{"thinking_budget":2048}`, nil, nil, false},
		{"high alone", intl, llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, "", "high", true, false},
		{"other extra", intl, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, `{"enable_search":true}`, "low", true, false},
		{"other host", "https://api.example.com/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, `{"thinking_budget":2048}`, "high", nil, false},
	} {
		req := r22Ask("qwen3.8-max", "q")
		req.Options.ReasoningEffort = tc.effort
		if tc.extra != "" {
			req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: tc.extra}
		}
		b, warns, err := newHostProvider(t, tc.host, "http://unused").buildChatRequest(req, true)
		if err != nil {
			t.Fatal(err)
		}
		body := r20Request(t, b)
		if got := body["reasoning_effort"]; got != tc.effortSent {
			t.Errorf("%s: reasoning_effort %v, want %v", tc.name, got, tc.effortSent)
		}
		if got := body["enable_thinking"]; got != tc.thinking {
			t.Errorf("%s: enable_thinking %v, want %v", tc.name, got, tc.thinking)
		}
		if strings.Contains(tc.extra, "thinking_budget") && body["thinking_budget"] != float64(2048) {
			t.Errorf("%s: thinking_budget %v", tc.name, body["thinking_budget"])
		}
		warned := len(warns) == 1 && strings.Contains(warns[0], "'reasoning_effort' and 'thinking_budget' cannot be set simultaneously")
		if warned != tc.warned || (!tc.warned && len(warns) > 0) {
			t.Errorf("%s: warnings %q", tc.name, warns)
		}
	}
}
