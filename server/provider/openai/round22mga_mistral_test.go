package openai

import (
	"context"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 22 (mga): maruel/genai's go-vcr recordings of api.mistral.ai
// (providers/mistral/testdata/TestClient/Scoreboard/..., December 2025;
// testdata/README.md, "Round 22: maruel/genai's recordings"): Mistral's
// Chat Completions, OpenAI's wire format with Mistral's ids (32-hex
// response ids, 9-character call ids), its request id in
// Mistral-Correlation-Id (X-Kong-Request-Id the same value), its budgets in
// x-ratelimit-*-req-60-second and the tokens-minute/month windows.

// TestRound22mgaMistralToolLoop: mistral-small-latest with a strict tool,
// a call required, unary: content "" beside one call square_root({"number":
// 132413}) with Mistral's id KTz8uD0F1 (no "type", an "index"), finish
// tool_calls, 128 in, 16 out; the request budget 360 a minute (231 left),
// the token budget 2000000 a minute (1995732 left) and 10000000000 a
// month, the query's cost 144. The recorded second request, which Mistral
// answered, names the call by its id on the assistant's call (with
// "type": "function") and on the tool message; ours does the same (without
// the tool message's "name", which Mistral also takes without: ruby_llm's
// accepted follow-up, TestRound21cMistralStreamToolOneChunk). Its answer:
// "363.89", "tool_calls": null, 170 in, 7 out, 230 requests left.
func TestRound22mgaMistralToolLoop(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion))
	const callID = "KTz8uD0F1"
	res, body := r22Unary(t, "real_maruel_mistral_small_sqrt_1", r21cMistral,
		r22mgaTools("mistral-small-latest", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED, true, user), false)
	r22Meta(t, res.Meta, "13ed29bb5f994102963c0f2d697952e7", "019b1ce1-2225-78c6-9bd5-120059596dfb", "mistral-small-latest", 1765716075,
		r22mgaUsage(128, 16, 144, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` {
		t.Errorf("call %v", c)
	}
	if rl := res.Meta.GetRateLimit(); rl.GetRequestsLimit() != 360 || rl.GetRequestsRemaining() != 231 || rl.GetTokensLimit() != 2000000 || rl.GetTokensRemaining() != 1995732 {
		t.Errorf("rate limit %v", rl)
	}
	r22Ext(t, res.Meta, map[string]any{extSizeLimit: map[string]any{"query_cost": float64(144)}})
	checkWindows(t, "mistral", res.Meta.GetRateLimit(), time.Time{},
		"requests x-ratelimit-req-60-second 360/231 1m0s -",
		"tokens x-ratelimit-tokens-minute 2000000/1995732 1m0s -",
		"tokens x-ratelimit-tokens-month 10000000000/9999879198 - -")
	if body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}

	res2, body2 := r22Unary(t, "real_maruel_mistral_small_sqrt_2", r21cMistral,
		r22mgaTools("mistral-small-latest", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE, true, user, res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, "363.89"))), false)
	asst := r22mgaSent(t, body2, 3, 1)
	calls, _ := asst["tool_calls"].([]any)
	c0, _ := calls[0].(map[string]any)
	fn, _ := c0["function"].(map[string]any)
	if len(calls) != 1 || c0["id"] != callID || c0["type"] != "function" || fn["name"] != "square_root" || fn["arguments"] != `{"number": 132413}` {
		t.Errorf("assistant %v", asst)
	}
	if tool := r22mgaSent(t, body2, 3, 2); tool["role"] != "tool" || tool["tool_call_id"] != callID || tool["content"] != "363.89" {
		t.Errorf("tool message %v", tool)
	}
	if body2["tool_choice"] != "none" {
		t.Errorf("tool_choice %v", body2["tool_choice"])
	}
	r22Meta(t, res2.Meta, "b761b3bf7b664d29afe6c2cf93aa7796", "019b1ce1-2370-7127-8a4d-3ce626003d11", "mistral-small-latest", 1765716075,
		r22mgaUsage(170, 7, 177, 0, 0), llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if r, a := r21cParts(t, res2.Message); r != "" || a != "363.89" {
		t.Errorf("reasoning %q, answer %q", r, a)
	}
	if rl := res2.Meta.GetRateLimit(); rl.GetRequestsRemaining() != 230 || rl.GetTokensRemaining() != 1995555 {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound22mgaUnknownModel: three servers' 400 for a model they do not
// have, each a stream refused before it opens (maruel/genai asked for
// "bad model"). Mistral (December 2025): type invalid_model, code "1500",
// "Invalid model: bad model", Mistral-Correlation-Id. Perplexity (August
// 2025): type invalid_model, numeric code 400, "Invalid model 'bad
// model'. Permitted models can be found in the documentation at …".
// DeepSeek (May 2026, application/octet-stream from CloudFront):
// invalid_request_error "The supported API model names are
// deepseek-v4-pro or deepseek-v4-flash, but you passed bad model.".
// **Bug:** all three were invalid requests, where OpenAI's and DashScope's
// 404 model_not_found for the same mistake are not-found errors (the
// contract's kind for an unknown model); they are not-found errors now,
// with the servers' messages, codes and request ids as sent.
func TestRound22mgaUnknownModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, base, code, reqID, msg string
	}{
		{"real_maruel_mistral_bad_model_stream_error", r21cMistral, "1500", "019b1cdf-83e0-7e6b-a161-9cf9c5b6d50a", "Invalid model: bad model"},
		{"real_maruel_perplexity_bad_model_stream_error", r21cPerplexity, "400", "",
			"Invalid model 'bad model'. Permitted models can be found in the documentation at https://docs.perplexity.ai/guides/model-cards."},
		{"real_maruel_deepseek_bad_model_stream_error", r22mgaDeepSeek, "invalid_request_error", "",
			"The supported API model names are deepseek-v4-pro or deepseek-v4-flash, but you passed bad model."},
	} {
		srv := providertest.ReplayFile(t, td(tc.name+".http"))
		_, err := newHostProvider(t, tc.base, srv.URL).Stream(context.Background(), r22Ask("bad model", "Tell a short joke."))
		if e := providerError(t, err); e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Code != tc.code || e.RequestID != tc.reqID || e.Message != tc.msg {
			t.Errorf("%s: error %+v", tc.name, e)
		}
	}
	// Another 400 invalid_request_error stays an invalid request.
	e := r22Err(t, "real_maruel_deepseek_flash_thinking_required_error", r22mgaDeepSeek, r22Ask("deepseek-flash", "q"))
	if e.Kind != provider.KindInvalidRequest {
		t.Errorf("kind %v", e.Kind)
	}
}
