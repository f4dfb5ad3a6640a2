package openai

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// mgbFlex is maruel/genai's service tier for OpenAI's Chat Completions.
func mgbFlex(req *provider.Request) *provider.Request {
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{ServiceTier: "flex"}}}
	return req
}

// TestRound22MgbOpenAIReasoningCut: gpt-5-nano (September 2025) on the
// flex tier with max_completion_tokens 16 (a reasoning model: the limit
// goes as max_completion_tokens, as maruel/genai sent it): content "" and
// finish length, all 16 output tokens reasoning (16 in, 0 cached), tier
// flex, system_fingerprint null; openai-processing-ms 481; the six
// rate-limit headers (500/499 requests reset in 120 ms, 200000/199985
// tokens in 4 ms) from the Date pinned to the answer's created time.
func TestRound22MgbOpenAIReasoningCut(t *testing.T) {
	t.Parallel()
	const date = "Mon, 01 Sep 2025 00:56:01 GMT"
	req := mgbFlex(r22Ask("gpt-5-nano", "Explain the theory of relativity in great details."))
	req.Reasoning = true
	req.Options.MaxTokens = proto.Int32(16)
	res, body := mgbUnary(t, "real_maruel_openai_gpt5nano_max_tokens", DefaultBaseURL, date, req)
	if body["max_completion_tokens"] != 16.0 || body["max_tokens"] != nil || body["service_tier"] != "flex" {
		t.Errorf("request %v", body)
	}
	if p := res.Message.GetParts(); len(p) != 0 {
		t.Errorf("parts %v", p)
	}
	m := res.Meta
	r22Meta(t, m, "chatcmpl-CAn7xeiKxVws3GdGdos2oaCRizcdK", "req_7937bda6253d4cbd9c33950861e9a082", "gpt-5-nano-2025-08-07", 1756688161,
		&llmrelayv1.Usage{InputTokens: 16, OutputTokens: 16, TotalTokens: 32, ReasoningTokens: 16}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	if m.GetServiceTier() != "flex" {
		t.Errorf("tier %q", m.GetServiceTier())
	}
	r22Ext(t, m, map[string]any{"openai_processing_ms": 481.0, "system_fingerprint": nil})
	r20WantRateLimit(t, m.GetRateLimit(), date, 500, 499, 200000, 199985, 120*time.Millisecond, 4*time.Millisecond)
}

// TestRound22MgbOpenAIReasoningCall: gpt-5-nano on flex with square_root
// required: content null, the call call_r7Dwy2hinwYIUxnUqvP0Ukpj
// {"number":132413}, refusal null, annotations []; 155 in, 3293 out of
// which 3264 reasoning (12.8 s of processing); tool_calls.
func TestRound22MgbOpenAIReasoningCall(t *testing.T) {
	t.Parallel()
	const date = "Mon, 01 Sep 2025 00:56:07 GMT"
	req := mgbFlex(mgbSqrtReq("gpt-5-nano", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	req.Reasoning = true
	res, body := mgbUnary(t, "real_maruel_openai_gpt5nano_sqrt_1", DefaultBaseURL, date, req)
	if body["tool_choice"] != "required" || body["service_tier"] != "flex" {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != "call_r7Dwy2hinwYIUxnUqvP0Ukpj" || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := res.Meta
	r22Meta(t, m, "chatcmpl-CAn83DfsgwqSwNkPbE7muORdWEcIh", "req_6ee7293c8d394c1bb4c4295cbee5f051", "gpt-5-nano-2025-08-07", 1756688167,
		&llmrelayv1.Usage{InputTokens: 155, OutputTokens: 3293, TotalTokens: 3448, ReasoningTokens: 3264}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, m, map[string]any{"openai_processing_ms": 12790.0})
	r20WantRateLimit(t, m.GetRateLimit(), date, 500, 499, 200000, 199967, 120*time.Millisecond, 9*time.Millisecond)
}

// TestRound22MgbOpenAILogprobsRefused: gpt-5-nano asked for logprobs
// (top 2): 403 invalid_request_error "You are not allowed to request
// logprobs from this model", code and param null, x-request-id
// req_4b2413156541413cb61a52c8ef0db67b. **Bug:** a 403 read as permission
// denied (the key's access), so a router would fail over to another
// deployment of the same model for the same refusal; it is an invalid
// request naming logprobs now.
func TestRound22MgbOpenAILogprobsRefused(t *testing.T) {
	t.Parallel()
	req := mgbFlex(r22Ask("gpt-5-nano", "Say hello. Use only one word."))
	req.ProviderOptions.GetOpenai().Logprobs = proto.Bool(true)
	req.ProviderOptions.GetOpenai().TopLogprobs = proto.Int32(2)
	for _, stream := range []bool{false, true} {
		e, body := mgbErr(t, "real_maruel_openai_gpt5nano_logprobs_err", DefaultBaseURL, req, stream)
		if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 403 || e.Code != "invalid_request_error" || e.Param != "logprobs" ||
			e.Message != "You are not allowed to request logprobs from this model" || e.RequestID != "req_4b2413156541413cb61a52c8ef0db67b" {
			t.Errorf("stream %v: %+v", stream, e)
		}
		if body["logprobs"] != true || body["top_logprobs"] != 2.0 {
			t.Errorf("request %v", body)
		}
	}
}

// TestRound22MgbOpenAIWebSearchRefused: gpt-5-nano with
// web_search_options (maruel/genai's web search on Chat Completions;
// ours passed as an extra body field): 400 unknown_parameter, param
// web_search_options, "Unknown parameter: 'web_search_options'.", an
// invalid request with the request id.
func TestRound22MgbOpenAIWebSearchRefused(t *testing.T) {
	t.Parallel()
	req := mgbFlex(r22Ask("gpt-5-nano", "Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation."))
	req.ProviderOptions.ExtraBody = `{"web_search_options":{"search_context_size":"high"}}`
	e, body := mgbErr(t, "real_maruel_openai_gpt5nano_web_search_err", DefaultBaseURL, req, false)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "unknown_parameter" || e.Param != "web_search_options" ||
		e.Message != "Unknown parameter: 'web_search_options'." || e.RequestID != "req_b8b4623210744713be3002bab5a52f97" {
		t.Errorf("error %+v", e)
	}
	if !mgbJSONEqual(t, body["web_search_options"], `{"search_context_size":"high"}`) {
		t.Errorf("request %v", body)
	}
}
