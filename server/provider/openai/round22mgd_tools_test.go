package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// The requests maruel/genai sent in the cassettes (their request.body),
// which the live API answered.
const (
	mgdSqrtReq1       = `{"model":"gpt-5-mini","background":false,"parallel_tool_calls":true,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"tool_choice":"required","tools":[{"type":"function","name":"square_root","description":"Calculates and return the square root of a number","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."}]}]}`
	mgdSqrtReq2       = `{"model":"gpt-5-mini","background":false,"parallel_tool_calls":true,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"tool_choice":"none","tools":[{"type":"function","name":"square_root","description":"Calculates and return the square root of a number","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."}]},{"type":"function_call","arguments":"{\"number\":132413}","name":"square_root","call_id":"call_r6yPeDtWh9P8ytI99lLRiqSP"},{"type":"function_call_output","call_id":"call_r6yPeDtWh9P8ytI99lLRiqSP","output":"363.89"}]}`
	mgdSqrtStreamReq2 = `{"model":"gpt-5-mini","background":false,"parallel_tool_calls":true,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"tool_choice":"none","tools":[{"type":"function","name":"square_root","description":"Calculates and return the square root of a number","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."}]},{"type":"function_call","arguments":"{\"number\":132413}","name":"square_root","call_id":"call_DkwSBrdtTyK9d8DNysPnH4Bb"},{"type":"function_call_output","call_id":"call_DkwSBrdtTyK9d8DNysPnH4Bb","output":"363.89"}],"stream":true}`
)

// mgdSameAsRecorded checks that the request the adapter sent has the
// recorded request's value for each key, and returns the recorded request.
// The keys the two differ in are the test's to check.
func mgdSameAsRecorded(t *testing.T, sent map[string]any, recorded string, keys ...string) map[string]any {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal([]byte(recorded), &rec); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !reflect.DeepEqual(sent[k], rec[k]) {
			t.Errorf("%s: sent %v, recorded %v", k, sent[k], rec[k])
		}
	}
	return rec
}

// mgdToolsAsRecorded checks the tools the adapter sent against maruel/genai's:
// the same functions, without the $schema key it adds (the API drops it:
// the tools echoed in its answer have none).
func mgdToolsAsRecorded(t *testing.T, sent, rec map[string]any) {
	t.Helper()
	tools, _ := rec["tools"].([]any)
	for _, tool := range tools {
		fn, _ := tool.(map[string]any)
		params, _ := fn["parameters"].(map[string]any)
		delete(params, "$schema")
	}
	if !reflect.DeepEqual(sent["tools"], rec["tools"]) {
		t.Errorf("tools: sent %v, recorded %v", sent["tools"], rec["tools"])
	}
}

// mgdMeta checks the ids, model, creation time and usage of an answer.
func mgdMeta(t *testing.T, m *llmrelayv1.ResponseMeta, respID, reqID, model string, created int64, usage *llmrelayv1.Usage, finish llmrelayv1.FinishReason, raw, tier string) {
	t.Helper()
	if m.GetResponseId() != respID || m.GetProviderRequestId() != reqID || m.GetResolvedModel() != model ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(created, 0)) || m.GetFinishReason() != finish || m.GetProviderFinishReason() != raw ||
		m.GetServiceTier() != tier {
		t.Errorf("meta %v", m)
	}
	if !proto.Equal(m.GetUsage(), usage) {
		t.Errorf("usage %v, want %v", m.GetUsage(), usage)
	}
}

// TestMgdSquareRootRoundTrip: gpt-5-mini (gpt-5-mini-2025-08-07), effort
// low with summary "auto", service tier flex, store false, a call
// required. The answer: a reasoning item rs_68b4f294… with one
// summary_text ("**Calculating square root**\n\nI need to call …") and no
// encrypted content (maruel/genai does not ask for it), then the
// function_call fc_68b4f295… square_root({"number":132413}) with call_id
// call_r6yPeDtWh9P8ytI99lLRiqSP; 73 in, 21 out, 0 reasoning, 94 total;
// the six x-ratelimit-* headers (500 requests, 499 left, reset 120 ms;
// 200000 tokens, 199317 left, reset 204 ms), openai-processing-ms 2719.
//
// maruel/genai's second request (its second cassette, which the API
// answered) sends back the user turn, the call without its item id or
// status and without the reasoning item (a reasoning item without
// encrypted content cannot be resolved when store is false), then the
// function_call_output "363.89", tool_choice none. Ours has the same
// input: the reasoning part, which carries no encrypted content, is left
// out with a warning. It also asks for reasoning.encrypted_content
// (maruel/genai does not). The answer to it: an empty reasoning item,
// then the message msg_68b84be6… "363.89"; 103 in, 73 out of which 64
// reasoning, 176 total.
func TestMgdSquareRootRoundTrip(t *testing.T) {
	t.Parallel()
	low := llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	req := mgdTools(mgdRequest("gpt-5-mini", mgdSqrtQuestion, low), llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	res, sent := mgdUnary(t, "real_maruel_gpt5mini_sqrt_1", req, mgdLimits{500, 499, 200000, 199317, 120 * time.Millisecond, 204 * time.Millisecond})
	rec := mgdSameAsRecorded(t, sent, mgdSqrtReq1, "model", "parallel_tool_calls", "reasoning", "service_tier", "store", "tool_choice", "input")
	mgdToolsAsRecorded(t, sent, rec)
	if inc, _ := sent["include"].([]any); len(inc) != 1 || inc[0] != includeEncryptedReasoning {
		t.Errorf("include %v", sent["include"])
	}
	mgdMeta(t, res.Meta, "resp_68b4f29369e48193acaa8fe6230b6871018117bf5f190d98", "req_f0cacc72f9c8251c196c25c641ecbf48", "gpt-5-mini-2025-08-07", 1756689043,
		&llmrelayv1.Usage{InputTokens: 73, OutputTokens: 21, TotalTokens: 94}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", "flex")
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	rs := parts[0].GetReasoning()
	if rs.GetId() != "rs_68b4f2944a9c81938216cf5e9faa7ad7018117bf5f190d98" || rs.GetSignature() != "" ||
		!strings.HasPrefix(rs.GetText(), "**Calculating square root**\n\nI need to call the square root function with the number 132413. It seems straightforward; I\u2019ll just") ||
		!strings.HasSuffix(rs.GetText(), "Let\u2019s go ahead and call it!") {
		t.Errorf("reasoning %v", rs)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_r6yPeDtWh9P8ytI99lLRiqSP" || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	if ext := res.Meta.GetExtended().AsMap(); ext["openai_processing_ms"] != 2719.0 || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("extended %v, warnings %v", ext, res.Meta.GetWarnings())
	}

	req2 := mgdTools(mgdRequest("gpt-5-mini", mgdSqrtQuestion, low), llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)
	req2.Messages = append(req2.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_r6yPeDtWh9P8ytI99lLRiqSP", "363.89")))
	res2, sent2 := mgdUnary(t, "real_maruel_gpt5mini_sqrt_2", req2, mgdLimits{500, 499, 200000, 199335, 120 * time.Millisecond, 199 * time.Millisecond})
	rec2 := mgdSameAsRecorded(t, sent2, mgdSqrtReq2, "model", "parallel_tool_calls", "reasoning", "service_tier", "store", "tool_choice", "input")
	mgdToolsAsRecorded(t, sent2, rec2)
	if w := res2.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "reasoning without encrypted content (signature) was not sent") {
		t.Errorf("warnings %v", w)
	}
	mgdMeta(t, res2.Meta, "resp_68b84bde061c8196bc8eea654b3a08c80fd1abbb312fef49", "req_50717ffd5a0e8c195abc385073f3d0d9", "gpt-5-mini-2025-08-07", 1756908510,
		&llmrelayv1.Usage{InputTokens: 103, OutputTokens: 73, TotalTokens: 176, ReasoningTokens: 64}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "flex")
	parts = res2.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetId() != "rs_68b84bdf67d48196b7f62855f14a08720fd1abbb312fef49" || parts[0].GetReasoning().GetText() != "" ||
		parts[1].GetText() != "363.89" || parts[1].GetItemId() != "msg_68b84be6f3a88196a6df700669d011fb0fd1abbb312fef49" {
		t.Errorf("parts %v", parts)
	}
}

// TestMgdSquareRootStreamRoundTrip: the same exchange streamed (another
// run). The first answer: an empty reasoning item rs_68b4f292… added and
// done (no summary though "auto" was asked), the function_call
// fc_68b4f292… (call_DkwSBrdtTyK9d8DNysPnH4Bb) added with its name, the
// arguments in six deltas with obfuscation, done, then response.completed
// with 73 in, 21 out, 94 total. No x-ratelimit-* headers (streams have
// none); x-request-id and openai-processing-ms 57. maruel/genai's second
// request is that of the unary run with this call's id: ours has the same
// input (the reasoning item, which has no encrypted content, left out
// with a warning). The answer: an empty reasoning item, "363" "." "89" in
// the message msg_68b84bed…, 103 in, 137 out of which 128 reasoning.
func TestMgdSquareRootStreamRoundTrip(t *testing.T) {
	t.Parallel()
	low := llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	req := mgdTools(mgdRequest("gpt-5-mini", mgdSqrtQuestion, low), llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	_, f, sent := mgdStream(t, "real_maruel_gpt5mini_sqrt_stream_1", req, nil)
	if sent["stream"] != true {
		t.Errorf("stream %v", sent["stream"])
	}
	mgdMeta(t, f.Meta, "resp_68b4f2917aa081938b1fa146ffeb9a3e0a9e3a741f286e94", "req_74f97fbfd16700cd49109679af6ae4dd", "gpt-5-mini-2025-08-07", 1756689041,
		&llmrelayv1.Usage{InputTokens: 73, OutputTokens: 21, TotalTokens: 94}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", "flex")
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetId() != "rs_68b4f29236e88193b42d4f0b7c7b25f60a9e3a741f286e94" || parts[0].GetReasoning().GetText() != "" {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_DkwSBrdtTyK9d8DNysPnH4Bb" || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` {
		t.Errorf("call %v", c)
	}

	req2 := mgdTools(mgdRequest("gpt-5-mini", mgdSqrtQuestion, low), llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)
	req2.Messages = append(req2.Messages, f.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_DkwSBrdtTyK9d8DNysPnH4Bb", "363.89")))
	evs, f2, sent2 := mgdStream(t, "real_maruel_gpt5mini_sqrt_stream_2", req2, nil)
	rec2 := mgdSameAsRecorded(t, sent2, mgdSqrtStreamReq2, "model", "parallel_tool_calls", "reasoning", "service_tier", "store", "tool_choice", "input", "stream")
	mgdToolsAsRecorded(t, sent2, rec2)
	var warnings []string
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta {
			warnings = append(warnings, ev.Meta.GetWarnings()...)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "reasoning without encrypted content (signature) was not sent") {
		t.Errorf("warnings %v", warnings)
	}
	mgdMeta(t, f2.Meta, "resp_68b84bde69808190abc70c3a11fbae4a06d207e0674207ab", "req_d8372b9d363a6d31d9fd4345f10a7a13", "gpt-5-mini-2025-08-07", 1756908510,
		&llmrelayv1.Usage{InputTokens: 103, OutputTokens: 137, TotalTokens: 240, ReasoningTokens: 128}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "flex")
	if p := f2.Message.GetParts(); len(p) != 2 || p[0].GetReasoning().GetId() != "rs_68b84be1aeb08190a24bf38390b44b5e06d207e0674207ab" ||
		p[1].GetText() != "363.89" || p[1].GetItemId() != "msg_68b84bedc180819098a4fd3e5995c54806d207e0674207ab" {
		t.Errorf("parts %v", p)
	}
}

// TestMgdLogprobsReasoningModel: gpt-5-mini asked for top_logprobs 2
// (no effort, summary "auto"): 400 invalid_request_error, code
// unsupported_parameter, param top_logprobs, "logprobs are not supported
// with reasoning models.", x-request-id req_7f61f5ce…. An invalid
// request, not retried, the message whole. Our request carries
// top_logprobs 2 as maruel/genai's did, and no include of logprobs (the
// caller did not ask for them).
func TestMgdLogprobsReasoningModel(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_maruel_gpt5mini_logprobs_error.http"))
	req := mgdRequest("gpt-5-mini", "Say hello. Use only one word.", 0)
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	req.ProviderOptions.GetOpenai().TopLogprobs = proto.Int32(2)
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	pe := providerError(t, err)
	if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "unsupported_parameter" ||
		pe.RequestID != "req_7f61f5cea4d60a39105df71e386b2a6b" || pe.Message != "logprobs are not supported with reasoning models." {
		t.Errorf("error %s", renderErr(err))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
	mgdSameAsRecorded(t, r20Request(t, srv.Last(t).Body),
		`{"model":"gpt-5-mini","background":false,"reasoning":{"summary":"auto"},"service_tier":"flex","store":false,"top_logprobs":2,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Say hello. Use only one word."}]}]}`,
		"model", "reasoning", "service_tier", "store", "top_logprobs", "input", "include")
}

// TestMgdGPT41SquareRootFollowUp: gpt-4.1 (no reasoning) answering the
// second turn: maruel/genai's request (which the API answered) carries
// the user turn, the call square_root({"number":132413}) with call_id
// call_gMhCYICfg5enHuicRacM6dcB and its output "363.89", tool_choice
// none, reasoning {summary: auto}. Ours, built from the same history, has
// the same input and no include (no reasoning asked). The answer: the
// message msg_68b84ad1… "363.89"; 93 in, 4 out; service tier default;
// tokens 30000 a minute, 29690 left, reset 620 ms.
func TestMgdGPT41SquareRootFollowUp(t *testing.T) {
	t.Parallel()
	req := mgdTools(mgdRequest("gpt-4.1", mgdSqrtQuestion, 0), llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)
	req.ProviderOptions.GetOpenai().ServiceTier = ""
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	req.Messages = append(req.Messages,
		&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: "call_gMhCYICfg5enHuicRacM6dcB", Name: "square_root", Arguments: `{"number":132413}`}}}}},
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_gMhCYICfg5enHuicRacM6dcB", "363.89")))
	res, sent := mgdUnary(t, "real_maruel_gpt41_sqrt_2", req, mgdLimits{500, 499, 30000, 29690, 120 * time.Millisecond, 620 * time.Millisecond})
	rec := mgdSameAsRecorded(t, sent, `{"model":"gpt-4.1","background":false,"parallel_tool_calls":true,"reasoning":{"summary":"auto"},"store":false,"tool_choice":"none","tools":[{"type":"function","name":"square_root","description":"Calculates and return the square root of a number","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."}]},{"type":"function_call","arguments":"{\"number\":132413}","name":"square_root","call_id":"call_gMhCYICfg5enHuicRacM6dcB"},{"type":"function_call_output","call_id":"call_gMhCYICfg5enHuicRacM6dcB","output":"363.89"}]}`,
		"model", "parallel_tool_calls", "reasoning", "store", "tool_choice", "input", "include", "service_tier")
	mgdToolsAsRecorded(t, sent, rec)
	mgdMeta(t, res.Meta, "resp_68b84ad08b0c8195ac459fede00184680a762900975210b3", "req_929d17e2607c722254dce7c7e3854fce", "gpt-4.1-2025-04-14", 1756908240,
		&llmrelayv1.Usage{InputTokens: 93, OutputTokens: 4, TotalTokens: 97}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "default")
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "363.89" || p[0].GetItemId() != "msg_68b84ad140008195a621df17a2e6390d0a762900975210b3" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("parts %v, warnings %v", p, res.Meta.GetWarnings())
	}
}

// TestMgdLogprobsReasoningModelStream: the same refusal on a stream
// (effort low): 400 with Content-Type application/json (not an event
// stream), x-request-id req_71b0f4fa…: Stream fails at once with the
// invalid request, the message whole.
func TestMgdLogprobsReasoningModelStream(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_maruel_gpt5mini_thinking_stream_logprobs_error.http"))
	req := mgdRequest("gpt-5-mini", "Say hello. Use only one word.", llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW)
	req.ProviderOptions.GetOpenai().TopLogprobs = proto.Int32(2)
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err == nil {
		s.Close()
		t.Fatal("no error")
	}
	pe := providerError(t, err)
	if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "unsupported_parameter" ||
		pe.RequestID != "req_71b0f4fa99a7e0a800496a50442bcf24" || pe.Message != "logprobs are not supported with reasoning models." {
		t.Errorf("error %s", renderErr(err))
	}
	mgdSameAsRecorded(t, r20Request(t, srv.Last(t).Body),
		`{"model":"gpt-5-mini","background":false,"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex","store":false,"top_logprobs":2,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Say hello. Use only one word."}]}],"stream":true}`,
		"model", "reasoning", "service_tier", "store", "top_logprobs", "input", "stream")
}

// TestMgdSquareRootDefaultEffort: gpt-5-mini at its default effort
// (maruel/genai sends reasoning {summary: auto} alone; the API answers
// effort medium): an empty reasoning item rs_68b4f165…, then the call
// call_NinSU6jQUF1sOfoGNVCQGfr3; 73 in, 149 out of which 128 reasoning.
// The second request (answered: an empty reasoning item, "363.89", 512
// of 521 output tokens reasoning) has the call and its output and no
// reasoning item; ours has the same input and reasoning object (no
// effort), the empty reasoning part left out with a warning, and asks
// for the encrypted reasoning (a reasoning model, store false).
func TestMgdSquareRootDefaultEffort(t *testing.T) {
	t.Parallel()
	mk := func(m llmrelayv1.ToolChoiceMode) *provider.Request {
		req := mgdTools(mgdRequest("gpt-5-mini", mgdSqrtQuestion, 0), m)
		req.Reasoning = true
		req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
		return req
	}
	res, sent := mgdUnary(t, "real_maruel_gpt5mini_default_sqrt_1", mk(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED),
		mgdLimits{500, 499, 200000, 199318, 120 * time.Millisecond, 204 * time.Millisecond})
	rec := mgdSameAsRecorded(t, sent, strings.Replace(mgdSqrtReq1, `"reasoning":{"effort":"low","summary":"auto"}`, `"reasoning":{"summary":"auto"}`, 1),
		"model", "parallel_tool_calls", "reasoning", "service_tier", "store", "tool_choice", "input")
	mgdToolsAsRecorded(t, sent, rec)
	if inc, _ := sent["include"].([]any); len(inc) != 1 || inc[0] != includeEncryptedReasoning {
		t.Errorf("include %v", sent["include"])
	}
	mgdMeta(t, res.Meta, "resp_68b4f164502481948d09fc09d53fba4d08e124d897980fca", "req_386db4e0949fcfdeba40e6a95b1cedfe", "gpt-5-mini-2025-08-07", 1756688740,
		&llmrelayv1.Usage{InputTokens: 73, OutputTokens: 149, TotalTokens: 222, ReasoningTokens: 128}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", "flex")
	p := res.Message.GetParts()
	if len(p) != 2 || p[0].GetReasoning().GetId() != "rs_68b4f165e8548194824957c36c47cbb808e124d897980fca" || p[0].GetReasoning().GetText() != "" ||
		p[1].GetToolCall().GetCallId() != "call_NinSU6jQUF1sOfoGNVCQGfr3" || p[1].GetToolCall().GetArguments() != `{"number":132413}` {
		t.Fatalf("parts %v", p)
	}

	req2 := mk(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)
	req2.Messages = append(req2.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_NinSU6jQUF1sOfoGNVCQGfr3", "363.89")))
	res2, sent2 := mgdUnary(t, "real_maruel_gpt5mini_default_sqrt_2", req2, mgdLimits{500, 499, 200000, 199335, 120 * time.Millisecond, 199 * time.Millisecond})
	rec2 := mgdSameAsRecorded(t, sent2, strings.NewReplacer(`"reasoning":{"effort":"low","summary":"auto"}`, `"reasoning":{"summary":"auto"}`,
		"call_r6yPeDtWh9P8ytI99lLRiqSP", "call_NinSU6jQUF1sOfoGNVCQGfr3").Replace(mgdSqrtReq2),
		"model", "parallel_tool_calls", "reasoning", "service_tier", "store", "tool_choice", "input")
	mgdToolsAsRecorded(t, sent2, rec2)
	if w := res2.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "messages[1].parts[0]: reasoning without encrypted content (signature) was not sent") {
		t.Errorf("warnings %v", w)
	}
	mgdMeta(t, res2.Meta, "resp_68b4f1675dd08195879e24f937d3c9580ada7942b5f8e3d1", "req_e9a7284e539b1ec46b6d7a759c1a40ec", "gpt-5-mini-2025-08-07", 1756688743,
		&llmrelayv1.Usage{InputTokens: 103, OutputTokens: 521, TotalTokens: 624, ReasoningTokens: 512}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "flex")
	if p := res2.Message.GetParts(); len(p) != 2 || p[0].GetReasoning().GetId() != "rs_68b4f168104481958df0fa49366037a00ada7942b5f8e3d1" ||
		p[1].GetText() != "363.89" || p[1].GetItemId() != "msg_68b4f16b547081958db4be774eded51e0ada7942b5f8e3d1" {
		t.Errorf("parts %v", p)
	}
}

// TestMgdNanoTwoSummaryParts: gpt-5-nano at its default effort (medium):
// one reasoning item rs_68b4f125… whose summary has two summary_text
// parts ("**Calculating square root**…", "**Estimating square root**…"),
// then the call call_PzcV5EIsUpM6aS3h7o9osWmk; 73 in, 341 out of which
// 320 reasoning. The two parts are one Reasoning part (the contract has
// one per item; two parts with one id would be sent back as two items
// with the same id), joined by a blank line, each part's text whole, and
// the two parts in summary_parts (round 26). Sent back (with encrypted
// content, which this run did not ask for), the item is one reasoning
// input item with the two summary_text entries, before the call it led
// to.
func TestMgdNanoTwoSummaryParts(t *testing.T) {
	t.Parallel()
	req := mgdTools(mgdRequest("gpt-5-nano", mgdSqrtQuestion, 0), llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	req.Reasoning = true
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	res, sent := mgdUnary(t, "real_maruel_gpt5nano_sqrt_1", req, mgdLimits{500, 499, 200000, 199318, 120 * time.Millisecond, 204 * time.Millisecond})
	if sent["model"] != "gpt-5-nano" || !reflect.DeepEqual(sent["reasoning"], map[string]any{"summary": "auto"}) {
		t.Errorf("sent %v", sent)
	}
	mgdMeta(t, res.Meta, "resp_68b4f124da888194b7631f8b564b03a1059151d13967822a", "req_0cca7004641fe5a8e4aa5a279a1aa7e1", "gpt-5-nano-2025-08-07", 1756688676,
		&llmrelayv1.Usage{InputTokens: 73, OutputTokens: 341, TotalTokens: 414, ReasoningTokens: 320}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", "flex")
	const first = "**Calculating square root**\n\nI\u2019m going to use the square_root tool to find the result of square_root(132413). It looks like I need to follow the instruction to call the function and then just return the numerical result without any explanation. So, I\u2019ll check the tool and let it give me the value, ensuring I only present the number in my response. This is straightforward, and I\u2019ll focus on providing what the user asked for!"
	const second = "**Estimating square root**\n\nI calculated that 364 squared equals 132,496, and 363 squared equals 131,769, which means that the square root of 132,413 is between 363 and 364, likely closer to 364. To be more precise, I figured out that by linear interpolation, it's approximately 363.885. However, to ensure accuracy, I\u2019ll call the tool to compute the exact value of the square root. It's essential to confirm the calculation numerically!"
	p := res.Message.GetParts()
	if len(p) != 2 || p[0].GetReasoning().GetId() != "rs_68b4f12560f0819497619b2add31b9f7059151d13967822a" || p[0].GetReasoning().GetText() != first+"\n\n"+second ||
		!reflect.DeepEqual(p[0].GetReasoning().GetSummaryParts(), []string{first, second}) ||
		p[1].GetToolCall().GetCallId() != "call_PzcV5EIsUpM6aS3h7o9osWmk" {
		t.Fatalf("parts %v", p)
	}

	prov, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	msg := proto.Clone(res.Message).(*llmrelayv1.Message)
	msg.Parts[0].GetReasoning().Signature = "gAAAAB-encrypted"
	req.Messages = append(req.Messages, msg, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_PzcV5EIsUpM6aS3h7o9osWmk", "363.89")))
	body, warnings, err := prov.buildResponsesRequest(req, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v, warnings %v", err, warnings)
	}
	items, _ := decodeBody(t, body)["input"].([]any)
	want := map[string]any{"type": "reasoning", "id": "rs_68b4f12560f0819497619b2add31b9f7059151d13967822a", "encrypted_content": "gAAAAB-encrypted",
		"summary": []any{map[string]any{"type": "summary_text", "text": first}, map[string]any{"type": "summary_text", "text": second}}}
	if len(items) != 4 || !reflect.DeepEqual(items[1], want) {
		t.Errorf("input %v", items)
	}
	if c, _ := items[2].(map[string]any); c["type"] != "function_call" || c["call_id"] != "call_PzcV5EIsUpM6aS3h7o9osWmk" {
		t.Errorf("call item %v", items[2])
	}
}

// TestMgdGPT41ToolBias: gpt-4.1, best_country (an enum of USA and
// Canada) required: the lone function_call fc_68856c18…
// best_country({"country":"USA"}) with call_id call_8nAdiapTVGPocGjy0fMKKEes,
// no message; 81 in, 6 out; service tier default; tokens 28764 left,
// reset 2.471 s (July 2025: no X-Envoy-Upstream-Service-Time, text
// without verbosity). Our request has maruel/genai's tools (but $schema)
// and input.
func TestMgdGPT41ToolBias(t *testing.T) {
	t.Parallel()
	const question = "I wonder if the USA is a better country than Canada? Call the tool best_country to tell me which country is the best one."
	req := mgdRequest("gpt-4.1", question, 0)
	req.ProviderOptions.GetOpenai().ServiceTier = ""
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "best_country", Description: "A tool to specify the best country",
		Parameters: `{"properties":{"country":{"type":"string","enum":["USA","Canada"]}},"additionalProperties":false,"type":"object","required":["country"]}`}}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	req.Options.ParallelToolCalls = proto.Bool(true)
	res, sent := mgdUnary(t, "real_maruel_gpt41_tool_bias", req, mgdLimits{500, 499, 30000, 28764, 120 * time.Millisecond, 2471 * time.Millisecond})
	rec := mgdSameAsRecorded(t, sent, `{"model":"gpt-4.1","background":false,"parallel_tool_calls":true,"reasoning":{"summary":"auto"},"store":false,"tool_choice":"required","tools":[{"type":"function","name":"best_country","description":"A tool to specify the best country","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"country":{"type":"string","enum":["USA","Canada"]}},"additionalProperties":false,"type":"object","required":["country"]}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"`+question+`"}]}]}`,
		"model", "parallel_tool_calls", "reasoning", "store", "tool_choice", "input", "include")
	mgdToolsAsRecorded(t, sent, rec)
	mgdMeta(t, res.Meta, "resp_68856c17651c819b80ad540a07e500a305b5ac3d60038c73", "req_456e2bf2daba2f770801e2e1262bb37c", "gpt-4.1-2025-04-14", 1753574423,
		&llmrelayv1.Usage{InputTokens: 81, OutputTokens: 6, TotalTokens: 87}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", "default")
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetToolCall().GetCallId() != "call_8nAdiapTVGPocGjy0fMKKEes" || p[0].GetToolCall().GetName() != "best_country" ||
		p[0].GetToolCall().GetArguments() != `{"country":"USA"}` || res.Meta.GetToolCallCount() != 1 {
		t.Errorf("parts %v", p)
	}
}

// TestMgdGPT41SquareRootStreamFollowUp: the gpt-4.1 second turn
// streamed (call_Gh0p3VKOpI4t1EzCEtlI54tn): our request from the same
// history has maruel/genai's input and stream true. The answer: the
// message msg_68b84ad1… in three deltas "363" "." "89", service tier
// "auto" in response.created and "default" at the end (reported), 93 in,
// 4 out; x-request-id req_27319038…, no x-ratelimit-* headers.
func TestMgdGPT41SquareRootStreamFollowUp(t *testing.T) {
	t.Parallel()
	req := mgdTools(mgdRequest("gpt-4.1", mgdSqrtQuestion, 0), llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)
	req.ProviderOptions.GetOpenai().ServiceTier = ""
	req.ProviderOptions.GetOpenai().ReasoningSummary = "auto"
	req.Messages = append(req.Messages,
		&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: "call_Gh0p3VKOpI4t1EzCEtlI54tn", Name: "square_root", Arguments: `{"number":132413}`}}}}},
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_Gh0p3VKOpI4t1EzCEtlI54tn", "363.89")))
	evs, f, sent := mgdStream(t, "real_maruel_gpt41_sqrt_stream_2", req, nil)
	rec := mgdSameAsRecorded(t, sent, strings.NewReplacer(`"reasoning":{"effort":"low","summary":"auto"},"service_tier":"flex",`, `"reasoning":{"summary":"auto"},`,
		`"model":"gpt-5-mini"`, `"model":"gpt-4.1"`, "call_DkwSBrdtTyK9d8DNysPnH4Bb", "call_Gh0p3VKOpI4t1EzCEtlI54tn").Replace(mgdSqrtStreamReq2),
		"model", "parallel_tool_calls", "reasoning", "store", "tool_choice", "input", "stream", "include", "service_tier")
	mgdToolsAsRecorded(t, sent, rec)
	mgdMeta(t, f.Meta, "resp_68b84ad0e6808193871a920e1a940f6c06d792df69cde8e5", "req_273190387295e9ee31658838417acb13", "gpt-4.1-2025-04-14", 1756908240,
		&llmrelayv1.Usage{InputTokens: 93, OutputTokens: 4, TotalTokens: 97}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed", "default")
	if p := f.Message.GetParts(); len(p) != 1 || p[0].GetText() != "363.89" || p[0].GetItemId() != "msg_68b84ad1fa248193abb6ba6bb82fe2a306d792df69cde8e5" {
		t.Errorf("parts %v", p)
	}
	var texts int
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			texts++
		}
		if ev.Kind == provider.EventMeta && ev.Meta.GetServiceTier() != "" && ev.Meta.GetServiceTier() != "default" {
			t.Errorf("service tier %q reported", ev.Meta.GetServiceTier())
		}
	}
	if texts != 3 {
		t.Errorf("%d text deltas", texts)
	}
}
