package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
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
// for reasoning effort none, true for an effort asked for. With no effort
// asked for, nothing is sent, unary or streamed: the model's default
// holds (maruel/genai's recordings of 2026, real_maruel_qwen3_30b_a3b_text
// on dashscope-us and real_maruel_qwen35_35b_a3b_text on dashscope-intl,
// are unary calls without enable_thinking that DashScope answered with
// the model's reasoning). Where DashScope refuses a unary call that
// thinks, Generate sends it again with enable_thinking false
// (dashscopeUnthinking).
func dashscopeThinking(w *chatRequest, req *provider.Request) {
	switch req.Options.GetReasoningEffort() {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		// enable_thinking false alone, as maruel/genai's recorded
		// request that DashScope answered: DashScope's reasoning_effort
		// has no "none" (QwenLM/qwen-code#8472).
		w.EnableThinking = new(bool)
		w.ReasoningEffort = ""
	default:
		on := true
		w.EnableThinking = &on
	}
}

// warnDashScopeUnthinking is the warning of a unary call sent again with
// enable_thinking false.
const warnDashScopeUnthinking = "DashScope refused a non-streaming call that thinks (parameter.enable_thinking must be set to false for non-streaming calls): " +
	"sent again with enable_thinking false, so the answer has no reasoning; stream the call, or set reasoning_effort, to choose"

// thinkingRefused reports whether err is DashScope's 400 refusing a
// non-streaming call that thinks ("parameter.enable_thinking must be set
// to false for non-streaming calls", code invalid_parameter_error:
// tencentmusic/supersonic#2355, infiniflow/ragflow#8972 quote it for
// qwen3-32b on dashscope.aliyuncs.com in 2025; spring-ai-alibaba#867 the
// Chinese wording "parameter.enable_thinking必须设置为false才能进行非流式调用").
func thinkingRefused(err error) bool {
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.HTTPStatus != http.StatusBadRequest {
		return false
	}
	return strings.Contains(pe.Message, "enable_thinking must be set to false") || strings.Contains(pe.Message, "enable_thinking必须设置为false")
}

// dashscopeUnthinking sends a unary DashScope call again with
// enable_thinking false when DashScope refused it for thinking and the
// request did not set enable_thinking (neither a reasoning effort nor the
// caller's extra_body: what was asked for explicitly is not overridden,
// the refusal is the caller's to see). It returns the first error
// otherwise.
//
//go:noinline
func (p *Provider) dashscopeUnthinking(ctx context.Context, model string, body []byte, warnings []string, err error) (*http.Response, secrets, []string, error) {
	if !thinkingRefused(err) || extraHas(string(body), "enable_thinking") {
		return nil, nil, warnings, err
	}
	i := bytes.LastIndexByte(body, '}')
	if i < 0 {
		return nil, nil, warnings, err
	}
	sep := ","
	if head := bytes.TrimSpace(body[:i]); len(head) > 0 && head[len(head)-1] == '{' {
		sep = ""
	}
	again := make([]byte, 0, len(body)+len(sep)+24)
	again = append(again, body[:i]...)
	again = append(again, sep+`"enable_thinking":false`...)
	again = append(again, body[i:]...)
	resp, sec, err := p.send(ctx, "chat/completions", model, again, false)
	if err != nil {
		return nil, sec, warnings, err
	}
	return resp, sec, append(warnings, warnDashScopeUnthinking), nil
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
