package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VercelGatewayChatClaudeSignedReasoning: the Vercel AI
// Gateway's Chat Completions endpoint serving anthropic/claude-sonnet-4.6
// with reasoning (opencode's recording, July 2026): the thinking streams as
// "reasoning" and as OpenRouter-style reasoning_details (reasoning.text,
// format anthropic-claude-v1), its signature in a last entry with empty
// text; then text and the call. The recorded follow-up, which the gateway
// took, sends the turn's reasoning_details back (and "reasoning"): Claude
// refuses a tool-use turn whose thinking was dropped. Bug: the gateway's
// host had no reasoning replay, so the signed thinking was dropped.
func TestRound24VercelGatewayChatClaudeSignedReasoning(t *testing.T) {
	t.Parallel()
	const name, model, base = "real_vercelgw_chat_claude_tool_stream_", "anthropic/claude-sonnet-4.6", "https://ai-gateway.vercel.sh/v1"
	req := r22Ask(model, "What is the weather in Paris?")
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Use the get_weather tool exactly once. After the tool result, reply exactly: Paris is sunny."))}, req.Messages...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	evs1, f1, sent1 := mgbStream(t, name+"1", base, "", req)
	if got, want := sent1["messages"], veniceRecordedMessages(t, name+"1"); !reflect.DeepEqual(got, want) {
		t.Errorf("turn 1 messages %v", got)
	}
	for _, ev := range evs1 {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("turn 1 warnings %v", ev.Meta.GetWarnings())
		}
	}
	var r *llmrelayv1.Reasoning
	for _, p := range f1.Message.GetParts() {
		if p.GetReasoning() != nil {
			r = p.GetReasoning()
		}
	}
	if r == nil || r.GetText() != "The user wants to know the weather in Paris. I'll use the get_weather tool." ||
		r.GetFormat() != "anthropic-claude-v1" || !strings.HasPrefix(r.GetSignature(), "ErkCCosB") {
		t.Fatalf("reasoning %v", r)
	}
	if got := f1.Meta.GetExtended().GetFields()["upstream_provider"]; got.GetStringValue() != "anthropic" {
		t.Errorf("upstream_provider %v", got)
	}
	if u := f1.Meta.GetUsage(); u.GetInputTokens() != 623 || u.GetOutputTokens() != 93 || u.GetReasoningTokens() != 19 {
		t.Errorf("usage %v", u)
	}

	follow := r22Ask(model, "What is the weather in Paris?")
	follow.Messages = append([]*llmrelayv1.Message{req.Messages[0]}, follow.Messages...)
	follow.Protocol, follow.Tools = req.Protocol, req.Tools
	follow.Messages = append(follow.Messages, f1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "toolu_01Ws1rPHU4pg5Hq2zQtvkXkW", Content: `{"temperature":22,"condition":"sunny"}`}}}))
	evs2, f2, sent2 := mgbStream(t, name+"2", base, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	turn := want.([]any)[2].(map[string]any)
	// opencode re-serialized the call's arguments; ours go back as the
	// model streamed them.
	turn["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = `{"city": "Paris"}`
	// The recorded turn sends the details as they streamed (two pieces of
	// text, then the signature with empty text) and the text again as
	// "reasoning"; ours sends the block they make, merged (the same
	// thinking block, the form OpenRouter documents), and no "reasoning".
	delete(turn, "reasoning")
	merged := map[string]any{"type": "reasoning.text", "format": "anthropic-claude-v1", "index": float64(0), "text": "", "signature": ""}
	for _, d := range turn["reasoning_details"].([]any) {
		d := d.(map[string]any)
		if d["index"] != float64(0) || d["format"] != "anthropic-claude-v1" {
			t.Fatalf("recorded detail %v", d)
		}
		merged["text"] = merged["text"].(string) + d["text"].(string)
		if d["signature"] != "" {
			merged["signature"] = d["signature"]
		}
	}
	turn["reasoning_details"] = []any{merged}
	if got := sent2["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	for _, ev := range evs2 {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("turn 2 warnings %v", ev.Meta.GetWarnings())
		}
	}
	if got := f2.Message.GetParts()[0].GetText(); got != "Paris is sunny." {
		t.Errorf("answer %q", got)
	}
}
