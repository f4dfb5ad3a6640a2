package catalog

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
)

// OptionError is an invalid option: unknown, mistyped, missing, or not
// valid for the model.
type OptionError struct {
	Model  string
	Option string
	Reason string
	// Field is the request's field when it is not options.<Option> (or
	// the provider_options.… Option itself): an agent's setup.options.….
	Field string
}

// RequestField is the request field the option is: Field, else
// provider_options.… as named, else options.<Option>.
func (e *OptionError) RequestField() string {
	switch {
	case e.Field != "":
		return e.Field
	case strings.HasPrefix(e.Option, "provider_options."):
		return e.Option // a request field of its own, not under options
	}
	return "options." + e.Option
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("model %q: option %s: %s", e.Model, e.Option, e.Reason)
}

// optionsFromConfig converts configured options to typed ones. Dimensions
// is returned apart (it is an embeddings option).
func optionsFromConfig(raw map[string]any, f *Format) (*llmrelayv1.GenerationOptions, *int32, error) {
	o, dims, errs := optionsFromConfigAll(raw, f)
	return o, dims, errors.Join(errs...)
}

// optionsFromConfigAll is optionsFromConfig with every bad option's error
// (a configuration check names them all, not the first).
func optionsFromConfigAll(raw map[string]any, f *Format) (*llmrelayv1.GenerationOptions, *int32, []error) {
	var errs []error
	o := &llmrelayv1.GenerationOptions{}
	var dims *int32
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
options:
	for _, k := range keys {
		v := raw[k]
		bad := func(want string) error { return fmt.Errorf("options.%s: want %s, got %s", k, want, valueWords(v)) }
		switch k {
		case "temperature", "top_p", "presence_penalty", "frequency_penalty":
			f, ok := toFloat(v)
			if !ok {
				errs = append(errs, bad("a number"))
				continue options
			}
			switch k {
			case "temperature":
				o.Temperature = &f
			case "top_p":
				o.TopP = &f
			case "presence_penalty":
				o.PresencePenalty = &f
			default:
				o.FrequencyPenalty = &f
			}
		case "max_tokens", "top_k", "dimensions":
			n, ok := toInt32(v)
			if !ok {
				errs = append(errs, bad("an integer"))
				continue options
			}
			switch k {
			case "max_tokens":
				o.MaxTokens = &n
			case "top_k":
				o.TopK = &n
			default:
				dims = &n
			}
		case "seed":
			f, ok := toFloat(v)
			if !ok || f != math.Trunc(f) {
				errs = append(errs, bad("an integer"))
				continue options
			}
			s := int64(f)
			o.Seed = &s
		case "parallel_tool_calls":
			b, ok := v.(bool)
			if !ok {
				errs = append(errs, bad("true or false"))
				continue options
			}
			o.ParallelToolCalls = &b
		case "stop":
			switch x := v.(type) {
			case string:
				o.Stop = []string{x}
			case []any:
				for _, s := range x {
					str, ok := s.(string)
					if !ok {
						errs = append(errs, bad("a string or a list of strings"))
						continue options
					}
					o.Stop = append(o.Stop, str)
				}
			default:
				errs = append(errs, bad("a string or a list of strings"))
				continue options
			}
		case "reasoning_effort":
			s, ok := v.(string)
			e, known := llmrelayv1.ReasoningEffort_value["REASONING_EFFORT_"+strings.ToUpper(s)]
			if !ok || !known || e == 0 {
				errs = append(errs, bad("none, minimal, low, medium or high"))
				continue options
			}
			o.ReasoningEffort = llmrelayv1.ReasoningEffort(e)
		case "tool_choice":
			s, ok := v.(string)
			if !ok || s == "" {
				errs = append(errs, bad("auto, none, required or a function name"))
				continue options
			}
			if m, known := llmrelayv1.ToolChoiceMode_value["TOOL_CHOICE_MODE_"+strings.ToUpper(s)]; known && m != 0 {
				o.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode(m)}}
			} else {
				o.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: s}}
			}
		default:
			known := make([]string, 0, len(f.Options))
			for name := range f.Options {
				known = append(known, name)
			}
			sort.Strings(known)
			hint := ""
			if near := config.Suggest(k, known); near != "" {
				hint = fmt.Sprintf("; did you mean %s?", near)
			}
			errs = append(errs, fmt.Errorf("options.%s: unknown option%s (format %s knows %s)", k, hint, f.Name, strings.Join(known, ", ")))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return o, dims, nil
}

// valueWords shows a configured value in YAML's words, not Go's.
func valueWords(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	default:
		return fmt.Sprint(x)
	}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	default:
		return 0, false
	}
}

func toInt32(v any) (int32, bool) {
	f, ok := toFloat(v)
	if !ok || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, false
	}
	return int32(f), true
}

// Merge returns the configured options with every field the request set
// replacing the configured one (lists are replaced, not appended). Neither
// input is modified.
func Merge(configured, request *llmrelayv1.GenerationOptions) *llmrelayv1.GenerationOptions {
	out := proto.CloneOf(configured)
	if out == nil {
		out = &llmrelayv1.GenerationOptions{}
	}
	if request == nil {
		return out
	}
	dst := out.ProtoReflect()
	request.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := dst.NewField(fd).List()
			for i := 0; i < v.List().Len(); i++ {
				l.Append(v.List().Get(i))
			}
			dst.Set(fd, protoreflect.ValueOfList(l))
		case fd.Message() != nil:
			dst.Set(fd, protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect()))
		default:
			dst.Set(fd, v)
		}
		return true
	})
	return out
}

// SetOptions lists the option names set in o.
func SetOptions(o *llmrelayv1.GenerationOptions) []string {
	var names []string
	o.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		names = append(names, string(fd.Name()))
		return true
	})
	sort.Strings(names)
	return names
}

// optionReason says why a set option is invalid for the format, the
// model's kind and the call (tools: a call that offers tools; thinking:
// the options do not set reasoning_effort NONE); "" if valid.
// OpenAI's reasoning models take temperature and top_p only with
// reasoning_effort none (gpt-5.1 and later: gpt-5.4-nano answered 0.4 and
// 0.9 with effort none and refused temperature with effort low, the
// openai adapter's real_logfire_responses_* recordings).
func optionReason(name string, f *Format, reasoning, tools, thinking bool) string {
	switch {
	case !tools && (name == "tool_choice" || name == "parallel_tool_calls"):
		return "only for Tools calls, which offer tools"
	case f.ReasoningRules && reasoning && thinking && (name == "temperature" || name == "top_p"):
		return "not supported by reasoning models unless reasoning_effort is NONE"
	case f.ReasoningRules && !reasoning && name == "reasoning_effort":
		return "only supported by reasoning models"
	case !f.Options[name]:
		return fmt.Sprintf("not supported by format %s", f.Name)
	}
	return ""
}

// Validate checks merged options against the format, the model's kind and
// the call (tools: a Tools call, which offers tools).
// With ignoreInvalid the offending options are cleared from o and
// returned as dropped instead of failing.
func Validate(model string, f *Format, reasoning, tools bool, o *llmrelayv1.GenerationOptions, ignoreInvalid bool) ([]*llmrelayv1.DroppedOption, error) {
	var dropped []*llmrelayv1.DroppedOption
	m := o.ProtoReflect()
	fields := m.Descriptor().Fields()
	for _, name := range SetOptions(o) {
		reason := optionReason(name, f, reasoning, tools, o.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE)
		if reason == "" {
			continue
		}
		if !ignoreInvalid {
			return nil, &OptionError{Model: model, Option: name, Reason: reason}
		}
		m.Clear(fields.ByName(protoreflect.Name(name)))
		dropped = append(dropped, &llmrelayv1.DroppedOption{Option: name, Reason: reason})
	}
	if name, reason := checkNumbers(f, o); name != "" {
		return dropped, &OptionError{Model: model, Option: name, Reason: reason}
	}
	return dropped, nil
}

// numberOptions are the floating-point options, in the order they are
// checked.
var numberOptions = []string{"temperature", "top_p", "presence_penalty", "frequency_penalty"}

// checkNumbers returns the first number option of o outside what format f
// accepts (NaN and infinities never are), or a stop list longer than it
// takes, and why; "" when all fit.
func checkNumbers(f *Format, o *llmrelayv1.GenerationOptions) (string, string) {
	values := [...]*float64{o.Temperature, o.TopP, o.PresencePenalty, o.FrequencyPenalty}
	for i, v := range values {
		if v == nil {
			continue
		}
		name := numberOptions[i]
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			return name, fmt.Sprintf("must be a finite number, got %v", *v)
		}
		if r, ok := f.Ranges[name]; ok && !r.Contains(*v) {
			if math.IsInf(r.Max, 1) { // a floor only: "outside [0, +Inf]" reads as a formula
				return name, fmt.Sprintf("%v is below %v, the least format %s accepts", *v, r.Min, f.Name)
			}
			return name, fmt.Sprintf("%v is outside %v, the range format %s accepts", *v, r, f.Name)
		}
	}
	if n := o.MaxTokens; n != nil && *n < 1 {
		return "max_tokens", fmt.Sprintf("must be at least 1, got %d", *n)
	}
	if n := o.TopK; n != nil && *n < 0 {
		return "top_k", fmt.Sprintf("must not be negative, got %d", *n)
	}
	if f.MaxStop > 0 && len(o.GetStop()) > f.MaxStop {
		return "stop", fmt.Sprintf("format %s takes at most %d stop sequences, got %d", f.Name, f.MaxStop, len(o.GetStop()))
	}
	if s := o.Seed; f.Int32Seed && s != nil && (*s < math.MinInt32 || *s > math.MaxInt32) {
		return "seed", fmt.Sprintf("format %s takes a 32-bit seed (%d to %d), got %d", f.Name, math.MinInt32, math.MaxInt32, *s)
	}
	return "", ""
}

// Anthropic's extended thinking (Messages API, `thinking.budget_tokens`):
// the budget is at least 1024 tokens and less than max_tokens, and a
// thinking request takes no temperature but 1, no top_k, top_p only from
// 0.95 to 1, and no forced tool use.
const minThinkingBudget = 1024

// ValidateProviderOptions checks what ties provider options to the
// generation options, after the merge: a provider option that would
// silently override reasoning_effort (Gemini's thinking_budget, Ollama's
// think, Anthropic's thinking_budget_tokens) is an error, and Anthropic's
// thinking (a fixed budget, or reasoning_effort mapped per model generation on the
// anthropic-messages format) takes no temperature but 1, no top_k, top_p
// only from 0.95 and no forced tool choice. format is the capability's.
func ValidateProviderOptions(model, format string, o *llmrelayv1.GenerationOptions, po *llmrelayv1.ProviderOptions) error {
	bad := func(option, format string, args ...any) error {
		return &OptionError{Model: model, Option: option, Reason: fmt.Sprintf(format, args...)}
	}
	effort := o.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED
	if g := po.GetGemini(); g != nil && g.ThinkingBudget != nil {
		// thinkingConfig.thinkingBudget: -1 dynamic, 0 off, else tokens.
		if g.GetThinkingBudget() < -1 {
			return bad("provider_options.gemini.thinking_budget", "-1 (dynamic), 0 (off) or a token count, got %d", g.GetThinkingBudget())
		}
		if effort {
			return bad("reasoning_effort", "set either reasoning_effort or provider_options.gemini.thinking_budget, not both")
		}
	}
	if ol := po.GetOllama(); ol != nil && ol.Think != nil && effort {
		return bad("reasoning_effort", "set either reasoning_effort or provider_options.ollama.think, not both")
	}
	a := po.GetAnthropic()
	budgetSet := a != nil && a.ThinkingBudgetTokens != nil
	adaptive := format == "anthropic-messages" && effort && o.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
	if budgetSet && effort {
		return bad("reasoning_effort", "set either reasoning_effort (thinking mapped per model generation) or provider_options.anthropic.thinking_budget_tokens (a fixed budget), not both")
	}
	mode := "thinking by reasoning_effort"
	if budgetSet {
		const budget = "provider_options.anthropic.thinking_budget_tokens"
		b := a.GetThinkingBudgetTokens()
		switch {
		case b < minThinkingBudget:
			return bad(budget, "must be at least %d, got %d", minThinkingBudget, b)
		case o.MaxTokens != nil && b >= o.GetMaxTokens():
			return bad(budget, "%d must be less than max_tokens (%d)", b, o.GetMaxTokens())
		}
		mode = "extended thinking (thinking_budget_tokens)"
	} else if !adaptive {
		return nil
	}
	tc := o.GetToolChoice()
	switch {
	case o.Temperature != nil && o.GetTemperature() != 1:
		return bad("temperature", "anthropic takes no temperature but 1 with %s", mode)
	case o.TopK != nil:
		return bad("top_k", "anthropic takes no top_k with %s", mode)
	case o.TopP != nil && o.GetTopP() < 0.95:
		return bad("top_p", "anthropic takes top_p only from 0.95 to 1 with %s, got %v", mode, o.GetTopP())
	case budgetSet && (tc.GetFunctionName() != "" || tc.GetMode() == llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED):
		// A fixed budget refuses a forced tool on every model. By
		// reasoning_effort it depends on the model's generation, which
		// the adapter knows: adaptive thinking takes a forced tool (the
		// live API answered claude-opus-4-6 with the call), a budget
		// generation's thinking refuses it (anthropic.checkThinking).
		return bad("tool_choice", "anthropic cannot force tool use with %s", mode)
	}
	return nil
}
