package openai

import (
	"context"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 22 (chat): OpenAI streams recorded by lmnr-ai/lmnr-python's
// cassettes, and Groq and OpenRouter answers from pydantic-ai's cassettes
// not used before (testdata/README.md, "Round 22").

const (
	r22Groq       = "https://api.groq.com/openai/v1"
	r22OpenRouter = "https://openrouter.ai/api/v1"
)

// TestRound22LmnrToolCallStream: gpt-4.1-nano-2025-04-14 streamed through
// litellm (February 2026): a role chunk with content null, then one call
// to get_weather (call_IhZLnCkrAUOgIDlUihqSAPyD, its name with arguments
// "" first, then five fragments making {"location": "Tokyo"}), "tool_calls"
// on an empty delta, the usage on a chunk with no choices (72 in, 44 out),
// obfuscation on every chunk. The request id is x-request-id; the six
// rate-limit headers from Date 14:20:01 (2 ms, 0 s).
func TestRound22LmnrToolCallStream(t *testing.T) {
	t.Parallel()
	const name = "real_lmnr_litellm_tool_call_openai_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := r22Ask("gpt-4.1-nano", "What is the weather in Tokyo?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a location",
		Parameters: `{"type":"object","properties":{"location":{"type":"string","description":"Location of the weather to get, e.g. San Francisco, CA or Paris, France"}},"required":["location"]}`}}
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
	checkStreamInvariants(t, evs)
	f := accFold(t, evs)
	parts := f.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	tc := parts[0].GetToolCall()
	if tc.GetCallId() != "call_IhZLnCkrAUOgIDlUihqSAPyD" || tc.GetName() != "get_weather" || tc.GetArguments() != `{"location": "Tokyo"}` {
		t.Errorf("call %v", tc)
	}
	r22Meta(t, f.Meta, "chatcmpl-DDA24sv2K0fcJL9iguwLtQPtM94Bs", "req_6547efd9adc74212966dca852bb10174", "gpt-4.1-nano-2025-04-14", 1772029200,
		&llmrelayv1.Usage{InputTokens: 72, OutputTokens: 44, TotalTokens: 116}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if f.Meta.GetServiceTier() != "default" {
		t.Errorf("service tier %q", f.Meta.GetServiceTier())
	}
	r22Ext(t, f.Meta, map[string]any{"system_fingerprint": "fp_336de151a4", "openai_processing_ms": float64(606)})
	r20WantRateLimit(t, f.Meta.GetRateLimit(), "Wed, 25 Feb 2026 14:20:01 GMT", 30000, 29999, 150000000, 149999990, 2*time.Millisecond, 0)
	var ends int
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCallEnd {
			ends++
		}
	}
	if ends != 1 {
		t.Errorf("%d tool call ends", ends)
	}
}

// TestRound22GroqQwenThinkInContent: qwen/qwen3-32b on Groq with
// reasoning_effort "default" and no reasoning_format (June 2026): the
// reasoning arrives in the content as a <think> block (Groq's raw format,
// the default for this model); it becomes the reasoning part, the bytes
// after </think> ("\n\n4") the text. The request id is x_groq.id; the
// seed, service_tier on_demand and Groq's timings (queue, prompt,
// completion, total) are kept; 21 in, 334 out. The body is the cassette's
// parsed_body written back (2027 bytes where Groq sent 1899).
func TestRound22GroqQwenThinkInContent(t *testing.T) {
	t.Parallel()
	res, body := r22Unary(t, "real_pyd_groq_reasoning_effort_setting", r22Groq, r22Ask("qwen/qwen3-32b", "What is 2+2? Reply with just the number."), false)
	m := res.Meta
	r22Meta(t, m, "chatcmpl-30a9bd34-f510-4831-a922-49e8d746eb79", "req_01kv1n1wnsfjws8xcswswx6h75", "qwen/qwen3-32b", 1781393323,
		&llmrelayv1.Usage{InputTokens: 21, OutputTokens: 334, TotalTokens: 355}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[1].GetText() != "\n\n4" {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning().GetText()
	if !strings.HasPrefix(r, "\nOkay, let's tackle this simple math question: What is 2+2?") ||
		!strings.Contains(r, `there's that old joke about "2+2=5"`) || !strings.HasSuffix(r, "So, confident that the answer is 4.\n") ||
		strings.Contains(r, "think>") {
		t.Errorf("reasoning %q", r)
	}
	if m.GetServiceTier() != "on_demand" {
		t.Errorf("service tier %q", m.GetServiceTier())
	}
	r22Ext(t, m, map[string]any{"seed": "1903311360", "system_fingerprint": "fp_5cf921caa2",
		"usage_details": map[string]any{"completion_time": 0.751157444, "prompt_time": 0.00124178, "queue_time": 0.204615308, "total_time": 0.752399224}})
	if body["model"] != "qwen/qwen3-32b" || body["stream"] != nil {
		t.Errorf("request %v", body)
	}
}

// TestRound22OpenRouterUpstreamError: openai/o3 through OpenRouter with
// reasoning effort none (2026): OpenRouter's 400 says only "Provider
// returned error" (code 400); OpenAI's own answer is in
// error.metadata.raw, a JSON string: "Unsupported value: 'none' is not
// supported with the 'o3-2025-04-16' model. Supported values are: 'low',
// 'medium', and 'high'.", type invalid_request_error, param
// reasoning.effort, code unsupported_value. Those are the error's message,
// param and code (they were lost: the caller saw "Provider returned error"
// and code "400"), metadata.provider_name "OpenAI" its upstream provider;
// invalid request, not retried.
func TestRound22OpenRouterUpstreamError(t *testing.T) {
	t.Parallel()
	req := r22Ask("openai/o3", "Reply with the single word: ok")
	req.Reasoning = true
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
	e := r22Err(t, "real_pyd_openrouter_thinking_false_on_always_on_route", r22OpenRouter, req)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "unsupported_value" || e.Param != "reasoning.effort" ||
		e.Message != "Unsupported value: 'none' is not supported with the 'o3-2025-04-16' model. Supported values are: 'low', 'medium', and 'high'." ||
		e.RetryAfter != 0 || e.Extended[extUpstreamProvider] != "OpenAI" {
		t.Errorf("error %+v", e)
	}
}

// TestRound22OpenRouterEmptyArguments: anthropic/claude-sonnet-4.5 through
// OpenRouter (February 2026) calls a tool whose one parameter is optional
// with arguments "" (Anthropic's empty input as OpenRouter relays it),
// after the text "I'll search for education content for you.": the call
// (toolu_01HDrihMKz5npKoC6xoaXjmF) keeps "" and arguments_valid false, as
// decided for empty arguments; finish tool_calls (native tool_calls),
// upstream provider Anthropic, 575 in and 48 out (zero cached and cache
// write, zero reasoning); a BYOK call: cost 0 (not reported), the upstream
// cost and is_byok in usage_details. The request's tool keeps its
// anyOf/default schema.
func TestRound22OpenRouterEmptyArguments(t *testing.T) {
	t.Parallel()
	req := r22Ask("anthropic/claude-sonnet-4.5", "Can you find me any education content?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "find_education_content",
		Parameters: `{"additionalProperties":false,"properties":{"title":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}},"type":"object"}`}}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	res, body := r22Unary(t, "real_pyd_openrouter_tool_optional_parameters", r22OpenRouter, req, false)
	m := res.Meta
	r22Meta(t, m, "gen-1770044233-TSFNa8omNa80bmpO22Nx", "", "anthropic/claude-sonnet-4.5", 1770044234,
		&llmrelayv1.Usage{InputTokens: 575, OutputTokens: 48, TotalTokens: 623}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetText() != "I'll search for education content for you." {
		t.Fatalf("parts %v", parts)
	}
	tc := parts[1].GetToolCall()
	if tc.GetCallId() != "toolu_01HDrihMKz5npKoC6xoaXjmF" || tc.GetName() != "find_education_content" || tc.GetArguments() != "" || tc.GetArgumentsValid() {
		t.Errorf("call %v", tc)
	}
	r22Ext(t, m, map[string]any{extUpstreamProvider: "Anthropic", "native_finish_reason": "tool_calls",
		"usage_details": map[string]any{"cost_details.upstream_inference_completions_cost": 0.00072, "cost_details.upstream_inference_cost": 0.002445,
			"cost_details.upstream_inference_prompt_cost": 0.001725, "is_byok": true}})
	tools, _ := body["tools"].([]any)
	t0, _ := tools[0].(map[string]any)
	fn, _ := t0["function"].(map[string]any)
	params, _ := fn["parameters"].(map[string]any)
	props, _ := params["properties"].(map[string]any)
	if title, _ := props["title"].(map[string]any); title["anyOf"] == nil || body["tool_choice"] != "auto" {
		t.Errorf("request %v", body)
	}
	// Sent back, the call's empty arguments become {}.
	req.Messages = append(req.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: tc.GetCallId(), Content: "[]"}}}))
	built, _, err := newTestProvider(t, kOpenAI, "http://unused").buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := r20Request(t, built)["messages"].([]any)
	var args any
	if len(msgs) == 3 {
		a, _ := msgs[1].(map[string]any)
		calls, _ := a["tool_calls"].([]any)
		if len(calls) == 1 {
			c, _ := calls[0].(map[string]any)
			fn, _ := c["function"].(map[string]any)
			args = fn["arguments"]
		}
	}
	if args != "{}" {
		t.Errorf("arguments sent back %v in %v", args, msgs)
	}
}

// TestRound22OpenRouterUpstreamErrorShapes: the other forms of
// error.metadata.raw that issue threads quote from OpenRouter, read by the
// same code inside a 200 (a stream's error event or a unary body's error
// object): plain text (Cloudflare's "error code: 1015" from Kluster,
// BerriAI/litellm#8448; an upstream rate limit's sentence,
// open-webui/computer#293) is the message, the router's 429 the kind and
// code; an upstream JSON error with code and type (Crucible's,
// diegosouzapw/OmniRoute#3044) gives its message and code. An upstream
// page of markup, raw JSON without an error in it, and an empty raw leave
// the router's own error as it was.
func TestRound22OpenRouterUpstreamErrorShapes(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "http://unused")
	for _, tc := range []struct {
		name, obj                   string
		kind                        provider.Kind
		code, message, upstreamProv string
	}{
		{"cloudflare text", `{"message":"Provider returned error","code":429,"metadata":{"raw":"error code: 1015","provider_name":"Kluster"}}`,
			provider.KindRateLimited, "429", "error code: 1015", "Kluster"},
		{"rate-limit sentence", `{"message":"Provider returned error","code":429,"metadata":{"raw":"z-ai/glm-5.3-flash is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: ...","provider_name":"BaseTen","limit_source":"upstream_provider_shared_pool","remedy_hint":"Retry shortly, add your own provider key, or route to another provider"}}`,
			provider.KindRateLimited, "429", "z-ai/glm-5.3-flash is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: ...", "BaseTen"},
		{"upstream JSON", `{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"type\":\"invalid_request_error\",\"code\":\"invalid_request_error\",\"message\":\"Model 'moonshotai/kimi-k2.6' supports at most 1 image per prompt.\",\"request_id\":\"req_*******\"}}","provider_name":"Crucible","is_byok":false}}`,
			provider.KindInvalidRequest, "invalid_request_error", "Model 'moonshotai/kimi-k2.6' supports at most 1 image per prompt.", "Crucible"},
		{"markup", `{"message":"Provider returned error","code":502,"metadata":{"raw":"<html><body>Bad gateway</body></html>","provider_name":"X"}}`,
			provider.KindUnavailable, "502", "Provider returned error", ""},
		{"JSON without error", `{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"ok\":false}","provider_name":"X"}}`,
			provider.KindInvalidRequest, "400", "Provider returned error", ""},
		{"empty raw", `{"message":"Provider returned error","code":400,"metadata":{"raw":"  ","provider_name":"X"}}`,
			provider.KindInvalidRequest, "400", "Provider returned error", ""},
	} {
		e := p.errorFromObject([]byte(tc.obj), 200, "", nil)
		up, _ := e.Extended[extUpstreamProvider].(string)
		if e.Kind != tc.kind || e.Code != tc.code || e.Message != tc.message || up != tc.upstreamProv {
			t.Errorf("%s: %+v", tc.name, e)
		}
	}
}

// TestRound22GroqToolChoiceRequired: openai/gpt-oss-120b on Groq with
// tool_choice required (February 2026). First a 400 tool_use_failed,
// "Tool choice is required, but model did not call a tool", with what the
// model wrote instead ("The capital of France is **Paris**.") as
// failed_generation, kept in the error's details; then, asked again, the
// reasoning in message.reasoning and a call to final_result with Groq's
// fc_<uuid> id and {"city":"Paris","country":"France"}, 245 in, 104 out of
// which 70 reasoning; x_groq.id is the request id, x_groq.seed the seed.
func TestRound22GroqToolChoiceRequired(t *testing.T) {
	t.Parallel()
	req := r22Ask("openai/gpt-oss-120b", "What is the capital of France?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{
		{Name: "get_weather", Parameters: `{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`},
		{Name: "final_result", Description: "The final response which ends this conversation",
			Parameters: `{"additionalProperties":false,"properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"type":"object"}`},
	}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	e := r22Err(t, "real_pyd_groq_native_with_tools_falls_back_gpt_oss_1", r22Groq, req)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "tool_use_failed" ||
		e.Message != "Tool choice is required, but model did not call a tool" || e.Extended[extFailedGeneration] != "The capital of France is **Paris**." {
		t.Errorf("error %+v", e)
	}
	res, body := r22Unary(t, "real_pyd_groq_native_with_tools_falls_back_gpt_oss_2", r22Groq, req, false)
	m := res.Meta
	r22Meta(t, m, "chatcmpl-10de341a-7f97-4601-8254-96158e69442a", "req_01khmk8j0fe66v2tfv1qz1rgx1", "openai/gpt-oss-120b", 1771291560,
		&llmrelayv1.Usage{InputTokens: 245, OutputTokens: 104, TotalTokens: 349, ReasoningTokens: 70}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	parts := res.Message.GetParts()
	if len(parts) != 2 || !strings.HasPrefix(parts[0].GetReasoning().GetText(), "The user says there's a validation error expecting JSON.") ||
		!strings.HasSuffix(parts[0].GetReasoning().GetText(), "Use the function final_result.") {
		t.Fatalf("parts %v", parts)
	}
	tc := parts[1].GetToolCall()
	if tc.GetCallId() != "fc_3b660a12-1bb6-48d9-b318-07f6d4a64bfb" || tc.GetName() != "final_result" ||
		tc.GetArguments() != `{"city":"Paris","country":"France"}` || !tc.GetArgumentsValid() {
		t.Errorf("call %v", tc)
	}
	r22Ext(t, m, map[string]any{"seed": "503100258", "system_fingerprint": "fp_0708ac49a5"})
	if body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}
}

// TestRound22ContextWindowFinish: Mistral's finish_reason model_length
// (the model's context window, not max_tokens, ended the answer) and
// z.ai's model_context_window_exceeded are LENGTH, as "length" is: they
// read as complete answers (OTHER), and a tool call they cut was relayed
// as a whole one with its partial arguments. Unary and streamed, the cut
// call is now flagged (arguments_valid false, a warning).
func TestRound22ContextWindowFinish(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "http://unused")
	for _, finish := range []string{"model_length", "model_context_window_exceeded"} {
		res, err := p.parseChatResponse([]byte(`{"id":"a1","object":"chat.completion","created":1762607725,"model":"mistral-small-latest","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"k7Qm2xTa9","type":"function","function":{"name":"lookup","arguments":"{\"query\": \"the lon"}}]},"finish_reason":"` + finish + `"}],"usage":{"prompt_tokens":31990,"completion_tokens":10,"total_tokens":32000}}`))
		if err != nil {
			t.Fatal(err)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, finish)
		tc := res.Message.GetParts()[len(res.Message.GetParts())-1].GetToolCall()
		if tc.GetCallId() != "k7Qm2xTa9" || tc.GetArgumentsValid() || tc.GetArguments() != `{"query": "the lon` || len(res.Meta.GetWarnings()) != 1 ||
			!strings.Contains(res.Meta.GetWarnings()[0], "cut by the token limit") {
			t.Errorf("%s: call %v warnings %v", finish, tc, res.Meta.GetWarnings())
		}

		p2, err := New(testKey)
		if err != nil {
			t.Fatal(err)
		}
		s := streamFrom(p2, `data: {"id":"a2","object":"chat.completion.chunk","model":"mistral-small-latest","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"k7Qm2xTa9","index":0,"function":{"name":"lookup","arguments":"{\"query\": \"the lon"}}]}}]}`+"\n\n"+
			`data: {"id":"a2","object":"chat.completion.chunk","model":"mistral-small-latest","choices":[{"index":0,"delta":{},"finish_reason":"`+finish+`"}]}`+"\n\ndata: [DONE]\n\n")
		evs, _, err := collect(t, s)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		checkStreamInvariants(t, evs)
		f := accFold(t, evs)
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, finish)
		if tc := f.Message.GetParts()[0].GetToolCall(); tc.GetArgumentsValid() || len(f.Meta.GetWarnings()) != 1 {
			t.Errorf("%s stream: call %v warnings %v", finish, tc, f.Meta.GetWarnings())
		}
	}
}

// TestRound22VLLMAbortFinish: vLLM ends a request its engine aborted
// (shutdown, pause, an abort request) with finish_reason "abort" in a last
// chunk and then [DONE], as if the answer were complete
// (vllm-project/vllm#57082). It read as a complete answer (OTHER), the
// text so far passed off as the whole; it is an unavailable error now,
// code abort, like DeepSeek's insufficient_system_resource, streamed and
// unary alike.
func TestRound22VLLMAbortFinish(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s := streamFrom(p, `data: {"id":"chatcmpl-0c2b","object":"chat.completion.chunk","created":1761566772,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"delta":{"role":"assistant","content":"The answer"},"logprobs":null,"finish_reason":null}]}`+"\n\n"+
		`data: {"id":"chatcmpl-0c2b","object":"chat.completion.chunk","created":1761566772,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"abort","stop_reason":null}]}`+"\n\ndata: [DONE]\n\n")
	defer s.Close()
	_, _, err = collect(t, s)
	e := providerError(t, err)
	if e.Kind != provider.KindUnavailable || e.Code != "abort" || !strings.Contains(e.Message, "its engine aborted the request") {
		t.Errorf("error %+v", e)
	}
	_, err = newTestProvider(t, kOpenAI, "http://unused").parseChatResponse([]byte(`{"id":"chatcmpl-0c2c","object":"chat.completion","created":1761566772,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"message":{"role":"assistant","content":"The answer"},"finish_reason":"abort"}]}`))
	if e := providerError(t, err); e.Kind != provider.KindUnavailable || e.Code != "abort" {
		t.Errorf("unary error %+v", e)
	}
}

// TestRound22DashScopeEnableThinking: on DashScope (Alibaba Cloud Model
// Studio's compatible mode) Qwen's thinking is enable_thinking: reasoning
// effort none turns it off, any other effort on; a call that asks nothing,
// unary or streamed, leaves it to the model (DashScope answered such
// unary calls with reasoning in maruel/genai's recordings: see
// round22mga_alibaba_test.go, which also covers the resend when DashScope
// refuses one); the caller's own enable_thinking in extra_body is left
// alone. Other hosts get no enable_thinking.
func TestRound22DashScopeEnableThinking(t *testing.T) {
	t.Parallel()
	const intl = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
	for _, tc := range []struct {
		name, host string
		stream     bool
		effort     llmrelayv1.ReasoningEffort
		extra      string
		want       any // the body's enable_thinking, nil when absent
	}{
		{"unary default", intl, false, 0, "", nil},
		{"stream default", intl, true, 0, "", nil},
		{"effort none stream", intl, true, llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, "", false},
		{"effort high stream", intl, true, llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, "", true},
		{"effort low unary", "https://dashscope.aliyuncs.com/compatible-mode/v1", false, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW, "", true},
		{"caller's own", intl, false, 0, `{"enable_thinking":true,"thinking_budget":50}`, true},
		{"other host", "https://api.deepseek.com", false, 0, "", nil},
	} {
		req := r22Ask("qwen3-32b", "q")
		req.Options.ReasoningEffort = tc.effort
		if tc.extra != "" {
			req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: tc.extra}
		}
		b, warns, err := newHostProvider(t, tc.host, "http://unused").buildChatRequest(req, tc.stream)
		if err != nil {
			t.Fatal(err)
		}
		if got := r20Request(t, b)["enable_thinking"]; got != tc.want || len(warns) != 0 {
			t.Errorf("%s: enable_thinking %v (want %v), warnings %v", tc.name, got, tc.want, warns)
		}
	}
	// reasoning_effort on DashScope: none is not one of its values (it
	// goes as enable_thinking false alone), max is.
	for _, tc := range []struct {
		effort llmrelayv1.ReasoningEffort
		want   any
	}{
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, nil},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, "high"},
		{llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, "max"},
	} {
		req := r22Ask("qwen3-32b", "q")
		req.Options.ReasoningEffort = tc.effort
		b, warns, err := newHostProvider(t, intl, "http://unused").buildChatRequest(req, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := r20Request(t, b)["reasoning_effort"]; got != tc.want || len(warns) != 0 {
			t.Errorf("%v: reasoning_effort %v (want %v), warnings %v", tc.effort, got, tc.want, warns)
		}
	}
}

// TestRound22OpenRouterRateLimitInBody: OpenRouter's 429 for its own
// free-model limits sends no rate-limit headers; the state is in
// error.metadata.headers (the body Gitlawb/openclaude#936 quotes: limit
// 50, remaining 0, the reset as Unix milliseconds, here the next UTC
// midnight). It is the error's rate-limit state now (it had none), so the
// retry policy sees the day's budget spent until its reset; the message
// and kind are OpenRouter's.
func TestRound22OpenRouterRateLimitInBody(t *testing.T) {
	t.Parallel()
	e := r22Err(t, "dialect_openrouter_err_429_free_per_day", r22OpenRouter, r22Ask("meta-llama/llama-3.3-70b-instruct:free", "q"))
	if e.Kind != provider.KindRateLimited || e.HTTPStatus != 429 || e.Code != "429" ||
		!strings.HasPrefix(e.Message, "Rate limit exceeded: free-models-per-day.") {
		t.Errorf("error %+v", e)
	}
	rl := e.Meta.GetRateLimit()
	if rl.GetRequestsLimit() != 50 || rl.RequestsRemaining == nil || rl.GetRequestsRemaining() != 0 ||
		!rl.GetRequestsResetTime().AsTime().Equal(time.Date(2026, 4, 28, 0, 0, 0, 0, time.UTC)) || rl.TokensLimit != nil {
		t.Errorf("rate limit %v", rl)
	}
	// Without such headers in the body, none is made up.
	if rl := routerRateLimit([]byte(`{"error":{"message":"x","code":429,"metadata":{"provider_name":null}}}`), nil); rl != nil {
		t.Errorf("rate limit from no headers: %v", rl)
	}
}
