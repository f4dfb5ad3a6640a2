package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound25KimiCodingPlanReasoningBack: Kimi's coding plan endpoint
// (api.kimi.com/coding/v1, kimi-for-coding) thinks between tool calls and
// answers 400 invalid_request_error "thinking is enabled but
// reasoning_content is missing in assistant tool call message at index
// 134" to a follow-up whose tool-call turn lacks it (1jehuang/jcode#322;
// anomalyco/opencode#10996 for "Kimi for Coding (k2p5)"), as Moonshot's own
// API does. Bug: the host had no reasoning replay, so every follow-up
// after a tool call was refused. It now sends the turn's reasoning as
// reasoning_content, as to api.moonshot.ai.
func TestRound25KimiCodingPlanReasoningBack(t *testing.T) {
	t.Parallel()
	req := r22Ask("kimi-for-coding", "List the files.")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "list_files", Parameters: `{"type":"object","properties":{}}`}}
	call := &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "list_files:0", Name: "list_files", Arguments: "{}"}}}
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: "I should list the files."}}}, call),
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "list_files:0", Content: "README.md"}}}))
	for _, tc := range []struct {
		base string
		want any // the tool-call turn's reasoning_content, nil when absent
	}{
		{"https://api.kimi.com/coding/v1", "I should list the files."},
		{"https://api.moonshot.ai/v1", "I should list the files."},
		{"https://api.example.com/v1", nil},
	} {
		p, err := New(testKey, WithBaseURL(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		body, _, err := p.buildChatRequest(req, true)
		if err != nil {
			t.Fatal(err)
		}
		turn := r20Request(t, body)["messages"].([]any)[1].(map[string]any)
		if got := turn["reasoning_content"]; got != tc.want {
			t.Errorf("%s: reasoning_content %v, want %v", tc.base, got, tc.want)
		}
	}
}
