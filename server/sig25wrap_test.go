package server_test

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestSig25WrapOpenRouterRetry: an OpenRouter deployment (reasoning
// carried back as reasoning_details) answers the tool loop with Google AI
// Studio's "Corrupted thought signature." wrapped in its "Provider
// returned error" (provider/openai/testdata/
// sig25wrap_openrouter_gemini_corrupted_signature.http, OpenRouterTeam/
// ai-sdk-provider#418's body); the gateway sends it once more at once,
// retries off, with Gemini's signature as Google's placeholder in the
// reasoning.encrypted entry (bound to the call's id, its thought text
// kept) and Claude's signed thinking of the earlier turn left out, and
// answers; meta names the retry and the change.
func TestSig25WrapOpenRouterRetry(t *testing.T) {
	t.Parallel()
	refusal := providertest.Load(t, "provider/openai/testdata/sig25wrap_openrouter_gemini_corrupted_signature.http")
	up := sig25Serve(t,
		sig25Step{refusal.Status, refusal.Header.Get("Content-Type"), string(refusal.Body)},
		sig25Step{200, "application/json", openaiChat.okBody})
	yaml := "defaults: {retry: {max_attempts: 1, base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\n" +
		"providers:\n  - name: up\n    type: openai\n    base_url: {{URL}}\n    api_key: " + f13Key + "\n    reasoning_replay: reasoning_details\n" +
		"models:\n  - {name: m, provider: up, upstream_model: google/gemini-3-flash-preview, capabilities: {tools: {format: openai-chat}}}\n"
	c := f13Start(t, yaml, up.URL, &f13Clock{})
	claude := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{
		Text: "Oslo is the capital.", Signature: "ErUBsig25wgwClaudeElsewhere==", Format: "anthropic-claude-v1", Provider: "openai"}}}
	msgs := sig25Loop("", &llmrelayv1.Reasoning{Text: "**Checking Oslo**", Signature: "CiQBsig25wgwGeminiElsewhere==", Id: "call_sig25gw",
		Format: "google-gemini-v1", Provider: "openai"})
	earlier := []*llmrelayv1.Message{
		user("Capital of Norway?"),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{claude, {Kind: &llmrelayv1.Part_Text{Text: "Oslo."}}}},
	}
	res, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m", Tools: []*llmrelayv1.Tool{sig25Tool},
		Messages: append(earlier, msgs...)})
	if err != nil {
		t.Fatal(err)
	}
	sig25Meta(t, res.GetMeta(), "left out 1 reasoning part(s) and sent 1 Gemini thought signature(s)")
	b := up.seen()
	if len(b) != 2 {
		t.Fatalf("upstream saw %d requests", len(b))
	}
	if !strings.Contains(b[0], `"data":"CiQBsig25wgwGeminiElsewhere==","id":"call_sig25gw"`) || !strings.Contains(b[0], "ErUBsig25wgwClaudeElsewhere==") {
		t.Errorf("first request: %s", b[0])
	}
	if strings.Contains(b[1], "sig25wgw") || strings.Contains(b[1], "Oslo is the capital.") ||
		!strings.Contains(b[1], `{"type":"reasoning.text","text":"**Checking Oslo**","format":"google-gemini-v1","index":0},{"type":"reasoning.encrypted","data":"skip_thought_signature_validator","id":"call_sig25gw","format":"google-gemini-v1","index":0}`) {
		t.Errorf("second request: %s", b[1])
	}
}
