package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17, reasoning_effort by model generation (thinking.go).

// The recording these tests replay joins round17Recordings (which
// TestAllRecordingsUsed reads) here, not in that list's file.
func init() {
	round17Recordings = append(round17Recordings, "real_gemini_3_7_flash_thinking_level_low")
}

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
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model,
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Is 1009 prime?"))},
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: effort},
	}
}

// TestReasoning17Golden: the generationConfig each reasoning_effort builds
// per model generation, and the warnings where the model could not take
// the level asked for:
//   - gemini-2.0-flash takes no thinking: NONE sends nothing, the others
//     are refused naming reasoning_effort (the API: 400 "thinking is not
//     supported by this model");
//   - Gemini 2.5 budgets 0 (NONE), 512, 1024, 8192, 24576; 2.5 Pro cannot
//     stop thinking: NONE is its least, 128, with a warning;
//   - Gemini 3 levels: MINIMAL only where the model has it (Flash-Lite,
//     3 and 3.5 Flash), low elsewhere; NONE the least level, with a
//     warning when that is not minimal; MEDIUM is high on gemini-3-pro,
//     which has only low and high; -latest aliases and versions we do not
//     know are Gemini 3 and later, and get the levels every one takes;
//   - XHIGH and MAX, above Gemini's highest level, get HIGH's, with a
//     warning.
func TestReasoning17Golden(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, model string }{
		{"gemini_2_0_flash", "gemini-2.0-flash"},
		{"gemini_2_5_pro_vertex", "publishers/google/models/gemini-2.5-pro"},
		{"gemini_2_5_flash", "gemini-2.5-flash"},
		{"gemini_2_5_flash_lite", "models/gemini-2.5-flash-lite"},
		{"gemini_3_pro", "gemini-3-pro-preview"},
		{"gemini_3_flash", "gemini-3-flash-preview"},
		{"gemini_3_1_pro", "gemini-3.1-pro-preview"},
		{"gemini_3_1_flash_lite", "gemini-3.1-flash-lite"},
		{"gemini_3_5_flash", "gemini-3.5-flash"},
		{"gemini_3_7_flash", "gemini-3.7-flash"},
		{"gemini_flash_latest", "gemini-flash-latest"},
		{"gemini_4_pro", "gemini-4-pro-preview"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			for _, e := range reasoning17Efforts {
				fmt.Fprintf(&b, "== %s %s\n", tc.model, effortName(e))
				body, warnings, err := p.encodeRequestWarn(reasoning17Request(tc.model, e))
				if err != nil {
					var pe *provider.Error
					if !errors.As(err, &pe) {
						t.Fatalf("error %T %v", err, err)
					}
					fmt.Fprintf(&b, "error: kind=%v param=%s\n  %s\n", pe.Kind, pe.Param, pe.Message)
					continue
				}
				var sent struct {
					GenerationConfig json.RawMessage `json:"generationConfig"`
				}
				if err := json.Unmarshal(body, &sent); err != nil {
					t.Fatal(err)
				}
				if len(sent.GenerationConfig) == 0 {
					sent.GenerationConfig = json.RawMessage("<absent>")
				}
				fmt.Fprintf(&b, "generationConfig: %s\n", sent.GenerationConfig)
				for _, w := range warnings {
					b.WriteString("warning: " + w + "\n")
				}
			}
			providertest.Golden(t, "testdata/reasoning17_"+tc.name+".requests.golden", b.Bytes())
		})
	}
}

// TestReasoning17NoneOnGemini31Pro: gemini-3.1-pro-preview has no minimal
// level, and refused the MINIMAL that reasoning NONE became (vercel/ai
// issue 22372's live capture, real_issue_22372_reasoning_none_error); our
// NONE sent the same. It now sends low, the least this model takes, and
// says so in a warning. (The recording still replays its refusal.)
func TestReasoning17NoneOnGemini31Pro(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, "real_issue_22372_reasoning_none_error")
	_, err := p.Generate(context.Background(), reasoning17Request("gemini-3.1-pro-preview", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.HTTPStatus != 400 {
		t.Fatalf("error %v", err)
	}
	body := string(srv.Last(t).Body)
	if !strings.Contains(body, `"generationConfig":{"thinkingConfig":{"thinkingLevel":"low"}}`) || strings.Contains(body, "minimal") {
		t.Errorf("request %s", body)
	}
	_, warnings, err := p.encodeRequestWarn(reasoning17Request("gemini-3.1-pro-preview", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE))
	if err != nil || len(warnings) != 1 || warnings[0] != "reasoning_effort NONE: gemini-3.1-pro-preview cannot switch thinking off; sent thinkingLevel low, the least it is known to take" {
		t.Errorf("warnings %q, err %v", warnings, err)
	}
}

// TestReasoning17MinimalOnGemini37Flash: gemini-3.7-flash answered
// thinking level MINIMAL with 400 "Thinking level MINIMAL is not supported
// for this model." and LOW with an answer (vercel/ai's
// google-gemini-3.7-flash-thinking-levels capture, both halves). Our
// MINIMAL request for it is now the one the API answered (thinkingLevel
// low), with a warning; the answer: the text, its thought signature kept
// as a text-less reasoning part after it, 2 in and 9 out, STOP, the
// response id, the model version, serviceTier standard.
func TestReasoning17MinimalOnGemini37Flash(t *testing.T) {
	t.Parallel()
	const name = "real_gemini_3_7_flash_thinking_level_low"
	p, srv := replay(t, name)
	res, err := p.Generate(context.Background(), reasoning17Request("gemini-3.7-flash", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	providertest.Golden(t, filepath.Join("testdata", name+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
	if body := string(srv.Last(t).Body); !strings.Contains(body, `"generationConfig":{"thinkingConfig":{"thinkingLevel":"low"}}`) {
		t.Errorf("request %s", body)
	}
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello! How can I help you today?"),
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{
			Signature: "EmcKZQERTTIP+ioay1Mob3/yO79S3Uw1reSi9ZYBsscvogEBam0cDSSxc0IWmwlx0Mo1DSjAYVEs3iuBm/JgLvTs5nRAR8XR37SNw0t+lT/SR0rU1hoos46dpqQPWNnCUyfIZG4Yyqh0"}}})
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "kNiDavuDIcja_uMP8tCj-QU" || m.GetResolvedModel() != "gemini-3.7-flash" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" {
		t.Errorf("meta %v", m)
	}
	if w := m.GetWarnings(); len(w) != 1 || w[0] != "reasoning_effort MINIMAL: thinkingLevel minimal is not one gemini-3.7-flash is known to take; sent low" {
		t.Errorf("warnings %q", w)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 2, OutputTokens: 9, TotalTokens: 11}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
}

// TestReasoning17ZeroBudget: a thinking_budget of 0 on a model that cannot
// stop thinking (2.5 Pro: "Budget 0 is invalid. This model only works in
// thinking mode."; Gemini 3: a bare 400) is refused naming the option; the
// Flash models take it.
func TestReasoning17ZeroBudget(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for model, refused := range map[string]bool{"gemini-2.5-pro": true, "gemini-3.1-pro-preview": true, "gemini-flash-latest": true,
		"gemini-2.5-flash": false, "gemini-2.5-flash-lite": false} {
		req := reasoning17Request(model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{ThinkingBudget: new(int32)}}}
		_, _, err := p.encodeRequestWarn(req)
		var pe *provider.Error
		if got := errors.As(err, &pe) && pe.Param == "provider_options.gemini.thinking_budget"; got != refused || (!refused && err != nil) {
			t.Errorf("%s: error %v, refused %v", model, err, refused)
		}
	}
}

// TestReasoning17ParseModel: ids read for their generation and levels.
func TestReasoning17ParseModel(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]thinkingKind{
		"gemini-1.5-pro-002": thinkNone, "gemini-2.0-flash-001": thinkNone, "gemini-2.0-flash-lite": thinkNone,
		"gemini-2.0-flash-thinking-exp-01-21": thinkNone,
		"gemini-2.5-pro":                      thinkBudget, "models/gemini-2.5-flash-preview-05-20": thinkBudget, "gemini-2.5-flash-lite@001": thinkBudget,
		"gemini-live-2.5-flash-preview": thinkBudget,
		"gemini-3-pro-preview":          thinkLevel, "gemini-3.1-pro-preview-customtools": thinkLevel, "gemini-3.5-flash-lite": thinkLevel,
		"gemini-flash-latest": thinkLevel, "gemini-flash-lite-latest": thinkLevel, "gemini-pro-latest": thinkLevel,
		"gemini-4-pro": thinkLevel, "gemini-10-flash": thinkLevel,
		"gemma-3-27b-it": thinkBudget, "tunedModels/my-model-123": thinkBudget, "": thinkBudget,
	} {
		if got := parseGemini(id).thinking(); got != want {
			t.Errorf("%s: %v (%+v), want %v", id, got, parseGemini(id), want)
		}
	}
	for id, want := range map[string]bool{
		"gemini-3-flash-preview": true, "gemini-3.5-flash": true, "gemini-3.1-flash-lite": true, "gemini-3.5-flash-lite": true,
		"gemini-flash-lite-latest": true, "gemini-3.7-flash": false, "gemini-3.8-flash": false, "gemini-flash-latest": false,
		"gemini-3-pro-preview": false, "gemini-3.1-pro-preview": false, "gemini-4-pro": false,
	} {
		if got := parseGemini(id).takesMinimal(); got != want {
			t.Errorf("%s takes minimal: %v, want %v", id, got, want)
		}
	}
	for id, want := range map[string]bool{"gemini-3-pro-preview": false, "gemini-3.1-pro-preview": true, "gemini-pro-latest": true, "gemini-3-flash-preview": true} {
		if got := parseGemini(id).takesMedium(); got != want {
			t.Errorf("%s takes medium: %v, want %v", id, got, want)
		}
	}
}

// TestVersionedLatestAlias: a -latest alias that names its version
// (gemini-1.5-pro-latest, gemini-1.5-flash-latest: Google's aliases of the
// Gemini 1.5 era) is that version, not "the newest models": it takes no
// thinking configuration and needs no thought signatures. Only the
// unversioned aliases (gemini-flash-latest) are read as Gemini 3.
func TestVersionedLatestAlias(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]thinkingKind{
		"gemini-1.5-pro-latest": thinkNone, "models/gemini-1.5-flash-latest": thinkNone, "gemini-2.5-flash-latest": thinkBudget,
		"gemini-flash-latest": thinkLevel, "gemini-3-flash-latest": thinkLevel,
	} {
		if got := parseGemini(id).thinking(); got != want {
			t.Errorf("%s: %v (%+v), want %v", id, got, parseGemini(id), want)
		}
		if got := isGemini3Plus(id); got != (want == thinkLevel) {
			t.Errorf("%s: Gemini 3+ %v", id, got)
		}
	}
	if _, _, err := effortThinking("gemini-1.5-pro-latest", llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH); err == nil {
		t.Error("gemini-1.5-pro-latest took reasoning_effort HIGH: sent a thinkingLevel Gemini 1.5 refuses")
	}
}
