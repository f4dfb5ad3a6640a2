package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestGeminiCompatThoughtSignatures: Gemini's OpenAI-compatible endpoint
// puts a Gemini 3 thought signature on a tool call as
// extra_content.google.thought_signature and answers the next turn with a
// 400 when it does not come back. It is the call's signature, unary and
// streamed; it goes back as extra_content to a Google host, and is left
// out, with a warning, for any other server (OpenAI rejects fields it
// does not know).
func TestGeminiCompatThoughtSignatures(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("gemini_compat_tool_call.http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("gemini_compat_tool_call.golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	first, second := parts[0].GetToolCall(), parts[1].GetToolCall()
	if first.GetCallId() != "k7Qm2xTa" || first.GetSignature() != "EqQCCqECAdHtim9Kx2vYbW0Qp3sTnLh8uFzGd4eR1cJm" || first.GetArguments() != `{"city":"Lisbon"}` {
		t.Errorf("first call %v", first)
	}
	if second.GetCallId() != "Wp4nZ8bE" || second.GetSignature() != "" {
		t.Errorf("second call %v (only the first of parallel calls is signed)", second)
	}

	ssrv := providertest.ReplayFile(t, td("gemini_compat_tool_call_stream.http"))
	s, err := newTestProvider(t, kOpenAI, ssrv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	evs, rendered, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("gemini_compat_tool_call_stream.golden"), rendered)
	f := accFold(t, evs)
	sp := f.Message.GetParts()
	if len(sp) != 2 || sp[0].GetToolCall().GetSignature() != "EpcCCpQCAdHtim8Rw3nVqL5cYhTzKd2sGfB9aXo" || sp[0].GetToolCall().GetCallId() != "Hc3vY9rM" ||
		sp[1].GetToolCall().GetSignature() != "" {
		t.Errorf("streamed parts %v", sp)
	}

	// The next turn: the signed call goes back to Google, not elsewhere.
	msgs := []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Lisbon and Porto?")),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts},
		msgOf(llmrelayv1.Role_ROLE_TOOL,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "k7Qm2xTa", Content: "19 °C"}}},
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "Wp4nZ8bE", Content: "17 °C"}}}),
	}
	for _, tc := range []struct {
		base   string
		sent   bool
		warned bool
	}{
		{"https://generativelanguage.googleapis.com/v1beta/openai", true, false},
		{"https://api.openai.com/v1", false, true},
	} {
		p, err := New(testKey, WithBaseURL(tc.base))
		if err != nil {
			t.Fatal(err)
		}
		body, warnings, err := p.buildChatRequest(&provider.Request{Model: "m", Messages: msgs, Options: &llmrelayv1.GenerationOptions{}}, false)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Messages []struct {
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		calls := req.Messages[1].ToolCalls
		if len(calls) != 2 {
			t.Fatalf("%s: tool calls %s", tc.base, body)
		}
		signed := `"extra_content":{"google":{"thought_signature":"EqQCCqECAdHtim9Kx2vYbW0Qp3sTnLh8uFzGd4eR1cJm"}}`
		if got := strings.Contains(string(calls[0]), signed); got != tc.sent {
			t.Errorf("%s: signature sent = %v, want %v: %s", tc.base, got, tc.sent, calls[0])
		}
		if strings.Contains(string(calls[1]), "extra_content") {
			t.Errorf("%s: unsigned call got extra_content: %s", tc.base, calls[1])
		}
		warned := len(warnings) == 1 && strings.Contains(warnings[0], "1 tool call signature")
		if warned != tc.warned {
			t.Errorf("%s: warnings %q", tc.base, warnings)
		}
	}
}
