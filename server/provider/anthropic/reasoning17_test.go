package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17, reasoning_effort by model generation (reasoning.go).

var reasoning17Efforts = []llmrelayv1.ReasoningEffort{
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH,
	llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX,
}

func reasoning17Request(model string, effort llmrelayv1.ReasoningEffort) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    model,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Is 1009 prime?"))},
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: effort},
	}
}

// reasoning17Render is the request buildRequest makes (indented JSON) and
// its warnings, or the error it refuses with.
func reasoning17Render(t *testing.T, p *Provider, req *provider.Request) string {
	t.Helper()
	body, _, warnings, err := p.buildRequest(req, false)
	if err != nil {
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %T %v is not a *provider.Error", req.Model, err, err)
		}
		return fmt.Sprintf("error: kind=%v param=%s\n  %s\n", pe.Kind, pe.Param, pe.Message)
	}
	var b strings.Builder
	b.Write(providertest.IndentJSON(body))
	for _, w := range warnings {
		b.WriteString("warning: " + w + "\n")
	}
	return b.String()
}

// TestReasoning17Golden: the request each reasoning_effort builds, per
// model generation, as ids are written on the API, Bedrock and Vertex,
// max_tokens unset (the default 4096 is the answer's room):
//   - claude-3-5-haiku does not think: NONE sends nothing, the others are
//     refused naming reasoning_effort;
//   - Claude 3.7 Sonnet and the Claude 4 to 4.5 models: thinking enabled
//     with 1024 (MINIMAL, LOW), 8192, 16384 tokens, max_tokens that plus
//     4096, no output_config.effort (which Haiku and Sonnet 4.5 refuse);
//   - Claude 4.6 and later, ids with no version and ids we do not know:
//     adaptive thinking at effort low (MINIMAL, LOW), medium, high, with
//     the same max_tokens a budget would get (thinking counts against it);
//     MAX as max on all of them, XHIGH as xhigh from Opus 4.7 on and as
//     high (with a warning) on the 4.6 models, which predate it; the
//     budget models give XHIGH and MAX HIGH's budget, with a warning;
//   - NONE: nothing before Claude 5 (no thinking unless asked); thinking
//     disabled on Opus 5 (which thinks by default); between_tools, its
//     least, on Sonnet 5.5 and effort low on Opus 5.5, Fable and Mythos
//     (which cannot stop thinking), each with a warning.
func TestReasoning17Golden(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "http://unused.invalid")
	for _, tc := range []struct{ name, model string }{
		{"claude_3_5_haiku", "claude-3-5-haiku-20241022"},
		{"claude_3_7_sonnet", "claude-3-7-sonnet-latest"},
		{"claude_haiku_4_5", "claude-haiku-4-5-20251001"},
		{"claude_sonnet_4_5_vertex", "claude-sonnet-4-5@20250929"},
		{"claude_opus_4_1_bedrock", "anthropic.claude-opus-4-1-20250805-v1:0"},
		{"claude_opus_4_5", "claude-opus-4-5"},
		{"claude_sonnet_4_6_bedrock_profile", "us.anthropic.claude-sonnet-4-6"},
		{"claude_opus_4_7", "claude-opus-4-7"},
		{"claude_fable_5_1", "claude-fable-5-1"},
		{"claude_mythos_preview", "claude-mythos-preview"},
		{"claude_opus_5", "claude-opus-5"},
		{"claude_sonnet_5_5", "claude-sonnet-5-5"},
		{"claude_opus_5_5", "claude-opus-5-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			for _, e := range reasoning17Efforts {
				fmt.Fprintf(&b, "== %s %s\n", tc.model, effortName(e))
				b.WriteString(reasoning17Render(t, p, reasoning17Request(tc.model, e)))
			}
			providertest.Golden(t, "testdata/reasoning17_"+tc.name+".requests.golden", b.Bytes())
		})
	}
}

// TestReasoning17HaikuEffort: the live API refused output_config.effort
// from claude-haiku-4-5 ("This model does not support the effort
// parameter.", real_logfire_effort_unsupported_error), and reasoning_effort
// LOW sent it there (with adaptive thinking, which this generation does
// not have either). The same request now thinks with the least budget,
// 1024 of the caller's 2048 max_tokens, and carries no output_config;
// everything else is the recorded request. The recording still replays:
// the refusal of a request that did carry effort maps as before.
func TestReasoning17HaikuEffort(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, "testdata/real_logfire_effort_unsupported_error.http")
		p := newTestProvider(t, srv.URL)
		req := logfireRequest("Say OK.", logfireGetWeather())
		req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
		var err error
		if streaming {
			_, err = p.Stream(context.Background(), req)
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.HTTPStatus != 400 || pe.Message != "This model does not support the effort parameter." || pe.RequestID != "req_011CetmUpC7tdsPNKq3FHFK1" {
			t.Fatalf("stream=%v: error %v", streaming, err)
		}
		body := srv.Last(t).Body
		var sent map[string]json.RawMessage
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatal(err)
		}
		if _, ok := sent["output_config"]; ok {
			t.Errorf("stream=%v: the request still carries output_config: %s", streaming, body)
		}
		if !sameJSON(t, string(sent["thinking"]), `{"type":"enabled","budget_tokens":1024}`) {
			t.Errorf("stream=%v: thinking %s", streaming, sent["thinking"])
		}
		// The recorded request without its effort, and our thinking.
		delete(sent, "thinking")
		delete(sent, "stream")
		rest, err := json.Marshal(sent)
		if err != nil {
			t.Fatal(err)
		}
		lcgSameFields(t, rest, strings.Replace(logfireRecordedTail(`"output_config":{"effort":"low"}`), `,"output_config":{"effort":"low"}`, "", 1))
		if !streaming {
			providertest.Golden(t, "testdata/reasoning17_logfire_haiku_effort_low.request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		}
	}
}

// TestReasoning17ParseModel: ids as users, Bedrock, Vertex and gateways
// write them, read for their generation.
func TestReasoning17ParseModel(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]thinkingKind{
		"claude-sonnet-4-5":                           thinkBudget,
		"claude-sonnet-4-5-20250929":                  thinkBudget,
		"claude-3-7-sonnet-latest":                    thinkBudget,
		"claude-3-7-sonnet-20250219":                  thinkBudget,
		"anthropic.claude-sonnet-4-5-20250929-v1:0":   thinkBudget,
		"us.anthropic.claude-haiku-4-5-20251001-v1:0": thinkBudget,
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-20250514-v1:0": thinkBudget,
		"claude-sonnet-4-5@20250929":            thinkBudget,
		"anthropic/claude-sonnet-4.5":           thinkBudget,
		"claude-opus-4-20250514":                thinkBudget,
		"claude-opus-4-1":                       thinkBudget,
		"claude-opus-4-5-20251101":              thinkBudget,
		"CLAUDE-HAIKU-4-5":                      thinkBudget,
		"claude-opus-4-6":                       thinkAdaptive,
		"anthropic.claude-opus-4-6-v1":          thinkAdaptive,
		"claude-sonnet-4-6":                     thinkAdaptive,
		"claude-opus-4-7":                       thinkAdaptive,
		"claude-opus-5":                         thinkAdaptive,
		"claude-fable-5-1":                      thinkAdaptive,
		"claude-mythos-preview":                 thinkAdaptive,
		"claude-sonnet-6-20270101":              thinkAdaptive,
		"my-claude-deployment":                  thinkAdaptive,
		"not-a-known-model":                     thinkAdaptive,
		"claude-3-5-sonnet-20241022":            thinkNone,
		"claude-3-5-sonnet-v2@20241022":         thinkNone,
		"claude-3-5-haiku-latest":               thinkNone,
		"claude-3-haiku-20240307":               thinkNone,
		"anthropic.claude-3-opus-20240229-v1:0": thinkNone,
		"claude-2.1":                            thinkNone,
		"anthropic.claude-v2:1":                 thinkNone,
		"claude-instant-1.2":                    thinkNone,
	} {
		if got := parseClaude(id).thinking(); got != want {
			t.Errorf("%s: %v (%+v), want %v", id, got, parseClaude(id), want)
		}
	}
	for id, want := range map[string]noneMode{
		"claude-fable-5": noneLeast, "claude-mythos-5-1": noneLeast, "claude-mythos-preview": noneLeast, "claude-opus-5-5": noneLeast,
		"claude-opus-6": noneLeast, "claude-sonnet-5-5": noneBetweenTools, "claude-haiku-5-5": noneDisabled,
		"claude-opus-5": noneDisabled, "claude-sonnet-5-20260601": noneDisabled,
		"claude-opus-4-8": noneOmit, "claude-opus-4-6": noneOmit, "claude-sonnet-4-5": noneOmit, "claude-3-5-haiku-latest": noneOmit,
		"my-claude-deployment": noneOmit,
	} {
		if got := parseClaude(id).none(); got != want {
			t.Errorf("%s NONE: %v, want %v", id, got, want)
		}
	}
	for id, want := range map[string]int32{"claude-opus-4-1-20250805": 32000, "claude-opus-4": 32000, "claude-opus-4-5": 64000, "claude-3-7-sonnet-latest": 64000, "claude-opus-4-6": 0} {
		if got := parseClaude(id).maxOutput(); got != want {
			t.Errorf("%s output limit %d, want %d", id, got, want)
		}
	}
}

// TestReasoning17MaxTokens: max_tokens is the whole output, thinking
// included. A caller's is kept and the budget takes at most half of it (at
// least 1024); one that cannot hold 1024 and an answer refuses
// reasoning_effort. Without one, the budget plus the configured default,
// within the model's output limit (Opus 4.1: 32000).
func TestReasoning17MaxTokens(t *testing.T) {
	t.Parallel()
	high := llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
	low := llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	for _, tc := range []struct {
		name       string
		model      string
		effort     llmrelayv1.ReasoningEffort
		maxTokens  *int32
		defaultMax int32
		wantMax    int32
		wantBudget int32
		warn       string
		errParam   string
	}{
		{name: "unset", model: "claude-sonnet-4-5", effort: high, wantMax: 16384 + 4096, wantBudget: 16384},
		{name: "configured default", model: "claude-sonnet-4-5", effort: low, defaultMax: 8000, wantMax: 1024 + 8000, wantBudget: 1024},
		{name: "opus 4.1 limit", model: "claude-opus-4-1", effort: high, defaultMax: 30000, wantMax: 32000, wantBudget: 16384},
		{name: "caller's room", model: "claude-sonnet-4-5", effort: high, maxTokens: ptr[int32](40000), wantMax: 40000, wantBudget: 16384},
		{name: "caller's half", model: "claude-sonnet-4-5", effort: high, maxTokens: ptr[int32](4096), wantMax: 4096, wantBudget: 2048,
			warn: "reasoning_effort HIGH: thinking budget 2048 tokens instead of 16384, to leave the answer part of max_tokens (4096)"},
		{name: "caller's small", model: "claude-haiku-4-5", effort: low, maxTokens: ptr[int32](1500), wantMax: 1500, wantBudget: 1024},
		{name: "caller's too small", model: "claude-haiku-4-5", effort: low, maxTokens: ptr[int32](1024), errParam: "options.reasoning_effort"},
		{name: "adaptive keeps the caller's", model: "claude-opus-4-6", effort: high, maxTokens: ptr[int32](512), wantMax: 512},
		{name: "adaptive room", model: "claude-opus-4-6", effort: high, wantMax: 16384 + 4096},
		{name: "adaptive keeps a larger default", model: "claude-opus-4-6", effort: high, defaultMax: 64000, wantMax: 64000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.defaultMax != 0 {
				opts = append(opts, WithDefaultMaxTokens(tc.defaultMax))
			}
			p := newTestProvider(t, "http://unused.invalid", opts...)
			req := reasoning17Request(tc.model, tc.effort)
			req.Options.MaxTokens = tc.maxTokens
			body, _, warnings, err := p.buildRequest(req, false)
			if tc.errParam != "" {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.Param != tc.errParam || pe.Kind != provider.KindInvalidRequest {
					t.Fatalf("error %v, want an invalid %s", err, tc.errParam)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sent messagesRequest
			if err := json.Unmarshal(body, &sent); err != nil {
				t.Fatal(err)
			}
			if sent.MaxTokens != tc.wantMax {
				t.Errorf("max_tokens %d, want %d", sent.MaxTokens, tc.wantMax)
			}
			if tc.wantBudget != 0 && (sent.Thinking == nil || sent.Thinking.Type != "enabled" || sent.Thinking.BudgetTokens != tc.wantBudget) {
				t.Errorf("thinking %+v, want a budget of %d", sent.Thinking, tc.wantBudget)
			}
			if tc.wantBudget != 0 && sent.Thinking.BudgetTokens >= sent.MaxTokens {
				t.Errorf("budget %d not under max_tokens %d", sent.Thinking.BudgetTokens, sent.MaxTokens)
			}
			if got := strings.Join(warnings, "\n"); got != tc.warn {
				t.Errorf("warnings %q, want %q", got, tc.warn)
			}
		})
	}
}

// TestReasoning17ThinkingRestrictions: with thinking on (by
// reasoning_effort, budget or adaptive, or by thinking_budget_tokens) the
// API takes temperature 1 only, no top_k, top_p from 0.95, no forced tool:
// each is refused here, naming the option, as the adapter refuses other
// options Anthropic cannot take. What the API accepts goes out: a forced
// tool with adaptive thinking (claude-opus-4-6 by effort), which the live
// API answers (TestRound22AdaptiveThinkingForcedTool).
func TestReasoning17ThinkingRestrictions(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "http://unused.invalid")
	// Claude Opus 4.6 for adaptive thinking: Opus 4.7 and later fix their
	// sampling with thinking or without (TestModelSamplingRefused).
	for _, model := range []string{"claude-sonnet-4-5", "claude-opus-4-6"} {
		for _, tc := range []struct {
			name     string
			set      func(*provider.Request)
			errParam string
		}{
			{"temperature", func(r *provider.Request) { r.Options.Temperature = ptr(0.5) }, "options.temperature"},
			{"temperature 1", func(r *provider.Request) { r.Options.Temperature = ptr(1.0) }, ""},
			{"top_k", func(r *provider.Request) { r.Options.TopK = ptr[int32](40) }, "options.top_k"},
			{"top_p", func(r *provider.Request) { r.Options.TopP = ptr(0.9) }, "options.top_p"},
			{"top_p 0.95", func(r *provider.Request) { r.Options.TopP = ptr(0.95) }, ""},
			{"forced tool", func(r *provider.Request) {
				r.Tools = []*llmrelayv1.Tool{weatherTool(t)}
				r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}
			}, "options.tool_choice"},
			{"required tool", func(r *provider.Request) {
				r.Tools = []*llmrelayv1.Tool{weatherTool(t)}
				r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
			}, "options.tool_choice"},
			{"auto tool", func(r *provider.Request) {
				r.Tools = []*llmrelayv1.Tool{weatherTool(t)}
				r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
			}, ""},
		} {
			for _, how := range []string{"effort", "budget"} {
				req := reasoning17Request(model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM)
				if how == "budget" {
					req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED
					req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](2048)}}}
				}
				tc.set(req)
				errParam := tc.errParam
				if errParam == "options.tool_choice" && model == "claude-opus-4-6" && how == "effort" {
					errParam = "" // adaptive thinking takes a forced tool
				}
				_, _, _, err := p.buildRequest(req, false)
				var pe *provider.Error
				switch {
				case errParam == "" && err != nil:
					t.Errorf("%s %s by %s: %v", model, tc.name, how, err)
				case errParam != "" && (!errors.As(err, &pe) || pe.Param != errParam):
					t.Errorf("%s %s by %s: error %v, want one naming %s", model, tc.name, how, err, errParam)
				}
			}
		}
		// Without thinking, the same options go out.
		req := reasoning17Request(model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE)
		req.Options.Temperature, req.Options.TopK = ptr(0.5), ptr[int32](40)
		if _, _, _, err := p.buildRequest(req, false); err != nil {
			t.Errorf("%s without thinking: %v", model, err)
		}
	}
}

// TestReasoning17ExplicitBudgetWins: provider_options.anthropic.
// thinking_budget_tokens sets the thinking whatever the model and the
// effort: the effort is not sent (a warning says so), and a max_tokens left
// unset grows to hold the budget and the default answer.
func TestReasoning17ExplicitBudgetWins(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "http://unused.invalid")
	for _, model := range []string{"claude-sonnet-4-5", "claude-opus-4-6"} {
		req := reasoning17Request(model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](6000)}}}
		body, _, warnings, err := p.buildRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		var sent messagesRequest
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatal(err)
		}
		if sent.Thinking == nil || sent.Thinking.Type != "enabled" || sent.Thinking.BudgetTokens != 6000 || sent.OutputConfig != nil || sent.MaxTokens != 6000+4096 {
			t.Errorf("%s: %s", model, body)
		}
		if len(warnings) != 1 || warnings[0] != "reasoning_effort HIGH not sent: provider_options.anthropic.thinking_budget_tokens (6000) sets the thinking" {
			t.Errorf("%s: warnings %q", model, warnings)
		}
		// A max_tokens that already holds the budget is kept.
		req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED
		req.ProviderOptions.GetAnthropic().ThinkingBudgetTokens = ptr[int32](2048)
		body, _, _, err = p.buildRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &sent); err != nil || sent.MaxTokens != 4096 {
			t.Errorf("%s: %s", model, body)
		}
	}
}

// TestReasoning17DisabledThinkingIsNoThinking: NONE on Claude 5 sends
// thinking {type: disabled}, which restricts nothing of thinking's: a
// response_format answered through a forced tool goes out with it, and a
// temperature of 1 (Claude 5 fixes its sampling, thinking or not: the
// test sent 0.3, which the API refuses on this model).
func TestReasoning17DisabledThinkingIsNoThinking(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "http://unused.invalid")
	req := reasoning17Request("claude-opus-5", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE)
	req.Options.Temperature = ptr(1.0)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"type":"object","properties":{"prime":{"type":"boolean"}},"required":["prime"]}`}
	body, _, warnings, err := p.buildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var sent messagesRequest
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Thinking == nil || sent.Thinking.Type != "disabled" || sent.ToolChoice == nil || sent.ToolChoice.Type != "tool" || sent.Temperature == nil || len(warnings) != 0 {
		t.Errorf("request %s, warnings %q", body, warnings)
	}
}
