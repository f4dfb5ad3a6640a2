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
//
// A thinking_budget in provider_options.extra_body (DashScope's cap on the
// reasoning's tokens, "a positive integer and not greater than" the
// model's maximum chain-of-thought length: Model Studio's error-code
// reference) wins over the effort's reasoning_effort, which is then not
// sent: DashScope refuses the two together (400 invalid_parameter_error
// "'reasoning_effort' and 'thinking_budget' cannot be set
// simultaneously", qwen3.8-max, anomalyco/opencode#41531), and the budget
// is the caller's DashScope-specific and more precise ask. The warning
// says so; enable_thinking still follows the effort.
func dashscopeThinking(w *chatRequest, req *provider.Request) (warning string) {
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
	if w.ReasoningEffort != "" && extraSets(req.ProviderOptions.GetExtraBody(), "thinking_budget") {
		w.ReasoningEffort = ""
		warning = warnDashScopeBudget
	}
	return warning
}

// warnDashScopeBudget is the warning of a reasoning effort not sent as
// reasoning_effort beside the caller's thinking_budget.
const warnDashScopeBudget = "reasoning_effort not sent: DashScope refuses it beside thinking_budget ('reasoning_effort' and 'thinking_budget' cannot be set simultaneously); " +
	"provider_options.extra_body's thinking_budget caps the reasoning instead, and the effort only turns thinking on"

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

// dashscopeRetry answers a unary DashScope call that failed with err:
// sent again without thinking (dashscopeUnthinking), or made streamed and
// folded (dashscopeStreamed), where DashScope's refusal says so; else err.
//
//go:noinline
func (p *Provider) dashscopeRetry(ctx context.Context, req *provider.Request, body []byte, warnings []string, first error) (*provider.Result, error) {
	resp, sec, warnings, err := p.dashscopeUnthinking(ctx, req.Model, body, warnings, first)
	if err == nil {
		return p.chatResult(resp, req.Model, warnings, sec, wantsLogprobs(req))
	}
	if res, ok, err := p.dashscopeStreamed(ctx, req, warnings, first, err); ok {
		return res, err
	}
	return nil, err
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

// DashScope serves some models streamed only: QwQ and the thinking-only
// Qwen3 models ("most of them only support streaming output", Alibaba
// Cloud Model Studio's Deep thinking guide; "Thinking-only: always thinks
// — cannot be disabled. QwQ, -thinking variants", Qwen Cloud's Thinking
// guide). A unary call to one fails: 400 invalid_parameter_error "This
// model only support stream mode, please enable the stream parameter to
// access the model." (qwq-32b: infiniflow/ragflow#5912,
// FoundationAgents/OpenManus#330), or, sent again with enable_thinking
// false after DashScope's refusal of a unary call that thinks, 400 "The
// value of the enable_thinking parameter is restricted to True"
// (qwen3-235b-a22b-thinking-2507: lobehub/lobehub#8613), which told the
// caller nothing of the way out. Such a call is made streamed and folded
// into the unary answer (dashscopeStreamed), with a warning.

// warnDashScopeStreamed is the warning of a unary call DashScope served
// streamed.
const warnDashScopeStreamed = "DashScope serves this model streamed only: the call was made streamed and its stream folded into this answer"

// dashscopeError reports whether err is DashScope's 400 saying text.
func dashscopeError(err error, text string) bool {
	var pe *provider.Error
	return errors.As(err, &pe) && pe.HTTPStatus == http.StatusBadRequest && strings.Contains(pe.Message, text)
}

// streamOnly reports whether err is DashScope's refusal of a unary call
// to a model it serves streamed only.
func streamOnly(err error) bool {
	return dashscopeError(err, "only support stream mode")
}

// thinkingOnly reports whether err is DashScope's refusal of
// enable_thinking false for a model that always thinks.
func thinkingOnly(err error) bool {
	return dashscopeError(err, "enable_thinking parameter is restricted to True")
}

// dashscopeStreamed makes a unary call streamed and folds the stream into
// the unary answer: DashScope refused it for a model it serves streamed
// only (first, the refusal of the unary call; thinking, the error of the
// call sent again without thinking, first itself when it was not sent
// again: a request that set enable_thinking itself keeps its refusal).
// ok is false when the refusal is none of those: the caller keeps its
// error.
//
//go:noinline
func (p *Provider) dashscopeStreamed(ctx context.Context, req *provider.Request, warnings []string, first, thinking error) (*provider.Result, bool, error) {
	if !streamOnly(first) && (thinking == first || !thinkingOnly(thinking)) {
		return nil, false, nil
	}
	body, _, err := p.buildChatRequest(req, true)
	if err != nil {
		return nil, true, err
	}
	resp, sec, err := p.send(ctx, "chat/completions", req.Model, body, true)
	if err != nil {
		return nil, true, err
	}
	warnings = append(warnings, warnDashScopeStreamed)
	var s provider.Stream
	whole, err := p.jsonInsteadOfStream(resp, req.Model, sec, func(raw []byte, cut string) (*provider.Result, error) {
		return p.chatAnswer(raw, cut, resp, req.Model, warnings, sec, wantsLogprobs(req))
	})
	switch {
	case err != nil:
		return nil, true, err
	case whole != nil:
		s = whole
	default:
		cs := p.newStream(resp, req.Model, warnings, sec)
		cs.wantLogprobs = wantsLogprobs(req)
		s = cs
	}
	res, err := provider.FoldStream(s) // closes s
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Provider == "" {
		pe.Provider = p.name // a protocol break the fold found names no provider
	}
	return res, true, err
}
