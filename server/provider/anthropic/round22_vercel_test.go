package anthropic

import (
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22: the Vercel AI SDK's live recordings no round had
// used (testdata/README.md, "Round 22"). The SDK keeps answers without the
// requests that asked for them (for the context-editing ones, context
// management was on); the tests send an ordinary request and check the
// answer field by field against the recording.

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

// TestRound22VercelWebFetchErrorThenClientTool: the Vercel AI SDK's live
// recording for its issue 10819 (claude-sonnet-4-5-20250929, streamed,
// padded JSON): a text, a server_tool_use web_fetch (its URL in six
// pieces) whose web_fetch_tool_result is an error (url_not_accessible,
// caller direct, named in the warning), a second text, then a client
// tool_use display_products whose only input_json_delta is empty (input
// {}); tool_use; message_start says 1186 in, message_delta 2509 in, 158
// out, one web fetch. Two text parts, the call with {} (valid), two
// warnings, the fetch counted in usage_details. The follow-up ours builds
// sends the turn back as the two texts and the call (the server blocks stay
// with the provider: the contract has no place for them) with the result;
// the SDK kept no request, so it is checked as built. (The recording's
// second answer is left out: it opens with the API's own result for this
// fetch, so it repeats this recording's srvtoolu id, which
// TestRecordingsHaveTheirOwnIDs refuses.)
func TestRound22VercelWebFetchErrorThenClientTool(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_issue_10819_web_fetch_error_1_stream"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r21Request("claude-sonnet-4-5", "Run web_fetch and then display_products.", 512, 0)
		req.Messages = append(req.Messages, more...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = []*llmrelayv1.Tool{{Name: "display_products", Description: "Record that product display was attempted after the web fetch.",
			Parameters: `{"type":"object","properties":{},"additionalProperties":false}`}}
		return req
	}
	const (
		text1 = "I'll follow these steps in order.\n\nStep 1: Calling web_fetch on https://httpbin.org/status/500"
		text2 = "Step 2: web_fetch has returned (with an error, but it has completed).\n\nStep 3: Now calling display_products"
	)
	evs, f, _ := r21Stream(t, name, build())
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text(text1), text(text2), toolCallValid("toolu_01FUuDcCDweLziH8QvQFQLtV", "display_products", "{}")},
		responseID: "msg_011CdH6gYnrPKKsWxasCBMwz", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(2509, 158, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available","server_tool_use.web_fetch_requests":1}`,
		},
		items: []string{"server_tool_use", "web_fetch_tool_result"},
		warnings: []string{
			`content block 2: type "web_fetch_tool_result" (result of srvtoolu_01J1EKYpi3LLtWHmtZnY1gto, a tool the provider ran itself, which failed: web_fetch_tool_result_error "url_not_accessible")`,
		},
	})
	if n := countKind(evs, provider.EventToolCallEnd); n != 1 {
		t.Errorf("%d tool-call ends, want 1 (display_products)", n)
	}

	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _, _, err := p.buildRequest(build(f.message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01FUuDcCDweLziH8QvQFQLtV", `{"displayed":true}`, false))), true)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := json.Marshal(r19bJSON(t, body)["messages"])
	want := `[{"content":[{"text":"Run web_fetch and then display_products.","type":"text"}],"role":"user"},` +
		`{"content":[{"text":` + jsonQuote(t, text1) + `,"type":"text"},` +
		// The server tool's call (its input rebuilt from the
		// input_json_delta pieces) and failed result, in their place.
		`{"id":"srvtoolu_01J1EKYpi3LLtWHmtZnY1gto","input":{"url":"https://httpbin.org/status/500"},"name":"web_fetch","type":"server_tool_use"},` +
		`{"caller":{"type":"direct"},"content":{"error_code":"url_not_accessible","type":"web_fetch_tool_result_error"},"tool_use_id":"srvtoolu_01J1EKYpi3LLtWHmtZnY1gto","type":"web_fetch_tool_result"},` +
		`{"text":` + jsonQuote(t, text2) + `,"type":"text"},` +
		`{"id":"toolu_01FUuDcCDweLziH8QvQFQLtV","input":{},"name":"display_products","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"{\"displayed\":true}","tool_use_id":"toolu_01FUuDcCDweLziH8QvQFQLtV","type":"tool_result"}],"role":"user"}]`
	if !sameJSON(t, string(msgs), want) {
		t.Errorf("the follow-up's messages\n got %s\nwant %s", msgs, want)
	}
}

// TestRound22VercelToolLoopStream: the Vercel AI SDK's live recording for
// its issue 10781 (claude-sonnet-4-5-20250929, streamed). Turn 1: "Let me
// check." then get_weather {"city": "San Francisco"} (caller direct; the
// arguments in two pieces after an empty one, kept with their space);
// 624 in, 59 out. Turn 2: "The weather in San Francisco is currently sunny
// with a temperature of 72°F."; 704 in, 20 out. Ours sends turn 1 back as
// received with the result.
func TestRound22VercelToolLoopStream(t *testing.T) {
	t.Parallel()
	const first, second = "real_vercel_issue_10781_1_stream", "real_vercel_issue_10781_2_stream"
	build := func(more ...*llmrelayv1.Message) *provider.Request {
		req := r21Request("claude-sonnet-4-5", "What is the weather in San Francisco?", 1024, 0)
		req.Messages = append(req.Messages, more...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = []*llmrelayv1.Tool{weatherTool(t)}
		return req
	}
	_, f1, _ := r21Stream(t, first, build())
	const args = `{"city": "San Francisco"}`
	checkLLMWant(t, first, f1.message, f1.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Let me check."), toolCallValid("toolu_01Ni1uw4HXYxUhc4iFMqx7yY", "get_weather", args)},
		responseID: "msg_011CdHMeT7EYp2un4JDDZLDT", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(624, 59, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
	})
	_, f2, srv2 := r21Stream(t, second, build(f1.message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Ni1uw4HXYxUhc4iFMqx7yY", `{"temperature":72,"condition":"sunny"}`, false))))
	checkLLMWant(t, second, f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The weather in San Francisco is currently sunny with a temperature of 72°F.")},
		responseID: "msg_011CdHMeh5s7rCrs7HfxAAQt", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(704, 20, 0, 0, 0),
		extended: map[string]string{
			"service_tier":           `"standard"`,
			provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
		},
	})
	sent := r19bJSON(t, srv2.Last(t).Body)
	msgs, _ := sent["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("turn 2: %d messages, want 3", len(msgs))
	}
	b, _ := json.Marshal(msgs[1])
	if !sameJSON(t, string(b), `{"content":[{"text":"Let me check.","type":"text"},{"id":"toolu_01Ni1uw4HXYxUhc4iFMqx7yY","input":{"city":"San Francisco"},"name":"get_weather","type":"tool_use"}],"role":"assistant"}`) {
		t.Errorf("turn 2 assistant message %s", b)
	}
}

// TestRound22VercelMemoryTool: claude-sonnet-4-5-20250929 with Anthropic's
// client-run memory tool (memory_20250818) and context management, unary:
// one memory call, its input written with spaces inside braces ({
// "command": "view", "path": "/memories" }), relayed as the same JSON;
// tool_use, 1614 in, 69 out, no edit applied.
func TestRound22VercelMemoryTool(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_memory_20250818"
	req := r21Request("claude-sonnet-4-5", "What do you remember about me?", 1024, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"name":"memory","type":"memory_20250818"}]}`}
	res, _ := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_01TvNvpwszD4hKeudmbfyWiV", "memory", `{"command":"view","path":"/memories"}`)},
		responseID: "msg_01CFDwFo3hhWrKC7BRpZBzJV", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(1614, 69, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	r22NoEdits(t, name, res.Meta)
}
