package anthropic

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22: the Vercel AI SDK's context-editing recordings no round had
// used (testdata/README.md, "Round 22"). The SDK keeps answers without the
// requests that asked for them (context management was on: the
// context-management beta with clear_tool_uses, then with clear_thinking
// too); the tests send an ordinary request and check the answer field by
// field against the recording.

// r22NoEdits checks that an empty applied_edits list is not kept: the
// API applied nothing.
func r22NoEdits(t *testing.T, name string, m *llmrelayv1.ResponseMeta) {
	t.Helper()
	if v, ok := m.GetExtended().GetFields()["context_management"]; ok {
		t.Errorf("%s: context_management %v kept, though no edit was applied", name, v)
	}
}

// TestRound22VercelClearToolUsesStream: claude-haiku-4-5-20251001 with
// context editing (clear_tool_uses), streamed: one text block opening with
// two line breaks, in 32 deltas (°F split from its number, "an" from "d");
// 859 in, 122 out (message_delta repeats the input count); message_delta
// carries context_management {applied_edits: []}.
func TestRound22VercelClearToolUsesStream(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_clear_tool_uses_stream"
	_, f, _ := r21Stream(t, name, r21Request("claude-haiku-4-5", "Compare the weather in San Francisco and New York.", 1024, 0))
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{text("\n\nHere's a comparison of the weather in both cities:\n\n**San Francisco:**\n- Temperature: 72°F\n- Condition: Sunny\n\n" +
			"**New York:**\n- Temperature: 65°F\n- Condition: Cloudy\n\n**Summary:**\nSan Francisco is warmer than New York by 7 degrees (72°F vs 65°F) " +
			"and has better weather conditions with sunny skies, while New York is experiencing cloudy conditions. " +
			"If you're looking for warm and sunny weather, San Francisco is the better choice right now.")},
		responseID: "msg_01YJG5jvxYUWfhVa6MSqT6qk", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(859, 122, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
	})
	r22NoEdits(t, name, f.meta)
}

// TestRound22VercelClearToolUses: the unary answer (another live one): a
// markdown table with °F, 859 in, 132 out, a top-level context_management
// {applied_edits: []}.
func TestRound22VercelClearToolUses(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_clear_tool_uses"
	res, _ := r22Unary(t, name, r21Request("claude-haiku-4-5", "Compare the weather in San Francisco and New York.", 1024, 0))
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("\n\nHere's a comparison of the weather in both cities:\n\n**San Francisco vs New York:**\n\n" +
			"| Aspect | San Francisco | New York |\n|--------|---------------|----------|\n| **Temperature** | 72°F | 65°F |\n| **Conditions** | Sunny | Cloudy |\n\n" +
			"**Summary:**\nSan Francisco is warmer than New York by 7 degrees Fahrenheit, and it has better weather conditions with sunny skies compared to New York's cloudy weather. " +
			"If you're looking for warm and clear weather, San Francisco is the better choice right now!")},
		responseID: "msg_015cSyws7w7R4ZeozELGSuET", model: "claude-haiku-4-5-20251001",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(859, 132, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
	})
	r22NoEdits(t, name, res.Meta)
}

// TestRound22VercelCombinedContextEditing: claude-sonnet-4-5-20250929 with
// both context edits (clear_thinking and clear_tool_uses), unary, thinking
// on: a signed thinking block (✓ three times) then the answer with ×; 50
// in, 418 out (the thinking inside, not counted apart); context_management
// {applied_edits: []}.
func TestRound22VercelCombinedContextEditing(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_combined_context_editing"
	res, _ := r22Unary(t, name, r21Request("claude-sonnet-4-5", "What is 25 * 37? Think step by step.", 4096, 1024))
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{
				Text: "I need to calculate 25 * 37 step by step.\n\nLet me break this down:\n\nMethod 1: Break down 37 into smaller parts\n25 * 37 = 25 * (30 + 7)\n" +
					"= (25 * 30) + (25 * 7)\n= 750 + 175\n= 925\n\nLet me verify this:\n25 * 30 = 25 * 3 * 10 = 75 * 10 = 750 ✓\n" +
					"25 * 7 = 175 (since 25 * 4 = 100, so 25 * 8 = 200, so 25 * 7 = 200 - 25 = 175) ✓\n750 + 175 = 925 ✓\n\nSo 25 * 37 = 925",
				Signature: r22Sig(t, name, 0),
			}),
			text("# 25 × 37\n\nLet me break this down into easier parts:\n\n## Method: Split 37 into 30 + 7\n\n**25 × 37 = 25 × (30 + 7)**\n\n" +
				"### Step 1: Calculate 25 × 30\n25 × 30 = 25 × 3 × 10 = 75 × 10 = **750**\n\n### Step 2: Calculate 25 × 7\n25 × 7 = **175**\n" +
				"- (You can think of this as 25 × 4 = 100, plus 25 × 3 = 75, so 100 + 75 = 175)\n\n### Step 3: Add them together\n750 + 175 = **925**\n\n**Answer: 25 × 37 = 925**"),
		},
		responseID: "msg_015hCTrPAyXTGEHTBJqfTGbP", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(50, 418, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
	})
	r22NoEdits(t, name, res.Meta)
}
