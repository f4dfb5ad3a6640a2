package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 20: envoyproxy/ai-gateway's go-vcr cassettes of api.openai.com and
// Helicone/helicone's captured Groq and DeepSeek bodies (testdata/README.md,
// "Round 20").

// r20Bouvet is the question envoy's chat cassettes ask.
const r20Bouvet = "Answer in up to 3 words: Which ocean contains Bouvet Island?"

// r20Request decodes the request a cassette recorded, for comparing with
// the one the adapter built.
func r20Request(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request %s: %v", body, err)
	}
	return m
}

// r20WantRateLimit checks OpenAI's six x-ratelimit-* headers as read: the
// resets are durations from the response's Date.
func r20WantRateLimit(t *testing.T, rl *llmrelayv1.RateLimit, date string, reqLimit, reqLeft, tokLimit, tokLeft int64, reqReset, tokReset time.Duration) {
	t.Helper()
	at, err := time.Parse(time.RFC1123, date)
	if err != nil {
		t.Fatal(err)
	}
	if rl.GetRequestsLimit() != reqLimit || rl.GetRequestsRemaining() != reqLeft || rl.GetTokensLimit() != tokLimit ||
		rl.GetTokensRemaining() != tokLeft || rl.RequestsLimit == nil || rl.TokensRemaining == nil {
		t.Errorf("rate limit %v", rl)
	}
	if got := rl.GetRequestsResetTime().AsTime(); !got.Equal(at.Add(reqReset)) {
		t.Errorf("requests reset %v, want %v", got, at.Add(reqReset))
	}
	if got := rl.GetTokensResetTime().AsTime(); !got.Equal(at.Add(tokReset)) {
		t.Errorf("tokens reset %v, want %v", got, at.Add(tokReset))
	}
}

// TestRound20EnvoyChatStreaming: gpt-4o-mini streamed with include_usage
// (July 2025): "South Atlantic Ocean." in four deltas, "stop" in a chunk of
// its own, then the usage chunk without choices (22 in, 4 out, zero cached
// and reasoning counts). The request id is x-request-id; the rate limits
// are OpenAI's six headers (10000 requests, 9994 left, reset in 46.152 s;
// 200000 tokens, 199982 left, reset in 5 ms); service_tier "default" is on
// every chunk. The request the cassette recorded (the question,
// stream_options.include_usage) is the one the adapter sends.
func TestRound20EnvoyChatStreaming(t *testing.T) {
	t.Parallel()
	const name = "real_envoy_chat_streaming_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-mini", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(r20Bouvet))}}
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
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("South Atlantic Ocean.")); !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 22, OutputTokens: 4, TotalTokens: 26}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-BupIE1Yst8aJrvBW2GrvLDTlUtyCB" || m.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
		m.GetProviderRequestId() != "req_07269717bf948969b889ef3439ec4480" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1752883238, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if ext := m.GetExtended().AsMap(); ext[extServiceTier] != "default" {
		t.Errorf("extended %v", ext)
	}
	r20WantRateLimit(t, m.GetRateLimit(), "Sat, 19 Jul 2025 00:00:39 GMT", 10000, 9994, 200000, 199982, 46152*time.Millisecond, 5*time.Millisecond)

	body := r20Request(t, srv.Last(t).Body)
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 1 || body["model"] != "gpt-4o-mini" || body["stream"] != true {
		t.Fatalf("request %v", body)
	}
	if m0, _ := msgs[0].(map[string]any); m0["role"] != "user" || m0["content"] != r20Bouvet {
		t.Errorf("message %v", msgs[0])
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v", body["stream_options"])
	}
}

// TestRound20EnvoyChatTools: gpt-4.1-nano asked the weather in Boston with
// one tool (July 2025) calls it twice with the same arguments,
// {"location": "Boston, MA"} (a space after the colon: the model's text,
// kept as sent), under two call ids; finish "tool_calls", 81 in and 50
// out. Both calls are kept, keyed by their ids, in order; the request the
// cassette recorded (the tool's schema, tool_choice "auto") is the one
// the adapter sends.
func TestRound20EnvoyChatTools(t *testing.T) {
	t.Parallel()
	const name = "real_envoy_chat_tools"
	params := `{"properties":{"location":{"description":"The city and state, e.g. San Francisco, CA","type":"string"},"unit":{"enum":["celsius","fahrenheit"],"type":"string"}},"required":["location"],"type":"object"}`
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4.1-nano", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather like in Boston today?"))},
		Tools:    []*llmrelayv1.Tool{{Name: "get_current_weather", Description: "Get the current weather in a given location", Parameters: params}},
		Options: &llmrelayv1.GenerationOptions{
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}},
		}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	var calls []*llmrelayv1.ToolCall
	for _, p := range res.Message.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			calls = append(calls, tc)
		} else {
			t.Errorf("part %v", p)
		}
	}
	wantIDs := []string{"call_D3F3FgeNpo7YYla1fW7I0cu4", "call_bEF70X0NXwdKE3UPd0DKMBsO"}
	if len(calls) != 2 {
		t.Fatalf("calls %v", calls)
	}
	for i, c := range calls {
		if c.GetCallId() != wantIDs[i] || c.GetName() != "get_current_weather" || c.GetArguments() != `{"location": "Boston, MA"}` {
			t.Errorf("call %d: %v", i, c)
		}
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if want := (&llmrelayv1.Usage{InputTokens: 81, OutputTokens: 50, TotalTokens: 131}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-Bvz1dGgYteqrsbxUHK04G7k238oG1" || m.GetResolvedModel() != "gpt-4.1-nano-2025-04-14" ||
		m.GetProviderRequestId() != "req_0d0f5f9002c8156be800cf7a2b6ce91c" || m.GetToolCallCount() != 2 ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1753158977, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r20WantRateLimit(t, m.GetRateLimit(), "Tue, 22 Jul 2025 04:36:19 GMT", 500, 499, 200000, 199987, 120*time.Millisecond, 3*time.Millisecond)

	body := r20Request(t, srv.Last(t).Body)
	if body["tool_choice"] != "auto" || body["model"] != "gpt-4.1-nano" {
		t.Errorf("request %v", body)
	}
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools %v", body["tools"])
	}
	fn, _ := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "get_current_weather" || fn["description"] != "Get the current weather in a given location" ||
		!jsonEqualAny(fn["parameters"], r19Decode(t, params)) {
		t.Errorf("tool %v", tools[0])
	}
}

// TestRound20EnvoyImageToText: gpt-5-nano asked about a 16x16 PNG sent as a
// data URL (August 2025) answers "A tiny blue cartoon character." after 704
// reasoning tokens (719 out of 741). OpenAI counted the image against an
// input-images budget as well (x-ratelimit-*-input-images: 50000, 49999
// left, reset in 1 ms), which the rate-limit message has no place for: it
// is kept in meta.extended as sent (it was dropped); the requests and
// tokens budgets are read. The image reaches OpenAI as the cassette's data
// URL, byte for byte.
func TestRound20EnvoyImageToText(t *testing.T) {
	t.Parallel()
	const name = "real_envoy_chat_image_to_text"
	const png = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAXElEQVR42mNgoAkofv8fBVOkmQyD/sPwn1UlYAzlE6cZpgGmGZlPkgHYDCHKCcia0AwgHlCm+c+f/9gwabajG0CsK+DOxmIA8YZQ6gXkhISG6W8ALj7RtuMTgwMA0WTdqiU1ensAAAAASUVORK5CYII="
	data, err := base64.StdEncoding.DecodeString(png)
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_VISION, Model: "gpt-5-nano", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Answer in up to 5 words: What's in this image?"),
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: data}, MimeType: "image/png"}}})}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("A tiny blue cartoon character.")); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 22, OutputTokens: 719, TotalTokens: 741, ReasoningTokens: 704}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-C4Gmj9b5BeLuDR5fgSeYUQobtSGV3" || m.GetResolvedModel() != "gpt-5-nano-2025-08-07" ||
		m.GetProviderRequestId() != "req_479962c042ac4c4587f7990f51a6b447" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1755133869, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r20WantRateLimit(t, m.GetRateLimit(), "Thu, 14 Aug 2025 01:11:13 GMT", 500, 499, 200000, 199221, 120*time.Millisecond, 233*time.Millisecond)
	ext := m.GetExtended().AsMap()
	// The input images budget is a window of its own.
	date, _ := http.ParseTime("Thu, 14 Aug 2025 01:11:13 GMT")
	checkWindows(t, "input images", m.GetRateLimit(), date,
		"requests x-ratelimit-requests 500/499 - +120ms",
		"tokens x-ratelimit-tokens 200000/199221 - +233ms",
		"input_images x-ratelimit-input-images 50000/49999 - +1ms")
	if ext[extProcessingMS] != 3439.0 || ext[extServiceTier] != "default" || len(ext) != 2 {
		t.Errorf("extended %v", ext)
	}

	body := r20Request(t, srv.Last(t).Body)
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("request %v", body)
	}
	parts, _ := msgs[0].(map[string]any)["content"].([]any)
	if len(parts) != 2 {
		t.Fatalf("content %v", msgs[0])
	}
	img, _ := parts[1].(map[string]any)["image_url"].(map[string]any)
	if img["url"] != "data:image/png;base64,"+png {
		t.Errorf("image %v", parts[1])
	}
	if p0, _ := parts[0].(map[string]any); p0["type"] != "text" || p0["text"] != "Answer in up to 5 words: What's in this image?" {
		t.Errorf("text part %v", parts[0])
	}
}

// TestRound20EnvoyErrors: three refusals of api.openai.com as envoy
// recorded them.
//
//   - chat_bad_model: 404 model_not_found for "invalid-model-xyz" (July
//     2025), OpenAI's four-space-indented body; not found, no rate-limit
//     headers (OpenAI sends none with this answer).
//   - chat_bad_request: 400 integer_below_min_value with param max_tokens
//     for max_tokens 0; an invalid request naming its parameter, and the
//     rate-limit headers sent with it in the failure's meta (the request
//     was counted: 499 of 500 left).
//   - embed_bad_request: 400 for dimensions -1 on /embeddings (August
//     2025): code and param null; the type is the code kept, no param
//     (the message names 'dimensions', the body does not).
//
// Each keeps x-request-id as its request id.
func TestRound20EnvoyErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		embed       bool
		kind        provider.Kind
		status      int
		code, param string
		msg         string
		requestID   string
		rateLimit   bool
	}{
		{"real_envoy_chat_bad_model", false, provider.KindNotFound, 404, "model_not_found", "",
			"The model `invalid-model-xyz` does not exist or you do not have access to it.", "req_d55efcb5f50d4c8a1e80028149587011", false},
		{"real_envoy_chat_bad_request", false, provider.KindInvalidRequest, 400, "integer_below_min_value", "max_tokens",
			"Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.", "req_d8febc7674db13aeeb70908b24c4aebd", true},
		{"real_envoy_embed_bad_request", true, provider.KindInvalidRequest, 400, "invalid_request_error", "",
			"-1 is less than the minimum of 1 - 'dimensions'", "req_062af047cd0840219b342a94ab0a5bad", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			p := newTestProvider(t, kOpenAI, srv.URL)
			var err error
			if tc.embed {
				_, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"x"}})
			} else {
				_, err = p.Generate(context.Background(), simpleRequest("gpt-4.1-nano"))
			}
			pe := providerError(t, err)
			if pe.Kind != tc.kind || pe.HTTPStatus != tc.status || pe.Code != tc.code || pe.Param != tc.param || pe.Message != tc.msg ||
				pe.RequestID != tc.requestID || pe.RetryAfter != 0 {
				t.Errorf("%s", renderErr(err))
			}
			if pe.Meta.GetProviderRequestId() != tc.requestID {
				t.Errorf("meta request id %q", pe.Meta.GetProviderRequestId())
			}
			if rl := pe.Meta.GetRateLimit(); (rl != nil) != tc.rateLimit {
				t.Errorf("rate limit %v, want one: %v", rl, tc.rateLimit)
			} else if tc.rateLimit && (rl.GetRequestsRemaining() != rl.GetRequestsLimit()-1 || rl.RequestsLimit == nil) {
				t.Errorf("rate limit %v", rl)
			}
		})
	}
}

// TestRound20HeliconeGroq: Groq's llama-3.3-70b-versatile (September 2025)
// as Helicone's cost tests keep its bodies, without headers.
//
// Unary: "Hello! How can I assist you today?", usage with Groq's timings
// beside the counts (50 in, 10 out); its x_groq.id is the request id (no
// header gave one). Streamed, a second call: "Hello! How can I help you
// today?" in nine deltas, x_groq.id on
// the first chunk and with the usage on the last (47 in, 10 out), which is
// Groq's only usage (no top-level one); "stop".
func TestRound20HeliconeGroq(t *testing.T) {
	t.Parallel()
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		const name = "real_helicone_groq"
		srv := providertest.ReplayFile(t, td(name+".http"))
		res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("llama-3.3-70b-versatile"))
		if err != nil {
			t.Fatal(err)
		}
		checkResultInvariants(t, res)
		providertest.Golden(t, td(name+".golden"), renderResult(t, res))
		if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello! How can I assist you today?")); !proto.Equal(res.Message, want) {
			t.Errorf("message %v", res.Message)
		}
		m := res.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 50, OutputTokens: 10, TotalTokens: 60}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if m.GetResponseId() != "chatcmpl-28cc358a-29a7-4232-a57c-256b42cfac70" || m.GetResolvedModel() != "llama-3.3-70b-versatile" ||
			m.GetProviderRequestId() != "req_01k5877dmeekzsfntqtrjx49hq" ||
			!m.GetCreateTime().AsTime().Equal(time.Unix(1757991384, 0)) || len(m.GetWarnings()) != 0 || m.GetRateLimit() != nil {
			t.Errorf("meta %v", m)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		const name = "real_helicone_groq_stream"
		srv := providertest.ReplayFile(t, td(name+".http"))
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), simpleRequest("llama-3.3-70b-versatile"))
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
		if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello! How can I help you today?")); !proto.Equal(f.Message, want) {
			t.Errorf("message %v", f.Message)
		}
		m := f.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 47, OutputTokens: 10, TotalTokens: 57}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if m.GetResponseId() != "chatcmpl-0f7162ac-0484-466d-a5cc-f7c0d2fe3f2e" || m.GetResolvedModel() != "llama-3.3-70b-versatile" ||
			m.GetProviderRequestId() != "req_01k5877dv7ekzvbxfeemqxgfc7" ||
			!m.GetCreateTime().AsTime().Equal(time.Unix(1757991385, 0)) || len(m.GetWarnings()) != 0 {
			t.Errorf("meta %v", m)
		}
	})
}

// TestRound20HeliconeDeepSeekLength: deepseek-chat streamed (September
// 2025) and cut by a 10-token limit: "Of course. \"Testing PTB\" could
// refer" (quotes escaped in the deltas), then an empty delta with finish
// "length" and, in the same chunk, the usage: 13 in, 10 out, DeepSeek's
// prompt_cache_hit_tokens 0 beside OpenAI's cached_tokens 0. The UUID is
// the response id; no header, so no request id.
func TestRound20HeliconeDeepSeekLength(t *testing.T) {
	t.Parallel()
	const name = "real_helicone_deepseek_length_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := simpleRequest("deepseek-chat")
	req.Options.MaxTokens = proto.Int32(10)
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
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text(`Of course. "Testing PTB" could refer`)); !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 10, TotalTokens: 23}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "de5fbbcb-5b4b-4dfd-82fc-f24cb9d7d67b" || m.GetResolvedModel() != "deepseek-chat" ||
		m.GetProviderRequestId() != "" || !m.GetCreateTime().AsTime().Equal(time.Unix(1758080434, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if ext := m.GetExtended().AsMap(); ext["system_fingerprint"] != "fp_08f168e49b_prod0820_fp8_kvcache" || len(ext) != 1 {
		t.Errorf("extended %v", ext)
	}
}

// TestRound20PhoenixToolHistory: Arize-ai/phoenix's playground replayed a
// tool-call history to gpt-4 (October 2024): the user's question, an
// assistant turn with one call whose arguments are not an object but a
// JSON string holding one ("\"{\n    \"city\": ...}\""), and the tool's
// answer "sunny". api.openai.com accepted it and answered "The weather in
// San Francisco is sunny." (44 in, 8 out). The adapter sends that history
// as the live API took it: the call's id, name and arguments byte for
// byte (not parsed, not rewritten), the tool message keyed by the call id
// with its text. The live request's assistant content was "" where ours
// is null (the API takes both beside tool calls). Phoenix kept no headers.
func TestRound20PhoenixToolHistory(t *testing.T) {
	t.Parallel()
	const name = "real_phoenix_tool_history_stream"
	const callID = "call_zz1hkqH3IakqnHfVhrrUemlQ"
	const args = "\"{\\n    \\\"city\\\": \\\"San Francisco\\\"\\n}\""
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("How's the weather in San Francisco?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: callID, Name: "get_weather", Arguments: args}}}),
			msgOf(llmrelayv1.Role_ROLE_TOOL,
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: callID, Content: "sunny"}}}),
		}}
	srv := providertest.ReplayFile(t, td(name+".http"))
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
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("The weather in San Francisco is sunny.")); !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 44, OutputTokens: 8, TotalTokens: 52}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-ALFgwGQgTu4Fk2jq6vKDHOsVXJMjs" || m.GetResolvedModel() != "gpt-4-0613" || m.GetProviderRequestId() != "" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1729628570, 0)) || len(m.GetWarnings()) != 0 || m.GetRateLimit() != nil {
		t.Errorf("meta %v", m)
	}

	body := r20Request(t, srv.Last(t).Body)
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages %v", body["messages"])
	}
	if m0, _ := msgs[0].(map[string]any); m0["role"] != "user" || m0["content"] != "How's the weather in San Francisco?" {
		t.Errorf("user %v", msgs[0])
	}
	m1, _ := msgs[1].(map[string]any)
	calls, _ := m1["tool_calls"].([]any)
	if m1["role"] != "assistant" || m1["content"] != nil || len(calls) != 1 {
		t.Fatalf("assistant %v", msgs[1])
	}
	c0, _ := calls[0].(map[string]any)
	fn, _ := c0["function"].(map[string]any)
	if c0["id"] != callID || c0["type"] != "function" || fn["name"] != "get_weather" || fn["arguments"] != args {
		t.Errorf("call %v", calls[0])
	}
	if m2, _ := msgs[2].(map[string]any); m2["role"] != "tool" || m2["tool_call_id"] != callID || m2["content"] != "sunny" {
		t.Errorf("tool %v", msgs[2])
	}
	if body["model"] != "gpt-4" || body["stream"] != true {
		t.Errorf("request %v", body)
	}
}

// TestRound20LangtraceGroq: Groq's llama3-8b-8192 (June 2024), unary, with
// the headers Scale3-Labs/langtrace-python-sdk recorded: a 539-token
// answer ending "stop", Groq's timings beside the counts (20 in, 539 out),
// its x_groq.id the same id as x-request-id (the header is the request id),
// and Groq's rate limits in OpenAI's names: 14400 requests (14399 left,
// reset in 6 s) and 30000 tokens (29985 left, reset in 30 ms).
func TestRound20LangtraceGroq(t *testing.T) {
	t.Parallel()
	const name = "real_langtrace_groq"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "llama3-8b-8192", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Explain the importance of low latency LLMs"))}}
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 1 || !strings.HasPrefix(parts[0].GetText(), "Low latency Large Language Models (LLMs) are a crucial development") ||
		!strings.HasSuffix(parts[0].GetText(), "the need for low latency LLMs will only continue to increase.") {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 20, OutputTokens: 539, TotalTokens: 559}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-46785f31-4156-4e5d-8dc3-1fe593879e28" || m.GetResolvedModel() != "llama3-8b-8192" ||
		m.GetProviderRequestId() != "req_01j1cndp8bffc9fdts22w87w7g" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1719485782, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r20WantRateLimit(t, m.GetRateLimit(), "Thu, 27 Jun 2024 10:56:22 GMT", 14400, 14399, 30000, 29985, 6*time.Second, 30*time.Millisecond)
	ext := m.GetExtended().AsMap()
	want := map[string]any{"prompt_time": 0.00381804, "completion_time": 0.434926639, "total_time": 0.438744679}
	if ext["system_fingerprint"] != "fp_a97cfe35ae" || !jsonEqualAny(ext["usage_details"], want) {
		t.Errorf("extended %v", ext)
	}
}

// TestRound20AgentOpsOpenRouterDeepSeek: OpenRouter relaying
// deepseek/deepseek-chat (January 2025), unary, as AgentOps-AI/agentops
// recorded it through litellm: fifteen whitespace keep-alive lines before
// the JSON, "provider": "DeepSeek", the answer "Hello! How can I assist you
// today? 😊" beside "refusal": "" (an empty refusal is no refusal: no
// refusal part), 14 in and 11 out. The upstream is kept as
// upstream_provider; OpenRouter sent no request-id header (its CF-RAY was
// redacted by the recorder).
func TestRound20AgentOpsOpenRouterDeepSeek(t *testing.T) {
	t.Parallel()
	const name = "real_agentops_openrouter_deepseek"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "deepseek/deepseek-chat", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Write a short greeting."))}}
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello! How can I assist you today? 😊")); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 14, OutputTokens: 11, TotalTokens: 25}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "gen-1736892109-Bw6T8Zz8t3IlUpRWImy8" || m.GetResolvedModel() != "deepseek/deepseek-chat" || m.GetProviderRequestId() != "" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1736892109, 0)) || len(m.GetWarnings()) != 0 || m.GetRateLimit() != nil {
		t.Errorf("meta %v", m)
	}
	if ext := m.GetExtended().AsMap(); ext[extUpstreamProvider] != "DeepSeek" || ext["system_fingerprint"] != "fp_3a5770e1b4" {
		t.Errorf("extended %v", ext)
	}
}

// TestRound20AgentOpsAI21: AI21's OpenAI-compatible chat endpoint
// (api.ai21.com/studio/v1, jamba-1.5-mini, January 2025), unary. AI21's
// answer has an id, choices and usage only: no object, no created, no
// model: no create time, and no resolved model from the adapter (the
// server falls back to the requested one, gateway.go). The text keeps its LaTeX backslashes and the "\n\n" AI21 put
// after each $$…$$; "stop", 30 in and 162 out; its request-id header (the
// id without "chatcmpl-") is the request id.
func TestRound20AgentOpsAI21(t *testing.T) {
	t.Parallel()
	const name = "real_agentops_ai21_jamba"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "jamba-1.5-mini", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are an expert mathematician.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Write a summary of 5 lines on the Shockley diode equation."))}}
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 1 || !strings.HasPrefix(parts[0].GetText(), `The Shockley diode equation, also known as the diode law, describes the current-voltage characteristics of a diode. It is given by $$I = I_S \left( e^{\frac{V}{n V_T}} - 1 \right)$$`+"\n\n, where $$I$$\n\n is") ||
		!strings.HasSuffix(parts[0].GetText(), "This model is fundamental in understanding semiconductor diode operation in circuits.") {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 30, OutputTokens: 162, TotalTokens: 192}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-549f4199-3264-729e-a529-cda4502f0f48" || m.GetProviderRequestId() != "549f4199-3264-729e-a529-cda4502f0f48" ||
		m.GetCreateTime() != nil || m.GetResolvedModel() != "" || len(m.GetWarnings()) != 0 || m.GetRateLimit() != nil || m.GetExtended() != nil {
		t.Errorf("meta %v", m)
	}
}

// TestRound20AgentOpsAI21Stream: the same AI21 request streamed. AI21
// frames each event with CRLF ("data: …\r\n\r\n", [DONE] too), writes its
// chunks with a space after each colon and comma, and sends no object,
// created or model; the first delta has only the role, the last an empty
// content with "stop" and the usage (30 in, 184 out). 183 deltas make the
// text, LaTeX backslashes and "\n\n" after each $$…$$ included; the
// request-id header is the request id.
func TestRound20AgentOpsAI21Stream(t *testing.T) {
	t.Parallel()
	const name = "real_agentops_ai21_jamba_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "jamba-1.5-mini", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are an expert mathematician.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Write a summary of 5 lines on the Shockley diode equation."))}}
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
	deltas := 0
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			deltas++
		}
	}
	if deltas != 183 {
		t.Errorf("%d text deltas, want 183", deltas)
	}
	f := accFold(t, evs)
	want := `The Shockley diode equation, also known as the diode law, describes the current-voltage characteristic of a diode. It is given by $$I = I_S \left( e^{\frac{V}{n V_T}} - 1 \right)$$` + "\n\n" +
		`, where $$I$$` + "\n\n" + ` is the diode current, $$I_S$$` + "\n\n" + ` is the reverse saturation current, $$V$$` + "\n\n" +
		` is the voltage across the diode, $$n$$` + "\n\n" + ` is the ideality factor, and $$V_T$$` + "\n\n" +
		` is the thermal voltage. The equation accounts for the exponential increase in current with increasing forward voltage, while the term $$e^{\frac{V}{n V_T}} - 1$$` + "\n\n" +
		` ensures the current is very small for reverse voltages. This model, developed by William Shockley, is fundamental in understanding and analyzing diode behavior in electronic circuits.`
	if !proto.Equal(f.Message, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text(want))) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 30, OutputTokens: 184, TotalTokens: 214}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-fb9ce6f7-20dc-d385-5fb2-90e86a364bc9" || m.GetProviderRequestId() != "fb9ce6f7-20dc-d385-5fb2-90e86a364bc9" ||
		m.GetResolvedModel() != "" || m.GetCreateTime() != nil || len(m.GetWarnings()) != 0 || m.GetRateLimit() != nil {
		t.Errorf("meta %v", m)
	}
}
