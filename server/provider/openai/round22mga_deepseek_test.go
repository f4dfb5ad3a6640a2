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
