package openai

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 26: qqlcx5/talkcody's recordings of DeepSeek (deepseek-reasoner)
// and Kimi's coding plan (kimi-k2.5 answered as kimi-for-coding), two
// agent turns at the end of a tool loop (testdata/README.md, "Round 26").

// r26NoWarnings fails on any warning in the stream's metas.
func r26NoWarnings(t *testing.T, evs []*provider.Event) {
	t.Helper()
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("warnings %v", ev.Meta.GetWarnings())
		}
	}
}

// r26ToolLoop is the recorded conversation's shape: a question, an
// assistant turn that thought and called a tool (content null), the
// result. The calls keep the provider's ids.
func r26ToolLoop(model, callID, reasoning string) *provider.Request {
	req := r22Ask(model, "How are custom tools implemented?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "readFile", Parameters: `{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"],"additionalProperties":false}`}}
	call := &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: callID, Name: "readFile",
		Arguments: `{"file_path":"/Users/kks/mygit/talkcody/src/lib/tools/test-custom-tool.tsx"}`}}}
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: reasoning}}}, call),
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: callID, Content: `{"success":true}`}}}))
	return req
}

// r26WantToolTurn checks the assistant tool-call turn as the recorded
// request sent it: reasoning_content, the call under its own id.
func r26WantToolTurn(t *testing.T, msgs []any, callID, reasoning string) {
	t.Helper()
	a := msgs[1].(map[string]any)
	calls, _ := a["tool_calls"].([]any)
	if a["role"] != "assistant" || a["reasoning_content"] != reasoning || len(calls) != 1 {
		t.Fatalf("tool-call turn %v", a)
	}
	if id := calls[0].(map[string]any)["id"]; id != callID {
		t.Errorf("call id %v, want %s", id, callID)
	}
	if res := msgs[2].(map[string]any); res["role"] != "tool" || res["tool_call_id"] != callID {
		t.Errorf("tool result %v", res)
	}
}

// TestRound26TalkcodyDeepSeekReasonerStream: deepseek-reasoner on
// api.deepseek.com (February 2026), the turn after a tool loop whose
// assistant turns went with reasoning_content (ids call_00_…), answered
// 200: reasoning then text, content and reasoning_content null in turn,
// the usage on the finishing chunk with 36736 of 37027 prompt tokens
// cached (prompt_tokens_details and prompt_cache_hit_tokens agree) and
// 109 reasoning tokens inside the 1776 completion tokens; the request id
// is x-ds-trace-id.
func TestRound26TalkcodyDeepSeekReasonerStream(t *testing.T) {
	t.Parallel()
	const callID, thought = "call_00_rmqAr8S1t003XLA4Gsj3QKmc", "Let me look at the test-custom-tool.tsx to see an example of a custom tool implementation."
	req := r26ToolLoop("deepseek-reasoner", callID, thought)
	evs, f, sent := mgbStream(t, "real_talkcody_deepseek_reasoner_stream", "https://api.deepseek.com/v1", "", req)
	r26NoWarnings(t, evs)
	r26WantToolTurn(t, sent["messages"].([]any), callID, thought)
	r22Meta(t, f.Meta, "6b89aefb-a155-42da-9a48-543087921326", "2d2dec57745871dacc65b5beb68077bb", "deepseek-reasoner", 1769917792,
		&llmrelayv1.Usage{InputTokens: 37027, OutputTokens: 1776, TotalTokens: 38803, CachedInputTokens: 36736, ReasoningTokens: 109},
		llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	reasoning, answer := r21cParts(t, f.Message)
	if reasoning != "Now let me examine the sandbox to understand how custom tools are sandboxed. Now I'll write the answer." {
		t.Errorf("reasoning %q", reasoning)
	}
	if !strings.HasPrefix(answer, "Based on my analysis of the TalkCody codebase, here's") || !strings.HasSuffix(answer, "comparable to professional development environments.") {
		t.Errorf("answer %q", answer)
	}

	// The next turn: the final text answer's reasoning is not a tool-call
	// turn's, and DeepSeek ignores it; it goes back as reasoning_content
	// as the tool-call turns' does.
	follow := r26ToolLoop("deepseek-reasoner", callID, thought)
	follow.Messages = append(follow.Messages, f.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("Thanks.")))
	p, err := New(testKey, WithBaseURL("https://api.deepseek.com/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err := p.buildChatRequest(follow, true)
	if err != nil {
		t.Fatal(err)
	}
	msgs := r20Request(t, body)["messages"].([]any)
	r26WantToolTurn(t, msgs, callID, thought)
	if a := msgs[3].(map[string]any); a["content"] != answer || len(warns) != 0 {
		t.Errorf("answer turn %v, warnings %v", a, warns)
	}
}

// TestRound26TalkcodyKimiCodingStream: kimi-k2.5 on Kimi's coding plan
// (api.kimi.com/coding/v1, February 2026), answered as kimi-for-coding
// through Cloudflare with no request id header: the turn after a tool
// loop whose assistant turns went with reasoning_content (ids tool_…),
// reasoning then text, system_fingerprint after the choices, the usage
// (Moonshot's cached_tokens at its top, 33792 of 39079) inside the
// finishing choice and again in a last chunk without choices: the same
// totals twice (a usage event replaces the one before), counted once.
func TestRound26TalkcodyKimiCodingStream(t *testing.T) {
	t.Parallel()
	const callID, thought = "tool_lF5pqHxxwtJA0dLG2NUTo9pj", "Now let me look at the import-map.ts to see how module resolution works:"
	req := r26ToolLoop("kimi-k2.5", callID, thought)
	evs, f, sent := mgbStream(t, "real_talkcody_kimi_coding_stream", "https://api.kimi.com/coding/v1", "", req)
	r26NoWarnings(t, evs)
	r26WantToolTurn(t, sent["messages"].([]any), callID, thought)
	r22Meta(t, f.Meta, "chatcmpl-9m5C3EyM11kaLsJsVcZjuj5Y", "", "kimi-for-coding", 1769918619,
		&llmrelayv1.Usage{InputTokens: 39079, OutputTokens: 1198, TotalTokens: 40277, CachedInputTokens: 33792},
		llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	reasoning, answer := r21cParts(t, f.Message)
	if reasoning != "Now I have a comprehensive understanding of how TalkCody's custom tool system works. Let me summarize this information for the user." {
		t.Errorf("reasoning %q", reasoning)
	}
	if !strings.HasPrefix(answer, "Based on my exploration of the codebase, here's a comprehensive overview of how TalkCody's custom tool system is implemented:\n\n") ||
		!strings.HasSuffix(answer, "while maintaining security through a declarative permission model.") {
		t.Errorf("answer %q", answer)
	}
}

// TestRound26TalkcodyVercelGatewayStream: the Vercel AI Gateway's Chat
// Completions endpoint (ai-gateway.vercel.sh, google/gemini-2.5-flash-lite
// served by Vertex, February 2026), Vercel's own headers and no request
// id header but x-vercel-id: gen_ ids, the finishing chunk's delta
// carrying only the gateway's provider_metadata (Gemini's usageMetadata,
// the routing attempts, cost strings), the usage with a numeric cost,
// is_byok, cost_details and market_cost, and generationId beside the
// choices. The text and usage are exact; the routing stays out of the
// message.
func TestRound26TalkcodyVercelGatewayStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("google/gemini-2.5-flash-lite", "Generate a title.")
	evs, f, _ := mgbStream(t, "real_talkcody_vercelgw_gemini_flash_lite_stream", "https://ai-gateway.vercel.sh/v1", "", req)
	r26NoWarnings(t, evs)
	r22Meta(t, f.Meta, "gen_01KGBMZHG54VSY7JAYRZ6XATKA", "", "google/gemini-2.5-flash-lite", 1769917630,
		&llmrelayv1.Usage{InputTokens: 184, OutputTokens: 6, TotalTokens: 190}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if reasoning, answer := r21cParts(t, f.Message); answer != "Talkcody Custom Tool Implementation" || reasoning != "" {
		t.Errorf("reasoning %q, answer %q", reasoning, answer)
	}
}
