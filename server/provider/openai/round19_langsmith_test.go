package openai

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19: langchain-ai/langsmith-sdk's cassettes (testdata/README.md,
// "Round 19").

// r19JSONField decodes field of a JSON object text.
func r19JSONField(t *testing.T, body []byte, field string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return m[field]
}

// TestRound19LangsmithResponsesReasoningStream: gpt-5-nano on the
// Responses API, streamed ("Say 'foo' then stop.", max_output_tokens
// 1024). A reasoning item without summary (added and done at once: no
// reasoning text, its id kept), then "foo" in one delta with an
// obfuscation field; response.created says service_tier "auto" (the
// request's), response.completed "default" (the tier that served it,
// which is the one kept); 13 in, 135 out of which 128 reasoning, 148
// total, 0 cached. The request id is x-request-id; created_at
// 1762215742 the create time; openai-processing-ms 116.
func TestRound19LangsmithResponsesReasoningStream(t *testing.T) {
	t.Parallel()
	const name = "real_langsmith_responses_gpt5nano_stream"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5-nano", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Say 'foo' then stop."))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(1024)}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkRespStreamInvariants(t, evs)
	f := accFold(t, evs)
	reasoning := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Id: "rs_01bd7fe641405dc3006909473f501c819698f257c33e2d8b83"}}}
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning, textIn("foo", "msg_01bd7fe641405dc300690947406fe481969150ca9d1b76ebcd")); !proto.Equal(f.Message, want) {
		t.Errorf("message\n got %v\nwant %v", f.Message, want)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 135, TotalTokens: 148, ReasoningTokens: 128}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_01bd7fe641405dc3006909473ef13c81969d01179244233ff4" || m.GetResolvedModel() != "gpt-5-nano-2025-08-07" ||
		m.GetProviderRequestId() != "req_c9e4301ecad743bc9dc205b0269be374" || m.GetServiceTier() != "default" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1762215742, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got := m.GetExtended().AsMap()[extProcessingMS]; got != 116.0 {
		t.Errorf("processing ms %v", got)
	}
	body := srv.Last(t).Body
	if got := r19JSONField(t, body, "max_output_tokens"); got != 1024.0 {
		t.Errorf("max_output_tokens %v in %s", got, body)
	}
	if got := r19JSONField(t, body, "stream"); got != true {
		t.Errorf("stream %v in %s", got, body)
	}
}

// The openai-agents handoff the cassette recorded: the triage agent's
// instructions and tool, then the math agent's instructions, no tools.
const (
	r19HandoffTriage = "You are a helpful assistant. Hand off to Handoff Agent for math questions."
	r19HandoffMath   = "You are a math expert. Answer math questions concisely."
	r19HandoffCallID = "call_gZQiwtvwnhkpwHGNvaxRGRRG"
	r19HandoffOutput = `{"assistant": "Handoff Agent"}`
)

// TestRound19LangsmithAgentsHandoff: openai-agents (under langsmith's
// tracer) on gpt-4.1's Responses API, unary. The triage agent's one strict
// tool takes no arguments; the model calls it with arguments "{}" (a
// function_call item, status completed): one call keyed by its call_id,
// arguments "{}" valid, finish TOOL_CALLS ("completed"), 69 in 14 out 83
// total, x-ratelimit-* (10000 requests, 30000000 tokens, resets 6ms and
// 0s after the Date header), service tier default, created_at the create
// time.
//
// The agents SDK then ran the math agent with the call and its output
// (the handoff's {"assistant": "Handoff Agent"}) and no tools, and the
// API answered "2 + 2 = 4" (65 in, 8 out). Ours sends the same items: the
// function_call with its call_id, name and arguments (without the item
// id and status the SDK echoed: we do not store responses, so there is no
// item to refer to) and the function_call_output with the same call_id
// and the output as text; the instructions go as a system message.
func TestRound19LangsmithAgentsHandoff(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4.1", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(r19HandoffTriage)),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is 2 + 2?"))},
		Tools: []*llmrelayv1.Tool{{Name: "transfer_to_handoff_agent", Description: "Handoff to the Handoff Agent agent to handle the request. ",
			Strict: proto.Bool(true), Parameters: `{"additionalProperties":false,"type":"object","properties":{},"required":[]}`}},
	}
	srv := providertest.ReplayFile(t, td("real_langsmith_agents_handoff_1.http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td("real_langsmith_agents_handoff_1.golden"), renderResult(t, res))
	call := &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: r19HandoffCallID,
		Name: "transfer_to_handoff_agent", Arguments: "{}", ArgumentsValid: true}}}
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, call); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 69, OutputTokens: 14, TotalTokens: 83}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	date := time.Date(2026, 4, 9, 23, 59, 52, 0, time.UTC)
	if m.GetResponseId() != "resp_08c4dc3be695bfd40069d83d77b6a081a3bab7e001f9dcbe6b" || m.GetResolvedModel() != "gpt-4.1-2025-04-14" ||
		m.GetProviderRequestId() != "req_2b14f8c854f5470e82a2ef0d3ac98bd0" || m.GetServiceTier() != "default" || m.GetToolCallCount() != 1 ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1775779191, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	rl := m.GetRateLimit()
	if rl.GetRequestsLimit() != 10000 || rl.GetRequestsRemaining() != 9999 || rl.GetTokensLimit() != 30000000 || rl.GetTokensRemaining() != 30000000 ||
		!rl.GetRequestsResetTime().AsTime().Equal(date.Add(6*time.Millisecond)) || !rl.GetTokensResetTime().AsTime().Equal(date) {
		t.Errorf("rate limit %v", rl)
	}
	tools, _ := r19JSONField(t, srv.Last(t).Body, "tools").([]any)
	if len(tools) != 1 {
		t.Fatalf("tools %v", tools)
	}
	wantTool := map[string]any{"type": "function", "name": "transfer_to_handoff_agent", "description": "Handoff to the Handoff Agent agent to handle the request. ",
		"parameters": map[string]any{"additionalProperties": false, "type": "object", "properties": map[string]any{}, "required": []any{}}, "strict": true}
	if !jsonEqualAny(tools[0], wantTool) {
		t.Errorf("tool %v, want %v", tools[0], wantTool)
	}

	// The math agent's turn.
	req.Messages = []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(r19HandoffMath)),
		msgOf(llmrelayv1.Role_ROLE_USER, text("What is 2 + 2?")),
		res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: r19HandoffCallID, Content: r19HandoffOutput}}}),
	}
	req.Tools = nil
	srv2 := providertest.ReplayFile(t, td("real_langsmith_agents_handoff_2.http"))
	res2, err := newTestProvider(t, kOpenAI, srv2.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res2)
	providertest.Golden(t, td("real_langsmith_agents_handoff_2.golden"), renderResult(t, res2))
	body := srv2.Last(t).Body
	input, _ := r19JSONField(t, body, "input").([]any)
	// The recorded input's last two items, less the echoed item id and
	// status.
	wantItems := []any{
		map[string]any{"type": "function_call", "call_id": r19HandoffCallID, "name": "transfer_to_handoff_agent", "arguments": "{}"},
		map[string]any{"type": "function_call_output", "call_id": r19HandoffCallID, "output": r19HandoffOutput},
	}
	if len(input) != 4 || !jsonEqualAny(input[2:], wantItems) {
		t.Errorf("input %v, want the system and user messages then %v", input, wantItems)
	}
	if r19JSONField(t, body, "tools") != nil {
		t.Errorf("tools sent: %s", body)
	}
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, textIn("2 + 2 = 4", "msg_08c4dc3be695bfd40069d83d790f5881a3972d29bb20f98a71")); !proto.Equal(res2.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res2.Message, want)
	}
	m2 := res2.Meta
	wantFinish(t, m2, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 65, OutputTokens: 8, TotalTokens: 73}); !proto.Equal(m2.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m2.GetUsage(), want)
	}
	if m2.GetResponseId() != "resp_08c4dc3be695bfd40069d83d78cad481a3b5b50643e59475d9" || m2.GetProviderRequestId() != "req_44870babad284777adbcf2f1fc9f0c45" ||
		m2.GetToolCallCount() != 0 || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v", m2)
	}
}

// jsonEqualAny compares two decoded JSON values by their encoding.
func jsonEqualAny(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
