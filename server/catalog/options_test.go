package catalog

import (
	"errors"
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
		{"temperature dropped with ignore", reasoning, true, false, &llmrelayv1.GenerationOptions{Temperature: f64(0.2), TopP: f64(0.5), MaxTokens: i32(10)}, true, "", []string{"temperature", "top_p"}},
		{"reasoning effort on chat model", chat, false, false, &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}, false, "reasoning_effort", nil},
		{"reasoning effort dropped", chat, false, false, &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}, true, "", []string{"reasoning_effort"}},
		{"top_k unknown to openai", chat, false, false, &llmrelayv1.GenerationOptions{TopK: i32(5)}, false, "top_k", nil},
		{"valid", chat, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(1), MaxTokens: i32(5)}, false, "", nil},
		{"temperature range", chat, false, false, &llmrelayv1.GenerationOptions{Temperature: f64(2.5)}, true, "temperature", nil},
		{"max tokens range", chat, false, false, &llmrelayv1.GenerationOptions{MaxTokens: i32(0)}, false, "max_tokens", nil},
		{"tool choice on a chat call", chat, false, false, &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(true)}, false, "parallel_tool_calls", nil},
		{"tool choice on a tools call", chat, false, true, &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(true)}, false, "", nil},
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
