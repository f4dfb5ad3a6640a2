package openai

import (
	"net/url"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// DeepSeek's API (api.deepseek.com) switches thinking with
// {"thinking": {"type": "enabled"|"disabled"}} and sets its effort with a
// top-level reasoning_effort of low, high or max (its Thinking Mode guide:
// minimal and low map to low, medium, high and xhigh to high, max to max;
// "none" is a value of its Responses API only). Thinking is on by default.
// maruel/genai's recordings of deepseek-flash with thinking off
// (real_maruel_deepseek_flash_stop and the other deepseek-flash cassettes)
// send {"thinking":{"type":"disabled"}}, which DeepSeek answered without
// reasoning. Reasoning effort none was sent as reasoning_effort "none",
// which does not turn thinking off; max went as OpenAI's xhigh, which
// DeepSeek maps to high.

// thinkingToggle is DeepSeek's thinking switch.
type thinkingToggle struct {
	Type string `json:"type"`
}

// deepseekHost reports whether baseURL is DeepSeek's API.
func deepseekHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.deepseek.com")
}

// deepseekThinking sets a DeepSeek request's thinking for the reasoning
// effort asked for: none turns thinking off (and sends no effort), max is
// DeepSeek's max; the others go as reasoningEffortWire wrote them.
func deepseekThinking(w *chatRequest, e llmrelayv1.ReasoningEffort) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		w.ReasoningEffort = ""
		w.Thinking = &thinkingToggle{Type: "disabled"}
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		w.ReasoningEffort = "max"
	}
}
