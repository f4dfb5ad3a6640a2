package openai

import (
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// sig26ClaudeLoop is a tool loop through OpenRouter to Claude with
// thinking on (effort high): Claude's signed thinking began the loop's
// assistant turn, as OpenRouter's reasoning_details gave it.
func sig26ClaudeLoop(model string) *provider.Request {
	return &provider.Request{
		Model: model, Reasoning: true,
		Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH},
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("Tide times in Aveiro?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{
					Text: "Look up Aveiro.", Signature: "EqQBsig26relayClaudeOtherOrgQ==", Format: "anthropic-claude-v1", Provider: "openai"}}},
				toolCallPart("toolu_01S26rlyAveiro7Kw", "get_tides", `{"port":"Aveiro"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01S26rlyAveiro7Kw", `{"high":"06:41"}`)),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_tides", Parameters: `{"type":"object","properties":{"port":{"type":"string"}}}`}},
	}
}

type sig26Sent struct {
	ReasoningEffort string          `json:"reasoning_effort"`
	Reasoning       json.RawMessage `json:"reasoning"`
	Messages        []struct {
		ReasoningDetails json.RawMessage `json:"reasoning_details"`
	} `json:"messages"`
}

func sig26Build(t *testing.T, p *Provider, req *provider.Request) (sig26Sent, []string) {
	t.Helper()
	body, warnings, err := p.buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var s sig26Sent
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	return s, warnings
}

// TestSig26RelayRepairTurnsClaudeThinkingOff: the repaired request
// (DropSignatures) of a Claude tool loop through a relay that carries
// reasoning_details leaves Claude's thinking out of the loop's first
// assistant message, which Anthropic then refuses with thinking on
// ("Expected `thinking` or `redacted_thinking`, but found `tool_use`";
// Kilo-Org/kilocode#5219): the attempt goes with OpenRouter's
// reasoning.enabled false and no reasoning_effort, with a warning. The
// first request keeps its effort; a Gemini model (which needs no thinking
// at the turn's start), a Claude request that does not continue a tool
// loop, and one whose loop turn had no thinking to lose keep theirs.
func TestSig26RelayRepairTurnsClaudeThinkingOff(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "https://openrouter.ai/api/v1", WithReasoningReplay("reasoning_details"))

	req := sig26ClaudeLoop("anthropic/claude-sonnet-4.5")
	first, _ := sig26Build(t, p, req)
	if first.ReasoningEffort != "high" || first.Reasoning != nil || !strings.Contains(string(first.Messages[1].ReasoningDetails), "sig26relay") {
		t.Fatalf("first request: %+v", first)
	}
	again := *req
	again.DropSignatures = true
	second, warnings := sig26Build(t, p, &again)
	if second.ReasoningEffort != "" || string(second.Reasoning) != `{"enabled":false}` || second.Messages[1].ReasoningDetails != nil {
		t.Errorf("repaired request: effort %q reasoning %s details %s", second.ReasoningEffort, second.Reasoning, second.Messages[1].ReasoningDetails)
	}
	if !slicesContain(warnings, warnRelayThinkingOff) {
		t.Errorf("warnings %q", warnings)
	}

	keep := func(name string, r *provider.Request) {
		t.Helper()
		r.DropSignatures = true
		s, warnings := sig26Build(t, p, r)
		if s.ReasoningEffort != "high" || s.Reasoning != nil || slicesContain(warnings, warnRelayThinkingOff) {
			t.Errorf("%s: effort %q reasoning %s warnings %q", name, s.ReasoningEffort, s.Reasoning, warnings)
		}
	}
	keep("gemini", sig26ClaudeLoop("google/gemini-3-flash-preview"))
	noLoop := sig26ClaudeLoop("anthropic/claude-sonnet-4.5")
	noLoop.Messages = append(noLoop.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("High tide at 06:41.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("And in Porto?")))
	keep("question", noLoop)
	later := sig26ClaudeLoop("anthropic/claude-sonnet-4.5")
	later.Messages = append([]*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("Hi")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, later.Messages[1].GetParts()[0], text("Hello.")),
	}, later.Messages[0],
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, later.Messages[1].GetParts()[1]),
		later.Messages[2])
	// Claude's thinking went from an earlier turn only: the loop's turn
	// had none to lose (Anthropic omits earlier turns' thinking itself).
	keep("earlier turn", later)

	if req.Messages[1].GetParts()[0].GetReasoning().GetSignature() != "EqQBsig26relayClaudeOtherOrgQ==" {
		t.Error("the caller's conversation was changed")
	}
}

func slicesContain(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
