package catalog

import (
	"errors"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func f64(v float64) *float64 { return &v }
func i32(v int32) *int32     { return &v }

func TestMergeOverridesWithoutMutating(t *testing.T) {
	t.Parallel()
	configured, _, err := optionsFromConfig(map[string]any{"temperature": 0.7, "max_tokens": 4096, "stop": []any{"END"}, "tool_choice": "auto"}, Formats["openai-chat"])
	if err != nil {
		t.Fatal(err)
	}
	before := proto.CloneOf(configured)
	req := &llmrelayv1.GenerationOptions{Temperature: f64(0.1), Stop: []string{"A", "B"}}
	merged := Merge(configured, req)
	if merged.GetTemperature() != 0.1 || merged.GetMaxTokens() != 4096 || len(merged.GetStop()) != 2 || merged.GetStop()[0] != "A" ||
		merged.GetToolChoice().GetMode() != llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO {
		t.Errorf("merged = %v", merged)
	}
	if !proto.Equal(configured, before) {
		t.Errorf("configured options were mutated: %v", configured)
	}
	// The next call without overrides sees the configured values.
	if next := Merge(configured, nil); next.GetTemperature() != 0.7 || len(next.GetStop()) != 1 {
		t.Errorf("override leaked into the next call: %v", next)
	}
	// Mutating the merged result does not reach the configured options.
	merged.GetToolChoice().Choice = &llmrelayv1.ToolChoice_FunctionName{FunctionName: "x"}
	if !proto.Equal(configured, before) {
		t.Error("merged shares memory with configured")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	chat := Formats["openai-chat"]
	reasoning := Formats["openai-reasoning"]
	gemini, anthropic, ollama := Formats["gemini"], Formats["anthropic-messages"], Formats["ollama"]
	low := llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	cases := []struct {
		name        string
		f           *Format
		reasoning   bool
		tools       bool
		opts        *llmrelayv1.GenerationOptions
		ignore      bool
		wantOption  string
		wantDropped []string
	}{
		{"temperature on reasoning model", reasoning, true, false, &llmrelayv1.GenerationOptions{Temperature: f64(0.2)}, false, "temperature", nil},
		{"temperature on reasoning model with effort none", reasoning, true, false, &llmrelayv1.GenerationOptions{Temperature: f64(0.4), TopP: f64(0.9), ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE}, false, "", nil},
		{"temperature on reasoning model with effort low", reasoning, true, false, &llmrelayv1.GenerationOptions{Temperature: f64(0.4), ReasoningEffort: low}, false, "temperature", nil},
		{"temperature dropped with ignore", reasoning, true, false, &llmrelayv1.GenerationOptions{Temperature: f64(0.2), TopP: f64(0.5), MaxTokens: i32(10)}, true, "", []string{"temperature", "top_p"}},
		{"reasoning effort on chat model", chat, false, false, &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}, false, "reasoning_effort", nil},
		{"reasoning effort dropped", chat, false, false, &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}, true, "", []string{"reasoning_effort"}},
		{"top_k unknown to openai", chat, false, false, &llmrelayv1.GenerationOptions{TopK: i32(5)}, false, "top_k", nil},
		{"valid", chat, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(1), MaxTokens: i32(5)}, false, "", nil},
		{"temperature range", chat, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(2.5)}, true, "temperature", nil},
		{"max tokens range", chat, false, false, &llmrelayv1.GenerationOptions{MaxTokens: i32(0)}, false, "max_tokens", nil},
		{"tool choice on a chat call", chat, false, false, &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(true)}, false, "parallel_tool_calls", nil},
		{"tool choice on a tools call", chat, false, true, &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(true)}, false, "", nil},
		// Numbers: NaN and infinities are never valid, even with ignore.
		{"NaN temperature", chat, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(math.NaN())}, true, "temperature", nil},
		{"infinite top_p", gemini, false, false, &llmrelayv1.GenerationOptions{TopP: f64(math.Inf(1))}, false, "top_p", nil},
		{"NaN penalty on ollama", ollama, false, false, &llmrelayv1.GenerationOptions{PresencePenalty: f64(math.NaN())}, false, "presence_penalty", nil},
		{"negative top_k", gemini, false, false, &llmrelayv1.GenerationOptions{TopK: i32(-1)}, false, "top_k", nil},
		// Ranges are the format's API's.
		{"anthropic temperature above 1", anthropic, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(1.5)}, false, "temperature", nil},
		{"anthropic temperature 1", anthropic, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(1)}, false, "", nil},
		{"gemini penalty 2 excluded", gemini, false, false, &llmrelayv1.GenerationOptions{FrequencyPenalty: f64(2)}, false, "frequency_penalty", nil},
		{"gemini penalty -2 included", gemini, false, false, &llmrelayv1.GenerationOptions{PresencePenalty: f64(-2)}, false, "", nil},
		{"openai penalty 2 included", chat, false, false, &llmrelayv1.GenerationOptions{PresencePenalty: f64(2)}, false, "", nil},
		{"ollama temperature above 2", ollama, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(3)}, false, "", nil},
		{"ollama negative temperature", ollama, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(-0.1)}, false, "temperature", nil},
		// OpenAI's reasoning-model rules are OpenAI's: Gemini and Ollama
		// take reasoning_effort on any model, Gemini temperature too.
		{"gemini reasoning effort, not a reasoning name", gemini, false, false, &llmrelayv1.GenerationOptions{ReasoningEffort: low}, false, "", nil},
		{"gemini temperature on a reasoning model", gemini, true, false, &llmrelayv1.GenerationOptions{Temperature: f64(0.3), ReasoningEffort: low}, false, "", nil},
		{"ollama reasoning effort", ollama, false, false, &llmrelayv1.GenerationOptions{ReasoningEffort: low}, false, "", nil},
		// Anthropic thinks adaptively by reasoning_effort (Claude 4.6 and later).
		{"anthropic reasoning effort", anthropic, true, false, &llmrelayv1.GenerationOptions{ReasoningEffort: low}, false, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dropped, err := Validate("m1", tc.f, tc.reasoning, tc.tools, tc.opts, tc.ignore)
			var oe *OptionError
			if tc.wantOption != "" {
				if !errors.As(err, &oe) || oe.Option != tc.wantOption || oe.Model != "m1" {
					t.Fatalf("err = %v, want option %s", err, tc.wantOption)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(dropped) != len(tc.wantDropped) {
				t.Fatalf("dropped = %v, want %v", dropped, tc.wantDropped)
			}
			for i, d := range dropped {
				if d.GetOption() != tc.wantDropped[i] {
					t.Errorf("dropped %d = %v", i, d)
				}
				for _, n := range SetOptions(tc.opts) {
					if n == d.GetOption() {
						t.Errorf("%s still set after drop", n)
					}
				}
			}
		})
	}
}

func TestOptionsFromConfigTypes(t *testing.T) {
	t.Parallel()
	bad := []map[string]any{
		{"temperature": "hot"}, {"max_tokens": 1.5}, {"stop": 3}, {"reasoning_effort": "extreme"},
		{"parallel_tool_calls": "yes"}, {"nonsense": 1}, {"seed": 1.2},
	}
	for _, m := range bad {
		if _, _, err := optionsFromConfig(m, Formats["openai-chat"]); err == nil {
			t.Errorf("%v: want an error", m)
		}
	}
	o, dims, err := optionsFromConfig(map[string]any{"dimensions": 256, "reasoning_effort": "high", "tool_choice": "get_weather", "seed": 7}, Formats["openai-chat"])
	if err != nil || *dims != 256 || o.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH ||
		o.GetToolChoice().GetFunctionName() != "get_weather" || o.GetSeed() != 7 {
		t.Errorf("got %v %v %v", o, dims, err)
	}
}

func TestIsReasoningName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"o1-mini": true, "o3": true, "o4-mini": true, "gpt-5": true, "openai/gpt-5-mini": true,
		"gpt-4o": false, "claude-sonnet-4-5": false, "llama3.2": false} {
		if got := IsReasoningName(name); got != want {
			t.Errorf("IsReasoningName(%q) = %v", name, got)
		}
	}
}

func TestRouteWeighted(t *testing.T) {
	t.Parallel()
	a, b := &Deployment{Name: "a", Weight: 3}, &Deployment{Name: "b", Weight: 1}
	m := &Model{Deployments: []*Deployment{a, b}, Weighted: true}
	first := map[string]int{}
	for r := 0; r < 4; r++ {
		route := m.Route(func(int) int { return r })
		if len(route) != 2 || route[0] == route[1] {
			t.Fatalf("route = %v", route)
		}
		first[route[0].Name]++
	}
	if first["a"] != 3 || first["b"] != 1 {
		t.Errorf("first picks = %v, want a 3 of 4 (weights 3:1)", first)
	}
	m.Weighted = false
	if r := m.Route(func(int) int { return 3 }); r[0] != a {
		t.Error("fallback routing must keep the configured order")
	}
}

func TestValidateProviderOptions(t *testing.T) {
	t.Parallel()
	thinking := func(budget int32) *llmrelayv1.ProviderOptions {
		return &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: &budget}}}
	}
	gemini := func(budget int32) *llmrelayv1.ProviderOptions {
		return &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{ThinkingBudget: &budget}}}
	}
	required := &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	auto := &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	cases := []struct {
		name       string
		opts       *llmrelayv1.GenerationOptions
		po         *llmrelayv1.ProviderOptions
		wantOption string
	}{
		{"no thinking", &llmrelayv1.GenerationOptions{Temperature: f64(0.2), TopK: i32(3)}, nil, ""},
		{"valid", &llmrelayv1.GenerationOptions{MaxTokens: i32(4096), TopP: f64(0.95), Temperature: f64(1), ToolChoice: auto}, thinking(2048), ""},
		{"budget below 1024", &llmrelayv1.GenerationOptions{}, thinking(1023), "provider_options.anthropic.thinking_budget_tokens"},
		{"budget not below max_tokens", &llmrelayv1.GenerationOptions{MaxTokens: i32(2048)}, thinking(2048), "provider_options.anthropic.thinking_budget_tokens"},
		{"temperature", &llmrelayv1.GenerationOptions{Temperature: f64(0.5)}, thinking(2048), "temperature"},
		{"top_k", &llmrelayv1.GenerationOptions{TopK: i32(5)}, thinking(2048), "top_k"},
		{"top_p below 0.95", &llmrelayv1.GenerationOptions{TopP: f64(0.9)}, thinking(2048), "top_p"},
		{"forced tool", &llmrelayv1.GenerationOptions{ToolChoice: required}, thinking(2048), "tool_choice"},
		{"named tool", &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "f"}}}, thinking(2048), "tool_choice"},
		// Gemini and Ollama: a provider option that would override reasoning_effort.
		{"gemini budget and effort", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}, gemini(1024), "reasoning_effort"},
		{"gemini dynamic budget", &llmrelayv1.GenerationOptions{}, gemini(-1), ""},
		{"gemini budget below -1", &llmrelayv1.GenerationOptions{}, gemini(-2), "provider_options.gemini.thinking_budget"},
		{"ollama think and effort", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH},
			&llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{Think: proto.Bool(true)}}}, "reasoning_effort"},
		{"ollama think alone", &llmrelayv1.GenerationOptions{},
			&llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{Think: proto.Bool(true)}}}, ""},
		// Anthropic's adaptive thinking (reasoning_effort) has the same
		// rules as a fixed budget, and the two do not mix.
		{"anthropic effort", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, Temperature: f64(1), ToolChoice: auto}, nil, ""},
		{"anthropic effort and budget", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}, thinking(2048), "reasoning_effort"},
		{"anthropic effort, temperature", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM, Temperature: f64(0.3)}, nil, "temperature"},
		// A forced tool with reasoning_effort is the adapter's to judge by
		// the model's generation (adaptive thinking takes it).
		{"anthropic effort, forced tool", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, ToolChoice: required}, nil, ""},
		{"anthropic effort none", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, Temperature: f64(0.3)}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateProviderOptions("claude", "anthropic-messages", tc.opts, tc.po)
			var oe *OptionError
			if tc.wantOption == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.As(err, &oe) || oe.Option != tc.wantOption || oe.Model != "claude" {
				t.Fatalf("err = %v, want option %s", err, tc.wantOption)
			}
		})
	}
}
