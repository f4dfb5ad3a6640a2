package ollama

import (
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestThinkLevelsReasoning19: Ollama documents think levels for gpt-oss
// only, which ignores true and false ("GPT-OSS requires think to be set
// to low, medium, or high. Passing true/false is ignored for that model",
// docs.ollama.com/capabilities/thinking); Ollamas before commit 122c68c
// answer 400 "think value \"low\" is not supported for this model" to a
// level for any other model. reasoning_effort became a level for every
// model, so reasoning_effort low on qwen3 failed on those versions, and
// none on gpt-oss was silently ignored.
func TestThinkLevelsReasoning19(t *testing.T) {
	t.Parallel()
	const (
		E0 = llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED
		EN = llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
		EM = llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL
		EL = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
		ED = llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM
		EH = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
	)
	cases := []struct {
		model  string
		effort llmrelayv1.ReasoningEffort
		think  *bool
		want   string // the think value sent, "" for none
		warn   string // a part of the one warning, "" for none
	}{
		{"gpt-oss:20b", EM, nil, `"low"`, ""},
		{"gpt-oss:20b", EL, nil, `"low"`, ""},
		{"gpt-oss:120b", ED, nil, `"medium"`, ""},
		{"GPT-OSS:120b-cloud", EH, nil, `"high"`, ""},
		{"gpt-oss:20b", EN, nil, `"low"`, "gpt-oss cannot turn thinking off"},
		{"gpt-oss:20b", E0, nil, "", ""},
		{"gpt-oss:20b", EH, ptr(false), "false", "Ollama ignores it for gpt-oss"},
		{"gpt-oss:20b", E0, ptr(true), "true", ""},
		{"qwen3:8b", EL, nil, "true", "levels for gpt-oss only; sent think true"},
		{"deepseek-r1:14b", EH, nil, "true", "reasoning_effort high"},
		{"qwen3:8b", EN, nil, "false", ""},
		{"qwen3:8b", EH, ptr(false), "false", ""},
		{"qwen3:8b", E0, nil, "", ""},
		// Above HIGH: gpt-oss's highest level, with a warning; other
		// models think (true), with the warning that says so.
		{"gpt-oss:20b", llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, nil, `"high"`, "reasoning_effort XHIGH: Ollama's highest thinking level is high"},
		{"gpt-oss:120b", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, nil, `"high"`, "reasoning_effort MAX: Ollama's highest thinking level is high"},
		{"qwen3:8b", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, nil, "true", "reasoning_effort max: Ollama takes thinking levels for gpt-oss only; sent think true"},
		{"qwen3:8b", llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, nil, "true", "reasoning_effort xhigh: Ollama takes thinking levels for gpt-oss only; sent think true"},
	}
	for _, tc := range cases {
		req := &provider.Request{Model: tc.model, Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("x"))},
			Options: &llmrelayv1.GenerationOptions{ReasoningEffort: tc.effort}}
		if tc.think != nil {
			req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{Think: tc.think}}}
		}
		b, err := buildChatRequest(req, true)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.model, tc.effort, err)
		}
		var body struct {
			Think json.RawMessage `json:"think"`
		}
		if err := json.Unmarshal(b.body, &body); err != nil {
			t.Fatal(err)
		}
		if string(body.Think) != tc.want {
			t.Errorf("%s %v think %v: sent think %s, want %s", tc.model, tc.effort, tc.think, body.Think, tc.want)
		}
		var warns []string
		for _, w := range b.warnings {
			if strings.Contains(w, "think") || strings.Contains(w, "reasoning_effort") {
				warns = append(warns, w)
			}
		}
		switch {
		case tc.warn == "" && len(warns) > 0:
			t.Errorf("%s %v: warnings %q, want none", tc.model, tc.effort, warns)
		case tc.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.warn)):
			t.Errorf("%s %v: warnings %q, want one with %q", tc.model, tc.effort, warns, tc.warn)
		}
	}
}
