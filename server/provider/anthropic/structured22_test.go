package anthropic

import (
	"encoding/json"
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestStructuredToolWithAdaptiveThinking: a JSON schema answered through
// the forced json_response tool goes with adaptive thinking (the live API
// answers a forced tool under adaptive thinking with the call:
// real_pyd_anthropic_opus_46_adaptive_thinking_accepts_tool_output_*),
// and is still refused with a fixed budget, which the API refuses.
func TestStructuredToolWithAdaptiveThinking(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "http://unused.invalid")
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	for _, tc := range []struct {
		model   string
		refused bool
	}{
		{"claude-opus-4-6", false},
		{"claude-sonnet-4-5", true},
	} {
		req := reasoning17Request(tc.model, llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH)
		req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schema}
		body, _, _, err := p.buildRequest(req, false)
		if tc.refused {
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "options.response_format" {
				t.Errorf("%s: %v, want a refusal naming options.response_format", tc.model, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		var sent struct {
			Thinking   struct{ Type string }       `json:"thinking"`
			ToolChoice struct{ Type, Name string } `json:"tool_choice"`
			Tools      []struct{ Name string }     `json:"tools"`
			Output     struct{ Effort string }     `json:"output_config"`
		}
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatal(err)
		}
		if sent.Thinking.Type != "adaptive" || sent.ToolChoice.Type != "tool" || sent.ToolChoice.Name != answerTool ||
			len(sent.Tools) != 1 || sent.Tools[0].Name != answerTool || sent.Output.Effort != "high" {
			t.Errorf("%s: sent %+v", tc.model, sent)
		}
	}
}
