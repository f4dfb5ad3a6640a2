package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19b: tidyverse/ellmer's VCR cassettes (testdata/README.md,
// "Round 19b"). The expectations are read off the recordings: the body's
// blocks are decoded here on their own (r19bBody), not through the adapter.

// r19bBody decodes the JSON body of a recorded unary answer.
func r19bBody(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name + ".http")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line after the headers", name)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// r19bJSON decodes a request body.
func r19bJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

// r19bBlock is the i-th content block of a decoded answer.
func r19bBlock(t *testing.T, m map[string]any, i int) map[string]any {
	t.Helper()
	blocks, _ := m["content"].([]any)
	if i >= len(blocks) {
		t.Fatalf("block %d of %d", i, len(blocks))
	}
	b, _ := blocks[i].(map[string]any)
	return b
}

// TestRound19bEllmerThinking: claude-sonnet-4-5-20250929 (May 2026),
// unary, with extended thinking (budget 4000, max_tokens 4096,
// temperature 1): a signed thinking block, then the text; end_turn; 43 in,
// 470 out, no cache; usage carries service_tier "standard",
// inference_geo "not_available" and stop_details null beside the stop
// reason. The request id is the request-id header; the limits are the
// anthropic-ratelimit-* headers (2000 requests, 960000 tokens, the tokens
// reset 14:25:36Z). Our request carries what ellmer's did (thinking,
// max_tokens, temperature, model; the user's text without ellmer's
// cache_control, which we set on no part).
func TestRound19bEllmerThinking(t *testing.T) {
	t.Parallel()
	const name = "real_ellmer_sonnet45_thinking"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-sonnet-4-5-20250929",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Create a riddle for data scientists"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096), Temperature: ptr[float64](1)},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			ThinkingBudgetTokens: ptr[int32](4000),
		}}},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := r19bBody(t, name)
	th, tx := r19bBlock(t, body, 0), r19bBlock(t, body, 1)
	if th["type"] != "thinking" || tx["type"] != "text" {
		t.Fatalf("recorded blocks %v, %v", th["type"], tx["type"])
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: th["thinking"].(string), Signature: th["signature"].(string)}),
			text(tx["text"].(string)),
		},
		responseID: "msg_01E2zLNGNmSdz5iVgstgkNwj", model: "claude-sonnet-4-5-20250929", requestID: "req_011CbKevTUJfwULzrgQq2nMd",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(43, 470, 0, 0, 0),
		requestsLimit: 2000, tokensLimit: 960000, tokensReset: time.Date(2026, 5, 23, 14, 25, 36, 0, time.UTC),
	})
	if res.Meta.GetServiceTier() != "standard" {
		t.Errorf("service tier %q", res.Meta.GetServiceTier())
	}
	lcgSameFields(t, srv.Last(t).Body, `{"model":"claude-sonnet-4-5-20250929","thinking":{"type":"enabled","budget_tokens":4000},"temperature":1,"max_tokens":4096}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// The tools and system prompt of ellmer's anthropic-tool cassette.
const (
	r19bToolSystem = "Always use a tool to answer. Reply with 'It is ____.'."
	r19bToolSchema = `{"type":"object","description":"","additionalProperties":false}`
)

func r19bToolRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-haiku-4-5-20251001",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(r19bToolSystem)),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What's the current date in Y-M-D format?")),
		},
		Tools: []*llmrelayv1.Tool{
			{Name: "current_date", Description: "Return the current date", Parameters: r19bToolSchema},
			{Name: "current_month", Description: "Return the full name of the current month", Parameters: r19bToolSchema},
		},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096), Temperature: ptr[float64](0)},
	}
}

// TestRound19bEllmerToolLoop: claude-haiku-4-5-20251001 (October 2025),
// unary, two tools without parameters, told to always use one: four
// turns, each answered in its own recording. _1 calls current_date with
// input {} (tool_use, 625 in, 37 out); ellmer sent the call and its result
// back and _2 says "It is 2024-01-01." (680 in, 13 out); a second question
// brings current_month (_3, 706 in, 37 out) and its result "It is
// February." (_4, 756 in, 7 out). Every answer has its request-id and the
// eight rate-limit headers (4000 requests, 4800000 tokens). Each request
// we build from the answers before it is the one ellmer sent, field for
// field (system, messages, tools, temperature, max_tokens), the call ids
// the API gave going back on the tool_use and tool_result blocks.
func TestRound19bEllmerToolLoop(t *testing.T) {
	t.Parallel()
	req := r19bToolRequest()
	type turn struct {
		name, msgID, reqID string
		reset              time.Time
		in, out            int32
		parts              []*llmrelayv1.Part
		then               []*llmrelayv1.Message // appended after the answer, before the next turn
		sent               string                // the recorded request's messages
	}
	const (
		u1 = `{"role":"user","content":[{"type":"text","text":"What's the current date in Y-M-D format?"}]}`
		a1 = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01BW69saFoE9ooYerHnnZ4Up","name":"current_date","input":{}}]}`
		r1 = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01BW69saFoE9ooYerHnnZ4Up","content":"2024-01-01","is_error":false}]}`
		a2 = `{"role":"assistant","content":[{"type":"text","text":"It is 2024-01-01."}]}`
		u2 = `{"role":"user","content":[{"type":"text","text":"What month is it? Provide the full name"}]}`
		a3 = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01CnhXrZiKdxYrMPD5UnpEBX","name":"current_month","input":{}}]}`
		r3 = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01CnhXrZiKdxYrMPD5UnpEBX","content":"February","is_error":false}]}`
	)
	turns := []turn{
		{"real_ellmer_haiku_tool_1", "msg_01EJVuNzb4MJbdP5p1VDt2TH", "req_011CUNNB6F1zwC4f5DdUgohP", time.Date(2025, 10, 22, 14, 6, 31, 0, time.UTC), 625, 37,
			[]*llmrelayv1.Part{toolCallPart("toolu_01BW69saFoE9ooYerHnnZ4Up", "current_date", "{}")},
			[]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01BW69saFoE9ooYerHnnZ4Up", "2024-01-01", false))},
			"[" + u1 + "]"},
		{"real_ellmer_haiku_tool_2", "msg_01Ux7CnANHQtQGZGsZ6vb2au", "req_011CUNNBEDFPzgx9wopg8i1H", time.Date(2025, 10, 22, 14, 6, 32, 0, time.UTC), 680, 13,
			[]*llmrelayv1.Part{text("It is 2024-01-01.")},
			[]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What month is it? Provide the full name"))},
			"[" + u1 + "," + a1 + "," + r1 + "]"},
		{"real_ellmer_haiku_tool_3", "msg_01LNHJWkAwoc1wT57oHTWYTG", "req_011CUNNBJirkRRhHsppw29W5", time.Date(2025, 10, 22, 14, 6, 33, 0, time.UTC), 706, 37,
			[]*llmrelayv1.Part{toolCallPart("toolu_01CnhXrZiKdxYrMPD5UnpEBX", "current_month", "{}")},
			[]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01CnhXrZiKdxYrMPD5UnpEBX", "February", false))},
			"[" + u1 + "," + a1 + "," + r1 + "," + a2 + "," + u2 + "]"},
		{"real_ellmer_haiku_tool_4", "msg_01PcDFzr8XGp2n7f7GwBHC9K", "req_011CUNNBQQv7SvYhZLHe2CeR", time.Date(2025, 10, 22, 14, 6, 35, 0, time.UTC), 756, 7,
			[]*llmrelayv1.Part{text("It is February.")}, nil,
			"[" + u1 + "," + a1 + "," + r1 + "," + a2 + "," + u2 + "," + a3 + "," + r3 + "]"},
	}
	const tools = `[{"name":"current_date","description":"Return the current date","input_schema":{"type":"object","description":"","additionalProperties":false}},` +
		`{"name":"current_month","description":"Return the full name of the current month","input_schema":{"type":"object","description":"","additionalProperties":false}}]`
	for _, tc := range turns {
		srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
		res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		finish, stop := llmrelayv1.FinishReason_FINISH_REASON_STOP, "end_turn"
		if _, ok := tc.parts[0].GetKind().(*llmrelayv1.Part_ToolCall); ok {
			finish, stop = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_use"
		}
		checkLLMWant(t, tc.name, res.Message, res.Meta, llmWant{
			parts: tc.parts, responseID: tc.msgID, model: "claude-haiku-4-5-20251001", requestID: tc.reqID,
			finish: finish, providerStop: stop, usage: usageOf(tc.in, tc.out, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 4800000, tokensReset: tc.reset,
		})
		// ellmer wrote "is_error": false on each result; we leave the
		// default out (the same request to the API).
		sent := strings.ReplaceAll(tc.sent, `,"is_error":false`, "")
		lcgSameFields(t, srv.Last(t).Body, `{"model":"claude-haiku-4-5-20251001","system":"`+r19bToolSystem+`","messages":`+sent+
			`,"tools":`+tools+`,"temperature":0,"max_tokens":4096}`)
		providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
		req.Messages = append(append(req.Messages, res.Message), tc.then...)
	}
}
