package cli

import (
	"fmt"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// optionKeys are the -o keys: the GenerationOptions fields and the call
// settings, in the proto's words.
var optionKeys = []string{
	"temperature", "top_p", "max_tokens", "stop", "reasoning_effort", "tool_choice", "seed",
	"parallel_tool_calls", "presence_penalty", "frequency_penalty", "top_k",
	"ignore_invalid_options", "preserve_raw",
}

// applyOptions turns -o key=value pairs into generation and call options.
func applyOptions(pairs []string, gen *llmrelayv1.GenerationOptions, call *llmrelayv1.CallOptions) error {
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErrorf("-o %q: want key=value", kv)
		}
		if err := applyOption(k, v, gen, call); err != nil {
			return err
		}
	}
	return nil
}

func applyOption(k, v string, gen *llmrelayv1.GenerationOptions, call *llmrelayv1.CallOptions) error {
	bad := func(want string) error { return usageErrorf("-o %s=%s: want %s", k, v, want) }
	float := func(dst **float64) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad("a number")
		}
		*dst = &f
		return nil
	}
	int32v := func(dst **int32) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return bad("an integer")
		}
		n32 := int32(n)
		*dst = &n32
		return nil
	}
	boolean := func(dst **bool) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return bad("true or false")
		}
		*dst = &b
		return nil
	}
	switch k {
	case "temperature":
		return float(&gen.Temperature)
	case "top_p":
		return float(&gen.TopP)
	case "presence_penalty":
		return float(&gen.PresencePenalty)
	case "frequency_penalty":
		return float(&gen.FrequencyPenalty)
	case "max_tokens":
		return int32v(&gen.MaxTokens)
	case "top_k":
		return int32v(&gen.TopK)
	case "seed":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad("an integer")
		}
		gen.Seed = &n
	case "stop":
		gen.Stop = append(gen.Stop, v)
	case "parallel_tool_calls":
		return boolean(&gen.ParallelToolCalls)
	case "reasoning_effort":
		e, ok := llmrelayv1.ReasoningEffort_value["REASONING_EFFORT_"+strings.ToUpper(v)]
		if !ok || e == 0 {
			return bad("none, minimal, low, medium or high")
		}
		gen.ReasoningEffort = llmrelayv1.ReasoningEffort(e)
	case "tool_choice":
		if m, ok := llmrelayv1.ToolChoiceMode_value["TOOL_CHOICE_MODE_"+strings.ToUpper(v)]; ok && m != 0 {
			gen.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode(m)}}
		} else if v != "" {
			gen.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: v}}
		} else {
			return bad("auto, none, required or a function name")
		}
	case "ignore_invalid_options":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return bad("true or false")
		}
		call.IgnoreInvalidOptions = b
	case "preserve_raw":
		return boolean(&call.PreserveRaw)
	default:
		return usageErrorf("-o %s: unknown option; the options are %s", k, strings.Join(optionKeys, ", "))
	}
	return nil
}

// optionsHelp is the -o flag's description.
func optionsHelp() string {
	return fmt.Sprintf("option `key=value`, repeatable: %s", strings.Join(optionKeys, ", "))
}
