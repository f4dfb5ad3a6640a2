package openai

import (
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"google.golang.org/protobuf/proto"
)

// TestRound24LlamaCppStoredReasoningBack: the turn after llama.cpp's
// answer (testdata/llamacpp_responses_calls_stream.http) sent with
// store: true to a server configured to take reasoning back. llama.cpp's
// converter (tools/server/server-chat.cpp @
// 03eb25f39343f1c9ecc6f85ca4f9796a6ab7b230) refuses every reasoning item
// whose content is not a non-empty array whose first entry has text:
// "item['content'] is not an array", "item['content'] is empty" (400).
// The reasoning with text goes as its reasoning_text whatever store says
// (the stored-id form, summary only, is the one it refuses). A reasoning
// part with an id and no text, which a stored request used to send as
// {id, summary: []} (refused), is now left out with a warning: there is
// no text to send, and the server resolves no ids.
func TestRound24LlamaCppStoredReasoningBack(t *testing.T) {
	t.Parallel()
	req := r21Request("qwen3-8b", "What is the weather in Paris and in Tokyo?")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	f := r21Stream(t, "llamacpp_responses_calls_stream", req)
	const thought = "The user wants the weather in Paris and Tokyo. I'll call get_weather twice."

	p, err := New("", WithBaseURL("http://127.0.0.1:8080/v1"), WithReasoningReplay("reasoning_content"))
	if err != nil {
		t.Fatal(err)
	}
	next := func(answer *llmrelayv1.Message) ([]map[string]any, []string) {
		t.Helper()
		r := r21Request("m", "What is the weather?")
		r.Protocol, r.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
		r.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object"}`}}
		r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}
		r.Messages = append(r.Messages, answer)
		var results []*llmrelayv1.Part
		for _, part := range answer.GetParts() {
			if c := part.GetToolCall(); c != nil {
				results = append(results, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: c.GetCallId(), Content: "ok"}}})
			}
		}
		r.Messages = append(r.Messages, msgOf(llmrelayv1.Role_ROLE_TOOL, results...))
		b, warnings, err := p.buildResponsesRequest(r, false)
		if err != nil {
			t.Fatal(err)
		}
		var in struct {
			Store *bool            `json:"store"`
			Input []map[string]any `json:"input"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		if in.Store == nil || !*in.Store {
			t.Fatalf("store not sent: %s", b)
		}
		return in.Input, warnings
	}

	items, warnings := next(f.Message)
	if len(items) != 7 || len(warnings) != 0 {
		t.Fatalf("items %v, warnings %q", items, warnings)
	}
	r24RawReasoning(t, items[1], "rs_Vb2Nm8Kq4Xw6Zt1Lp9Rc3Hj7Df5Gs0Ae", thought)

	// The same reasoning without its text (a client that kept only the
	// item's id): not sent as an id-only item llama.cpp refuses.
	noText := proto.Clone(f.Message).(*llmrelayv1.Message)
	for _, part := range noText.GetParts() {
		if r := part.GetReasoning(); r != nil {
			r.Text = ""
		}
	}
	items, warnings = next(noText)
	for _, it := range items {
		if it["type"] == "reasoning" {
			t.Errorf("reasoning without text sent: %v", it)
		}
	}
	if len(items) != 6 || len(warnings) != 1 || !strings.Contains(warnings[0], "reasoning without text or encrypted content") {
		t.Errorf("without text: items %v, warnings %q", items, warnings)
	}
}
