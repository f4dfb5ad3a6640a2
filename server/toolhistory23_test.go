package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// th23Plain is each provider case's recorded plain text answer.
var th23Plain = map[string]string{
	"openai":           "openai/testdata/chat_plain.http",
	"openai-responses": "openai/testdata/responses_plain.http",
	"azure":            "openai/testdata/chat_plain.http",
	"anthropic":        "anthropic/testdata/plain.http",
	"gemini":           "gemini/testdata/plain.http",
	"ollama":           "ollama/testdata/chat_text.http",
}

// TestToolHistory23ChatEveryProvider: the Chat RPC, which has no tools,
// continuing a conversation that ran a tool (an assistant call and its
// result) sends the history to every adapter's API in its own form and
// declares no tools and no tool choice: each provider takes such a
// request (the testdata READMEs' "Tool history without tools" sections
// say from what), and a tool made up for the occasion would change the
// model's prompt. The answer comes back as the provider's text.
func TestToolHistory23ChatEveryProvider(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			fixture := th23Plain[pc.name]
			if fixture == "" {
				t.Fatalf("no plain answer for %s", pc.name)
			}
			up := providertest.Replay(t, providertest.Load(t, "provider/"+fixture))
			c, _ := startWith(t, strings.Replace(pc.yaml, "capabilities: {tools:", "capabilities: {chat:", 1), up.URL)
			msgs := []*llmrelayv1.Message{
				user("What's the weather in Paris?"),
				{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
					CallId: "call_th23Paris", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}},
				{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
					CallId: "call_th23Paris", Name: "get_weather", Content: "18 degrees and clear"}}}}},
				user("Say it in one short sentence."),
			}
			resp, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: msgs})
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			var got strings.Builder
			for _, p := range resp.GetMessage().GetParts() {
				got.WriteString(p.GetText())
			}
			if got.Len() == 0 || resp.GetMeta().GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
				t.Errorf("answer %v, finish %v", resp.GetMessage(), resp.GetMeta().GetFinishReason())
			}
			reqs := up.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d upstream requests, want 1", len(reqs))
			}
			body := reqs[0].Body
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("request body: %v", err)
			}
			for _, k := range []string{"tools", "tool_choice", "toolConfig", "functions", "function_call"} {
				if v, ok := m[k]; ok {
					t.Errorf("request declares %s: %v", k, v)
				}
			}
			for _, want := range []string{"get_weather", `Paris`, "18 degrees and clear", "Say it in one short sentence."} {
				if !strings.Contains(string(body), want) {
					t.Errorf("request lacks %q: %s", want, body)
				}
			}
		})
	}
}
