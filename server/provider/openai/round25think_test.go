package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// r25thinkEfforts are the efforts the reasoning dialect tables cover.
var r25thinkEfforts = []llmrelayv1.ReasoningEffort{
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX,
}

// r25thinkFields are the request fields that carry a reasoning choice on
// some OpenAI-compatible host.
var r25thinkFields = []string{"reasoning_effort", "thinking", "enable_thinking", "reasoning", "chat_template_kwargs", "chat_template_args", "reasoning_format", "disable_reasoning", "prompt_mode", "think"}

// r25thinkWire builds a Chat Completions request to base with effort and
// returns its reasoning fields (in r25thinkFields order, as JSON) and its
// warnings.
func r25thinkWire(t *testing.T, base string, effort llmrelayv1.ReasoningEffort) (string, []string) {
	t.Helper()
	req := r22Ask("m", "q")
	req.Options.ReasoningEffort = effort
	body, warnings, err := newHostProvider(t, base, "http://unused").buildChatRequest(req, false)
	if err != nil {
		t.Fatalf("%s %v: %v", base, effort, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, k := range r25thinkFields {
		if v, ok := m[k]; ok {
			fields = append(fields, fmt.Sprintf("%q:%s", k, v))
		}
	}
	return "{" + strings.Join(fields, ",") + "}", warnings
}

// TestRound25ThinkSwitchHosts: Z.ai (api.z.ai, open.bigmodel.cn) and
// Moonshot/Kimi (api.moonshot.ai/.cn, api.kimi.com) switch thinking with
// {"thinking":{"type":"enabled"|"disabled"}} (docs.z.ai thinking-mode
// guide and API reference; platform.kimi.ai models overview and
// MoonshotAI/kimi-cli's kimi.py with_thinking, which sends thinking
// disabled without reasoning_effort for off, thinking enabled beside
// reasoning_effort otherwise). **Bug:** reasoning effort none went as
// reasoning_effort "none", which neither documents, and no thinking
// switch: the model kept thinking (tailcallhq/forgecode#3074 for GLM 5.1).
// Now none is thinking disabled alone, an effort is thinking enabled
// beside reasoning_effort, and MAX on Z.ai is its max (GLM-5.2 and later
// take it) rather than xhigh with a warning.
func TestRound25ThinkSwitchHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base    string
		effort  llmrelayv1.ReasoningEffort
		fields  string
		warning string
	}{
		{"https://api.z.ai/api/paas/v4", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"thinking":{"type":"disabled"}}`, ""},
		{"https://api.z.ai/api/coding/paas/v4", llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, `{"reasoning_effort":"high","thinking":{"type":"enabled"}}`, ""},
		{"https://api.z.ai/api/paas/v4", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, `{"reasoning_effort":"max","thinking":{"type":"enabled"}}`, ""},
		{"https://open.bigmodel.cn/api/paas/v4", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"thinking":{"type":"disabled"}}`, ""},
		{"https://api.z.ai/api/paas/v4", llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, `{}`, ""},
		{"https://api.moonshot.ai/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"thinking":{"type":"disabled"}}`, ""},
		{"https://api.moonshot.cn/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, `{"reasoning_effort":"low","thinking":{"type":"enabled"}}`, ""},
		{"https://api.kimi.com/coding/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"thinking":{"type":"disabled"}}`, ""},
		{"https://api.moonshot.ai/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, `{"reasoning_effort":"max","thinking":{"type":"enabled"}}`, ""},
		{"https://api.moonshot.ai/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, `{}`, ""},
		// OpenRouter's reasoning_effort names max (ChatRequestReasoningEffort).
		{"https://openrouter.ai/api/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, `{"reasoning_effort":"max"}`, ""},
		{"https://openrouter.ai/api/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"reasoning_effort":"none"}`, ""},
		// Baseten: chat_template_args.enable_thinking (its opt-in models).
		{"https://inference.baseten.co/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, `{"reasoning_effort":"high","chat_template_args":{"enable_thinking":true}}`, ""},
		{"https://inference.baseten.co/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"chat_template_args":{"enable_thinking":false}}`, warnBasetenNone},
		{"https://inference.baseten.co/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, `{}`, ""},
		// Together: reasoning.enabled (its hybrid models).
		{"https://api.together.xyz/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"reasoning":{"enabled":false}}`, ""},
		{"https://api.together.ai/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, `{"reasoning_effort":"low","reasoning":{"enabled":true}}`, ""},
		{"https://api.together.xyz/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, `{}`, ""},
		// Venice's reasoning_effort names max.
		{"https://api.venice.ai/api/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, `{"reasoning_effort":"max"}`, ""},
		{"https://api.venice.ai/api/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"reasoning_effort":"none"}`, ""},
		// Elsewhere as before.
		{"https://api.openai.com/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"reasoning_effort":"none"}`, ""},
		{"https://api.openai.com/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, `{"reasoning_effort":"xhigh"}`, warnMaxEffort},
	} {
		fields, warnings := r25thinkWire(t, tc.base, tc.effort)
		if fields != tc.fields || strings.Join(warnings, "|") != tc.warning {
			t.Errorf("%s %v: %s %q, want %s %q", tc.base, tc.effort, fields, warnings, tc.fields, tc.warning)
		}
	}
}

// TestRound25ThinkDialectTable: the reasoning fields each known host's
// Chat Completions request carries for each effort, and the warnings,
// as a golden table (testdata/reasoning_dialects.table.golden): a
// change of any host's wire shows there.
func TestRound25ThinkDialectTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, base := range []string{
		"https://api.openai.com/v1",
		"https://api.deepseek.com",
		"https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
		"https://api.z.ai/api/paas/v4",
		"https://api.moonshot.ai/v1",
		"https://api.kimi.com/coding/v1",
		"https://openrouter.ai/api/v1",
		"https://inference.baseten.co/v1",
		"https://api.venice.ai/api/v1",
		"https://api.mistral.ai/v1",
		"https://api.x.ai/v1",
		"https://api.groq.com/openai/v1",
		"https://api.cerebras.ai/v1",
		"https://api.together.xyz/v1",
		"https://api.fireworks.ai/inference/v1",
		"https://generativelanguage.googleapis.com/v1beta/openai",
		"http://localhost:8000/v1",
		"http://localhost:11434/v1",
		"https://ollama.com/v1",
	} {
		for _, e := range r25thinkEfforts {
			fields, warnings := r25thinkWire(t, base, e)
			fmt.Fprintf(&b, "%s %s %s", base, strings.TrimPrefix(e.String(), "REASONING_EFFORT_"), fields)
			for _, w := range warnings {
				fmt.Fprintf(&b, " warning=%q", w)
			}
			b.WriteString("\n")
		}
	}
	providertest.Golden(t, td("reasoning_dialects.table.golden"), []byte(b.String()))
}

// TestRound25ThinkBasetenReplay: maruel/genai's GLM-5.1 request to Baseten
// (real_maruel_baseten_glm51_sqrt_1) turned thinking on with
// chat_template_args {"enable_thinking": true} and was answered with
// reasoning; GLM is one of Baseten's opt-in thinking models. **Bug:** a
// caller's reasoning effort went as reasoning_effort alone, which GLM on
// Baseten does not read. The effort now enables thinking as the recorded
// request did, and the recorded answer reads as before.
func TestRound25ThinkBasetenReplay(t *testing.T) {
	t.Parallel()
	req := mgbSqrtReq("zai-org/GLM-5.1", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM
	res, body := mgbUnary(t, "real_maruel_baseten_glm51_sqrt_1", mgbBaseten, "", req)
	if args, ok := body["chat_template_args"].(map[string]any); !ok || args["enable_thinking"] != true || len(args) != 1 || body["reasoning_effort"] != "medium" {
		t.Errorf("request %v", body)
	}
	if parts := res.Message.GetParts(); len(parts) != 2 || parts[0].GetReasoning().GetText() == "" {
		t.Errorf("parts %v", parts)
	}
}

// TestRound25ThinkTemplateKwargs: a self-hosted vLLM, SGLang or llama.cpp
// server (no host names it) switches its hybrid models' thinking through
// chat_template_kwargs: Qwen3's and GLM-4.5's templates read
// enable_thinking, DeepSeek-V3.1's thinking (vLLM's reasoning outputs
// guide). **Bug:** effort none went as reasoning_effort "none", which no
// such template reads: Qwen3 kept thinking, and nothing said so. With
// WithThinkingSwitch("chat_template_kwargs") none turns both off and an
// effort both on; auto (the default) leaves such a host as it was.
func TestRound25ThinkTemplateKwargs(t *testing.T) {
	t.Parallel()
	p, err := New(testKey, WithBaseURL("http://localhost:8000/v1"), WithThinkingSwitch("chat_template_kwargs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		effort llmrelayv1.ReasoningEffort
		want   string
	}{
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, `{"chat_template_kwargs":{"enable_thinking":false,"thinking":false}}`},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, `{"reasoning_effort":"high","chat_template_kwargs":{"enable_thinking":true,"thinking":true}}`},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, `{}`},
	} {
		req := r22Ask("Qwen/Qwen3-8B", "q")
		req.Options.ReasoningEffort = tc.effort
		body, warnings, err := p.buildChatRequest(req, true)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		var fields []string
		for _, k := range r25thinkFields {
			if v, ok := m[k]; ok {
				fields = append(fields, fmt.Sprintf("%q:%s", k, v))
			}
		}
		if got := "{" + strings.Join(fields, ",") + "}"; got != tc.want || len(warnings) > 0 {
			t.Errorf("%v: %s %q, want %s", tc.effort, got, warnings, tc.want)
		}
	}
	if _, err := New(testKey, WithThinkingSwitch("enable_thinking")); err == nil {
		t.Error("an unknown thinking switch was taken")
	}
	if fields, _ := r25thinkWire(t, "http://localhost:8000/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE); fields != `{"reasoning_effort":"none"}` {
		t.Errorf("auto: %s", fields)
	}
}
