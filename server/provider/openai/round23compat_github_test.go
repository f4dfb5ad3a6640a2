package openai

import (
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// r23GitHub is GitHub Models' inference endpoint, as maruel/genai calls
// it.
const r23GitHub = "https://models.github.ai/inference"

// TestRound23GitHubNanoStream: openai/gpt-4.1-nano on GitHub Models
// (April 2026), square_root required, streamed: Azure's shape (a first
// chunk with empty id and model and the prompt_filter_results, an empty
// content_filter_results on every choice, obfuscation), the call
// call_t3bKBKw5kGJJ5sbdzqTFxi55 in six fragments, the usage alone (74 in,
// 16 out); the rate-limit headers of Azure with bare resets beside their
// renewal periods: 1000 requests per 60 s, 999 left, reset 60, and
// 1,000,000 tokens, 999,649 left, reset 21, which the budgets' numbers
// read as milliseconds (one request refills in 60 ms, 351 tokens in 21
// ms: provider.bareResetMillis), as the recording confirms. The request
// id is GitHub's x-github-request-id (the id of its errors too:
// TestRound23GitHubErrors), not the apim-request-id of Azure behind it.
func TestRound23GitHubNanoStream(t *testing.T) {
	t.Parallel()
	const date = "Thu, 02 Apr 2026 20:57:34 GMT"
	_, f, body := mgbStream(t, "real_maruel_github_nano_sqrt_stream_1", r23GitHub, date, mgbSqrtReq("openai/gpt-4.1-nano", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if body["model"] != "openai/gpt-4.1-nano" || body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 1 || parts[0].GetToolCall().GetCallId() != "call_t3bKBKw5kGJJ5sbdzqTFxi55" || parts[0].GetToolCall().GetArguments() != `{"number":132413}` {
		t.Fatalf("parts %v", parts)
	}
	r22Meta(t, f.Meta, "chatcmpl-DQJOYWugt7xzv6W29MRM8uuDVO33j", "871E:69BE:466074:4FAD69:69CED83E", "gpt-4.1-nano-2025-04-14", 1775163454,
		&llmrelayv1.Usage{InputTokens: 74, OutputTokens: 16, TotalTokens: 90}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r20WantRateLimit(t, f.Meta.GetRateLimit(), date, 1000, 999, 1000000, 999649, 60*time.Millisecond, 21*time.Millisecond)
}

// TestRound23GitHubErrors: GitHub Models' gateway refusing before any
// model: a bad model, 404 {"error":{"code":"unknown_model","message":
// "Unknown model: /bad model","details":…}} as text/plain; a bad key,
// streamed, 401 with the body "Unauthorized". Both carry GitHub's
// x-github-request-id and no other id. **Bug:** the errors had no request
// id; now GitHub's.
func TestRound23GitHubErrors(t *testing.T) {
	t.Parallel()
	e, _ := mgbErr(t, "real_maruel_github_bad_model_err", r23GitHub, r22Ask("bad model", "Tell a short joke."), false)
	if e.Kind != provider.KindNotFound || e.HTTPStatus != 404 || e.Code != "unknown_model" || e.Message != "Unknown model: /bad model" ||
		e.RequestID != "DD10:1A7601:486311:521DA6:69CED910" {
		t.Errorf("bad model %+v (request id %q)", e, e.RequestID)
	}
	e, _ = mgbErr(t, "real_maruel_github_bad_key_stream_err", r23GitHub, r22Ask("openai/gpt-4.1-nano", "Tell a short joke."), true)
	if e.Kind != provider.KindUnauthenticated || e.HTTPStatus != 401 || e.Message != "Unauthorized" || e.RequestID != "DD10:1A7601:4862F4:521D89:69CED910" {
		t.Errorf("bad key %+v (request id %q)", e, e.RequestID)
	}
}
