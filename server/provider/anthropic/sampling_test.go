package anthropic

import (
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestModelSamplingRefused: the models whose sampling Anthropic fixes
// (Opus 4.7 and later, the Claude 5 models, Fable, Mythos) refuse a
// temperature other than 1, any top_k, a top_p other than 0.99, and
// temperature with top_p, thinking or not; Sonnet 5.5, Opus 5.5, Fable
// and Mythos 5.1 refuse a forced tool whatever the thinking. The adapter
// sent them and got the provider's 400; it now refuses them first,
// naming the option, as it refuses thinking's restrictions. The models
// before keep their sampling without thinking.
func TestModelSamplingRefused(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "http://unused.invalid")
	fixed := []string{"claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5-5",
		"claude-sonnet-5-5", "claude-opus-5-5", "claude-fable-5", "claude-fable-5-1", "claude-mythos-5-1", "claude-mythos-preview",
		"anthropic.claude-opus-5-5-v1:0", "claude-sonnet-5-5@20260922", "anthropic/claude-fable-5.1"}
	free := []string{"claude-sonnet-4-5", "claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5", "claude-3-5-haiku-20241022"}
	noForced := map[string]bool{"claude-sonnet-5-5": true, "claude-opus-5-5": true, "claude-fable-5-1": true, "claude-mythos-5-1": true,
		"anthropic.claude-opus-5-5-v1:0": true, "claude-sonnet-5-5@20260922": true, "anthropic/claude-fable-5.1": true}
	forced := func(r *provider.Request) {
		r.Tools = []*llmrelayv1.Tool{weatherTool(t)}
		r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}
	}
	required := func(r *provider.Request) {
		r.Tools = []*llmrelayv1.Tool{weatherTool(t)}
		r.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	}
	schema := func(r *provider.Request) {
		r.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"type":"object","properties":{"prime":{"type":"boolean"}},"required":["prime"]}`}
	}
	cases := []struct {
		name    string
		set     func(*provider.Request)
		onFixed string // the option refused on the fixed models, "" none
		onForce string // the option refused on the noForced models
	}{
		{"temperature 0.5", func(r *provider.Request) { r.Options.Temperature = ptr(0.5) }, "temperature", "temperature"},
		{"temperature 1", func(r *provider.Request) { r.Options.Temperature = ptr(1.0) }, "", ""},
		{"top_k", func(r *provider.Request) { r.Options.TopK = ptr[int32](40) }, "top_k", "top_k"},
		{"top_p 0.9", func(r *provider.Request) { r.Options.TopP = ptr(0.9) }, "top_p", "top_p"},
		{"top_p 0.99", func(r *provider.Request) { r.Options.TopP = ptr(0.99) }, "", ""},
		{"both at defaults", func(r *provider.Request) { r.Options.Temperature, r.Options.TopP = ptr(1.0), ptr(0.99) }, "top_p", "top_p"},
		{"forced tool", forced, "", "tool_choice"},
		{"required tool", required, "", "tool_choice"},
		{"response_format by a forced tool", schema, "", "response_format"},
		{"response_format native", func(r *provider.Request) { schema(r); r.NativeStructuredOutput = true }, "", ""},
	}
	check := func(model, name string, set func(*provider.Request), want string) {
		t.Helper()
		req := reasoning17Request(model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED)
		set(req)
		_, _, _, err := p.buildRequest(req, false)
		var pe *provider.Error
		switch {
		case want == "" && err != nil:
			t.Errorf("%s %s: %v", model, name, err)
		case want != "" && (!errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "options."+want):
			t.Errorf("%s %s: error %v, want one naming %s", model, name, err, want)
		}
	}
	for _, model := range fixed {
		for _, tc := range cases {
			want := tc.onFixed
			if noForced[model] {
				want = tc.onForce
			}
			check(model, tc.name, tc.set, want)
		}
	}
	for _, model := range free {
		for _, tc := range cases {
			if tc.name == "both at defaults" {
				// Sonnet 4.5 refuses both too ("temperature and top_p
				// cannot both be specified for this model",
				// browseros-ai/BrowserOS#208); not refused here yet.
				continue
			}
			check(model, tc.name, tc.set, "")
		}
	}
}
