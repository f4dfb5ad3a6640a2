package openai

import (
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

const copilotBaseURL = "https://api.githubcopilot.com"

// TestRound25CopilotGeminiStream: GitHub Copilot's Chat Completions
// endpoint (api.githubcopilot.com) serving gemini-3-flash-preview
// (qqlcx5/talkcody's recording): a usage object of zeros on every chunk,
// the real one on the finish chunk with the reasoning tokens at the top of
// the usage, and Gemini's thought signature as Copilot's reasoning_opaque
// on the finish chunk's delta. Bugs: (1) the 542 reasoning tokens were
// read as part of the 647 completion tokens, where the total (42155 =
// 40966 + 647 + 542) counts them beside: the output is 1189; (2) the
// reasoning_opaque was dropped, silently; it is now a reasoning part
// (signature, no text, format reasoning_opaque) that goes back to Copilot
// as the assistant message's reasoning_opaque, as opencode's Copilot
// provider sends it, and elsewhere is dropped with the reasoning warning.
func TestRound25CopilotGeminiStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("gemini-3-flash-preview", "What is the relationship between fragments and pipelines in StarRocks?")
	evs, f, _ := mgbStream(t, "real_talkcody_copilot_gemini3_stream", copilotBaseURL, "", req)
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("warnings %v", ev.Meta.GetWarnings())
		}
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 40966 || u.GetOutputTokens() != 1189 || u.GetReasoningTokens() != 542 || u.GetTotalTokens() != 42155 || u.GetCachedInputTokens() != 39999 {
		t.Errorf("usage %v", u)
	}
	var r *llmrelayv1.Reasoning
	var text string
	for _, p := range f.Message.GetParts() {
		if p.GetReasoning() != nil {
			r = p.GetReasoning()
		}
		text += p.GetText()
	}
	if r == nil || r.GetText() != "" || r.GetFormat() != formatReasoningOpaque || !strings.HasPrefix(r.GetSignature(), "wk/5Xy58ett") || !strings.HasSuffix(r.GetSignature(), "LwFTmE=") {
		t.Fatalf("reasoning %v", r)
	}
	if !strings.HasPrefix(text, "In StarRocks, the relationship") || !strings.HasSuffix(text, "within a single node.**") || !strings.Contains(text, "(Source -> Transformation -> Sink)") {
		t.Errorf("text %q", text)
	}

	follow := r22Ask("gemini-3-flash-preview", "And drivers?")
	follow.Messages = append([]*llmrelayv1.Message{req.Messages[0], f.Message}, follow.Messages...)
	p, err := New(testKey, WithBaseURL(copilotBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err := p.buildChatRequest(follow, true)
	if err != nil {
		t.Fatal(err)
	}
	msgs := r20Request(t, body)["messages"].([]any)
	a := msgs[1].(map[string]any)
	if a["role"] != "assistant" || a["content"] != text || a["reasoning_opaque"] != r.GetSignature() || len(warns) != 0 {
		g, _ := json.Marshal(a)
		t.Errorf("assistant turn %s, warnings %v", g, warns)
	}
	if _, ok := a["reasoning_text"]; ok {
		t.Errorf("reasoning_text sent for a block without text: %v", a["reasoning_text"])
	}
	other, err := New(testKey, WithBaseURL("https://api.example.com/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err = other.buildChatRequest(follow, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "reasoning_opaque") || len(warns) != 1 || !strings.Contains(warns[0], "1 reasoning part") {
		t.Errorf("to another server: warnings %v", warns)
	}
}

// TestRound25CopilotReasoningText: Copilot's readable reasoning comes as
// reasoning_text beside the reasoning_opaque (the fields opencode's Copilot
// provider reads from its messages and deltas:
// packages/opencode/src/provider/sdk/copilot/chat/openai-compatible-chat-language-model.ts);
// the body here is hand-built in the shape of the recording above. Bug:
// reasoning_text was dropped silently. Now it is the reasoning block's
// text, and both go back to Copilot on the assistant message.
func TestRound25CopilotReasoningText(t *testing.T) {
	t.Parallel()
	p, err := New(testKey, WithBaseURL(copilotBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseChatResponse([]byte(`{"choices":[{"finish_reason":"stop","index":0,"message":{"content":"Four.","role":"assistant","reasoning_text":"Two plus two is four.","reasoning_opaque":"c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0"}}],"created":1769979600,"id":"c25_copilotReasoningTextUnary","usage":{"completion_tokens":2,"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":0},"total_tokens":19,"reasoning_tokens":8},"model":"gemini-3-flash-preview"}`))
	if err != nil {
		t.Fatal(err)
	}
	var r *llmrelayv1.Reasoning
	for _, part := range res.Message.GetParts() {
		if part.GetReasoning() != nil {
			if r != nil {
				t.Errorf("second reasoning part %v", part)
			}
			r = part.GetReasoning()
		}
	}
	if r == nil || r.GetText() != "Two plus two is four." || r.GetSignature() != "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0" || r.GetFormat() != formatReasoningOpaque {
		t.Fatalf("reasoning %v", r)
	}
	if u := res.Meta.GetUsage(); u.GetOutputTokens() != 10 || u.GetReasoningTokens() != 8 || u.GetTotalTokens() != 19 {
		t.Errorf("usage %v", u)
	}
	follow := r22Ask("gemini-3-flash-preview", "And three plus three?")
	follow.Messages = append([]*llmrelayv1.Message{r22Ask("gemini-3-flash-preview", "Two plus two?").Messages[0], res.Message}, follow.Messages...)
	body, warns, err := p.buildChatRequest(follow, false)
	if err != nil {
		t.Fatal(err)
	}
	a := r20Request(t, body)["messages"].([]any)[1].(map[string]any)
	if a["reasoning_text"] != "Two plus two is four." || a["reasoning_opaque"] != "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0" || a["content"] != "Four." || len(warns) != 0 {
		t.Errorf("assistant turn %v, warnings %v", a, warns)
	}
}

// TestRound25CopilotReasoningToolStream: Copilot's stream for a Gemini 3
// tool call with its reasoning (the chunks of anomalyco/opencode's Copilot
// test fixture reasoningWithToolCalls, "from copilot_test.exs"): the
// thinking as reasoning_text pieces, then the first call with the
// reasoning_opaque in its chunk, the second call with the finish reason
// and the usage (total 19768 = 19581 + 53 + 134). The follow-up sends the
// tool-call turn with reasoning_text and reasoning_opaque, as opencode's
// Copilot provider builds it (its text only beside the opaque state).
func TestRound25CopilotReasoningToolStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("gemini-3-pro-preview", "What is dayzee?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "read_file", Parameters: `{"type":"object","properties":{"filePath":{"type":"string"}}}`}}
	evs, f, _ := mgbStream(t, "copilot_gemini3_reasoning_tool_stream", copilotBaseURL, "", req)
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("warnings %v", ev.Meta.GetWarnings())
		}
	}
	const thought = "**Understanding Dayzee's Purpose**\n\nI'm starting to get a better handle on `dayzee`.\n\n**Assessing Dayzee's Functionality**\n\nI've reviewed the files.\n\n"
	var r *llmrelayv1.Reasoning
	var calls []*llmrelayv1.ToolCall
	for _, p := range f.Message.GetParts() {
		if p.GetReasoning() != nil {
			if r != nil {
				t.Errorf("second reasoning part %v", p)
			}
			r = p.GetReasoning()
		}
		if c := p.GetToolCall(); c != nil {
			calls = append(calls, c)
		}
	}
	if r == nil || r.GetText() != thought || r.GetSignature() != "4CUQ6696CwSXOdQ5rtvDimqA91tBzfmga4ieRbmZ5P67T2NLW3" || r.GetFormat() != formatReasoningOpaque {
		t.Fatalf("reasoning %v", r)
	}
	if len(calls) != 2 || calls[0].GetCallId() != "call_MHx2QlNYcUdIN0NSYm9hWkd4bnE" || calls[1].GetArguments() != `{"filePath":"/mix.exs"}` {
		t.Fatalf("calls %v", calls)
	}
	if u := f.Meta.GetUsage(); u.GetOutputTokens() != 187 || u.GetReasoningTokens() != 134 || u.GetTotalTokens() != 19768 || u.GetCachedInputTokens() != 17068 {
		t.Errorf("usage %v", u)
	}
	follow := r22Ask("gemini-3-pro-preview", "What is dayzee?")
	follow.Protocol, follow.Tools = req.Protocol, req.Tools
	follow.Messages = append(follow.Messages, f.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_MHx2QlNYcUdIN0NSYm9hWkd4bnE", Content: "# dayzee"}}},
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_MHxTZ2pUVXFrY1BtTmx3ZWRhVWg", Content: "defmodule Dayzee.MixProject"}}}))
	p, err := New(testKey, WithBaseURL(copilotBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err := p.buildChatRequest(follow, true)
	if err != nil {
		t.Fatal(err)
	}
	a := r20Request(t, body)["messages"].([]any)[1].(map[string]any)
	if a["reasoning_text"] != thought || a["reasoning_opaque"] != r.GetSignature() || a["content"] != nil || len(a["tool_calls"].([]any)) != 2 || len(warns) != 0 {
		g, _ := json.Marshal(a)
		t.Errorf("tool-call turn %s, warnings %v", g, warns)
	}
}
