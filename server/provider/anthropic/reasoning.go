package anthropic

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Thinking by model generation (Anthropic's extended thinking, adaptive
// thinking and effort pages, the Claude Fable 5 migration guide):
//
//   - Claude 3.7 Sonnet and the Claude 4 to 4.5 models (Opus 4, 4.1, 4.5,
//     Sonnet 4, 4.5, Haiku 4.5) think only with a fixed budget,
//     thinking {type: enabled, budget_tokens}; Sonnet 4.5 and Haiku 4.5
//     answer output_config.effort with a 400 ("This model does not support
//     the effort parameter.", testdata/real_logfire_effort_unsupported_error).
//     Opus 4.5 took effort only behind a beta header: it gets the budget
//     like its generation.
//   - Claude 4.6 and later (Opus 4.6, Sonnet 4.6, Opus 4.7, 4.8, Mythos
//     Preview, the Claude 5 models) take adaptive thinking at an
//     output_config.effort; from Opus 4.7 on the budget form is a 400, so
//     adaptive is also what an id we do not know gets (newer models).
//   - Claude 3.5, 3 and older models do not think.
//
// NONE (noneMode): the models before Claude 5 do not think unless asked.
// Claude 5 (Opus 5, Sonnet 5) and Haiku 5.5 think unless sent thinking
// {type: disabled} (the API took it from claude-sonnet-5 and claude-opus-5:
// real_lcg_reasoning_disabled, real_lcg_opus5_explicit_disable). Sonnet 5.5
// refuses disabled; its least is {type: between_tools} (no up-front
// thinking). Opus 5.5, Fable and Mythos models always think (disabled is a
// 400): NONE gets them adaptive thinking at effort low. Both with a warning.
type thinkingKind int

const (
	thinkAdaptive thinkingKind = iota
	thinkBudget
	thinkNone
)

// claudeModel is a model id as the thinking mapping reads it.
type claudeModel struct {
	family string // opus, sonnet, haiku, fable, mythos, instant; "" unknown
	// major and minor are the version (claude-sonnet-4-5, claude-3-7-sonnet:
	// 4.5, 3.7; claude-opus-4: 4.0); major is -1 when the id has none
	// (claude-mythos-preview).
	major, minor int
}

var claudeFamilies = map[string]bool{"opus": true, "sonnet": true, "haiku": true, "fable": true, "mythos": true, "instant": true}

// parseClaude reads a model id as users and platforms write them:
// claude-sonnet-4-5, claude-sonnet-4-5-20250929, claude-3-7-sonnet-latest,
// Bedrock's anthropic.claude-sonnet-4-5-20250929-v1:0 and its inference
// profiles (us.anthropic.…, ARNs ending in one), Vertex's
// claude-sonnet-4-5@20250929, gateways' anthropic/claude-sonnet-4.5. The
// version is the first one or two numbers of one or two digits (an 8-digit
// date, v1, latest are not).
func parseClaude(id string) claudeModel {
	m := claudeModel{major: -1}
	s := strings.ToLower(id)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	i := strings.Index(s, "claude")
	if i < 0 {
		return m
	}
	s = s[i:]
	if j := strings.IndexAny(s, "@:"); j >= 0 {
		s = s[:j]
	}
	var nums []int
	tokens := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '.' || r == '_' })
	for _, t := range tokens[1:] {
		switch {
		case claudeFamilies[t]:
			if m.family == "" {
				m.family = t
			}
		case len(t) <= 2 && isDigits(t):
			if len(nums) < 2 {
				n, _ := strconv.Atoi(t)
				nums = append(nums, n)
			}
		case len(nums) == 0 && m.family == "" && len(t) > 1 && t[0] == 'v' && isDigits(t[1:]):
			// claude-v2, anthropic.claude-v2:1 (Claude 2 on Bedrock).
			n, _ := strconv.Atoi(t[1:])
			nums = append(nums, n)
		}
	}
	if len(nums) > 0 {
		m.major = nums[0]
	}
	if len(nums) > 1 {
		m.minor = nums[1]
	}
	return m
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func (m claudeModel) thinking() thinkingKind {
	switch {
	case m.family == "instant":
		return thinkNone
	case m.major < 0:
		return thinkAdaptive
	case m.major <= 2:
		return thinkNone
	case m.major == 3:
		if m.minor == 7 {
			return thinkBudget
		}
		return thinkNone
	case m.major == 4 && m.minor <= 5:
		return thinkBudget
	}
	return thinkAdaptive
}

// noneMode is how a model takes reasoning_effort NONE.
type noneMode int

const (
	noneOmit         noneMode = iota // no thinking unless asked: send nothing
	noneDisabled                     // thinking {type: disabled}
	noneBetweenTools                 // thinking {type: between_tools}, its least
	noneLeast                        // cannot stop: adaptive at effort low
)

func (m claudeModel) none() noneMode {
	switch {
	case m.family == "fable" || m.family == "mythos":
		return noneLeast
	case m.thinking() != thinkAdaptive || m.major < 5:
		// Claude 4.8 and older, and ids we cannot place (no version):
		// sending nothing is what every one of them takes.
		return noneOmit
	case m.major == 5 && m.minor == 0:
		return noneDisabled
	case m.major == 5 && m.minor == 5 && m.family == "haiku":
		return noneDisabled
	case m.major == 5 && m.minor == 5 && m.family == "sonnet":
		return noneBetweenTools
	}
	// Opus 5.5 and the versions after those known: the newest models
	// think always or by default, and all take adaptive thinking.
	return noneLeast
}

// maxOutput is a budget model's output limit (Opus 4 and 4.1: 32000, the
// others 64000); 0 for the rest (not needed, not guessed).
func (m claudeModel) maxOutput() int32 {
	if m.thinking() != thinkBudget {
		return 0
	}
	if m.family == "opus" && m.major == 4 && m.minor <= 1 {
		return 32000
	}
	return 64000
}

// minThinkingBudget is the API's least budget_tokens.
const minThinkingBudget = 1024

// effortBudget is the fixed thinking budget a reasoning effort gets on a
// model without adaptive thinking. MINIMAL and LOW are the API's minimum
// (Anthropic: start at the minimum and raise it; adaptive thinking has no
// level below low either); MEDIUM 8192, the same as on Gemini 2.5; HIGH
// 16384, the most that, with the default 4096 for the answer (20480), stays
// under Opus 4's 32000 output limit and under the 21333 max_tokens above
// which Anthropic's SDKs refuse a request that is not streamed.
func effortBudget(e llmrelayv1.ReasoningEffort) int32 {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW:
		return minThinkingBudget
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM:
		return 8192
	default:
		return 16384
	}
}

// adaptiveEffort is output_config.effort for a reasoning effort on model
// m (id), and a warning where m cannot take the level asked for. Anthropic
// has no level below low; max is taken by every adaptive model (Claude 4.6
// and later), xhigh from Opus 4.7 and the Claude 5 models on (Opus 4.6
// and Sonnet 4.6 predate it: they get high, the level below it).
func (m claudeModel) adaptiveEffort(e llmrelayv1.ReasoningEffort, id string) (string, string) {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM:
		return "medium", ""
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH:
		return "high", ""
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH:
		if m.major == 4 && m.minor < 7 {
			return "high", fmt.Sprintf("reasoning_effort XHIGH: %s has no xhigh effort (Opus 4.7 and later have it); sent high", id)
		}
		return "xhigh", ""
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX:
		return "max", ""
	default:
		return "low", ""
	}
}

func effortName(e llmrelayv1.ReasoningEffort) string {
	return strings.TrimPrefix(e.String(), "REASONING_EFFORT_")
}

// applyReasoning sets thinking (and output_config.effort) from
// provider_options.anthropic.thinking_budget_tokens, which wins, or
// reasoning_effort, mapped by the generation of the model id sent (the
// deployment's, after the gateway resolved any alias), then checks what
// thinking forbids. Once tools and tool_choice are converted.
//
// max_tokens is the whole output, thinking included (as the contract's
// max_tokens, and on Claude 4 the API's). A caller's max_tokens is kept: a
// budget from reasoning_effort takes at most half of it (at least the
// API's 1024), and a max_tokens that cannot hold 1024 and an answer
// refuses reasoning_effort. Without one, max_tokens is the budget plus the
// default (the answer's room), within the model's output limit; adaptive
// thinking gets the same room (adaptiveRoom).
func (p *Provider) applyReasoning(w *messagesRequest, req *provider.Request, o *llmrelayv1.GenerationOptions) ([]string, error) {
	var warnings []string
	effort := o.GetReasoningEffort()
	m := parseClaude(req.Model)
	if a := req.ProviderOptions.GetAnthropic(); a != nil && a.ThinkingBudgetTokens != nil {
		b := a.GetThinkingBudgetTokens()
		if b > 0 && isMiniMax(p.baseURL) {
			// MiniMax's thinking.type is adaptive or disabled ("invalid
			// params, invalid thinking.type: "enabled" (allowed: adaptive,
			// disabled) (2013)", its answer to M3 quoted in
			// HenriGrimm/Minnow#364; its Anthropic API page lists the two):
			// a budget is thinking on, which it spells adaptive.
			w.Thinking = &wireThinking{Type: "adaptive"}
			return []string{fmt.Sprintf("provider_options.anthropic.thinking_budget_tokens (%d): MiniMax takes no thinking budget (thinking adaptive or disabled); sent adaptive thinking", b)}, checkThinking(w, o, "provider_options.anthropic.thinking_budget_tokens")
		}
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: b}
		if effort != llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
			warnings = append(warnings, fmt.Sprintf("reasoning_effort %s not sent: provider_options.anthropic.thinking_budget_tokens (%d) sets the thinking", effortName(effort), b))
		}
		if o.MaxTokens == nil && w.MaxTokens <= b {
			w.MaxTokens = withinLimit(addTokens(b, p.defaultMaxTokens), m.maxOutput())
		}
		return warnings, checkThinking(w, o, "provider_options.anthropic.thinking_budget_tokens")
	}
	if effort == llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
		return nil, nil
	}
	name := effortName(effort)
	mode := "reasoning_effort " + name
	if effort == llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE {
		switch m.none() {
		case noneDisabled:
			w.Thinking = &wireThinking{Type: "disabled"}
		case noneBetweenTools:
			w.Thinking = &wireThinking{Type: "between_tools"}
			warnings = append(warnings, fmt.Sprintf("reasoning_effort NONE: %s cannot switch thinking off; sent thinking between_tools, its least (no thinking before the answer, short notes between tool calls)", req.Model))
		case noneLeast:
			w.Thinking = &wireThinking{Type: "adaptive", Display: "summarized"}
			w.OutputConfig = &wireOutputConfig{Effort: "low"}
			adaptiveRoom(w, o, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW)
			warnings = append(warnings, fmt.Sprintf("reasoning_effort NONE: %s cannot switch thinking off; sent adaptive thinking at effort low, its least", req.Model))
			return warnings, checkThinking(w, o, mode)
		}
		return warnings, nil
	}
	switch m.thinking() {
	case thinkNone:
		return nil, invalid("options.reasoning_effort", "%s does not think (extended thinking starts with Claude 3.7 Sonnet and the Claude 4 models); drop reasoning_effort %s", req.Model, name)
	case thinkAdaptive:
		w.Thinking = &wireThinking{Type: "adaptive", Display: "summarized"}
		level, warning := m.adaptiveEffort(effort, req.Model)
		if warning != "" {
			warnings = append(warnings, warning)
		}
		w.OutputConfig = &wireOutputConfig{Effort: level}
		adaptiveRoom(w, o, effort)
		return warnings, checkThinking(w, o, mode)
	}
	// A fixed budget; no output_config.effort, which these models refuse.
	budget := effortBudget(effort)
	if effort == llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH || effort == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX {
		warnings = append(warnings, fmt.Sprintf("reasoning_effort %s: %s thinks with a fixed budget and has no level above HIGH; sent HIGH's budget (%d tokens)", name, req.Model, budget))
	}
	if o.MaxTokens != nil {
		limit := o.GetMaxTokens()
		if limit <= minThinkingBudget {
			return nil, invalid("options.reasoning_effort", "reasoning_effort %s on %s thinks with a budget of at least %d tokens, which must be less than max_tokens (%d): raise max_tokens or drop reasoning_effort",
				name, req.Model, minThinkingBudget, limit)
		}
		if half := max(limit/2, minThinkingBudget); budget > half {
			warnings = append(warnings, fmt.Sprintf("reasoning_effort %s: thinking budget %d tokens instead of %d, to leave the answer part of max_tokens (%d)", name, half, budget, limit))
			budget = half
		}
	} else {
		w.MaxTokens = withinLimit(addTokens(budget, p.defaultMaxTokens), m.maxOutput())
	}
	w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
	return warnings, checkThinking(w, o, mode)
}

// adaptiveRoom: adaptive thinking also counts against max_tokens, and has
// no budget. Without a caller's max_tokens, it gets at least the room a
// fixed budget at that effort would (effortBudget plus DefaultMaxTokens,
// 5120 to 20480, under every adaptive model's output limit); a larger
// configured default is kept.
func adaptiveRoom(w *messagesRequest, o *llmrelayv1.GenerationOptions, e llmrelayv1.ReasoningEffort) {
	if o.MaxTokens == nil {
		w.MaxTokens = max(w.MaxTokens, effortBudget(e)+DefaultMaxTokens)
	}
}

// active: thinking is set and not {type: disabled} (reasoning_effort NONE
// on Claude 5), which lifts thinking's restrictions.
func (t *wireThinking) active() bool { return t != nil && t.Type != "disabled" }

// withinLimit is n capped at limit (0: none).
// addTokens adds two token counts, saturating at the int32 range: a
// thinking budget near 2^31 plus the default room must not wrap to a
// negative max_tokens (the API would refuse it with a message about a
// value the caller never sent).
func addTokens(a, b int32) int32 {
	return int32(min(int64(a)+int64(b), math.MaxInt32))
}

func withinLimit(n, limit int32) int32 {
	if limit > 0 && n > limit {
		return limit
	}
	return n
}

// checkThinking refuses, naming the option, what the API refuses with
// thinking on: a temperature other than 1, top_k, a top_p under 0.95, a
// forced tool (Anthropic's extended thinking page, "Feature
// compatibility"). mode says what turned thinking on.
//
// A forced tool is refused with a fixed budget only: adaptive thinking
// leaves thinking to the model, and the API takes tool_choice any with it
// and answers with the call (claude-opus-4-6, 0 thinking tokens:
// real_pyd_anthropic_opus_46_adaptive_thinking_accepts_tool_output_*).
func checkThinking(w *messagesRequest, o *llmrelayv1.GenerationOptions, mode string) error {
	switch {
	case o.Temperature != nil && o.GetTemperature() != 1:
		return invalid("options.temperature", "anthropic takes no temperature but 1 with thinking (%s), got %v", mode, o.GetTemperature())
	case o.TopK != nil:
		return invalid("options.top_k", "anthropic takes no top_k with thinking (%s)", mode)
	case o.TopP != nil && o.GetTopP() < 0.95:
		return invalid("options.top_p", "anthropic takes top_p only from 0.95 to 1 with thinking (%s), got %v", mode, o.GetTopP())
	case w.ToolChoice != nil && (w.ToolChoice.Type == "any" || w.ToolChoice.Type == "tool") && (w.Thinking == nil || w.Thinking.Type != "adaptive"):
		return invalid("options.tool_choice", "anthropic cannot force tool use with thinking (%s)", mode)
	}
	return nil
}

// fixedSampling: the models whose sampling is fixed, thinking or not
// (the "Sampling parameters" list of Anthropic's thinking pages: Opus 4.7
// and 4.8, the Claude 5 models, Fable, Mythos and Mythos Preview; Opus
// 4.7 answers a temperature of 0.7 with 400 "`temperature` is deprecated
// for this model.", Comfy-Org/ComfyUI#13923). They refuse a temperature
// other than 1, any top_k, a top_p other than its default 0.99, and
// temperature with top_p even at those defaults. Versions after those
// known are taken to keep the rule, as for adaptive thinking.
func (m claudeModel) fixedSampling() bool {
	switch {
	case m.family == "fable" || m.family == "mythos":
		return true
	case m.major >= 5:
		return true
	}
	return m.family == "opus" && m.major == 4 && m.minor >= 7
}

// noForcedTool: the models that refuse a forced tool (tool_choice any or
// tool) whatever the thinking: Sonnet 5.5 and Opus 5.5 ("Forced tool use
// returns an error", their "What's new" pages, which say the same of
// Fable 5.1; Mythos 5.1 is the same model behind access approval), and
// the versions after them.
func (m claudeModel) noForcedTool() bool {
	switch m.family {
	case "fable", "mythos":
		return m.major > 5 || (m.major == 5 && m.minor >= 1)
	case "haiku":
		return m.major > 5
	}
	return m.major > 5 || (m.major == 5 && m.minor >= 5)
}

// defaultTopP is top_p's default on the models with fixed sampling.
const defaultTopP = 0.99

// checkModelSampling refuses, naming the option, what the model refuses
// on every request (fixedSampling, noForcedTool), as checkThinking does
// thinking's restrictions: before the call, rather than the provider's
// 400. Once tool_choice is converted.
func checkModelSampling(w *messagesRequest, o *llmrelayv1.GenerationOptions, model string) error {
	m := parseClaude(model)
	if m.fixedSampling() {
		switch {
		case o.Temperature != nil && o.GetTemperature() != 1:
			return invalid("options.temperature", "%s takes no temperature but 1 (its default: Anthropic fixes this model's sampling), got %v", model, o.GetTemperature())
		case o.TopK != nil:
			return invalid("options.top_k", "%s takes no top_k (Anthropic fixes this model's sampling)", model)
		case o.TopP != nil && o.GetTopP() != defaultTopP:
			return invalid("options.top_p", "%s takes no top_p but %v (its default: Anthropic fixes this model's sampling), got %v", model, defaultTopP, o.GetTopP())
		case o.TopP != nil && o.Temperature != nil:
			return invalid("options.top_p", "%s takes temperature or top_p, not both, even at their defaults", model)
		}
	}
	if m.noForcedTool() && w.ToolChoice != nil && (w.ToolChoice.Type == "any" || w.ToolChoice.Type == "tool") {
		return invalid("options.tool_choice", "%s cannot be forced to use a tool (tool_choice %s): use auto and say in the prompt which tool to call", model, forcedName(w.ToolChoice))
	}
	return nil
}

// forcedName names a forced tool_choice as the contract does.
func forcedName(tc *wireToolChoice) string {
	if tc.Type == "tool" {
		return "function " + strconv.Quote(tc.Name)
	}
	return "REQUIRED"
}

// thinkingForTurn is applyReasoning, unless the request continues a tool
// loop whose assistant turn began without a thinking block: with thinking
// on, Anthropic refuses it ("Expected `thinking` or `redacted_thinking`,
// but found `tool_use`. When `thinking` is enabled, a final `assistant`
// message must start with a thinking block (preceeding the lastmost set of
// `tool_use` and `tool_result` blocks)"). That turn came from another
// provider (a fallback in the middle of a tool loop: its reasoning is not
// Anthropic's to send) or from a client that did not keep the reasoning
// part. The request then goes without thinking, as the error itself
// advises, with a warning, and thinking's refusals (temperature, top_k,
// forced tools) do not apply.
//
// The rule is the fixed budget's (thinking {type: enabled}). Adaptive
// thinking lets the model answer a step without thinking, so a turn that
// begins with a tool_use is one it may have written itself, and the API
// takes it: claude-sonnet-5.5 at effort low called the tool without a
// thinking block and the follow-up with adaptive thinking, the call alone
// in the assistant turn, was answered 200 (opencode's recording through
// the Vercel AI Gateway, real_vercelgw_claude_tool_stream_*). Adaptive
// thinking is kept, and between_tools (no thinking before the first
// block, by definition).
func (p *Provider) thinkingForTurn(w *messagesRequest, req *provider.Request, o *llmrelayv1.GenerationOptions) ([]string, error) {
	thinking, config, maxTokens := w.Thinking, w.OutputConfig, w.MaxTokens
	warnings, err := p.applyReasoning(w, req, o)
	if !w.Thinking.active() || w.Thinking.Type != "enabled" {
		return warnings, err
	}
	at := turnWithoutThinking(w.Messages)
	if at < 0 {
		return warnings, err
	}
	w.Thinking, w.OutputConfig, w.MaxTokens = thinking, config, maxTokens
	return []string{fmt.Sprintf("thinking not enabled: the request continues a tool loop whose assistant turn (message %d as sent) does not begin with "+
		"an anthropic thinking block (its reasoning came from another provider or was not kept), which anthropic requires with thinking on", at)}, nil
}

// turnWithoutThinking returns the index of the assistant message that
// began the current tool loop when it does not begin with a thinking or
// redacted_thinking block, or -1. The request continues a tool loop when
// its last message is a user message holding tool results; the loop's
// turn begins after the last user message without any (the question), and
// Anthropic requires thinking at the start of the turn's first assistant
// message (the later steps of one turn carry none without interleaved
// thinking, and the API takes them).
func turnWithoutThinking(msgs []wireMessage) int {
	n := len(msgs)
	for n > 0 && msgs[n-1].Role == "system" {
		n-- // a system message ending the conversation
	}
	if n == 0 || msgs[n-1].Role != "user" || !hasToolResult(msgs[n-1]) {
		return -1
	}
	start := 0
	for i := n - 2; i >= 0; i-- {
		if msgs[i].Role == "user" && !hasToolResult(msgs[i]) {
			start = i + 1
			break
		}
	}
	for i := start; i < n; i++ {
		if msgs[i].Role != "assistant" {
			continue
		}
		if c := msgs[i].Content; len(c) > 0 && (c[0].Type == "thinking" || c[0].Type == "redacted_thinking") {
			return -1
		}
		return i
	}
	return -1
}

func hasToolResult(m wireMessage) bool {
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}
