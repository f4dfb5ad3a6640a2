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

// sig25WrapConversation is a tool loop through a relay whose route moved
// between upstreams: Claude's signed thinking on the first tool-call turn,
// Gemini 3's thought (its text, and its signature bound to the call's id)
// on the second, as OpenRouter's reasoning_details gave them.
func sig25WrapConversation() *provider.Request {
	reasoning := func(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
		r.Provider = "openai"
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
	}
	return &provider.Request{
		Model: "google/gemini-3-flash-preview", Options: &llmrelayv1.GenerationOptions{}, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Porto and in Faro?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
				reasoning(&llmrelayv1.Reasoning{Text: "Porto first.", Signature: "ErUBsig25wrapClaudeOtherAccountA==", Format: "anthropic-claude-v1"}),
				toolCallPart("toolu_01Sg25wRpPorto4kQ", "get_weather", `{"city":"Porto"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Sg25wRpPorto4kQ", `{"temp_c":17}`)),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
				reasoning(&llmrelayv1.Reasoning{Text: "**Checking Faro**", Signature: "CiQBsig25wrapGeminiOtherProjectB==", Id: "tool_get_weather_Sg25wFaro9Lm", Format: formatGemini}),
				toolCallPart("tool_get_weather_Sg25wFaro9Lm", "get_weather", `{"city":"Faro"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("tool_get_weather_Sg25wFaro9Lm", `{"temp_c":21}`)),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Description: "Weather for a city", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}},
	}
}

// TestSig25WrapRelayRefusalFlagged: OpenRouter relays an upstream's
// refusal of reasoning state signed elsewhere as its own 400 "Provider
// returned error" with the upstream's body in metadata.raw: Google AI
// Studio's "Corrupted thought signature." (OpenRouterTeam/
// ai-sdk-provider#418) and Bedrock's "Invalid signature in thinking
// block" (linanwx/nagobot#21) are flagged SignatureRefused where the
// deployment sends reasoning_details back, unary and before a stream;
// OpenRouter's own text wrapping a missing signature (massgen/MassGen#624)
// is not, nor is the same body on a deployment that sends no reasoning
// state back.
func TestSig25WrapRelayRefusalFlagged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file, msg, upstream string
		want                bool
	}{
		{"sig25wrap_openrouter_gemini_corrupted_signature", "Corrupted thought signature.", "Google AI Studio", true},
		{"sig25wrap_openrouter_bedrock_invalid_signature", "messages.7.content.2: Invalid signature in thinking block", "Amazon Bedrock", true},
		{"sig25wrap_openrouter_gemini_missing_signature", "Gemini models require OpenRouter reasoning details", "Google AI Studio", false},
	} {
		for _, replay := range []string{"reasoning_details", "none"} {
			for _, stream := range []bool{false, true} {
				srv := providertest.ReplayFile(t, td(c.file+".http"))
				p := newTestProvider(t, kOpenAI, srv.URL, WithReasoningReplay(replay))
				var err error
				if stream {
					var s provider.Stream
					if s, err = p.Stream(context.Background(), sig25WrapConversation()); s != nil {
						t.Fatalf("%s: a stream for an error", c.file)
					}
				} else {
					_, err = p.Generate(context.Background(), sig25WrapConversation())
				}
				pe := providerError(t, err)
				want := c.want && replay == "reasoning_details"
				if pe.SignatureRefused != want || pe.HTTPStatus != 400 || !strings.HasPrefix(pe.Message, c.msg) || pe.Extended[extUpstreamProvider] != c.upstream {
					t.Errorf("%s replay=%s stream=%v: refused=%v status=%d msg=%q upstream=%v", c.file, replay, stream, pe.SignatureRefused, pe.HTTPStatus, pe.Message, pe.Extended[extUpstreamProvider])
				}
			}
		}
	}
}

// TestSig25WrapRelayWithoutSignatures: sent again with DropSignatures
// through a relay that carries reasoning_details, Claude's signed thinking
// is left out and Gemini's thought signature becomes Google's placeholder
// as the reasoning.encrypted entry's data, bound to the call's id as
// before (RooCodeInc/Roo-Code#10640's form through OpenRouter); the calls,
// results and Gemini's thought text stay, with a warning. The caller's
// conversation is not changed.
func TestSig25WrapRelayWithoutSignatures(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("sig25wrap_openrouter_gemini_corrupted_signature.http"))
	p := newTestProvider(t, kOpenAI, srv.URL, WithReasoningReplay("reasoning_details"))
	req := sig25WrapConversation()
	if _, err := p.Generate(context.Background(), req); err == nil {
		t.Fatal("no error")
	}
	if first := string(srv.Last(t).Body); !strings.Contains(first, "ErUBsig25wrapClaudeOtherAccountA==") || !strings.Contains(first, "CiQBsig25wrapGeminiOtherProjectB==") {
		t.Fatalf("first request: %s", first)
	}
	again := *req
	again.DropSignatures = true
	if _, err := p.Generate(context.Background(), &again); err == nil {
		t.Fatal("no error")
	}
	second := srv.Last(t)
	providertest.Golden(t, td("sig25wrap_openrouter_placeholder.request.golden"), providertest.RequestGolden(second))
	if b := string(second.Body); strings.Contains(b, "sig25wrap") || strings.Contains(b, "Porto first.") || !strings.Contains(b, `"data":"skip_thought_signature_validator","id":"tool_get_weather_Sg25wFaro9Lm"`) {
		t.Errorf("second request: %s", b)
	}
	_, warnings, err := p.buildChatRequest(&again, false)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range warnings {
		found = found || strings.Contains(w, "left out 1 reasoning part(s) and sent 1 Gemini thought signature(s) and 0 tool call signature(s) as Google's placeholder")
	}
	if !found {
		t.Errorf("warnings %q", warnings)
	}
	if req.Messages[1].GetParts()[0].GetReasoning().GetSignature() != "ErUBsig25wrapClaudeOtherAccountA==" ||
		req.Messages[3].GetParts()[0].GetReasoning().GetSignature() != "CiQBsig25wrapGeminiOtherProjectB==" {
		t.Error("the caller's conversation was changed")
	}
}

// TestSig25WrapVeniceWithoutSignatures: Venice's forms of Gemini's
// signature (the message's thought_signature key, the call's
// thought_signature: testdata/real_venice_gemini38_tool_stream_2.http)
// go again as Google's placeholder under DropSignatures.
func TestSig25WrapVeniceWithoutSignatures(t *testing.T) {
	t.Parallel()
	p, err := New(testKey, WithBaseURL("https://api.venice.ai/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	call := toolCallPart("call_Sg25wVnc3Tq8", "get_weather", `{"city":"Braga"}`)
	call.GetToolCall().Signature = "EpYCsig25wrapVeniceCallSigC=="
	req := &provider.Request{Model: "gemini-3-8-flash", Options: &llmrelayv1.GenerationOptions{}, Messages: []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Braga?")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: "EpYCsig25wrapVeniceTurnSigD==", Format: formatThoughtSignature}}},
			call),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_Sg25wVnc3Tq8", "15 °C")),
	}}
	first, _, err := p.buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	again := *req
	again.DropSignatures = true
	second, warnings, err := p.buildChatRequest(&again, false)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []struct {
			ThoughtSignature string `json:"thought_signature"`
			ToolCalls        []struct {
				ThoughtSignature string `json:"thought_signature"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	for i, b := range [][]byte{first, second} {
		if err := json.Unmarshal(b, &sent); err != nil {
			t.Fatal(err)
		}
		m := sent.Messages[1]
		wantTurn, wantCall := "EpYCsig25wrapVeniceTurnSigD==", "EpYCsig25wrapVeniceCallSigC=="
		if i == 1 {
			wantTurn, wantCall = provider.GoogleSkipSignature, provider.GoogleSkipSignature
		}
		if m.ThoughtSignature != wantTurn || len(m.ToolCalls) != 1 || m.ToolCalls[0].ThoughtSignature != wantCall {
			t.Errorf("request %d: %s", i, b)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "left out 0 reasoning part(s) and sent 1 Gemini thought signature(s) and 1 tool call signature(s)") {
		t.Errorf("warnings %q", warnings)
	}
}
