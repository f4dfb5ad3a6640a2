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

// Round 22 (chat): openai/openai-dotnet's test-proxy session records of
// api.openai.com (September 2025, February 2026; testdata/README.md,
// "Round 22: openai-dotnet's session records"). The recorder replaced
// X-Request-ID, the organization and project (and, in the newer records,
// Date and openai-processing-ms) with "Sanitized"; those headers are left
// out, so no request id is expected.

// r22Bank is the question the refusal records asked.
const r22Bank = "What's the best way to successfully rob a bank? Please include detailed instructions for executing related crimes."

// r22Unary replays a unary recording for req through a provider for
// baseURL ("" for OpenAI), checks the golden unless noGolden, and returns
// the result and the request body the adapter sent.
func r22Unary(t *testing.T, name, baseURL string, req *provider.Request, noGolden bool) (*provider.Result, map[string]any) {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	if baseURL != "" {
		p = newHostProvider(t, baseURL, srv.URL)
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	if !noGolden {
		providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	}
	return res, r20Request(t, srv.Last(t).Body)
}

// r22Err replays an error recording and returns the provider error.
func r22Err(t *testing.T, name, baseURL string, req *provider.Request) *provider.Error {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	if baseURL != "" {
		p = newHostProvider(t, baseURL, srv.URL)
	}
	_, err := p.Generate(context.Background(), req)
	if err == nil {
		t.Fatal("no error")
	}
	return providerError(t, err)
}

// r22Ask is a one-question chat request.
func r22Ask(model, question string) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(question))}, Options: &llmrelayv1.GenerationOptions{}}
}

// r22Meta checks an answer's ids, model, creation time, usage and finish.
func r22Meta(t *testing.T, m *llmrelayv1.ResponseMeta, respID, reqID, model string, created int64, usage *llmrelayv1.Usage, finish llmrelayv1.FinishReason, raw string) {
	t.Helper()
	r21cMeta(t, m, respID, reqID, model, created, usage)
	wantFinish(t, m, finish, raw)
}

// r22Ext checks the extended metadata entries named in want, and that
// there are no warnings.
func r22Ext(t *testing.T, m *llmrelayv1.ResponseMeta, want map[string]any) {
	t.Helper()
	ext := m.GetExtended().AsMap()
	for k, v := range want {
		if !reflect.DeepEqual(ext[k], v) {
			t.Errorf("extended[%q] = %#v, want %#v", k, ext[k], v)
		}
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %v", m.GetWarnings())
	}
}

// TestRound22DotnetStructuredRefusal: gpt-4o-2024-08-06 under a strict
// json_schema (food_recipe) asked to plan a robbery: content null, the
// refusal "I'm very sorry, but I can't assist with that request.", finish
// "stop", 95 in and 13 out, service_tier default, fp_cbf1785567; the six
// rate-limit headers from Date 16:40:56 (6 ms, 0 s). The record's second
// request sent the refusal back as the assistant's "refusal" field with no
// content, and asked "Why can't you help me?": the request we build from
// the first answer is checked against it, and its answer ("I’m sorry, but
// I cannot assist with that request.", content this time, 52 in, 12 out)
// replayed.
func TestRound22DotnetStructuredRefusal(t *testing.T) {
	t.Parallel()
	const refusal = "I'm very sorry, but I can't assist with that request."
	req := r22Ask("gpt-4o-2024-08-06", r22Bank)
	req.Options.Temperature = proto.Float64(0)
	// The record's schema also had a description ("a description of a
	// recipe to create a meal or dish"): the contract's ResponseFormat has
	// no field for one.
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		SchemaName: "food_recipe", Strict: proto.Bool(true),
		Schema: `{"type":"object","properties":{"name":{"type":"string"},"ingredients":{"type":"array","items":{"type":"string"}},"steps":{"type":"array","items":{"type":"string"}}},"required":["name","ingredients","steps"],"additionalProperties":false}`,
	}
	res, body := r22Unary(t, "real_dotnet_structured_refusal_1", "", req, false)
	m := res.Meta
	r22Meta(t, m, "chatcmpl-CGT1cbef8SVvUl1eExf6LNKMlDtOv", "", "gpt-4o-2024-08-06", 1758040856,
		&llmrelayv1.Usage{InputTokens: 95, OutputTokens: 13, TotalTokens: 108}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if len(res.Message.GetParts()) != 1 || res.Message.GetParts()[0].GetRefusal() != refusal {
		t.Fatalf("parts %v", res.Message.GetParts())
	}
	if m.GetServiceTier() != "default" {
		t.Errorf("service tier %q", m.GetServiceTier())
	}
	r22Ext(t, m, map[string]any{"system_fingerprint": "fp_cbf1785567", "openai_processing_ms": float64(502)})
	r20WantRateLimit(t, m.GetRateLimit(), "Tue, 16 Sep 2025 16:40:56 GMT", 10000, 9999, 30000000, 29999969, 6*time.Millisecond, 0)
	rf, _ := body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != "food_recipe" || js["strict"] != true || body["temperature"] != float64(0) {
		t.Errorf("request %v", body)
	}

	// The second turn: the refusal goes back as the assistant's refusal.
	req2 := r22Ask("gpt-4o-2024-08-06", r22Bank)
	req2.Messages = append(req2.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("Why can't you help me?")))
	res2, body2 := r22Unary(t, "real_dotnet_structured_refusal_2", "", req2, false)
	msgs, _ := body2["messages"].([]any)
	if len(msgs) == 3 {
		// The record's assistant message has no content key; ours sends
		// content null beside the refusal, which OpenAI takes alike.
		if a, _ := msgs[1].(map[string]any); a != nil && a["content"] == nil {
			delete(a, "content")
		}
	}
	want := []any{
		map[string]any{"role": "user", "content": r22Bank},
		map[string]any{"role": "assistant", "refusal": refusal},
		map[string]any{"role": "user", "content": "Why can't you help me?"},
	}
	if !reflect.DeepEqual(msgs, want) {
		got, _ := json.Marshal(msgs)
		t.Errorf("second request messages %s", got)
	}
	r22Meta(t, res2.Meta, "chatcmpl-CGT1d2j5YYfXuUViBz3yZowSWmDz6", "", "gpt-4o-2024-08-06", 1758040857,
		&llmrelayv1.Usage{InputTokens: 52, OutputTokens: 12, TotalTokens: 64}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if _, answer := r21cParts(t, res2.Message); answer != "I’m sorry, but I cannot assist with that request." {
		t.Errorf("answer %q", answer)
	}
	r20WantRateLimit(t, res2.Meta.GetRateLimit(), "Tue, 16 Sep 2025 16:40:58 GMT", 10000, 9999, 30000000, 29999962, 6*time.Millisecond, 0)
}

// TestRound22DotnetStructuredRefusalStream: the same question streamed with
// include_usage (no schema): gpt-4o-2024-08-06 answers in content, not a
// refusal ("I'm sorry, I can't assist with that request." in ten deltas
// after a role chunk with content "" and refusal null), every chunk with
// an obfuscation string and service_tier default; "stop" on an empty
// delta, then the usage on a chunk with no choices (26 in, 10 out, the
// zero cached, audio, reasoning and prediction counts sent and not
// reported).
func TestRound22DotnetStructuredRefusalStream(t *testing.T) {
	t.Parallel()
	const name = "real_dotnet_structured_refusal_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), r22Ask("gpt-4o-2024-08-06", r22Bank))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	f := accFold(t, evs)
	if _, answer := r21cParts(t, f.Message); answer != "I'm sorry, I can't assist with that request." {
		t.Errorf("answer %q", answer)
	}
	r22Meta(t, f.Meta, "chatcmpl-CGT1ZRPtyYolDetKjPbNieXsRUm8N", "", "gpt-4o-2024-08-06", 1758040853,
		&llmrelayv1.Usage{InputTokens: 26, OutputTokens: 10, TotalTokens: 36}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if f.Meta.GetServiceTier() != "default" {
		t.Errorf("service tier %q", f.Meta.GetServiceTier())
	}
	r22Ext(t, f.Meta, map[string]any{"system_fingerprint": "fp_1827dd0c55", "openai_processing_ms": float64(320)})
	r20WantRateLimit(t, f.Meta.GetRateLimit(), "Tue, 16 Sep 2025 16:40:53 GMT", 10000, 9999, 30000000, 29999969, 6*time.Millisecond, 0)
	body := r20Request(t, srv.Last(t).Body)
	if so, _ := body["stream_options"].(map[string]any); body["stream"] != true || so["include_usage"] != true {
		t.Errorf("request %v", body)
	}
}

// TestRound22DotnetAuthFailure: a key OpenAI does not know: 401
// invalid_request_error, code invalid_api_key, param null, the message
// with the key masked as OpenAI masks it; unauthenticated, not retried,
// no request id (the recorder sanitized X-Request-ID).
func TestRound22DotnetAuthFailure(t *testing.T) {
	t.Parallel()
	e := r22Err(t, "real_dotnet_auth_failure_401", "", r22Ask("gpt-4o-mini", "Uh oh, this isn't going to work with that key"))
	if e.Kind != provider.KindUnauthenticated || e.HTTPStatus != 401 || e.Code != "invalid_api_key" || e.Param != "" ||
		e.Message != "Incorrect API key provided: not-a-re**************************ized. You can find your API key at https://platform.openai.com/account/api-keys." ||
		e.RetryAfter != 0 || e.RequestID != "" {
		t.Errorf("error %+v", e)
	}
	if !e.Date.Equal(time.Date(2025, 9, 16, 16, 39, 48, 0, time.UTC)) {
		t.Errorf("date %v", e.Date)
	}
}

// TestRound22DotnetStrictToolNoSchema: a strict function with no
// parameters at all (gpt-4o-2024-08-06): 400 invalid_request_error, code
// invalid_function_parameters, param "tools[0].function.parameters",
// "Invalid schema for function 'get_favorite_color_for_day_of_week': In
// context=(), 'additionalProperties' is required to be supplied and to be
// false." (a body OpenAI wrote without a trailing newline: 310 bytes, the
// recorded Content-Length). The rate-limit headers of the refused request
// are read too.
func TestRound22DotnetStrictToolNoSchema(t *testing.T) {
	t.Parallel()
	req := r22Ask("gpt-4o-2024-08-06", "What's my favorite color on Tuesday?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Call applicable tools when the user asks a question. Prefer JSON output when possible."))}, req.Messages...)
	req.Tools = []*llmrelayv1.Tool{{Name: "get_favorite_color_for_day_of_week",
		Description: "Given a weekday name like Tuesday, gets the favorite color of the user on that day.", Strict: proto.Bool(true)}}
	e := r22Err(t, "real_dotnet_strict_tool_no_schema_400", "", req)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_function_parameters" ||
		e.Param != "tools[0].function.parameters" || e.RetryAfter != 0 ||
		e.Message != "Invalid schema for function 'get_favorite_color_for_day_of_week': In context=(), 'additionalProperties' is required to be supplied and to be false." {
		t.Errorf("error %+v", e)
	}
}

// TestRound22DotnetParallelToolCalls: gpt-4o-mini-2024-07-18 asked for the
// weather in two cities calls get_weather_for_city twice in one answer
// (content null, refusal null, annotations []): call_SKQEHo7QVlJRoCtEzcrYZM9C
// with {"city_name": "Santiago"} and call_CkjljlLr7IebPc4hnvetfiZ8 with
// {"city_name": "Karachi"} (a space after each colon, as sent), finish
// tool_calls, 81 in, 52 out. The record's second request (the two calls,
// then a tool message per call: "rainy", "sunny") is the one we build from
// the first answer and the results, and its answer is replayed: "The
// current weather is as follows:\n- Santiago: Rainy\n- Karachi: Sunny",
// 151 in, 18 out.
func TestRound22DotnetParallelToolCalls(t *testing.T) {
	t.Parallel()
	const q = "Tell me what's the current weather in the following cities: Santiago and Karachi."
	tool := &llmrelayv1.Tool{Name: "get_weather_for_city", Description: "gets the current weather for a given city",
		Parameters: `{"type":"object","properties":{"city_name":{"type":"string","description":"the name of a city, e.g. Johannesburg or Ho Chi Minh City."}},"required":["city_name"]}`}
	req := r22Ask("gpt-4o-mini", q)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{tool}
	res, _ := r22Unary(t, "real_dotnet_parallel_tool_calls_1", "", req, false)
	r22Meta(t, res.Meta, "chatcmpl-CGSWwwIbC20wpBWz1VQVhj5SqUeQD", "", "gpt-4o-mini-2024-07-18", 1758038954,
		&llmrelayv1.Usage{InputTokens: 81, OutputTokens: 52, TotalTokens: 133}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	wantCalls := [][2]string{
		{"call_SKQEHo7QVlJRoCtEzcrYZM9C", `{"city_name": "Santiago"}`},
		{"call_CkjljlLr7IebPc4hnvetfiZ8", `{"city_name": "Karachi"}`},
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || res.Meta.GetToolCallCount() != 2 {
		t.Fatalf("parts %v", parts)
	}
	for i, w := range wantCalls {
		tc := parts[i].GetToolCall()
		if tc.GetCallId() != w[0] || tc.GetName() != "get_weather_for_city" || tc.GetArguments() != w[1] || !tc.GetArgumentsValid() {
			t.Errorf("call %d: %v", i, tc)
		}
	}
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "fp_560af6e559", "openai_processing_ms": float64(2662)})
	r20WantRateLimit(t, res.Meta.GetRateLimit(), "Tue, 16 Sep 2025 16:09:17 GMT", 30000, 29999, 150000000, 149999975, 2*time.Millisecond, 0)

	req2 := r22Ask("gpt-4o-mini", q)
	req2.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req2.Tools = []*llmrelayv1.Tool{tool}
	req2.Messages = append(req2.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: wantCalls[0][0], Content: "rainy"}}},
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: wantCalls[1][0], Content: "sunny"}}}))
	res2, body := r22Unary(t, "real_dotnet_parallel_tool_calls_2", "", req2, false)
	msgs, _ := body["messages"].([]any)
	call := func(id, args string) any {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "get_weather_for_city", "arguments": args}}
	}
	want := []any{
		map[string]any{"role": "user", "content": q},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call(wantCalls[0][0], wantCalls[0][1]), call(wantCalls[1][0], wantCalls[1][1])}},
		map[string]any{"role": "tool", "tool_call_id": wantCalls[0][0], "content": "rainy"},
		map[string]any{"role": "tool", "tool_call_id": wantCalls[1][0], "content": "sunny"},
	}
	if len(msgs) == 4 {
		// The recorded assistant message has no content key; ours may
		// send content null, which OpenAI takes alike.
		if a, _ := msgs[1].(map[string]any); a != nil {
			if _, ok := a["content"]; !ok {
				a["content"] = nil
			}
		}
	}
	if !reflect.DeepEqual(msgs, want) {
		got, _ := json.Marshal(msgs)
		t.Errorf("second request messages %s", got)
	}
	r22Meta(t, res2.Meta, "chatcmpl-CGSWzKKuB0tOwJH5DSxx02kDDPh0C", "", "gpt-4o-mini-2024-07-18", 1758038957,
		&llmrelayv1.Usage{InputTokens: 151, OutputTokens: 18, TotalTokens: 169}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if _, answer := r21cParts(t, res2.Message); answer != "The current weather is as follows:\n- Santiago: Rainy\n- Karachi: Sunny" {
		t.Errorf("answer %q", answer)
	}
}

// TestRound22DotnetPredictedOutputs: gpt-4o-mini with a predicted output
// (the expected JSON, sent through extra_body as the contract has no
// field for it): the answer is the prediction, 58 in, 17 out, 16 of them
// accepted prediction tokens (kept in usage_details: no counter holds
// them), the rejected count 0.
func TestRound22DotnetPredictedOutputs(t *testing.T) {
	t.Parallel()
	const answer = "{\n  \"feature_name\": \"test_feature\",\n  \"enabled\": true\n}"
	req := r22Ask("gpt-4o-mini", "Modify the following input to enable the feature. Only respond with the JSON and include no other text. Do not enclose in markdown backticks or any other additional annotations.\n\n{\n  \"feature_name\": \"test_feature\",\n  \"enabled\": false\n}")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: jsonText(t, map[string]any{"prediction": map[string]any{"type": "content", "content": answer}})}
	res, body := r22Unary(t, "real_dotnet_predicted_outputs", "", req, false)
	r22Meta(t, res.Meta, "chatcmpl-CGT1LkeiZFZczHXJS1RfD5COsIaXW", "", "gpt-4o-mini-2024-07-18", 1758040839,
		&llmrelayv1.Usage{InputTokens: 58, OutputTokens: 17, TotalTokens: 75}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if _, got := r21cParts(t, res.Message); got != answer {
		t.Errorf("answer %q", got)
	}
	r22Ext(t, res.Meta, map[string]any{"usage_details": map[string]any{"completion_tokens_details.accepted_prediction_tokens": float64(16)}})
	if pr, _ := body["prediction"].(map[string]any); pr["type"] != "content" || pr["content"] != answer {
		t.Errorf("request %v", body)
	}
}

// TestRound22DotnetReasoningTokens: o3-mini with reasoning_effort low and
// max_completion_tokens 2148: 34 in, 1075 out of which 192 reasoning
// (unary, no reasoning text), service_tier default, fp_6c43dcef8c; the body
// is OpenAI's bytes (5572, the recorded Content-Length: em spaces and
// non-breaking hyphens as UTF-8).
func TestRound22DotnetReasoningTokens(t *testing.T) {
	t.Parallel()
	req := r22Ask("o3-mini", "Using a comprehensive evaluation of popular media in the 1970s and 1980s, what were the most common sci-fi themes?")
	req.Options.MaxTokens = proto.Int32(2148)
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	req.Reasoning = true // o3-mini is a reasoning model in the catalog
	res, body := r22Unary(t, "real_dotnet_reasoning_tokens", "", req, false)
	r22Meta(t, res.Meta, "chatcmpl-CGT1MjOZf1PHpLut5whSwHphGamTm", "", "o3-mini-2025-01-31", 1758040840,
		&llmrelayv1.Usage{InputTokens: 34, OutputTokens: 1075, TotalTokens: 1109, ReasoningTokens: 192}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	reasoning, answer := r21cParts(t, res.Message)
	if reasoning != "" || !strings.HasPrefix(answer, "A review of popular media from the 1970s and 1980s reveals recurring sci‑fi themes") ||
		!strings.Contains(answer, "\n\u2003• Many stories depicted oppressive") || !strings.HasSuffix(answer, "technology, society, and identity today.") {
		t.Errorf("answer %q", answer)
	}
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "fp_6c43dcef8c", "openai_processing_ms": float64(12502)})
	if body["reasoning_effort"] != "low" || body["max_completion_tokens"] != float64(2148) || body["max_tokens"] != nil {
		t.Errorf("request %v", body)
	}
}

// TestRound22DotnetWebSearch: gpt-4o-search-preview with
// web_search_options {} (February 2026): the answer cites four pages as
// url_citation annotations (start and end indexes into the text, title,
// url with utm_source=openai), kept as sent in meta.extended; no logprobs
// key and an empty system_fingerprint (not reported), no service_tier.
// The recorder sanitized Date, so the rate-limit resets (60 ms, 0 s) are
// counted from when the answer was read: the test checks the limits and
// leaves the resets out of the golden.
func TestRound22DotnetWebSearch(t *testing.T) {
	t.Parallel()
	const name = "real_dotnet_web_search"
	req := r22Ask("gpt-4o-search-preview", "What was a positive news story from today?")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"web_search_options":{}}`}
	res, body := r22Unary(t, name, "", req, true)
	m := res.Meta
	rl := m.GetRateLimit()
	if rl.GetRequestsLimit() != 1000 || rl.GetRequestsRemaining() != 999 || rl.GetTokensLimit() != 3000000 || rl.GetTokensRemaining() != 2999987 ||
		rl.GetRequestsResetTime() == nil || rl.GetTokensResetTime() == nil ||
		rl.GetRequestsResetTime().AsTime().Sub(rl.GetTokensResetTime().AsTime()) != 60*time.Millisecond {
		t.Errorf("rate limit %v", rl)
	}
	rl.RequestsResetTime, rl.TokensResetTime = nil, nil
	for _, w := range rl.GetWindows() {
		w.ResetTime = nil
	}
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	r22Meta(t, m, "chatcmpl-7311b1fd-f110-46ca-8ab6-2c48f91095af", "", "gpt-4o-search-preview-2025-03-11", 1770950842,
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 484, TotalTokens: 493}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	_, answer := r21cParts(t, res.Message)
	if !strings.HasPrefix(answer, "Here are some positive news stories from February 13, 2026:") || !strings.Contains(answer, "€10 Billion") {
		t.Errorf("answer %q", answer)
	}
	ext := m.GetExtended().AsMap()
	anns, _ := ext[extAnnotations].([]any)
	if len(anns) != 4 {
		t.Fatalf("annotations %v", ext)
	}
	a0, _ := anns[0].(map[string]any)
	u0, _ := a0["url_citation"].(map[string]any)
	a3, _ := anns[3].(map[string]any)
	u3, _ := a3["url_citation"].(map[string]any)
	if a0["type"] != "url_citation" || u0["start_index"] != float64(427) || u0["end_index"] != float64(553) ||
		u0["title"] != "Today’s School Assembly News Headlines (13 February) - Observer Voice" ||
		u3["url"] != "https://www.bloodcenter.org/about/news/blog/feel-good-news--february-13-2026/?utm_source=openai" || u3["start_index"] != float64(2014) {
		t.Errorf("annotations %v", anns)
	}
	// The indexes count characters of the answer: the first citation
	// spans the first link.
	if r := []rune(answer); len(r) < 553 || !strings.HasPrefix(string(r[427:553]), "([observervoice.com](") {
		t.Errorf("citation span %q", string([]rune(answer)[427:553]))
	}
	if _, ok := ext["system_fingerprint"]; ok || m.GetServiceTier() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if ws, ok := body["web_search_options"].(map[string]any); !ok || len(ws) != 0 {
		t.Errorf("request %v", body)
	}
}

// TestRound22DotnetNoParameterTool: a function with no parameters
// (gpt-4o-mini): the call call_rQvZ9upGjXJlbI3FYZ43qGgu with arguments "{}"
// (valid), content null, 46 in, 12 out. The record's second request sends
// the call back with "{}" and the result "green" as a tool message (we
// send no parameters for the tool, as the record did), and its answer is
// "Your favorite color is green." (69 in, 7 out; 835 bytes, OpenAI's).
func TestRound22DotnetNoParameterTool(t *testing.T) {
	t.Parallel()
	tool := &llmrelayv1.Tool{Name: "get_favorite_color", Description: "gets the favorite color of the caller"}
	req := r22Ask("gpt-4o-mini", "What's my favorite color?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{tool}
	res, body := r22Unary(t, "real_dotnet_no_parameter_tool_1", "", req, false)
	r22Meta(t, res.Meta, "chatcmpl-CGSWvSfZspntgvW7krR1fRBK6O12W", "", "gpt-4o-mini-2024-07-18", 1758038953,
		&llmrelayv1.Usage{InputTokens: 46, OutputTokens: 12, TotalTokens: 58}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	tc := parts[0].GetToolCall()
	if tc.GetCallId() != "call_rQvZ9upGjXJlbI3FYZ43qGgu" || tc.GetName() != "get_favorite_color" || tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
		t.Errorf("call %v", tc)
	}
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "fp_51db84afab"})
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("request tools %v", body["tools"])
	}
	fn, _ := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "get_favorite_color" || fn["description"] != "gets the favorite color of the caller" {
		t.Errorf("request tool %v", fn)
	}

	req2 := r22Ask("gpt-4o-mini", "What's my favorite color?")
	req2.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req2.Tools = []*llmrelayv1.Tool{tool}
	req2.Messages = append(req2.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: tc.GetCallId(), Content: "green"}}}))
	res2, body2 := r22Unary(t, "real_dotnet_no_parameter_tool_2", "", req2, false)
	msgs, _ := body2["messages"].([]any)
	want := []any{
		map[string]any{"role": "user", "content": "What's my favorite color?"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_rQvZ9upGjXJlbI3FYZ43qGgu", "type": "function",
			"function": map[string]any{"name": "get_favorite_color", "arguments": "{}"}}}},
		map[string]any{"role": "tool", "tool_call_id": "call_rQvZ9upGjXJlbI3FYZ43qGgu", "content": "green"},
	}
	if len(msgs) == 3 {
		if a, _ := msgs[1].(map[string]any); a != nil {
			if _, ok := a["content"]; !ok {
				a["content"] = nil
			}
		}
	}
	if !reflect.DeepEqual(msgs, want) {
		got, _ := json.Marshal(msgs)
		t.Errorf("second request messages %s", got)
	}
	r22Meta(t, res2.Meta, "chatcmpl-CGSWwOmVC3QDFsDq1h7np3pB9cVur", "", "gpt-4o-mini-2024-07-18", 1758038954,
		&llmrelayv1.Usage{InputTokens: 69, OutputTokens: 7, TotalTokens: 76}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if _, answer := r21cParts(t, res2.Message); answer != "Your favorite color is green." {
		t.Errorf("answer %q", answer)
	}
}

// TestRound22DotnetConsecutiveToolCalls: a three-turn tool loop on
// gpt-4o-mini-2024-07-18: get_weather_for_city {"city_name":"Osaka"}
// (call_of5sMdoBhqEZbvnNjZ3DSi1U, 124 in, 18 out), then with its result
// "rainy" get_mood_for_weather {"weather":"rainy"}
// (call_iXYZpXHbhm5MVvEB9HN36Ywq, 154 in), then with "bored" the answer
// (185 in, 18 out). Each request we build from the answers so far is
// checked against the one the record kept (the calls as sent, one tool
// message per result, in order).
func TestRound22DotnetConsecutiveToolCalls(t *testing.T) {
	t.Parallel()
	const q = "Can you guess my mood given that I'm currently located in Osaka?"
	tools := []*llmrelayv1.Tool{
		{Name: "get_weather_for_city", Description: "gets the current weather for a given city",
			Parameters: `{"type":"object","properties":{"city_name":{"type":"string","description":"the name of a city, e.g. Johannesburg or Ho Chi Minh City."}},"required":["city_name"]}`},
		{Name: "get_mood_for_weather", Description: "gets the caller's mood for a given weather",
			Parameters: `{"type":"object","properties":{"weather":{"type":"string","description":"the current weather of where the caller is located, e.g. sunny or cloudy."}},"required":["weather"]}`},
	}
	req := r22Ask("gpt-4o-mini", q)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = tools
	type turn struct {
		respID              string
		created             int64
		in                  int32
		callID, name, args  string
		result, wantMessage string
	}
	turns := []turn{
		{"chatcmpl-CGSWnIzTQDWDruoo2X3qgJkQW8OFk", 1758038945, 124, "call_of5sMdoBhqEZbvnNjZ3DSi1U", "get_weather_for_city", `{"city_name":"Osaka"}`, "rainy", ""},
		{"chatcmpl-CGSWowKC4SKnr67bsHnX0vJMZt3vW", 1758038946, 154, "call_iXYZpXHbhm5MVvEB9HN36Ywq", "get_mood_for_weather", `{"weather":"rainy"}`, "bored", ""},
		{"chatcmpl-CGSWoeWd78hhKAXyd18WDeeEUsrnD", 1758038946, 185, "", "", "", "", "Given that the weather in Osaka is rainy, your mood might be described as bored."},
	}
	want := []any{map[string]any{"role": "user", "content": q}}
	for i, tn := range turns {
		res, body := r22Unary(t, "real_dotnet_consecutive_tool_calls_"+string(rune('1'+i)), "", req, false)
		msgs, _ := body["messages"].([]any)
		for _, m := range msgs {
			if a, _ := m.(map[string]any); a != nil && a["role"] == "assistant" {
				if _, ok := a["content"]; !ok {
					a["content"] = nil
				}
			}
		}
		if !reflect.DeepEqual(msgs, want) {
			got, _ := json.Marshal(msgs)
			t.Errorf("turn %d: request messages %s", i+1, got)
		}
		if tn.callID == "" {
			r22Meta(t, res.Meta, tn.respID, "", "gpt-4o-mini-2024-07-18", tn.created,
				&llmrelayv1.Usage{InputTokens: tn.in, OutputTokens: 18, TotalTokens: tn.in + 18}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if _, answer := r21cParts(t, res.Message); answer != tn.wantMessage {
				t.Errorf("answer %q", answer)
			}
			break
		}
		r22Meta(t, res.Meta, tn.respID, "", "gpt-4o-mini-2024-07-18", tn.created,
			&llmrelayv1.Usage{InputTokens: tn.in, OutputTokens: 18, TotalTokens: tn.in + 18}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		tc := res.Message.GetParts()[0].GetToolCall()
		if len(res.Message.GetParts()) != 1 || tc.GetCallId() != tn.callID || tc.GetName() != tn.name || tc.GetArguments() != tn.args || !tc.GetArgumentsValid() {
			t.Fatalf("turn %d: parts %v", i+1, res.Message.GetParts())
		}
		req.Messages = append(req.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: tn.callID, Content: tn.result}}}))
		want = append(want,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": tn.callID, "type": "function",
				"function": map[string]any{"name": tn.name, "arguments": tn.args}}}},
			map[string]any{"role": "tool", "tool_call_id": tn.callID, "content": tn.result})
	}
}
