package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 25 (vendors): recordings of providers we had few of
// (testdata/README.md, "Round 25 (vendors)"). Every expectation is read
// off the recording by hand.

// TestRound25BasetenRequestID: DeepSeek-V4-Pro on Baseten's Model APIs
// (maruel/genai, May 2026), square_root required, streamed: the whole call
// in the first chunk (no reasoning), the usage on every chunk, growing
// (27, then 32 out; 256 of 346 in cached), a usage-only last chunk. The
// answer names itself only by x-baseten-request-id (the same value as
// x-baseten-session-id), no x-request-id. Bug: the request id was lost.
func TestRound25BasetenRequestID(t *testing.T) {
	t.Parallel()
	const model = "deepseek-ai/DeepSeek-V4-Pro"
	evs, f, body := mgbStream(t, "real_maruel_baseten_dsv4_sqrt_stream_1", mgbBaseten, "", mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if body["tool_choice"] != "required" || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	if got := evs[0].Meta.GetProviderRequestId(); got != "54ca7019e800a280c7bedb6a00059e7de09cd" {
		t.Errorf("first event's request id %q (%v)", got, evs[0])
	}
	parts := f.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != "chatcmpl-tool-d78ad5cec7584370a4be68dd74ca3b77" || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, f.Meta, "chatcmpl-9ac7d716ecff4a6e81b677d8d5af27cf", "54ca7019e800a280c7bedb6a00059e7de09cd", model, 1780264610,
		&llmrelayv1.Usage{InputTokens: 346, OutputTokens: 32, TotalTokens: 378, CachedInputTokens: 256}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, f.Meta, nil)
}

// TestRound25BasetenNoArgsStream: openai/gpt-oss-120b on Baseten (October
// 2026), get_hostname (no parameters), tool choice auto, streamed: the
// reasoning in reasoning_content (reasoning_tokens 0 all the same), the
// call opened with its id, name and arguments "", then a second fragment
// repeating the id (no name) with arguments "{}"; the usage on every
// chunk; Baseten's rate-limit headers, limits and remainders without
// resets. One call get_hostname("{}"), the request id, the budgets.
func TestRound25BasetenNoArgsStream(t *testing.T) {
	t.Parallel()
	const model = "openai/gpt-oss-120b"
	req := w3aToolReq(w3aHostQuestion, w3aGetHostname)
	req.Model = model
	_, f, body := mgbStream(t, "real_maruel_baseten_oss120_noargs_stream_1", mgbBaseten, "", req)
	if body["tool_choice"] != "auto" || body["model"] != model {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != " user wants to call get_hostname tool. Need to output only hostname. Use tool." {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "chatcmpl-tool-83b9ac53a204456daa47882b1caadab4" || c.GetName() != "get_hostname" || c.GetArguments() != "{}" || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, f.Meta, "chatcmpl-53ddd2b2a24546989ddbf669cb397e0b", "54ca701a1021a165c7e5abf9f7905fa39762c", model, 1791036626,
		&llmrelayv1.Usage{InputTokens: 146, OutputTokens: 35, TotalTokens: 181, CachedInputTokens: 64}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	rl := f.Meta.GetRateLimit()
	if rl.GetRequestsLimit() != 120 || rl.GetRequestsRemaining() != 60 || rl.GetTokensLimit() != 300000 || rl.GetTokensRemaining() != 300000 ||
		rl.GetRequestsResetTime() != nil || rl.GetTokensResetTime() != nil {
		t.Errorf("rate limit %v", rl)
	}
	r22Ext(t, f.Meta, nil)
}

// TestRound25BasetenGLMUnary: zai-org/GLM-5.1 on Baseten (June 2026),
// square_root required, unary (maruel/genai's request also sent
// chat_template_args {"enable_thinking": true}, which we do not send):
// reasoning_content beside the call, vLLM's stop_reason as the stop
// token's number (154829), 204 of 206 in cached, 20 of 33 out reasoning;
// the request id in x-baseten-request-id. Reasoning then call, the ids and
// counts as recorded, the stop token kept as stop_token_id. No bug.
func TestRound25BasetenGLMUnary(t *testing.T) {
	t.Parallel()
	const model = "zai-org/GLM-5.1"
	res, body := mgbUnary(t, "real_maruel_baseten_glm51_sqrt_1", mgbBaseten, "", mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if body["tool_choice"] != "required" || body["model"] != model {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "The user wants me to calculate the square root of 132413 and return only the result." {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "chatcmpl-tool-4d75718d93c240b5bc62ea2c041553bb" || c.GetArguments() != `{"number": 132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "chatcmpl-9ceb1e908fd64b638bbb7fc9709343de", "54ca7019e9f8567b27838ac494ffa17633314", model, 1780792781,
		&llmrelayv1.Usage{InputTokens: 206, OutputTokens: 33, TotalTokens: 239, CachedInputTokens: 204, ReasoningTokens: 20}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, res.Meta, map[string]any{"stop_token_id": float64(154829)})
}

const r25Databricks = "https://dbc.cloud.databricks.com/serving-endpoints"

// TestRound25DatabricksReasoningStream: databricks-gpt-oss-120b on
// Databricks' model serving (pydantic-ai's cassette, January 2026),
// "Count to 3", streamed: empty content deltas, then the reasoning as
// content arrays holding one part {"type":"reasoning","summary":
// [{"type":"summary_text","text":…}]} per delta, then the text as strings;
// the usage on every chunk. Bug: each reasoning delta was relayed as its
// JSON text with a warning ("delta content has an unrecognized shape");
// now reasoning, the text after it.
func TestRound25DatabricksReasoningStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("databricks-gpt-oss-120b", "Count to 3")
	evs, f, body := mgbStream(t, "real_pyd_databricks_oss120_stream", r25Databricks, "", req)
	if body["model"] != "databricks-gpt-oss-120b" || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	for _, e := range evs {
		if e.Meta != nil && len(e.Meta.GetWarnings()) > 0 {
			t.Errorf("warnings %v", e.Meta.GetWarnings())
		}
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != `The user asks "Count to 3". Simple: respond with "1, 2, 3" or "1 2 3". Should comply.` || parts[1].GetText() != "1, 2, 3." {
		t.Fatalf("parts %v", parts)
	}
	r22Meta(t, f.Meta, "chatcmpl_34e076a5-2dc5-42f8-8d36-2e7df1561c34", "4864e95d-10dc-4854-acf2-ab570998c934", "gpt-oss-120b-080525", 1768789165,
		&llmrelayv1.Usage{InputTokens: 89, OutputTokens: 51, TotalTokens: 140}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, f.Meta, nil)
}

// TestRound25DatabricksReasoningUnary: the same model unary (January
// 2026): content an array of a reasoning part (its summary) and a text
// part "paris". Bug: the whole array was the answer's text, as JSON, with
// a warning; now a reasoning part and the text.
func TestRound25DatabricksReasoningUnary(t *testing.T) {
	t.Parallel()
	req := r22Ask("databricks-gpt-oss-120b", "What is the capital of France? lowercase, one word reply, no punctuation.")
	res, body := mgbUnary(t, "real_pyd_databricks_oss120_simple", r25Databricks, "", req)
	if body["model"] != "databricks-gpt-oss-120b" {
		t.Errorf("request %v", body)
	}
	const reasoning = "The user wants: \"What is the capital of France? lowercase, one word reply, no punctuation.\"\n\nWe must comply. Answer: \"paris\". It's lowercase, one word, no punctuation."
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != reasoning || parts[1].GetText() != "paris" {
		t.Fatalf("parts %v", parts)
	}
	r22Meta(t, res.Meta, "chatcmpl_84cd52ca-a3c7-4bfd-903c-f53620967819", "185151b1-7deb-4126-8a7e-cfbbb978e042", "gpt-oss-120b-080525", 1768819938,
		&llmrelayv1.Usage{InputTokens: 101, OutputTokens: 52, TotalTokens: 153}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res.Meta, nil)
}

// TestRound25DatabricksUnauthenticated: Databricks' 401 for a missing
// credential (January 2026): {"error_code": 401, "message": "Credential
// was not sent or was of an unsupported type for this API. [ReqId:
// <uuid>]"}, www-authenticate Bearer realm="DatabricksRealm", the id in
// server-timing only. Unauthenticated, the message whole, no code (the
// status's number is no code), the request id from server-timing.
func TestRound25DatabricksUnauthenticated(t *testing.T) {
	t.Parallel()
	pe, _ := mgbErr(t, "real_pyd_databricks_err_401", r25Databricks, r22Ask("databricks-gpt-5-2", "Hello"), false)
	if pe.Kind != provider.KindUnauthenticated || pe.HTTPStatus != 401 || pe.Code != "" ||
		pe.Message != "Credential was not sent or was of an unsupported type for this API. [ReqId: e4931123-4965-43bf-b146-79396c248276]" ||
		pe.RequestID != "e4931123-4965-43bf-b146-79396c248276" {
		t.Errorf("error %+v", *pe)
	}
}

// TestRound25ServerTimingRequestID: the request_id metric's description,
// quoted (a comma or an escaped quote inside) or a token, whatever the
// other metrics and their order; nothing from other metrics.
func TestRound25ServerTimingRequestID(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{`request_id;dur=0;desc="4864e95d-10dc-4854-acf2-ab570998c934", client_protocol;dur=0;desc="HTTP/1.1"`}, "4864e95d-10dc-4854-acf2-ab570998c934"},
		{[]string{`cfL4;desc="?proto=TCP&rtt=1,2"`, `Request_ID; desc=abc`}, "abc"},
		{[]string{`edge;desc="a, request_id;desc=x"`}, ""},
		{[]string{`request_id;desc="q\"d"`}, `q"d`},
		{[]string{`request_id;dur=3`, `cache;desc=hit`}, ""},
		{nil, ""},
	} {
		if got := serverTimingRequestID(c.in); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRound25DatabricksClaudeStream: databricks-claude-opus-4-5 (Claude on
// Bedrock behind Databricks' model serving, January 2026), "Count to 3",
// streamed: Bedrock's message id (msg_bdrk_…) as the chunk id, the role on
// every delta, the usage on every chunk with completion_tokens and
// total_tokens null until the last and Anthropic's cache counters beside
// (0). Text "1, 2, 3", 11 in, 11 out; the request id from server-timing.
// The usage events before the last count no output (null read as 0). No
// bug.
func TestRound25DatabricksClaudeStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("databricks-claude-opus-4-5", "Count to 3")
	_, f, body := mgbStream(t, "real_pyd_databricks_opus45_stream", r25Databricks, "", req)
	if body["model"] != "databricks-claude-opus-4-5" {
		t.Errorf("request %v", body)
	}
	if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "1, 2, 3" {
		t.Fatalf("parts %v", parts)
	}
	r22Meta(t, f.Meta, "msg_bdrk_01VkkRVLhMj1e8Yc7b9F52rr", "7b3fec26-6dbc-4c19-9346-cd898b6799ae", "us.anthropic.claude-opus-4-5-20251101-v1:0", 1768789164,
		&llmrelayv1.Usage{InputTokens: 11, OutputTokens: 11, TotalTokens: 22}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, f.Meta, nil)
}

// TestRound25DatabricksOpenAIStream: databricks-gpt-5-2 (OpenAI's
// gpt-5.2 behind Databricks, January 2026), "Count to 3", streamed:
// OpenAI's chunks (obfuscation, service_tier) and OpenAI's openai-*
// headers (organization databricks-serverless) but no x-request-id (only
// access-control-expose-headers naming it), the id in server-timing; the
// usage chunk adds cache_read_input_tokens; the stream ends after it with
// no [DONE]. Text "1  \n2  \n3", complete (the finish and the usage came).
// No bug.
func TestRound25DatabricksOpenAIStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("databricks-gpt-5-2", "Count to 3")
	_, f, _ := mgbStream(t, "real_pyd_databricks_gpt52_stream", r25Databricks, "", req)
	if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "1  \n2  \n3" {
		t.Fatalf("parts %v", parts)
	}
	r22Meta(t, f.Meta, "chatcmpl-Czh9o8cjeGcE4KSxEMR1NwNazGj2u", "119ed760-601b-4f35-a847-0b36f8f20011", "gpt-5.2-2025-12-11", 1768819940,
		&llmrelayv1.Usage{InputTokens: 10, OutputTokens: 8, TotalTokens: 18}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, f.Meta, map[string]any{"service_tier": "default", "openai_processing_ms": float64(188)})
}
