package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 21c: agentjido/req_llm's fixtures of live answers (testdata/README.md,
// "Round 21c: agentjido/req_llm").

// TestRound21cReqLLMZaiGLM: api.z.ai's paas/v4 serving glm-4.5-flash (May
// 2026), unary: reasoning_content (a leading newline, kept) and the answer
// (an emoji outside the BMP at its end); the request id from the body's
// request_id (the same as the id and as the x-log-id header); 8 in, 4 of
// them cached, 258 out of which 111 reasoning.
func TestRound21cReqLLMZaiGLM(t *testing.T) {
	t.Parallel()
	res, body := r21cUnary(t, "real_reqllm_zai_glm45_flash", "", "glm-4.5-flash", "Hello world!", nil)
	m := res.Meta
	r21cMeta(t, m, "20260530001812ee99cd4ba0e34d03", "20260530001812ee99cd4ba0e34d03", "glm-4.5-flash", 1780071499,
		&llmrelayv1.Usage{InputTokens: 8, OutputTokens: 258, TotalTokens: 266, CachedInputTokens: 4, ReasoningTokens: 111})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	reasoning, answer := r21cParts(t, res.Message)
	if !strings.HasPrefix(reasoning, "\nWe are going to create a simple \"Hello World!\" program") || !strings.HasSuffix(reasoning, "Let's write the code accordingly.") ||
		!strings.HasPrefix(answer, "Here's a simple \"Hello World!\" program in Python:\n\n```python\n") || !strings.HasSuffix(answer, "Python execution! 🌍") {
		t.Errorf("reasoning %q answer %q", reasoning, answer)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %v", m.GetWarnings())
	}
	if body["model"] != "glm-4.5-flash" {
		t.Errorf("request %v", body)
	}
}

// TestRound21cReqLLMXaiToolCall: api.x.ai's Chat Completions, grok-3-mini
// with three tools (October 2025), unary: reasoning_content, content "",
// one call under xAI's id "call_99267543" with compact arguments, finish
// "tool_calls"; the response id with xAI's region suffix
// ("…_us-east-1"); the request id x-request-id (a traceparent-shaped
// value, as xAI sends it). xAI counts the reasoning outside
// completion_tokens (352 + 28 + 244 = total 624): our output is 272, of
// which 244 reasoning; 351 of the 352 prompt tokens cached. The request
// carries the three tools as given.
func TestRound21cReqLLMXaiToolCall(t *testing.T) {
	t.Parallel()
	tools := []*llmrelayv1.Tool{
		{Name: "get_weather", Description: "Get current weather information for a location",
			Parameters: `{"properties":{"location":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"],"type":"string"}},"required":["location"],"type":"object"}`},
		{Name: "tell_joke", Description: "Tell a funny joke", Parameters: `{"properties":{"topic":{"description":"Topic for the joke","type":"string"}},"type":"object"}`},
		{Name: "get_time", Description: "Get the current time", Parameters: `{"properties":{},"type":"object"}`},
	}
	res, body := r21cUnary(t, "real_reqllm_xai_grok3_mini_tool_call", "https://api.x.ai/v1", "grok-3-mini", "What's the weather like in Paris, France?", func(r *provider.Request) {
		r.Protocol, r.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	})
	m := res.Meta
	r21cMeta(t, m, "9853353e-c8b0-c76d-eb9b-709428038b53_us-east-1", "00-edbbbb27763153f53360b3d8582ecef6-097c29d1004e63db-01", "grok-3-mini", 1759686623,
		&llmrelayv1.Usage{InputTokens: 352, OutputTokens: 272, TotalTokens: 624, CachedInputTokens: 351, ReasoningTokens: 244})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning().GetText(); !strings.HasPrefix(r, "First, the user is asking about the weather in Paris, France.") ||
		!strings.HasSuffix(r, "no need to ask for clarification.") {
		t.Errorf("reasoning %q", r)
	}
	if !proto.Equal(parts[1], toolCallPart("call_99267543", "get_weather", `{"location":"Paris, France"}`)) {
		t.Errorf("call %v", parts[1])
	}
	if m.GetExtended().AsMap()[extSystemFingerprint] != "fp_4fae27f477" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if ts, _ := body["tools"].([]any); len(ts) != 3 {
		t.Errorf("request tools %v", body["tools"])
	}
}

// TestRound21cReqLLMGroqGptOss: api.groq.com serving openai/gpt-oss-20b
// with reasoning_effort "low" (October 2025), unary: the reasoning in
// "reasoning", the answer (× signs, two-space line ends), service_tier
// "on_demand", usage_breakdown null, Groq's timings inside the usage
// (queue_time, prompt_time, completion_time, total_time: details), the
// request id in x-request-id and x_groq.id alike, the region that served
// it (x-groq-region "yul") in meta.extended, OpenAI-style rate limits
// (1000 requests, 998 left, reset in 2m52.334999999s; 8000 tokens, 7737
// left, reset in 1.972s).
func TestRound21cReqLLMGroqGptOss(t *testing.T) {
	t.Parallel()
	res, _ := r21cUnary(t, "real_reqllm_groq_gpt_oss_20b_reasoning", "", "openai/gpt-oss-20b", "Solve 12*7 and show your internal thinking (brief).", nil)
	m := res.Meta
	r21cMeta(t, m, "chatcmpl-01f0dd13-61f9-4a0a-a919-9ffb528e6f69", "req_01k6wqxpg3eweb3ga22ddfbh3c", "openai/gpt-oss-20b", 1759753722,
		&llmrelayv1.Usage{InputTokens: 84, OutputTokens: 88, TotalTokens: 172})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	reasoning, answer := r21cParts(t, res.Message)
	if reasoning != "Need to show internal thinking briefly. Compute 12*7=84." ||
		answer != "**Internal thinking (brief):**  \n- Recognize 12 × 7 = 12 × (5 + 2)  \n- 12 × 5 = 60  \n- 12 × 2 = 24  \n- 60 + 24 = 84  \n\n**Answer:** 84" {
		t.Errorf("reasoning %q answer %q", reasoning, answer)
	}
	ext := m.GetExtended().AsMap()
	d, _ := ext["usage_details"].(map[string]any)
	if ext[extGroqRegion] != "yul" || m.GetServiceTier() != "on_demand" || d["queue_time"] != 0.197789635 || d["total_time"] != 0.090760912 {
		t.Errorf("extended %v", ext)
	}
	r20WantRateLimit(t, m.GetRateLimit(), "Mon, 06 Oct 2025 12:28:42 GMT", 1000, 998, 8000, 7737, 2*time.Minute+52334999999*time.Nanosecond, 1972*time.Millisecond)
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %v", m.GetWarnings())
	}
}

// TestRound21cReqLLMOpenRouterEncrypted: OpenRouter relaying
// openai/gpt-5-mini with reasoning_effort "low" (October 2025), unary:
// reasoning null, one reasoning_details entry of type
// "reasoning.encrypted" (format openai-responses-v1, OpenAI's item id
// rs_…, a 1868-character Fernet token as data), the answer (× signs, a
// curly apostrophe), the upstream "OpenAI" and native_finish_reason
// "completed" in meta.extended, 19 in and 205 out (no details: OpenRouter
// sent none). The encrypted block is reasoning without text whose opaque
// state is kept for the next turn; sent back, it goes out as the same
// reasoning_details entry.
func TestRound21cReqLLMOpenRouterEncrypted(t *testing.T) {
	t.Parallel()
	const q = "Solve 12*7 and show your internal thinking (brief)."
	res, _ := r21cUnary(t, "real_reqllm_openrouter_gpt5_mini_encrypted", "https://openrouter.ai/api/v1", "openai/gpt-5-mini", q, nil)
	m := res.Meta
	r21cMeta(t, m, "gen-1759672266-oO6lamNJTVszIGu9cT8P", "", "openai/gpt-5-mini", 1759672266,
		&llmrelayv1.Usage{InputTokens: 19, OutputTokens: 205, TotalTokens: 224})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	ext := m.GetExtended().AsMap()
	if ext[extUpstreamProvider] != "OpenAI" || ext[extNativeFinishReason] != "completed" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning() == nil || parts[0].GetReasoning().GetText() != "" ||
		!strings.HasPrefix(parts[1].GetText(), "12 × 7 = 84.\n\n") || !strings.Contains(parts[1].GetText(), "I can’t share") {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning()
	if !r.GetRedacted() || r.GetId() != "rs_0d5297b250c2ce0f0168e277cadbb08194aa64a1ed4f528d64" || r.GetFormat() != "openai-responses-v1" ||
		len(r.GetSignature()) != 1868 || !strings.HasPrefix(r.GetSignature(), "gAAAAABo4nfP") || !strings.HasSuffix(r.GetSignature(), "AZXVIJuV") {
		t.Errorf("reasoning %v", r)
	}

	// The next turn sends the block back as OpenRouter gave it.
	srv := providertest.ReplayFile(t, td("real_reqllm_openrouter_gpt5_mini_encrypted.http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "openai/gpt-5-mini", Format: "openai-chat", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(q)), res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("And 12*8?"))}}
	if _, err := newHostProvider(t, "https://openrouter.ai/api/v1", srv.URL).Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs, _ := r20Request(t, srv.Last(t).Body)["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages %v", msgs)
	}
	asst, _ := msgs[1].(map[string]any)
	details, _ := asst["reasoning_details"].([]any)
	if len(details) != 1 {
		t.Fatalf("assistant %v", asst)
	}
	d0, _ := details[0].(map[string]any)
	if d0["type"] != "reasoning.encrypted" || d0["data"] != r.GetSignature() || d0["id"] != r.GetId() || d0["format"] != "openai-responses-v1" || d0["index"] != float64(0) {
		t.Errorf("detail %v", d0)
	}
	if asst["content"] != parts[1].GetText() {
		t.Errorf("assistant content %v", asst["content"])
	}
}

// r21cReqLLMTools are the three tools req_llm's multi_tool fixtures offer.
var r21cReqLLMTools = []*llmrelayv1.Tool{
	{Name: "get_weather", Description: "Get current weather information for a location",
		Parameters: `{"properties":{"location":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"],"type":"string"}},"required":["location"],"type":"object"}`},
	{Name: "tell_joke", Description: "Tell a funny joke", Parameters: `{"properties":{"topic":{"description":"Topic for the joke","type":"string"}},"type":"object"}`},
	{Name: "get_time", Description: "Get the current time", Parameters: `{"properties":{},"type":"object"}`},
}

// TestRound21cReqLLMOpenRouterGeminiToolCall: OpenRouter relaying
// google/gemini-2.5-flash with three tools (October 2025), unary: the
// reasoning twice (reasoning and one reasoning_details "reasoning.text"
// block of format "unknown", no signature: one reasoning part, its
// format kept), content "", one call under OpenRouter's id
// "tool_0_get_weather_7tNMWyHzgG2eI85oLoRa"; upstream "Google",
// native_finish_reason "STOP"; 53 in, 64 out of which 57 reasoning.
func TestRound21cReqLLMOpenRouterGeminiToolCall(t *testing.T) {
	t.Parallel()
	res, _ := r21cUnary(t, "real_reqllm_openrouter_gemini_tool_call", "https://openrouter.ai/api/v1", "google/gemini-2.5-flash", "What's the weather like in Paris, France?", func(r *provider.Request) {
		r.Protocol, r.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, r21cReqLLMTools
	})
	m := res.Meta
	r21cMeta(t, m, "gen-1759671343-Bo9MsRx5QRD4ax7bnqOe", "", "google/gemini-2.5-flash", 1759671343,
		&llmrelayv1.Usage{InputTokens: 53, OutputTokens: 64, TotalTokens: 117, ReasoningTokens: 57})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); !strings.HasPrefix(r.GetText(), "**Analyzing Weather Request**\n\n") || !strings.HasSuffix(r.GetText(), "omit that part of the instruction.\n\n\n") ||
		r.GetSignature() != "" || r.GetRedacted() {
		t.Errorf("reasoning %v", r)
	}
	if !proto.Equal(parts[1], toolCallPart("tool_0_get_weather_7tNMWyHzgG2eI85oLoRa", "get_weather", `{"location":"Paris, France"}`)) {
		t.Errorf("call %v", parts[1])
	}
	ext := m.GetExtended().AsMap()
	if ext[extUpstreamProvider] != "Google" || ext[extNativeFinishReason] != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound21cServerStats: serving statistics are kept as sent, each under
// its own name. LM Studio's /api/v0 answer (hand-built: the shape and
// values of LM Studio's REST API documentation, ids of its own) carries
// stats (tokens per second, time to first token, generation time, stop
// reason "eosFound"), model_info (architecture, quantization, format,
// context length) and runtime beside the usage: they were dropped.
// Fireworks' perf_metrics (asked with perf_metrics_in_response) comes on a
// stream's last chunk, here without choices (an object of two of its
// fields): it was dropped too.
func TestRound21cServerStats(t *testing.T) {
	t.Parallel()
	res, _ := r21cUnary(t, "dialect_lmstudio_v0_stats", "", "granite-3.0-2b-instruct", "Introduce yourself.", nil)
	ext := res.Meta.GetExtended().AsMap()
	st, _ := ext["stats"].(map[string]any)
	mi, _ := ext["model_info"].(map[string]any)
	rt, _ := ext["runtime"].(map[string]any)
	if st["stop_reason"] != "eosFound" || st["tokens_per_second"] != 51.43709529007664 || st["time_to_first_token"] != 0.111 ||
		mi["quant"] != "Q4_K_M" || mi["context_length"] != float64(4096) || rt["version"] != "1.3.0" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("extended %v", ext)
	}

	const stream = "data: {\"id\":\"f3c1d9a2-77b0-4e5e-9d4b-2a8c61e0b7d4\",\"object\":\"chat.completion.chunk\",\"created\":1784012265,\"model\":\"accounts/fireworks/models/llama-v3p1-8b-instruct\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"f3c1d9a2-77b0-4e5e-9d4b-2a8c61e0b7d4\",\"object\":\"chat.completion.chunk\",\"created\":1784012265,\"model\":\"accounts/fireworks/models/llama-v3p1-8b-instruct\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}\n\n" +
		"data: {\"id\":\"f3c1d9a2-77b0-4e5e-9d4b-2a8c61e0b7d4\",\"object\":\"chat.completion.chunk\",\"created\":1784012265,\"model\":\"accounts/fireworks/models/llama-v3p1-8b-instruct\",\"choices\":[],\"perf_metrics\":{\"prompt-tokens\":10,\"server-processing-time\":0.1}}\n\n" +
		"data: [DONE]\n\n"
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(stream)})
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "accounts/fireworks/models/llama-v3p1-8b-instruct", Format: "openai-chat",
		Options: &llmrelayv1.GenerationOptions{}, Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Hi"))}}
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	f := accFold(t, evs)
	pm, _ := f.Meta.GetExtended().AsMap()["perf_metrics"].(map[string]any)
	if pm["prompt-tokens"] != float64(10) || pm["server-processing-time"] != 0.1 || f.Meta.GetUsage().GetTotalTokens() != 15 {
		t.Errorf("meta %v", f.Meta)
	}
}

// TestRound21cReqLLMCerebras: api.cerebras.ai serving gpt-oss-120b
// (October 2025), unary: reasoning in "reasoning", the answer (an emoji
// outside the BMP), Cerebras's time_info in meta.extended, 70 in (0
// cached) and 36 out; the request id x-request-id (Cerebras sets it to the
// cf-ray value; inference-id, the response id, is the fallback); the
// per-window rate limits (requests a day: 1440000, 1439875 left, reset in
// 10804.695681810379 s; tokens a minute: 1000000, 996834 left, reset in
// 4.695681810379028 s).
func TestRound21cReqLLMCerebras(t *testing.T) {
	t.Parallel()
	res, _ := r21cUnary(t, "real_reqllm_cerebras_gpt_oss_120b", "", "gpt-oss-120b", "Hello world!", nil)
	m := res.Meta
	r21cMeta(t, m, "chatcmpl-cbc13f07-270a-4166-8a4b-85cab383033c", "98b05335b8252262-ORD", "gpt-oss-120b", 1759870795,
		&llmrelayv1.Usage{InputTokens: 70, OutputTokens: 36, TotalTokens: 106})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	reasoning, answer := r21cParts(t, res.Message)
	if reasoning != "The user says \"Hello world!\" Likely a greeting. Respond friendly." || answer != "Hello! 👋 How can I assist you today?" {
		t.Errorf("reasoning %q answer %q", reasoning, answer)
	}
	ti, _ := m.GetExtended().AsMap()[extTimeInfo].(map[string]any)
	if ti["queue_time"] != 7.85853e-4 || ti["total_time"] != 0.033153533935546875 || ti["created"] != float64(1759870795) {
		t.Errorf("time_info %v", ti)
	}
	at := time.Date(2025, 10, 7, 20, 59, 55, 0, time.UTC)
	reqReset, tokReset := 10804.695681810379, 4.695681810379028
	rl := m.GetRateLimit()
	if rl.GetRequestsLimit() != 1440000 || rl.GetRequestsRemaining() != 1439875 || rl.GetTokensLimit() != 1000000 || rl.GetTokensRemaining() != 996834 ||
		!rl.GetRequestsResetTime().AsTime().Equal(at.Add(time.Duration(reqReset*float64(time.Second)))) ||
		!rl.GetTokensResetTime().AsTime().Equal(at.Add(time.Duration(tokReset*float64(time.Second)))) {
		t.Errorf("rate limit %v", rl)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %v", m.GetWarnings())
	}
}

// TestRound21cReqLLMGroqStream: api.groq.com streaming
// meta-llama/llama-4-scout-17b-16e-instruct (October 2025; the chunks as
// req_llm captured them, byte for byte): x_groq.id on the first chunk,
// fifteen content deltas, then the finish on an empty delta with the
// usage twice, at the top and in x_groq.usage (Groq's times inside: in
// the details), then [DONE] (req_llm asked without stream_options: Groq
// sends the usage anyway). The request id x-request-id (the same as x_groq.id), the
// region yul, the service limits (1000 requests, 997 left; 30000 tokens,
// 29969 left).
func TestRound21cReqLLMGroqStream(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "meta-llama/llama-4-scout-17b-16e-instruct", Format: "openai-chat", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful, creative assistant.")), msgOf(llmrelayv1.Role_ROLE_USER, text("Say hello in one short, imaginative sentence."))}}
	f, body := r21cStream(t, "real_reqllm_groq_llama4_scout_stream", "", req)
	if !proto.Equal(f.Message, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("As the stars aligned in a sparkling smile, I whispered a cosmic hello."))) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	r21cMeta(t, m, "chatcmpl-ab054365-e68f-4546-92cf-157a5f186eb3", "req_01k6k8jsgmejhahk01t1vxx8f9", "meta-llama/llama-4-scout-17b-16e-instruct", 1759435646,
		&llmrelayv1.Usage{InputTokens: 32, OutputTokens: 16, TotalTokens: 48})
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	ext := m.GetExtended().AsMap()
	if ext[extGroqRegion] != "yul" || ext[extSystemFingerprint] != "fp_5d3e4e58e1" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if rl := m.GetRateLimit(); rl.GetRequestsLimit() != 1000 || rl.GetRequestsRemaining() != 997 || rl.GetTokensLimit() != 30000 || rl.GetTokensRemaining() != 29969 {
		t.Errorf("rate limit %v", rl)
	}
	if body["stream"] != true {
		t.Errorf("request %v", body)
	}
}
