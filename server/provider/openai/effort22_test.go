package openai

import (
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestReasoningEffortAboveHigh: XHIGH goes as OpenAI's xhigh on both
// APIs; MAX, which OpenAI does not name, goes as xhigh with a warning.
func TestReasoningEffortAboveHigh(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		effort  llmrelayv1.ReasoningEffort
		wire    string
		warning string
	}{
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, "high", ""},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH, "xhigh", ""},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, "xhigh", warnMaxEffort},
	} {
		req := func(proto llmrelayv1.Protocol) *provider.Request {
			return &provider.Request{Protocol: proto, Model: "gpt-5.2", Format: "openai-reasoning", Reasoning: true,
				Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Prove it."))},
				Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: tc.effort}}
		}
		body, warnings, err := p.buildChatRequest(req(llmrelayv1.Protocol_PROTOCOL_CHAT), false)
		if err != nil {
			t.Fatalf("%v: %v", tc.effort, err)
		}
		var chat struct {
			ReasoningEffort string `json:"reasoning_effort"`
		}
		if err := json.Unmarshal(body, &chat); err != nil {
			t.Fatal(err)
		}
		if chat.ReasoningEffort != tc.wire || strings.Join(warnings, "|") != tc.warning {
			t.Errorf("chat %v: reasoning_effort %q warnings %q, want %q %q", tc.effort, chat.ReasoningEffort, warnings, tc.wire, tc.warning)
		}
		body, warnings, err = p.buildResponsesRequest(req(llmrelayv1.Protocol_PROTOCOL_CHAT), false)
		if err != nil {
			t.Fatalf("%v: %v", tc.effort, err)
		}
		var resp struct {
			Reasoning struct {
				Effort string `json:"effort"`
			} `json:"reasoning"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Reasoning.Effort != tc.wire || strings.Join(warnings, "|") != tc.warning {
			t.Errorf("responses %v: effort %q warnings %q, want %q %q", tc.effort, resp.Reasoning.Effort, warnings, tc.wire, tc.warning)
		}
	}
}
