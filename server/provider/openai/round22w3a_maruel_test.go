package openai

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"google.golang.org/protobuf/proto"
)

// Round 22 (w3a): maruel/genai's go-vcr recordings of OpenRouter
// (qwen/qwen3.5-122b-a10b served by Alibaba; testdata/README.md, "Round 22
// (w3a)"). Every expectation is read off the recording by hand. The
// cassettes keep no Date and no rate-limit headers; OpenRouter's
// X-Generation-Id repeats the body's id (the response id, not a request
// id). The unary bodies open with OpenRouter's keep-alive whitespace
// ("\n         \n" one or more times), kept as sent. Then scenarios of
// providers earlier rounds used that those rounds had not converted
// (DashScope's argument-less tool loop, Mistral's refusal of pending
// calls, Together's and Cerebras's streamed logprobs).

const (
	w3aQwen         = "qwen/qwen3.5-122b-a10b"
	w3aHostQuestion = "Use the get_hostname tool to get the machine's hostname and reply with only the hostname. Do not give an explanation."
	w3aOOOSystem    = "You are a terse voice assistant. Speak naturally. Follow the latest request. Never claim a task's state or reference without its tool result."
	w3aOOOAsk       = "Do you have task 7's reference yet? If not, just let me know you're still waiting. Don't give me the other tasks' references."
)

// w3aGetHostname is maruel/genai's argument-less tool, its schema as sent.
var w3aGetHostname = &llmrelayv1.Tool{Name: "get_hostname", Description: "Returns the machine's hostname",
	Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"additionalProperties":false,"type":"object"}`}

// w3aTaskStatus is maruel/genai's OutOfOrder tool.
var w3aTaskStatus = &llmrelayv1.Tool{Name: "task_status", Description: "Read a task's current status and reference; does not change anything.",
	Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"task_id":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["task_id"]}`}

// w3aToolReq asks question with tool offered, tool choice auto.
func w3aToolReq(question string, tool *llmrelayv1.Tool) *provider.Request {
	req := r22Ask(w3aQwen, question)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{tool}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	return req
}

// w3aResult is a tool turn giving content for the call id.
func w3aResult(id, content string) *llmrelayv1.Message {
	return msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: content}}})
}

// w3aCost is OpenRouter's usage cost as the adapter keeps it.
func w3aCost(total, completions, prompt float64) map[string]any {
	return map[string]any{"cost": total, "cost_details.upstream_inference_cost": total,
		"cost_details.upstream_inference_completions_cost": completions, "cost_details.upstream_inference_prompt_cost": prompt}
}

// w3aExt checks an OpenRouter answer's extended metadata: the native
// finish reason, Alibaba as upstream, the cost; no warnings.
func w3aExt(t *testing.T, m *llmrelayv1.ResponseMeta, native string, cost map[string]any) {
	t.Helper()
	r22Ext(t, m, map[string]any{"native_finish_reason": native, "upstream_provider": "Alibaba", "usage_details": cost})
	if len(m.GetExtended().AsMap()) != 3 {
		t.Errorf("extended %v", m.GetExtended().AsMap())
	}
}

// w3aMessages checks the request's messages against the recorded ones
// (JSON text).
func w3aMessages(t *testing.T, body map[string]any, recorded string) {
	t.Helper()
	if !mgbJSONEqual(t, body["messages"], recorded) {
		b, _ := json.Marshal(body["messages"])
		t.Errorf("messages %s\nrecorded %s", b, recorded)
	}
}

// TestRound22W3aOpenRouterNoArgs: an argument-less tool, tool choice auto
// (October 2026). The answer: content null, the reasoning in "reasoning"
// and as one reasoning.text block (format "unknown") in reasoning_details,
// the call call_d811b5843b124193a604034f get_hostname("{}"), finish
// tool_calls (native tool_calls); 304 in, 63 out of which 45 reasoning,
// zero cached; the cost and its upstream split. maruel/genai's second
// request (which OpenRouter answered) sent the call back by its id with
// "{}", no reasoning, then the result "genai-smoke" by the call's id: ours
// is the same but for "content": null and the reasoning_details block
// given back (OpenRouter's own way to continue a reasoning model, which
// it takes). The second answer: "genai-smoke", "reasoning": null, 339 in,
// 8 out, zero reasoning.
func TestRound22W3aOpenRouterNoArgs(t *testing.T) {
	t.Parallel()
	const callID = "call_d811b5843b124193a604034f"
	const reasoning = "The user wants me to use the get_hostname tool to get the machine's hostname and reply with only the hostname without any explanation. This is straightforward - I need to call the get_hostname function which doesn't require any parameters."
	req := w3aToolReq(w3aHostQuestion, w3aGetHostname)
	res, body := mgbUnary(t, "real_maruel_openrouter_qwen35_noargs_1", r22OpenRouter, "", req)
	if !mgbJSONEqual(t, body, `{"messages":[{"role":"user","content":"`+w3aHostQuestion+`"}],"model":"qwen/qwen3.5-122b-a10b",`+
		`"tools":[{"type":"function","function":{"name":"get_hostname","description":"Returns the machine's hostname","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"additionalProperties":false,"type":"object"}}}],"tool_choice":"auto"}`) {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != reasoning || parts[0].GetReasoning().GetFormat() != "unknown" {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != callID || c.GetName() != "get_hostname" || c.GetArguments() != "{}" || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "gen-1791036628-OTZGiSQGTEkE84cLcBSh", "", w3aQwen, 1791036628,
		&llmrelayv1.Usage{InputTokens: 304, OutputTokens: 63, TotalTokens: 367, ReasoningTokens: 45}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	w3aExt(t, res.Meta, "tool_calls", w3aCost(0.00021008, 0.00013104, 0.00007904))
	if res.Meta.GetToolCallCount() != 1 {
		t.Errorf("tool calls %d", res.Meta.GetToolCallCount())
	}

	req2 := w3aToolReq(w3aHostQuestion, w3aGetHostname)
	req2.Messages = append(req2.Messages, res.Message, w3aResult(callID, "genai-smoke"))
	res2, body2 := mgbUnary(t, "real_maruel_openrouter_qwen35_noargs_2", r22OpenRouter, "", req2)
	w3aMessages(t, body2, `[{"role":"user","content":"`+w3aHostQuestion+`"},`+
		`{"role":"assistant","content":null,"reasoning_details":[{"type":"reasoning.text","text":"`+reasoning+`","format":"unknown","index":0}],`+
		`"tool_calls":[{"type":"function","id":"`+callID+`","function":{"name":"get_hostname","arguments":"{}"}}]},`+
		`{"role":"tool","content":"genai-smoke","tool_call_id":"`+callID+`"}]`)
	if body2["tool_choice"] != "auto" || len(body2["tools"].([]any)) != 1 {
		t.Errorf("second request %v", body2)
	}
	if p := res2.Message.GetParts(); len(p) != 1 || p[0].GetText() != "genai-smoke" {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, res2.Meta, "gen-1791036629-h8U6JlZmGxojgiD26IdU", "", w3aQwen, 1791036629,
		&llmrelayv1.Usage{InputTokens: 339, OutputTokens: 8, TotalTokens: 347}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	w3aExt(t, res2.Meta, "stop", w3aCost(0.00010478, 0.00001664, 0.00008814))
}

// TestRound22W3aOpenRouterNoArgsStream: the same streamed (stream_options
// include_usage, as ours sends): ten reasoning deltas each repeated in a
// reasoning_details block, "content": "" beside them; the call
// call_aa378121deca4fed99d284b1 named with arguments "", then fragments
// "", "{}", "" without id; the finish tool_calls said on two chunks (the
// second carrying the usage: 304 in, 51 out of which 33 reasoning, and the
// cost), then [DONE]. One call with "{}", the reasoning joined, the
// finish once.
func TestRound22W3aOpenRouterNoArgsStream(t *testing.T) {
	t.Parallel()
	_, f, body := mgbStream(t, "real_maruel_openrouter_qwen35_noargs_stream_1", r22OpenRouter, "", w3aToolReq(w3aHostQuestion, w3aGetHostname))
	if body["stream"] != true || !mgbJSONEqual(t, body["stream_options"], `{"include_usage":true}`) || body["tool_choice"] != "auto" {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "The user wants me to use the get_hostname tool to get the machine's hostname and reply with only the hostname, without any explanation. Let me call this tool." {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_aa378121deca4fed99d284b1" || c.GetName() != "get_hostname" || c.GetArguments() != "{}" || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, f.Meta, "gen-1791036628-8DgxeUWtpZSuZJKf2kkU", "", w3aQwen, 1791036628,
		&llmrelayv1.Usage{InputTokens: 304, OutputTokens: 51, TotalTokens: 355, ReasoningTokens: 33}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	w3aExt(t, f.Meta, "tool_calls", w3aCost(0.00018512, 0.00010608, 0.00007904))
}

// TestRound22W3aOpenRouterLogprobs: logprobs with 2 top candidates asked
// (May 2026) and not given: "logprobs": null on the choice. The answer
// "Hello" after a reasoning ending "Hello.cw" (as sent), the model
// resolved to qwen/qwen3.5-122b-a10b-20260224, 18 in, 158 out of which
// 153 reasoning. No logprobs in the meta, nothing invented; a warning
// says they were asked for and not given (round 23: they went unsaid).
func TestRound22W3aOpenRouterLogprobs(t *testing.T) {
	t.Parallel()
	req := r22Ask(w3aQwen, "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	res, body := mgbUnary(t, "real_maruel_openrouter_qwen35_logprobs", r22OpenRouter, "", req)
	if !mgbJSONEqual(t, body, `{"logprobs":true,"top_logprobs":2,"messages":[{"role":"user","content":"Say hello. Use only one word."}],"model":"qwen/qwen3.5-122b-a10b"}`) {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[1].GetText() != "Hello" || !strings.HasPrefix(parts[0].GetReasoning().GetText(), "Thinking Process:\n\n1.  **Analyze the Request:**") || !strings.HasSuffix(parts[0].GetReasoning().GetText(), "**Output Generation:** Hello.cw") {
		t.Fatalf("parts %v", parts)
	}
	r22Meta(t, res.Meta, "gen-1778452702-Ba6u4HbXfy719lc95B0G", "", "qwen/qwen3.5-122b-a10b-20260224", 1778452702,
		&llmrelayv1.Usage{InputTokens: 18, OutputTokens: 158, TotalTokens: 176, ReasoningTokens: 153}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != warnNoLogprobs {
		t.Errorf("warnings %v, want the one that logprobs were not given", w)
	}
	res.Meta.Warnings = nil
	w3aExt(t, res.Meta, "stop", w3aCost(0.00033332, 0.00032864, 0.00000468))
}

// w3aOOOReq is maruel/genai's OutOfOrder conversation: the system prompt,
// two user turns, then msgs.
func w3aOOOReq(msgs ...*llmrelayv1.Message) *provider.Request {
	req := w3aToolReq("Check the status and reference of tasks 3, 7 and 11.", w3aTaskStatus)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(w3aOOOSystem))}, req.Messages...)
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_USER, text("Start the checks together if possible.")))
	req.Messages = append(req.Messages, msgs...)
	return req
}

// TestRound22W3aOpenRouterOutOfOrder: maruel/genai's OutOfOrder scenario,
// three cassettes (October 2026). First three parallel calls
// task_status(3, 7, 11) ("{\"task_id\": 3}", a space after the colon,
// kept), each with its call_ id. Then the user speaks again while the
// calls are pending: the recorded second request has the assistant's
// three calls with no results after them, then two user turns, which
// OpenRouter took (the model says it is still waiting). Then the results
// come, out of order (11, 7, 3) and after the assistant's text turn: the
// recorded third request has them in that order, then the user's
// question again; the answer names "violet". Ours keeps every turn where
// it is, as recorded (no result is moved, none invented for the pending
// calls), with "content": null on the call turn and each turn's
// reasoning_details given back.
func TestRound22W3aOpenRouterOutOfOrder(t *testing.T) {
	t.Parallel()
	const (
		id3, id7, id11 = "call_af0e84b67abd4aeb850e51cf", "call_e814e9511ab14b09be50632d", "call_bbcca66809ac4b7b91d729bc"
		reasoning1     = "The user wants me to check the status and reference of tasks 3, 7, and 11. They want me to start the checks together if possible. I can use the task_status function for each task. Since they want them started together, I should make all three function calls at once."
		waiting        = "I'm still waiting for the results from all three task checks. Once they come back, I'll give you task 7's reference right away and let the others complete in the background as requested."
		reasoning2     = "The user is saying they only need task 7's reference specifically. The other tasks (3 and 11) can finish in the background, but they don't want me to share those references with them.\n\nI've already made the tool calls for all three tasks. Now I need to wait for the results to come back before I can tell them about task 7's reference status.\n\nLet me check if I have the results yet. Looking at my previous function calls, I made them but haven't received the responses yet. I should let the user know I'm still waiting for the results."
		only7          = "Actually, I only need task 7's reference. The other checks can finish in the background."
	)
	head := `{"role":"system","content":"` + w3aOOOSystem + `"},{"role":"user","content":"Check the status and reference of tasks 3, 7 and 11."},{"role":"user","content":"Start the checks together if possible."}`
	res1, body1 := mgbUnary(t, "real_maruel_openrouter_qwen35_out_of_order_1", r22OpenRouter, "", w3aOOOReq())
	w3aMessages(t, body1, `[`+head+`]`)
	parts := res1.Message.GetParts()
	if len(parts) != 4 || parts[0].GetReasoning().GetText() != reasoning1 {
		t.Fatalf("parts %v", parts)
	}
	for i, want := range []struct{ id, args string }{{id3, `{"task_id": 3}`}, {id7, `{"task_id": 7}`}, {id11, `{"task_id": 11}`}} {
		if c := parts[i+1].GetToolCall(); c.GetCallId() != want.id || c.GetName() != "task_status" || c.GetArguments() != want.args || !c.GetArgumentsValid() {
			t.Errorf("call %d %v", i, c)
		}
	}
	r22Meta(t, res1.Meta, "gen-1791225995-P1w4848GinQs4djybKvx", "", w3aQwen, 1791225995,
		&llmrelayv1.Usage{InputTokens: 359, OutputTokens: 151, TotalTokens: 510, ReasoningTokens: 62}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	w3aExt(t, res1.Meta, "tool_calls", w3aCost(0.00040742, 0.00031408, 0.00009334))

	turn2 := []*llmrelayv1.Message{res1.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(only7)), msgOf(llmrelayv1.Role_ROLE_USER, text(w3aOOOAsk))}
	calls := `{"role":"assistant","content":null,"reasoning_details":[{"type":"reasoning.text","text":"` + reasoning1 + `","format":"unknown","index":0}],"tool_calls":[` +
		`{"type":"function","id":"` + id3 + `","function":{"name":"task_status","arguments":"{\"task_id\": 3}"}},` +
		`{"type":"function","id":"` + id7 + `","function":{"name":"task_status","arguments":"{\"task_id\": 7}"}},` +
		`{"type":"function","id":"` + id11 + `","function":{"name":"task_status","arguments":"{\"task_id\": 11}"}}]}`
	asks := `{"role":"user","content":"` + only7 + `"},{"role":"user","content":"` + jsonEscape(w3aOOOAsk) + `"}`
	res2, body2 := mgbUnary(t, "real_maruel_openrouter_qwen35_out_of_order_2", r22OpenRouter, "", w3aOOOReq(turn2...))
	w3aMessages(t, body2, `[`+head+`,`+calls+`,`+asks+`]`)
	if p := res2.Message.GetParts(); len(p) != 2 || p[0].GetReasoning().GetText() != reasoning2 || p[1].GetText() != waiting {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, res2.Meta, "gen-1791225997-fUcxfGKMAcYlrcwwtpn6", "", w3aQwen, 1791225997,
		&llmrelayv1.Usage{InputTokens: 506, OutputTokens: 168, TotalTokens: 674, ReasoningTokens: 123}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	w3aExt(t, res2.Meta, "stop", w3aCost(0.000481, 0.00034944, 0.00013156))

	turn3 := append(turn2, res2.Message,
		w3aResult(id11, `{"id":11,"status":"paused","reference":"cyan"}`),
		w3aResult(id7, `{"id":7,"status":"waiting","reference":"violet"}`),
		w3aResult(id3, `{"id":3,"status":"running","reference":"amber"}`),
		msgOf(llmrelayv1.Role_ROLE_USER, text(w3aOOOAsk)))
	res3, body3 := mgbUnary(t, "real_maruel_openrouter_qwen35_out_of_order_3", r22OpenRouter, "", w3aOOOReq(turn3...))
	w3aMessages(t, body3, `[`+head+`,`+calls+`,`+asks+`,`+
		`{"role":"assistant","content":"`+jsonEscape(waiting)+`","reasoning_details":[{"type":"reasoning.text","text":`+mustJSONText(reasoning2)+`,"format":"unknown","index":0}]},`+
		`{"role":"tool","content":"{\"id\":11,\"status\":\"paused\",\"reference\":\"cyan\"}","tool_call_id":"`+id11+`"},`+
		`{"role":"tool","content":"{\"id\":7,\"status\":\"waiting\",\"reference\":\"violet\"}","tool_call_id":"`+id7+`"},`+
		`{"role":"tool","content":"{\"id\":3,\"status\":\"running\",\"reference\":\"amber\"}","tool_call_id":"`+id3+`"},`+
		`{"role":"user","content":"`+jsonEscape(w3aOOOAsk)+`"}]`)
	if p := res3.Message.GetParts(); len(p) != 2 || p[1].GetText() != `Yes, I have task 7's reference. It's "violet".` || len(p[0].GetReasoning().GetText()) == 0 {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, res3.Meta, "gen-1791225998-ditREDbaXuYKIlAiyiI3", "", w3aQwen, 1791225998,
		&llmrelayv1.Usage{InputTokens: 640, OutputTokens: 138, TotalTokens: 778, ReasoningTokens: 117}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	w3aExt(t, res3.Meta, "stop", w3aCost(0.00045344, 0.00028704, 0.0001664))
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string) string {
	b := mustJSONText(s)
	return b[1 : len(b)-1]
}

// mustJSONText is s as a JSON string.
func mustJSONText(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestRound22W3aOpenRouterUpstreamMsgError: a call required (May 2026),
// routed to AtlasCloud, which refused it; OpenRouter's 400 "Provider
// returned error" with AtlasCloud's body in metadata.raw:
// {"code":400,"msg":"invalid request, invalid parameter","request_id":
// "8af00fbe-…"}, provider_name AtlasCloud, and the account's user_id
// beside the error (no request-id header). Bug: a "msg" body was not read
// as an error (only "error" or "message" were), so the message stayed
// "Provider returned error" and the upstream's name was lost too; now the
// upstream's message, AtlasCloud as upstream provider and its request id
// as upstream_request_id (the error's request id stays the router's:
// none here). The code stays OpenRouter's "400" (the upstream's is the
// same status).
func TestRound22W3aOpenRouterUpstreamMsgError(t *testing.T) {
	t.Parallel()
	req := mgbSqrtReq(w3aQwen, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	e, body := mgbErr(t, "real_maruel_openrouter_qwen35_sqrt_required_err", r22OpenRouter, req, false)
	if body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Message != "invalid request, invalid parameter" || e.Code != "400" ||
		e.Param != "" || e.RequestID != "" || e.RetryAfter != 0 {
		t.Errorf("error %+v code=%q param=%q req=%q", e, e.Code, e.Param, e.RequestID)
	}
	if len(e.Extended) != 2 || e.Extended[extUpstreamProvider] != "AtlasCloud" || e.Extended[extUpstreamRequestID] != "8af00fbe-b672-48e4-a4e1-290b96ea7918" {
		t.Errorf("extended %v", e.Extended)
	}
}

// TestRound22W3aOpenRouterBadModel: a model id OpenRouter does not route
// (May 2026): 400 {"error": {"message": "bad/model is not a valid model
// ID", "code": 400}, "user_id": …}, no request-id header. Bug: an invalid
// request; the unknown model's not-found kind now, as DeepSeek's,
// Mistral's and Perplexity's 400s for a bad model are (the contract's
// not-found kind is the unknown model's, whatever the status).
func TestRound22W3aOpenRouterBadModel(t *testing.T) {
	t.Parallel()
	e, body := mgbErr(t, "real_maruel_openrouter_bad_model_err", r22OpenRouter, r22Ask("bad/model", "Tell a short joke."), false)
	if body["model"] != "bad/model" {
		t.Errorf("request %v", body)
	}
	if e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Message != "bad/model is not a valid model ID" || e.Code != "400" ||
		e.Param != "" || e.RequestID != "" || len(e.Extended) != 0 {
		t.Errorf("error %+v code=%q param=%q req=%q ext=%v", e, e.Code, e.Param, e.RequestID, e.Extended)
	}
}

// TestRound22W3aOpenRouterBadModelStream: the same refusal to a stream
// (400 before any event): the same not-found error, no stream opened.
func TestRound22W3aOpenRouterBadModelStream(t *testing.T) {
	t.Parallel()
	e, body := mgbErr(t, "real_maruel_openrouter_bad_model_stream_err", r22OpenRouter, r22Ask("bad/model", "Tell a short joke."), true)
	if body["model"] != "bad/model" || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	if e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Message != "bad/model is not a valid model ID" || e.Code != "400" || len(e.Extended) != 0 {
		t.Errorf("error %+v code=%q ext=%v", e, e.Code, e.Extended)
	}
}

// TestRound22W3aDashScopeNoArgs: qwen3-vl-flash on dashscope-intl
// (October 2026), thinking off (maruel/genai's "enable_thinking": false,
// which reasoning effort none sends, and no reasoning_effort, as
// maruel/genai sent: DashScope's reasoning_effort has no "none"), the argument-less tool,
// tool choice auto. The answer: content "" and reasoning_content "" beside the call
// call_52258397ace64c4c981bcfef get_hostname("{}"), finish tool_calls;
// 289 in, 12 out (text_tokens 12, kept in usage_details), zero cached; no
// request id (DashScope's timing headers only). The recorded second
// request sends the call back by its id, no content, no
// reasoning_content, then "genai-smoke" by the call's id: ours is the
// same but for "content": null. The answer: "genai-smoke", 319 in, 5 out.
func TestRound22W3aDashScopeNoArgs(t *testing.T) {
	t.Parallel()
	const callID = "call_52258397ace64c4c981bcfef"
	ask := func() *provider.Request {
		req := w3aToolReq(w3aHostQuestion, w3aGetHostname)
		req.Model = "qwen3-vl-flash"
		req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
		return req
	}
	tools := `[{"type":"function","function":{"name":"get_hostname","description":"Returns the machine's hostname","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"additionalProperties":false,"type":"object"}}}]`
	res, body := mgbUnary(t, "real_maruel_dashscope_qwen3vl_flash_noargs_1", r22mgaDashScopeIntl, "", ask())
	if !mgbJSONEqual(t, body, `{"model":"qwen3-vl-flash","messages":[{"role":"user","content":"`+w3aHostQuestion+`"}],"tool_choice":"auto","tools":`+tools+`,"enable_thinking":false}`) {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != callID || c.GetName() != "get_hostname" || c.GetArguments() != "{}" || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "chatcmpl-bf4196cf-f5e1-9882-8177-2926593a58e8", "", "qwen3-vl-flash", 1791036635,
		&llmrelayv1.Usage{InputTokens: 289, OutputTokens: 12, TotalTokens: 301}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, res.Meta, map[string]any{"usage_details": map[string]any{"completion_tokens_details.text_tokens": 12.0}})
	if len(res.Meta.GetExtended().AsMap()) != 1 || res.Meta.GetToolCallCount() != 1 {
		t.Errorf("meta %v", res.Meta)
	}

	req2 := ask()
	req2.Messages = append(req2.Messages, res.Message, w3aResult(callID, "genai-smoke"))
	res2, body2 := mgbUnary(t, "real_maruel_dashscope_qwen3vl_flash_noargs_2", r22mgaDashScopeIntl, "", req2)
	if !mgbJSONEqual(t, body2, `{"model":"qwen3-vl-flash","messages":[{"role":"user","content":"`+w3aHostQuestion+`"},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"`+callID+`","type":"function","function":{"name":"get_hostname","arguments":"{}"}}]},`+
		`{"role":"tool","content":"genai-smoke","tool_call_id":"`+callID+`"}],"tool_choice":"auto","tools":`+tools+`,"enable_thinking":false}`) {
		b, _ := json.Marshal(body2)
		t.Errorf("second request %s", b)
	}
	if p := res2.Message.GetParts(); len(p) != 1 || p[0].GetText() != "genai-smoke" {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, res2.Meta, "chatcmpl-86bf9880-d703-9279-9e1a-5ba12add5b7d", "", "qwen3-vl-flash", 1791036636,
		&llmrelayv1.Usage{InputTokens: 319, OutputTokens: 5, TotalTokens: 324}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res2.Meta, map[string]any{"usage_details": map[string]any{"completion_tokens_details.text_tokens": 5.0}})
}

// TestRound22W3aMistralPendingCalls: maruel/genai's OutOfOrder second turn
// on mistral-small-latest (October 2026): the three calls still pending
// (no results) when the user speaks again. Mistral refuses what OpenRouter
// took (TestRound22W3aOpenRouterOutOfOrder): 400 {"object": "error",
// "message": "Not the same number of function calls and responses",
// "type": "invalid_request_message_order", "code": "3230",
// "raw_status_code": 400}, Mistral-Correlation-Id the request id. Ours
// sends the same conversation (the calls by their 9-character ids, no
// results invented; Mistral's "strict" on the tool and its text-part
// arrays aside) and reads the refusal as an invalid request with
// Mistral's code. No bug.
func TestRound22W3aMistralPendingCalls(t *testing.T) {
	t.Parallel()
	call := func(id, args string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: "task_status", Arguments: args, ArgumentsValid: true}}}
	}
	req := w3aOOOReq(msgOf(llmrelayv1.Role_ROLE_ASSISTANT, call("V2ASsx368", `{"task_id": 3}`), call("eamf0RjXd", `{"task_id": 7}`), call("yMlRfmw7Z", `{"task_id": 11}`)),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Actually, I only need task 7's reference. The other checks can finish in the background.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text(w3aOOOAsk)))
	req.Model = "mistral-small-latest"
	e, body := mgbErr(t, "real_maruel_mistral_small_out_of_order_2_err", "https://api.mistral.ai/v1", req, false)
	w3aMessages(t, body, `[{"role":"system","content":"`+w3aOOOSystem+`"},{"role":"user","content":"Check the status and reference of tasks 3, 7 and 11."},{"role":"user","content":"Start the checks together if possible."},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"V2ASsx368","type":"function","function":{"name":"task_status","arguments":"{\"task_id\": 3}"}},`+
		`{"id":"eamf0RjXd","type":"function","function":{"name":"task_status","arguments":"{\"task_id\": 7}"}},{"id":"yMlRfmw7Z","type":"function","function":{"name":"task_status","arguments":"{\"task_id\": 11}"}}]},`+
		`{"role":"user","content":"Actually, I only need task 7's reference. The other checks can finish in the background."},{"role":"user","content":"`+jsonEscape(w3aOOOAsk)+`"}]`)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Message != "Not the same number of function calls and responses" || e.Code != "3230" ||
		e.Param != "" || e.RequestID != "01a10d40-2fdc-7191-8145-9cad25f11c5e" || e.RetryAfter != 0 || len(e.Extended) != 0 {
		t.Errorf("error %+v code=%q param=%q req=%q ext=%v", e, e.Code, e.Param, e.RequestID, e.Extended)
	}
}

// TestRound22W3aTogetherLogprobsStream: the Together logprobs question of
// TestRound22MgbTogetherLogprobs streamed (December 2025): "Hello", "."
// with their logprobs in the completions API's shape per chunk
// ({"tokens": ["Hello"], "token_logprobs": [-0.0000182…], "top_logprobs":
// [[{"token": "Hello", …}, {"token": "Hi", "logprob": -11.07…}]]}, then "."
// with "<|im_end|>" as runner-up), null on the first and finishing
// chunks; the usage on a chunk without choices (16 in, 3 out); Together's
// bare rate-limit triple (remaining 18 above limit 10, as sent; reset 0:
// the Date, pinned to x-api-call-start's second). Bug: the logprobs were
// dropped with a warning (only the chat shape was read); now joined key by
// key into one object of the shape they came in.
func TestRound22W3aTogetherLogprobsStream(t *testing.T) {
	t.Parallel()
	const date = "Sun, 14 Dec 2025 13:26:54 GMT"
	req := r22Ask("Qwen/Qwen3-235B-A22B-Instruct-2507-tput", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	_, f, body := mgbStream(t, "real_maruel_together_qwen_logprobs_stream", mgbTogether, date, req)
	if body["logprobs"] != true || body["top_logprobs"] != 2.0 || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	if p := f.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Hello." {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, f.Meta, "oPBXTwp-4YNCb4-9ade0920baaca275", "", "Qwen/Qwen3-235B-A22B-Instruct-2507-tput", 1765718814,
		&llmrelayv1.Usage{InputTokens: 16, OutputTokens: 3, TotalTokens: 19}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, f.Meta, map[string]any{})
	lp, err := json.Marshal(f.Meta.GetExtended().AsMap()["logprobs"])
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(lp, &got); err != nil || !mgbJSONEqual(t, got, `{"tokens":["Hello","."],"token_logprobs":[-0.000018239186829305254,-0.1009206622838974],`+
		`"top_logprobs":[[{"token":"Hello","logprob":-0.000018239186829305254},{"token":"Hi","logprob":-11.07144832611084}],[{"token":".","logprob":-0.1009206622838974},{"token":"<|im_end|>","logprob":-2.422347068786621}]]}`) {
		t.Errorf("logprobs %s", lp)
	}
	if rl := f.Meta.GetRateLimit(); rl.RequestsLimit != nil || rl.GetRequestsRemaining() != 18 || rl.GetTokensLimit() != 3000 || rl.GetTokensRemaining() != 3000 {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound22W3aLogprobShapes: a stream's logprobs keep the shape of its
// first chunk with keys; a chunk of the other shape, or mixing both, is
// dropped with one warning, and what was joined stays.
func TestRound22W3aLogprobShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		chunks []string
		want   string
		warned bool
	}{
		{"completion", []string{`{"tokens":["a"],"token_logprobs":[-1]}`, `{}`, `{"tokens":["b"],"token_logprobs":[-2],"text_offset":[1]}`},
			`{"tokens":["a","b"],"token_logprobs":[-1,-2],"text_offset":[1]}`, false},
		{"chat then completion", []string{`{"content":[{"token":"a","logprob":-1}]}`, `{"tokens":["b"]}`}, `{"content":[{"token":"a","logprob":-1}]}`, true},
		{"completion then chat", []string{`{"tokens":["a"]}`, `{"content":[]}`}, `{"tokens":["a"]}`, true},
		{"both", []string{`{"tokens":["a"],"content":[]}`, `{"content":null}`}, `{"content":null}`, true},
	} {
		s := &chatStream{}
		for _, c := range tc.chunks {
			s.rareOf().logprobs.merge(json.RawMessage(c), &llmrelayv1.ResponseMeta{})
		}
		if s.rare.logprobs.warned != tc.warned {
			t.Errorf("%s: warned %v", tc.name, s.rare.logprobs.warned)
		}
		s.flushLogprobs()
		var got any
		if len(s.queue) > 0 {
			got = s.queue[len(s.queue)-1].Meta.GetExtended().AsMap()["logprobs"]
		}
		if !mgbJSONEqual(t, got, tc.want) {
			t.Errorf("%s: logprobs %v", tc.name, got)
		}
	}
}

// TestRound22W3aCerebrasReasoningLogprobsStream: the Cerebras logprobs
// question of TestRound22MgbCerebrasReasoningLogprobs streamed (October
// 2026): five reasoning deltas, each with the logprobs of its own tokens
// in Cerebras's reasoning_logprobs beside the delta (1, 16, 10, 4 and 8
// entries: 39, the usage's reasoning tokens, whose tokens joined are the
// reasoning exactly), the last chunk with "Hello" and its logprobs too;
// the finish and the usage (75 in, 50 out of which 39 reasoning) and
// time_info on an empty delta. Bug: reasoning_logprobs in a stream was
// dropped without a word (only a unary body's was read); now joined as
// logprobs are and reported in meta.extended["reasoning_logprobs"].
func TestRound22W3aCerebrasReasoningLogprobsStream(t *testing.T) {
	t.Parallel()
	const reasoning = `The user: "Say hello. Use only one word." So we need to output a single word, presumably "Hello". Must comply with instruction: only one word. So answer: Hello.`
	req := r22Ask("gpt-oss-120b", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	_, f, body := mgbStream(t, "real_maruel_cerebras_oss_logprobs_stream", mgbCerebras, "", req)
	if body["logprobs"] != true || body["top_logprobs"] != 2.0 || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != reasoning || parts[1].GetText() != "Hello" {
		t.Fatalf("parts %v", parts)
	}
	m := f.Meta
	r21cMeta(t, m, "chatcmpl-e70c796c-ea4e-4564-b4ea-a584fe1f7abd", "", "gpt-oss-120b", 1790984626,
		&llmrelayv1.Usage{InputTokens: 75, OutputTokens: 50, TotalTokens: 125, ReasoningTokens: 39})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	ext := m.GetExtended().AsMap()
	rl, _ := ext["reasoning_logprobs"].(map[string]any)
	toks, _ := rl["content"].([]any)
	var joined strings.Builder
	for _, tk := range toks {
		tok, _ := tk.(map[string]any)
		s, _ := tok["token"].(string)
		joined.WriteString(s)
	}
	if len(rl) != 1 || len(toks) != 39 || joined.String() != reasoning {
		t.Fatalf("reasoning_logprobs: %d tokens %q", len(toks), joined.String())
	}
	if !mgbJSONEqual(t, toks[0], `{"token":"The","logprob":-1.0961730480194092,"bytes":[84,104,101],"top_logprobs":[{"token":"User","logprob":-0.5961730480194092,"bytes":[85,115,101,114]},{"token":"The","logprob":-1.0961730480194092,"bytes":[84,104,101]}]}`) ||
		!mgbJSONEqual(t, toks[38], `{"token":".","logprob":-0.014583188109099865,"bytes":[46],"top_logprobs":[{"token":".","logprob":-0.014583188109099865,"bytes":[46]},{"token":".\n\n","logprob":-4.889583110809326,"bytes":[46,10,10]}]}`) {
		t.Errorf("first and last reasoning tokens %v %v", toks[0], toks[38])
	}
	if !mgbJSONEqual(t, ext["logprobs"], `{"content":[{"token":"Hello","logprob":-7.152555099310121e-7,"bytes":[72,101,108,108,111],"top_logprobs":[{"token":"Hello","logprob":-7.152555099310121e-7,"bytes":[72,101,108,108,111]},{"token":" Hello","logprob":-14.250000953674316,"bytes":[32,72,101,108,108,111]}]}]}`) {
		t.Errorf("logprobs %v", ext["logprobs"])
	}
	delete(ext, "logprobs")
	delete(ext, "reasoning_logprobs")
	// Every window (RateLimit.windows), the typed fields' minute ones too.
	checkWindows(t, "cerebras", m.GetRateLimit(), time.Time{},
		"requests x-ratelimit-requests-minute 5/4 1m0s -",
		"requests x-ratelimit-requests-hour 150/144 1h0m0s -",
		"requests x-ratelimit-requests-day 2400/2389 24h0m0s -",
		"tokens x-ratelimit-tokens-minute 30000/13609 1m0s -",
		"tokens x-ratelimit-tokens-hour 1000000/2983609 1h0m0s -",
		"tokens x-ratelimit-tokens-day 1000000/967872 24h0m0s -")
	if !mgbJSONEqual(t, ext, `{"system_fingerprint":"fp_b546658c8e93d2e57ef2","time_info":{"created":1790984626.1897957,"queue_time":0.003164047,"prompt_time":0.002227818,"completion_time":0.021492564,"total_time":0.02838921546936035}}`) ||
		len(m.GetWarnings()) != 0 {
		t.Errorf("extended %v, warnings %v", ext, m.GetWarnings())
	}
}
