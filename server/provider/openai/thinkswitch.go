package openai

import (
	"fmt"
	"net/url"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Hosts whose thinking is switched by {"thinking": {"type":
// "enabled"|"disabled"}} beside (or instead of) reasoning_effort, as
// DeepSeek's is (deepseek.go):
//
//   - Z.ai / Zhipu (api.z.ai, open.bigmodel.cn): the Chat Completion API
//     reference (docs.z.ai/api-reference/llm/chat-completion) has a
//     thinking object and no reasoning_effort; its thinking-mode guide
//     turns thinking off with "thinking": {"type": "disabled"}. GLM-5.1
//     and older read no reasoning_effort: none left them thinking
//     (tailcallhq/forgecode#3074, "reasoning none mean no reasoning …
//     no effect on GLM 5.1"); GLM-5.2 and later take reasoning_effort
//     beside thinking, up to max (docs.z.ai/guides/llm/glm-5.2, as
//     theopenco/llmgateway#3049 and NousResearch/hermes-agent#91789 quote
//     it), and GLM-5.3 refuses thinking disabled ("This model always
//     engages in thinking and cannot be disabled; please use low, high, or
//     max.": charmbracelet/catwalk#603), which is then the caller's answer.
//   - Moonshot / Kimi (api.moonshot.ai, api.moonshot.cn, Kimi's coding plan
//     api.kimi.com): the models overview (platform.kimi.ai/docs/api/
//     models-overview) switches kimi-k2.5/k2.6's thinking with
//     {"type": "enabled"|"disabled"}; Moonshot's own client
//     (MoonshotAI/kimi-cli, packages/kosong/src/kosong/chat_provider/kimi.py,
//     with_thinking) sends thinking disabled and no reasoning_effort for
//     off, reasoning_effort and thinking enabled for low, medium and high.
//
// Effort none went as reasoning_effort "none" to both, which neither
// documents: thinking stayed on (dirge-code/dirge#598, measured on the live
// APIs: DeepSeek's and GLM's hosted thinking turns off only with
// thinking.type disabled), or Kimi refused it ("Unsupported value:
// 'reasoning_effort' does not support 'none' with this model",
// Kilo-Org/cloud#3807).
func thinkSwitchHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Hostname()) {
	case "api.z.ai", "open.bigmodel.cn", "api.moonshot.ai", "api.moonshot.cn", "api.kimi.com":
		return true
	}
	return false
}

// zaiHost reports whether baseURL is Z.ai's (Zhipu's) API, whose top
// effort is max (GLM-5.2 and later).
func zaiHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "api.z.ai" || h == "open.bigmodel.cn"
}

// openRouterHost reports whether baseURL is OpenRouter's, whose
// reasoning_effort (the shorthand of reasoning.effort) names max, xhigh,
// high, medium, low, minimal and none (openrouter.ai/docs,
// ChatRequestReasoningEffort).
func openRouterHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "openrouter.ai" || strings.HasSuffix(h, ".openrouter.ai")
}

// switchThinking sets the thinking switch of a thinkSwitchHost request for
// the effort asked for: none turns thinking off and sends no effort; any
// other effort turns it on beside reasoning_effort as written; no effort
// leaves the server's default.
func switchThinking(w *chatRequest, e llmrelayv1.ReasoningEffort) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		w.ReasoningEffort = ""
		w.Thinking = &thinkingToggle{Type: "disabled"}
	default:
		w.Thinking = &thinkingToggle{Type: "enabled"}
	}
}

// Baseten's Model APIs (inference.baseten.co) serve Kimi K2.5/K2.6, GLM 4.7
// and GLM 5 with thinking off unless chat_template_args enables it
// ("Opt-in via chat_template_args": docs.baseten.co,
// inference/model-apis/reasoning, whose example sends
// {"chat_template_args": {"enable_thinking": true}}); DeepSeek V4 Pro and
// gpt-oss take reasoning_effort (low, medium, high; xhigh on DeepSeek
// only), and the others reason by default with no documented switch.
// maruel/genai's recordings show both: zai-org/GLM-4.7 asked without
// chat_template_args answered without reasoning, GLM-5.1 asked with
// enable_thinking true reasoned (testdata/real_maruel_baseten_glm51_sqrt_1).
// An effort went as reasoning_effort alone, which the opt-in models do not
// read: they did not think.

// templateArgs are the chat template's arguments (Baseten's
// chat_template_args).
type templateArgs struct {
	EnableThinking *bool `json:"enable_thinking,omitempty"`
}

// basetenHost reports whether baseURL is Baseten's Model APIs.
func basetenHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "inference.baseten.co")
}

// warnBasetenNone is the warning of effort none on Baseten.
const warnBasetenNone = "reasoning effort none sent as chat_template_args.enable_thinking false: Baseten documents no way to turn off the reasoning of the models that reason by default (DeepSeek, MiniMax, gpt-oss, Nemotron), which may still reason"

// basetenThinking sets a Baseten request's thinking for the effort asked
// for: an effort enables thinking beside reasoning_effort; none disables
// it and sends no effort (Baseten's reasoning_effort has no none), with
// warnBasetenNone.
func basetenThinking(w *chatRequest, e llmrelayv1.ReasoningEffort) string {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
		return ""
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		w.ReasoningEffort = ""
		w.ChatTemplateArgs = &templateArgs{EnableThinking: new(bool)}
		return warnBasetenNone
	}
	on := true
	w.ChatTemplateArgs = &templateArgs{EnableThinking: &on}
	return ""
}

// Together (api.together.xyz, api.together.ai) switches its hybrid models'
// thinking (DeepSeek-V4-Pro, GLM-5/5.1, Kimi K2.5/K2.6, Qwen3.5/3.6, on by
// default; DeepSeek V3.1, off by default) with reasoning={"enabled":
// true/false}, and takes reasoning_effort (low, medium, high) for gpt-oss
// only ("Hybrid: Supports both reasoning and non-reasoning modes via
// reasoning={"enabled": True/False}. Adjustable effort: Supports the
// reasoning_effort parameter": docs.together.ai, docs/inference/chat/
// reasoning). Effort none went as reasoning_effort "none", which turned no
// hybrid model's thinking off; an effort did not turn DeepSeek V3.1's on.

// reasoningSwitch is Together's reasoning object.
type reasoningSwitch struct {
	Enabled bool `json:"enabled"`
}

// togetherHost reports whether baseURL is Together's API.
func togetherHost(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "api.together.xyz" || h == "api.together.ai"
}

// togetherThinking sets a Together request's reasoning switch for the
// effort asked for: none disables it and sends no effort (Together's
// reasoning_effort has no none); an effort enables it beside
// reasoning_effort.
func togetherThinking(w *chatRequest, e llmrelayv1.ReasoningEffort) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		w.ReasoningEffort = ""
		w.ReasoningSwitch = &reasoningSwitch{}
	default:
		w.ReasoningSwitch = &reasoningSwitch{Enabled: true}
	}
}

// WithThinkingSwitch says how a reasoning effort turns the model's
// thinking on or off beside reasoning_effort: "auto" (the default) by base
// URL host (DeepSeek's, Z.ai's and Moonshot's thinking.type, DashScope's
// enable_thinking, Baseten's chat_template_args, Together's
// reasoning.enabled; reasoning_effort alone elsewhere);
// "chat_template_kwargs" for a self-hosted vLLM, SGLang or llama.cpp
// server, which no host names, whose hybrid models' templates read the
// switch from chat_template_kwargs: effort none sends
// {"enable_thinking": false, "thinking": false} and no reasoning_effort, an
// effort the same with true beside it. Qwen3's and GLM-4.5's templates
// read enable_thinking, DeepSeek-V3.1's and Granite's thinking (vLLM,
// features/reasoning_outputs: "To disable it, you must pass
// enable_thinking=False in your chat_template_kwargs", "you must also pass
// thinking=True"; SGLang, openai_api_completions; llama.cpp's server takes
// chat_template_kwargs the same way). reasoning_effort "none" reaches no
// such template: the model kept thinking.
func WithThinkingSwitch(mode string) Option {
	return func(p *Provider) error {
		switch mode {
		case "", "auto":
			p.templateKwargs = false
		case "chat_template_kwargs":
			p.templateKwargs = true
		default:
			return fmt.Errorf("thinking switch %q is not auto or chat_template_kwargs", mode)
		}
		return nil
	}
}

// templateKwargs are the chat template's arguments of a vLLM, SGLang or
// llama.cpp server (chat_template_kwargs).
type templateKwargs struct {
	EnableThinking *bool `json:"enable_thinking,omitempty"`
	Thinking       *bool `json:"thinking,omitempty"`
}

// kwargsThinking sets chat_template_kwargs for the effort asked for: none
// turns thinking off and sends no effort; an effort turns it on beside
// reasoning_effort.
func kwargsThinking(w *chatRequest, e llmrelayv1.ReasoningEffort) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED:
		return
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		w.ReasoningEffort = ""
		off := false
		w.ChatTemplateKwargs = &templateKwargs{EnableThinking: &off, Thinking: &off}
		return
	}
	on := true
	w.ChatTemplateKwargs = &templateKwargs{EnableThinking: &on, Thinking: &on}
}
