package openai

import (
	"encoding/json"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// mgbGroqDate stands for the Date maruel/genai's Groq cassettes did not
// keep (the answers' created time, 2025-12-13 15:11:57 UTC).
const mgbGroqDate = "Sat, 13 Dec 2025 15:11:57 GMT"

// TestRound22MgbGroqOSSSquareRoot: openai/gpt-oss-120b on Groq, unary, a
// call required (December 2025). The answer: reasoning "User wants result
// of sqrt(132413) using tool. Use function." in Groq's "reasoning" field,
// no content, one call square_root({"number":132413}) with Groq's id
// fc_49a9f731-…, finish tool_calls; 156 in, 44 out of which 16 reasoning;
// x_groq.id the request id, its seed, service_tier on_demand, Groq's
// timings; the six rate-limit headers (500000/499999 requests reset in
// 172 ms, 250000/247522 tokens in 594 ms). maruel/genai's second request
// (which the API answered) sent the call back with its id and arguments,
// without the reasoning, then the result "363.89" by the call's id, with
// tool_choice none: ours is checked against it. The second answer: "363.89",
// stop, 185 in, 7 out, no reasoning tokens.
func TestRound22MgbGroqOSSSquareRoot(t *testing.T) {
	t.Parallel()
	const callID = "fc_49a9f731-cf37-4f59-a47b-97172cbffaba"
	req := mgbSqrtReq("openai/gpt-oss-120b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	res, body := mgbUnary(t, "real_maruel_groq_oss120_sqrt_1", r22Groq, mgbGroqDate, req)
	if !mgbJSONEqual(t, body, `{"messages":[{"role":"user","content":"`+mgbSqrtQuestion+`"}],"model":"openai/gpt-oss-120b",`+
		`"tools":[{"type":"function","function":{"name":"square_root","description":"Calculates and return the square root of a number","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}}}],"tool_choice":"required"}`) {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "User wants result of sqrt(132413) using tool. Use function." {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := res.Meta
	r22Meta(t, m, "chatcmpl-b7959af6-d0c8-4124-a694-54ad64b7bdb7", "req_01kcc49fsqepn9wh8p4e8fpsm7", "openai/gpt-oss-120b", 1765638717,
		&llmrelayv1.Usage{InputTokens: 156, OutputTokens: 44, TotalTokens: 200, ReasoningTokens: 16}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if m.GetServiceTier() != "on_demand" || m.GetToolCallCount() != 1 {
		t.Errorf("meta %v", m)
	}
	r22Ext(t, m, map[string]any{"seed": "729272180", "system_fingerprint": "fp_0060895c89", "groq_region": "yul",
		"usage_details": map[string]any{"queue_time": 0.004163473, "prompt_time": 0.008009999, "completion_time": 0.107430569, "total_time": 0.115440568}})
	r20WantRateLimit(t, m.GetRateLimit(), mgbGroqDate, 500000, 499999, 250000, 247522, 172*time.Millisecond, 594*time.Millisecond)

	res2, body2 := mgbUnary(t, "real_maruel_groq_oss120_sqrt_2", r22Groq, mgbGroqDate, mgbSqrtFollowUp("openai/gpt-oss-120b", res.Message, callID))
	// The recorded second request's messages and tool choice; ours also
	// says "content": null on the assistant turn (OpenAI's own shape).
	const recorded = `[{"role":"user","content":"` + mgbSqrtQuestion + `"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"type":"function","id":"` + callID + `","function":{"name":"square_root","arguments":"{\"number\":132413}"}}]},` +
		`{"role":"tool","content":"363.89","tool_call_id":"` + callID + `"}]`
	if !mgbJSONEqual(t, body2["messages"], recorded) || body2["tool_choice"] != "none" {
		b, _ := json.Marshal(body2)
		t.Errorf("second request %s", b)
	}
	if got := res2.Message.GetParts(); len(got) != 1 || got[0].GetText() != "363.89" {
		t.Errorf("parts %v", got)
	}
	r22Meta(t, res2.Meta, "chatcmpl-17ced19f-9030-494c-b71c-ef1dd8b32e7b", "req_01kcc49fy4epn98vkapkapnqmz", "openai/gpt-oss-120b", 1765638717,
		&llmrelayv1.Usage{InputTokens: 185, OutputTokens: 7, TotalTokens: 192}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	// The reasoning of the first answer is not sent back (as maruel/genai
	// did not): said in a warning.
	if w := res2.Meta.GetWarnings(); len(w) != 1 || w[0] != "1 reasoning part(s) of earlier assistant turns not sent: Chat Completions has no field for them" {
		t.Errorf("warnings %v", w)
	}
	r20WantRateLimit(t, res2.Meta.GetRateLimit(), mgbGroqDate, 500000, 499998, 250000, 247879, 345*time.Millisecond, 509*time.Millisecond)
}

// TestRound22MgbGroqCompoundRefusals: groq/compound (Groq's agentic
// system, December 2025) refuses what it cannot take with 400
// invalid_request_error and no code: function tools ("`tool calling` is
// not supported with this model", param "tool calling") and, asked for
// the browser_search tool of gpt-oss, "code=400, message=tools[0].type
// must be one of [function, mcp], type=invalid_request_error" (Groq's
// message quoting its own inner error; kept whole). The type stands for
// the missing code. The first is a capability the model lacks (round 26:
// provider.CapabilityRefusal, Groq's words), which a model with function
// tools serves: never retried, a reason to fall back; the second stays an
// invalid request (a tool type the request can change).
func TestRound22MgbGroqCompoundRefusals(t *testing.T) {
	t.Parallel()
	e, body := mgbErr(t, "real_maruel_groq_compound_tools_err", r22Groq, mgbSqrtReq("groq/compound", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), false)
	if e.Kind != provider.KindCapability || e.HTTPStatus != 400 || e.Code != "invalid_request_error" || e.Param != "tool calling" ||
		e.Message != "`tool calling` is not supported with this model" || e.RetryAfter != 0 {
		t.Errorf("error %+v", e)
	}
	if body["tool_choice"] != "required" || body["model"] != "groq/compound" {
		t.Errorf("request %v", body)
	}
	e, _ = mgbErr(t, "real_maruel_groq_compound_browser_search_err", r22Groq, r22Ask("groq/compound", "Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation."), true)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_request_error" || e.Param != "" ||
		e.Message != "code=400, message=tools[0].type must be one of [function, mcp], type=invalid_request_error" {
		t.Errorf("error %+v", e)
	}
}

// TestRound22MgbGroqOSSStream: the same model and question streamed
// (December 2025): a role chunk with content "" whose x_groq has the
// request id and the seed, twenty reasoning deltas each with "channel":
// "analysis" ("We need to call the tool square_root with number 132413.
// Then output only the result."), the whole call
// fc_ff25387d-614a-4fbe-b606-b10051015236 in one chunk, then tool_calls
// on an empty delta carrying the usage twice, in x_groq.usage and at the
// top level (156 in, 49 out of which 21 reasoning: counted once), with
// Groq's timings; the rate limits (248498 tokens left, resets 172 ms and
// 360 ms) from the pinned Date. No bug.
func TestRound22MgbGroqOSSStream(t *testing.T) {
	t.Parallel()
	const date = "Sat, 13 Dec 2025 15:11:52 GMT"
	req := mgbSqrtReq("openai/gpt-oss-120b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	evs, f, body := mgbStream(t, "real_maruel_groq_oss120_sqrt_stream_1", r22Groq, date, req)
	if body["stream"] != true || body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "We need to call the tool square_root with number 132413. Then output only the result." {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "fc_ff25387d-614a-4fbe-b606-b10051015236" || c.GetArguments() != `{"number":132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := f.Meta
	r22Meta(t, m, "chatcmpl-5946d792-0ac9-4c77-8ad9-ac65032175ea", "req_01kcc49b1ce7mv82ma9b2vsgt7", "openai/gpt-oss-120b", 1765638712,
		&llmrelayv1.Usage{InputTokens: 156, OutputTokens: 49, TotalTokens: 205, ReasoningTokens: 21}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, m, map[string]any{"seed": "37188898", "system_fingerprint": "fp_c5da83ab22", "groq_region": "yul",
		"usage_details": map[string]any{"queue_time": 0.004084364, "prompt_time": 0.008842029, "completion_time": 0.113900236, "total_time": 0.122742265}})
	r20WantRateLimit(t, m.GetRateLimit(), date, 500000, 499999, 250000, 248498, 172*time.Millisecond, 360*time.Millisecond)
	var usages int
	for _, ev := range evs {
		if ev.Kind == provider.EventUsage {
			usages++
		}
	}
	if usages != 1 {
		t.Errorf("%d usage events", usages)
	}
}

// TestRound22MgbGroqCompoundBreakdown: groq/compound-mini (Groq's agentic
// system, December 2025) answering "Hello" with "reasoning": "": its id
// and x_groq.id are both "stub" (Groq's placeholders, kept as sent); the
// usage (451 in, 44 out) has no reasoning count, but usage_breakdown
// lists the two models it ran, llama-3.3-70b-versatile (296 in, 2 out)
// and openai/gpt-oss-120b (155 in, 42 out of which 32 reasoning).
// **Bug:** usage_breakdown was dropped unsaid; it is kept as sent in
// meta.extended["usage_breakdown"] (other models' {"models": null} is
// not). Rate limits 20000/19999 requests (reset 4.32 s), 200000/199987
// tokens (3 ms) from the pinned Date.
func TestRound22MgbGroqCompoundBreakdown(t *testing.T) {
	t.Parallel()
	const date = "Sat, 13 Dec 2025 15:36:29 GMT"
	res, _ := mgbUnary(t, "real_maruel_groq_compound_mini_text", r22Groq, date, r22Ask("groq/compound-mini", "Say hello. Use only one word."))
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Hello" {
		t.Errorf("parts %v", p)
	}
	m := res.Meta
	r22Meta(t, m, "stub", "stub", "groq/compound-mini", 1765640189,
		&llmrelayv1.Usage{InputTokens: 451, OutputTokens: 44, TotalTokens: 495}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if !mgbJSONEqual(t, m.GetExtended().AsMap()["usage_breakdown"], `{"models":[{"model":"llama-3.3-70b-versatile","usage":{"queue_time":0.008406079,"prompt_tokens":296,"prompt_time":0.014975865,"completion_tokens":2,"completion_time":0.014562401,"total_tokens":298,"total_time":0.029538266}},`+
		`{"model":"openai/gpt-oss-120b","usage":{"queue_time":0.003969105,"prompt_tokens":155,"prompt_time":0.008287855,"completion_tokens":42,"completion_time":0.104100281,"total_tokens":197,"total_time":0.112388136,"completion_tokens_details":{"reasoning_tokens":32}}}]}`) {
		t.Errorf("usage_breakdown %v", m.GetExtended().AsMap()["usage_breakdown"])
	}
	r22Ext(t, m, map[string]any{"groq_region": "yul", "service_tier": "on_demand"})
	r20WantRateLimit(t, m.GetRateLimit(), date, 20000, 19999, 200000, 199987, 4320*time.Millisecond, 3*time.Millisecond)
}
