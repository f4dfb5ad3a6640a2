package openai

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22 (mga): maruel/genai's go-vcr recordings of api.deepseek.com
// (providers/deepseek/testdata/TestClient/Scoreboard/..., testdata/README.md,
// "Round 22: maruel/genai's recordings"). The cassettes kept no
// X-Ds-Trace-Id (maruel/genai's recorder keeps a fixed list of headers), so
// no request id is expected; the ids are DeepSeek's bare UUIDs.

const r22mgaDeepSeek = "https://api.deepseek.com"

// r22mgaSqrtQuestion is the question of maruel/genai's square_root loops.
const r22mgaSqrtQuestion = "Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."

// r22mgaSqrtTool is maruel/genai's square_root tool, strict as DeepSeek's
// cassettes sent it.
func r22mgaSqrtTool(strict bool) []*llmrelayv1.Tool {
	return []*llmrelayv1.Tool{{Name: "square_root", Description: "Calculates and return the square root of a number", Strict: proto.Bool(strict),
		Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}`}}
}

// r22mgaTools is a tool request for model with the given tool choice.
func r22mgaTools(model string, mode llmrelayv1.ToolChoiceMode, strict bool, msgs ...*llmrelayv1.Message) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: model, Format: "openai-chat", Messages: msgs, Tools: r22mgaSqrtTool(strict),
		Options: &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: mode}}}}
}

// r22mgaSent returns the i-th message of a request body the adapter sent.
func r22mgaSent(t *testing.T, body map[string]any, n, i int) map[string]any {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	if len(msgs) != n {
		t.Fatalf("%d messages sent, want %d: %v", len(msgs), n, msgs)
	}
	m, _ := msgs[i].(map[string]any)
	return m
}

// r22mgaUsage is a Usage with reasoning and cached counts.
func r22mgaUsage(in, out, total, reasoning, cached int32) *llmrelayv1.Usage {
	return &llmrelayv1.Usage{InputTokens: in, OutputTokens: out, TotalTokens: total, ReasoningTokens: reasoning, CachedInputTokens: cached}
}

// TestRound22mgaDeepSeekThinkingToolLoop: deepseek-flash thinking, a tool
// allowed (tool_choice auto), unary (September 2026): content "", the
// reasoning "We need to use the tool …", one call square_root({"number":
// 132413}) with DeepSeek's id call_00_QFPbP7DP3rJKuOYxhAxq1377, finish
// tool_calls; 346 in (128 cached: prompt_tokens_details and
// prompt_cache_hit_tokens agree), 64 out of which 25 reasoning. The
// recorded second request, which DeepSeek answered, sends the reasoning
// back as the assistant's reasoning_content beside the call (DeepSeek's
// thinking mode requires it on a tool-call turn) and no content; ours must
// do the same. Its answer: "363.89", reasoning "The tool returned 363.89.
// …", 110 in, 20 out (16 reasoning), nothing cached.
func TestRound22mgaDeepSeekThinkingToolLoop(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))
	const callID = "call_00_QFPbP7DP3rJKuOYxhAxq1377"
	const reasoning1 = "We need to use the tool to calculate square root of 132413. Then reply only result. Need to call tool."
	res, body := r22Unary(t, "real_maruel_deepseek_flash_thinking_sqrt_1", r22mgaDeepSeek,
		r22mgaTools("deepseek-flash", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, true, user), false)
	r22Meta(t, res.Meta, "4a5003aa-939f-49b2-9673-d52204402858", "", "deepseek-flash", 1789333947,
		r22mgaUsage(346, 64, 410, 25, 128), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "aeb56401ca74e127821c4f9126dcb669"})
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != reasoning1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` {
		t.Errorf("call %v", c)
	}
	if body["tool_choice"] != "auto" || body["stream"] != nil {
		t.Errorf("request %v", body)
	}
	tools, _ := body["tools"].([]any)
	if tool, _ := tools[0].(map[string]any); len(tools) != 1 || !reflect.DeepEqual(tool["function"].(map[string]any)["strict"], true) {
		t.Errorf("tools %v", tools)
	}

	res2, body2 := r22Unary(t, "real_maruel_deepseek_flash_thinking_sqrt_2", r22mgaDeepSeek,
		r22mgaTools("deepseek-flash", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE, true, user, res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, "363.89"))), false)
	asst := r22mgaSent(t, body2, 3, 1)
	calls, _ := asst["tool_calls"].([]any)
	c0, _ := calls[0].(map[string]any)
	fn, _ := c0["function"].(map[string]any)
	if asst["role"] != "assistant" || asst["reasoning_content"] != reasoning1 || len(calls) != 1 || c0["id"] != callID ||
		c0["type"] != "function" || fn["name"] != "square_root" || fn["arguments"] != `{"number": 132413}` {
		t.Errorf("assistant %v", asst)
	}
	if c, ok := asst["content"]; ok && c != nil && c != "" {
		t.Errorf("assistant content %v (the recorded request had none)", c)
	}
	if tool := r22mgaSent(t, body2, 3, 2); tool["role"] != "tool" || tool["tool_call_id"] != callID || tool["content"] != "363.89" {
		t.Errorf("tool message %v", tool)
	}
	if body2["tool_choice"] != "none" {
		t.Errorf("tool_choice %v", body2["tool_choice"])
	}
	r22Meta(t, res2.Meta, "749666a8-eb4c-463a-b6cd-2d31a9d64add", "", "deepseek-flash", 1789333948,
		r22mgaUsage(110, 20, 130, 16, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res2.Meta, map[string]any{"system_fingerprint": "aeb56401ca74e127821c4f9126dcb669"})
	if r, a := r21cParts(t, res2.Message); r != "The tool returned 363.89. I should reply with only the result." || a != "363.89" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
}

// TestRound22mgaDeepSeekThinkingRequiredRefused: the same model with a
// call required (tool_choice "required"): 400 "Thinking mode does not
// support this tool_choice", code invalid_request_error, sent as
// application/octet-stream through CloudFront (X-Cache "Error from
// cloudfront"): an invalid request with DeepSeek's message whole, not
// retried.
func TestRound22mgaDeepSeekThinkingRequiredRefused(t *testing.T) {
	t.Parallel()
	e := r22Err(t, "real_maruel_deepseek_flash_thinking_required_error", r22mgaDeepSeek,
		r22mgaTools("deepseek-flash", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED, true, msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))))
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_request_error" ||
		e.Message != "Thinking mode does not support this tool_choice" || e.RequestID != "" {
		t.Errorf("error %+v", e)
	}
}

// TestRound22mgaDeepSeekThinkingLogprobs: deepseek-flash thinking with
// logprobs and 2 top logprobs, unary: "Hello" (one token, -1.19e-7, its
// two candidates), the reasoning "We need answer. …" and, beside the
// content's, DeepSeek's own logprobs.reasoning_content list (32 tokens, as many as the reasoning tokens;
// the last " \n" whose runner-up is the <｜end▁of▁thinking｜> marker); 38
// in, 34 out of which 32 reasoning. The logprobs object is kept whole in
// meta.extended, both lists, bytes and all.
func TestRound22mgaDeepSeekThinkingLogprobs(t *testing.T) {
	t.Parallel()
	req := r22Ask("deepseek-flash", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	res, body := r22Unary(t, "real_maruel_deepseek_flash_thinking_logprobs", r22mgaDeepSeek, req, false)
	r22Meta(t, res.Meta, "fed81932-af26-4719-a5d4-150b2e318492", "", "deepseek-flash", 1789333923,
		r22mgaUsage(38, 34, 72, 32, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if r, a := r21cParts(t, res.Message); r != `We need answer. User asks: "Say hello. Use only one word." Need respond only one word. Likely "Hello". Ensure one word. ` || a != "Hello" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	lp, _ := res.Meta.GetExtended().AsMap()[extLogprobs].(map[string]any)
	content, _ := lp["content"].([]any)
	rc, _ := lp["reasoning_content"].([]any)
	if len(content) != 1 || len(rc) != 32 {
		t.Fatalf("logprobs: %d content, %d reasoning entries", len(content), len(rc))
	}
	if c0, _ := content[0].(map[string]any); c0["token"] != "Hello" || c0["logprob"] != -1.1920928e-7 || len(c0["top_logprobs"].([]any)) != 2 {
		t.Errorf("content logprob %v", c0)
	}
	last, _ := rc[31].(map[string]any)
	top, _ := last["top_logprobs"].([]any)
	if t1, _ := top[1].(map[string]any); last["token"] != " \n" || t1["token"] != "<｜end▁of▁thinking｜>" {
		t.Errorf("last reasoning logprob %v", last)
	}
	if body["logprobs"] != true || body["top_logprobs"] != float64(2) {
		t.Errorf("request %v", body)
	}
	if len(res.Meta.GetWarnings()) != 0 || strings.Contains(res.Message.String(), "end▁of▁thinking") {
		t.Errorf("warnings %v", res.Meta.GetWarnings())
	}
}

// TestRound22mgaDeepSeekThinkingOff: deepseek-flash with thinking off
// and stop ["is"], unary: "Canada " (the stop string cut), finish stop, 16
// in, 2 out, no completion_tokens_details. maruel/genai turned thinking off
// with {"thinking":{"type":"disabled"}}, which DeepSeek answered without
// reasoning. **Bug:** reasoning effort none, the contract's way to ask the
// same, went as reasoning_effort "none", a value DeepSeek's Chat
// Completions does not take (its thinking guide: "thinking" toggles,
// reasoning_effort is low/high/max): thinking stayed on. It now goes as
// the recorded request did; MAX goes as DeepSeek's "max" (it went as
// OpenAI's xhigh, which DeepSeek maps to high).
func TestRound22mgaDeepSeekThinkingOff(t *testing.T) {
	t.Parallel()
	req := r22Ask("deepseek-flash", "Talk about Canada in great details. Start with: Canada is")
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
	req.Options.Stop = []string{"is"}
	res, body := r22Unary(t, "real_maruel_deepseek_flash_stop", r22mgaDeepSeek, req, false)
	r22Meta(t, res.Meta, "d4988923-dd03-4429-b3f1-1d6a5645238e", "", "deepseek-flash", 1789333957,
		r22mgaUsage(16, 2, 18, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "aeb56401ca74e127821c4f9126dcb669"})
	if r, a := r21cParts(t, res.Message); r != "" || a != "Canada " {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	if !reflect.DeepEqual(body["thinking"], map[string]any{"type": "disabled"}) || body["reasoning_effort"] != nil ||
		!reflect.DeepEqual(body["stop"], []any{"is"}) {
		t.Errorf("request %v", body)
	}

	// The other efforts, on DeepSeek and elsewhere.
	for _, tc := range []struct {
		base     string
		effort   llmrelayv1.ReasoningEffort
		thinking any
		wire     any
		warned   bool
	}{
		{r22mgaDeepSeek, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, nil, "max", false},
		{r22mgaDeepSeek, llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH, nil, "high", false},
		{r22mgaDeepSeek, llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED, nil, nil, false},
		{"https://api.openai.com/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, nil, "none", false},
		{"https://api.openai.com/v1", llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX, nil, "xhigh", true},
	} {
		req := r22Ask("deepseek-flash", "q")
		req.Options.ReasoningEffort = tc.effort
		b, warns, err := newHostProvider(t, tc.base, "http://unused").buildChatRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		got := r20Request(t, b)
		if got["thinking"] != tc.thinking || got["reasoning_effort"] != tc.wire || (len(warns) > 0) != tc.warned {
			t.Errorf("%s %v: thinking %v, reasoning_effort %v, warnings %v", tc.base, tc.effort, got["thinking"], got["reasoning_effort"], warns)
		}
	}
}

// TestRound22mgaDeepSeekThinkingMaxTokens: deepseek-flash thinking with
// max_tokens 16, unary: all 16 output tokens reasoning ("We need answer:
// …"), content "", finish length: an empty answer with a LENGTH finish,
// the reasoning kept; max_tokens sent as maruel/genai did.
func TestRound22mgaDeepSeekThinkingMaxTokens(t *testing.T) {
	t.Parallel()
	req := r22Ask("deepseek-flash", "Explain the theory of relativity in great details.")
	req.Options.MaxTokens = proto.Int32(16)
	res, body := r22Unary(t, "real_maruel_deepseek_flash_thinking_max_tokens", r22mgaDeepSeek, req, false)
	r22Meta(t, res.Meta, "5c408aec-913e-47c2-b64a-bdbbcf536c4e", "", "deepseek-flash", 1789333924,
		r22mgaUsage(39, 16, 55, 16, 0), llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	if r, a := r21cParts(t, res.Message); r != "We need answer: explain theory of relativity in great details. Need likely comprehensive." || a != "" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	if body["max_tokens"] != float64(16) || body["max_completion_tokens"] != nil {
		t.Errorf("request %v", body)
	}
}

// TestRound22mgaDeepSeekReasonerStop: deepseek-reasoner (July 2025, behind
// Cloudflare) with stop ["is"]: "Canada " after 304 reasoning tokens, the
// request id X-Ds-Trace-Id c5bebb7b66272690e37e135b05e683b2, the
// fingerprint fp_393bca965e_prod0623_fp8_kvcache; the stop is sent (DeepSeek's
// reasoning model takes it; only OpenAI's refuse it).
func TestRound22mgaDeepSeekReasonerStop(t *testing.T) {
	t.Parallel()
	req := r22Ask("deepseek-reasoner", "Talk about Canada in great details. Start with: Canada is")
	req.Options.Stop = []string{"is"}
	res, body := r22Unary(t, "real_maruel_deepseek_reasoner_stop", r22mgaDeepSeek, req, false)
	r22Meta(t, res.Meta, "5342efce-f033-40ac-80c3-0ea2d0008edb", "c5bebb7b66272690e37e135b05e683b2", "deepseek-reasoner", 1753566432,
		r22mgaUsage(17, 308, 325, 304, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "fp_393bca965e_prod0623_fp8_kvcache"})
	r, a := r21cParts(t, res.Message)
	if a != "Canada " || !strings.HasPrefix(r, `Okay, the user wants a detailed description of Canada starting with "Canada is".`) ||
		!strings.HasSuffix(r, "User gets both textbook and lived-experience Canada.") {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	if !reflect.DeepEqual(body["stop"], []any{"is"}) {
		t.Errorf("request %v", body)
	}
}

// TestRound22mgaDeepSeekReasonerLogprobsRefused: deepseek-reasoner asked
// for logprobs (July 2025): 400 "deepseek-reasoner does not support the
// parameter `logprobs`", the request id X-Ds-Trace-Id: an invalid
// request, not retried.
func TestRound22mgaDeepSeekReasonerLogprobsRefused(t *testing.T) {
	t.Parallel()
	req := r22Ask("deepseek-reasoner", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	e := r22Err(t, "real_maruel_deepseek_reasoner_logprobs_error", r22mgaDeepSeek, req)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_request_error" ||
		e.Message != "deepseek-reasoner does not support the parameter `logprobs`" || e.RequestID != "2f3887752169f03ede7cff42e3128803" {
		t.Errorf("error %+v", e)
	}
}

// TestRound22mgaDeepSeekV4StreamMaxTokens: deepseek-v4-flash with thinking
// off (reasoning effort none: {"thinking":{"type":"disabled"}}, as the
// recorded request) and max_tokens 16, streamed (May 2026): a role chunk
// with content "", sixteen text deltas ("Here is a detailed explanation of
// the Theory of Relativity, broken down into its"), then finish length on
// an empty delta carrying the usage (13 in, 16 out, nothing cached, no
// completion details), fp_8b330d02d0_prod0820_fp8_kvcache_20260402.
func TestRound22mgaDeepSeekV4StreamMaxTokens(t *testing.T) {
	t.Parallel()
	req := r22Ask("deepseek-v4-flash", "Explain the theory of relativity in great details.")
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
	req.Options.MaxTokens = proto.Int32(16)
	f, body := r21cStream(t, "real_maruel_deepseek_v4_flash_max_tokens_stream", r22mgaDeepSeek, req)
	if r, a := r21cParts(t, f.Message); r != "" || a != "Here is a detailed explanation of the Theory of Relativity, broken down into its" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	r22Meta(t, f.Meta, "595a0a53-aaa4-4dbd-a029-cd44f13f2173", "", "deepseek-v4-flash", 1779804209,
		r22mgaUsage(13, 16, 29, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	r22Ext(t, f.Meta, map[string]any{"system_fingerprint": "fp_8b330d02d0_prod0820_fp8_kvcache_20260402"})
	if !reflect.DeepEqual(body["thinking"], map[string]any{"type": "disabled"}) || body["reasoning_effort"] != nil || body["max_tokens"] != float64(16) || body["stream"] != true {
		t.Errorf("request %v", body)
	}
}

// TestRound22mgaDeepSeekChatToolLoop: deepseek-chat (July 2025, behind
// Cloudflare), a call required, unary: content "" and one call with
// DeepSeek's older id form call_0_4ab49904-2914-45e5-a36f-37f8edf79a82
// (arguments without spaces), 160 in (128 cached), 18 out, X-Ds-Trace-Id
// 3f0f8c3a9928671ba6ef723fbb757876. The recorded second request (answered:
// "363.89", 57 in, 3 out) sends the call back by its id with no content
// and no reasoning_content; ours sends the same call and content null,
// and reasoning_content "" (every DeepSeek tool-call turn gets the field,
// which thinking mode requires; this recording does not show whether
// deepseek-chat takes an empty one).
func TestRound22mgaDeepSeekChatToolLoop(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))
	const callID = "call_0_4ab49904-2914-45e5-a36f-37f8edf79a82"
	res, body := r22Unary(t, "real_maruel_deepseek_chat_sqrt_1", r22mgaDeepSeek,
		r22mgaTools("deepseek-chat", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED, false, user), false)
	r22Meta(t, res.Meta, "7e4b4aa3-ed1a-42d3-a088-0a77e6a2a617", "3f0f8c3a9928671ba6ef723fbb757876", "deepseek-chat", 1753544352,
		r22mgaUsage(160, 18, 178, 0, 128), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "fp_8802369eaa_prod0623_fp8_kvcache"})
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` {
		t.Errorf("call %v", c)
	}
	if body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}

	res2, body2 := r22Unary(t, "real_maruel_deepseek_chat_sqrt_2", r22mgaDeepSeek,
		r22mgaTools("deepseek-chat", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE, false, user, res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, "363.89"))), false)
	asst := r22mgaSent(t, body2, 3, 1)
	calls, _ := asst["tool_calls"].([]any)
	c0, _ := calls[0].(map[string]any)
	fn, _ := c0["function"].(map[string]any)
	// reasoning_content "" where the recorded request had none: the
	// adapter gives every tool-call turn to DeepSeek the field, which its
	// thinking mode requires (request.go); the turn had no reasoning.
	if asst["reasoning_content"] != "" || len(calls) != 1 || c0["id"] != callID || fn["arguments"] != `{"number":132413}` {
		t.Errorf("assistant %v", asst)
	}
	if c, ok := asst["content"]; ok && c != nil && c != "" {
		t.Errorf("assistant content %v (the recorded request had none)", c)
	}
	if tool := r22mgaSent(t, body2, 3, 2); tool["tool_call_id"] != callID || tool["content"] != "363.89" {
		t.Errorf("tool message %v", tool)
	}
	r22Meta(t, res2.Meta, "f8a63472-1b17-461d-9855-6bde9296322e", "f292f11480e098902d746540380d79ed", "deepseek-chat", 1753544356,
		r22mgaUsage(57, 3, 60, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if r, a := r21cParts(t, res2.Message); r != "" || a != "363.89" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
}

// TestRound22mgaDeepSeekReasonerCallAsText: deepseek-reasoner offered the
// tool (July 2025) wrote its call as text: content "```json\n{"function":
// "square_root","arguments":{"number":132413}}\n```" followed by the
// model's own control tokens <｜tool▁call▁end｜><｜tool▁calls▁end｜>, finish
// stop, no tool_calls. DeepSeek did not parse it; the adapter relays the
// text as DeepSeek sent it (guessing a call from it would invent an id and
// a structure the API never gave), with the reasoning and 45 reasoning
// tokens, 128 cached, and (round 23) a warning that the text holds
// DeepSeek's tool-call control tokens: the call went unsaid.
func TestRound22mgaDeepSeekReasonerCallAsText(t *testing.T) {
	t.Parallel()
	res, _ := r22Unary(t, "real_maruel_deepseek_reasoner_sqrt_text_call", r22mgaDeepSeek,
		r22mgaTools("deepseek-reasoner", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_UNSPECIFIED, false, msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))), false)
	r22Meta(t, res.Meta, "0b6ba761-5bf6-4c2a-bc72-a5bad20943da", "e8bdd270acaed0e02405029093d9d807", "deepseek-reasoner", 1753566464,
		r22mgaUsage(161, 66, 227, 45, 128), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r, a := r21cParts(t, res.Message)
	if a != "```json\n{\"function\":\"square_root\",\"arguments\":{\"number\":132413}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>" ||
		!strings.HasPrefix(r, "We are going to use the square_root function") {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	if res.Meta.GetToolCallCount() != 0 {
		t.Errorf("tool calls %d", res.Meta.GetToolCallCount())
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != warnDeepSeekToolText {
		t.Errorf("warnings %v", w)
	}
}

// TestRound22mgaDeepSeekThinkingStreamToolCall: the thinking tool call
// streamed (deepseek-flash, September 2026): a role chunk with
// reasoning_content "", ten reasoning deltas ("We need call tool. Then
// reply only result."), the call call_00_52GXPc9MeaoVeQhhPOZ04807 named
// with arguments "" then eight fragments without id or type, the finish
// tool_calls on a chunk with content "" and reasoning_content null, the
// usage on it (346 in, 49 out, 10 reasoning, nothing cached). The second
// request maruel/genai recorded (GenStream-Tools-SquareRoot-2.yaml, which
// DeepSeek answered) sends that reasoning back as reasoning_content beside
// the call: the request we build from the streamed answer is compared
// with it.
func TestRound22mgaDeepSeekThinkingStreamToolCall(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))
	const callID = "call_00_52GXPc9MeaoVeQhhPOZ04807"
	f, body := r21cStream(t, "real_maruel_deepseek_flash_thinking_sqrt_stream", r22mgaDeepSeek,
		r22mgaTools("deepseek-flash", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, true, user))
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "We need call tool. Then reply only result." {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` {
		t.Errorf("call %v", c)
	}
	r22Meta(t, f.Meta, "30e855e5-dc8b-43a5-b365-3f747f75abe7", "", "deepseek-flash", 1789333945,
		r22mgaUsage(346, 49, 395, 10, 0), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, f.Meta, map[string]any{"system_fingerprint": "aeb56401ca74e127821c4f9126dcb669"})
	if body["stream"] != true || body["tool_choice"] != "auto" {
		t.Errorf("request %v", body)
	}

	// The follow-up, streamed, against the recorded one.
	const recorded = `{"model":"deepseek-flash","messages":[{"role":"user","content":"` + r22mgaSqrtQuestion + `"},` +
		`{"role":"assistant","reasoning_content":"We need call tool. Then reply only result.","tool_calls":[{"id":"call_00_52GXPc9MeaoVeQhhPOZ04807","type":"function","function":{"name":"square_root","arguments":"{\"number\": 132413}"}}]},` +
		`{"role":"tool","content":"363.89","tool_call_id":"call_00_52GXPc9MeaoVeQhhPOZ04807"}],"stream":true,"tool_choice":"none",` +
		`"tools":[{"type":"function","function":{"name":"square_root","description":"Calculates and return the square root of a number","parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]},"strict":true}}]}`
	b, warns, err := newHostProvider(t, r22mgaDeepSeek, "http://unused").buildChatRequest(r22mgaTools("deepseek-flash", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE, true,
		user, f.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, "363.89"))), true)
	if err != nil || len(warns) != 0 {
		t.Fatalf("build: %v, warnings %v", err, warns)
	}
	got, want := r20Request(t, b), r20Request(t, []byte(recorded))
	for _, k := range []string{"model", "messages", "tool_choice", "tools", "stream"} {
		g, w := got[k], want[k]
		if k == "messages" {
			// Ours gives the assistant's call turn "content": null, which
			// the recorded one left out.
			if a, _ := g.([]any)[1].(map[string]any); a["content"] == nil {
				delete(a, "content")
			}
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %v\nwant %v", k, g, w)
		}
	}
}

// TestRound22mgaDeepSeekReasonerToolsAsChat: deepseek-reasoner asked with
// a tool, streamed (September 2025): DeepSeek answered as deepseek-chat
// (every chunk's model; no reasoning), the call
// call_00_FL3F6qrZb7Jr3KzD87PxvP8E in nine fragments making {"number":
// 132413}, 203 in of which 192 cached, 14 out. The resolved model is the
// one that answered, deepseek-chat.
func TestRound22mgaDeepSeekReasonerToolsAsChat(t *testing.T) {
	t.Parallel()
	f, _ := r21cStream(t, "real_maruel_deepseek_reasoner_tools_as_chat_stream", r22mgaDeepSeek,
		r22mgaTools("deepseek-reasoner", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, false, msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))))
	parts := f.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != "call_00_FL3F6qrZb7Jr3KzD87PxvP8E" || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` {
		t.Errorf("call %v", c)
	}
	r22Meta(t, f.Meta, "3955ef46-eb9d-44e7-ab2f-f2810b1446d4", "", "deepseek-chat", 1757464924,
		r22mgaUsage(203, 14, 217, 0, 192), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, f.Meta, map[string]any{"system_fingerprint": "fp_08f168e49b_prod0820_fp8_kvcache"})
}
