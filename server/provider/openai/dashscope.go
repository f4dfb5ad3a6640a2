package openai

import (
	"encoding/json"
	"net/url"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Alibaba Cloud Model Studio (DashScope, compatible-mode/v1): Qwen's
// thinking is switched by enable_thinking, not reasoning_effort. The
// hybrid Qwen3 models think unless told not to, and DashScope refuses a
// non-streaming call that thinks: 400 invalid_parameter_error,
// "parameter.enable_thinking must be set to false for non-streaming
// calls" (infiniflow/ragflow#8972, tencentmusic/supersonic#2355,
// OpenBMB/UltraRAG#287 quote it for qwen3-32b and others;
// langchain4j/langchain4j#3974 through DashScope's own SDK). Every unary
// call to such a model failed, and reasoning_effort none did not turn
// thinking off.

// dashscopeHost reports whether baseURL is DashScope's
// (dashscope.aliyuncs.com, dashscope-intl.aliyuncs.com, …).
func dashscopeHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return strings.HasPrefix(h, "dashscope") && strings.HasSuffix(h, ".aliyuncs.com")
}

// dashscopeThinking sets enable_thinking on a DashScope request: false
// for reasoning effort none, true for an effort asked for; a unary call
// with no effort asked for, and no enable_thinking of the caller's in
// extra_body, sends false, the only setting DashScope answers a
// non-streaming call with (a model that does not think ignores it).
func dashscopeThinking(w *chatRequest, req *provider.Request, stream bool) {
	switch req.Options.GetReasoningEffort() {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		w.EnableThinking = new(bool)
	default:
		on := true
		w.EnableThinking = &on
	}
	if !stream && w.EnableThinking == nil && !extraHas(req.ProviderOptions.GetExtraBody(), "enable_thinking") {
		w.EnableThinking = new(bool)
	}
}

// extraHas reports whether extra_body (a JSON object as text) has the
// top-level field key.
func extraHas(extra, key string) bool {
	if extra == "" {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(extra), &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}
