package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// lcgChatUnary replays unary Chat Completions answers recorded in
// tmc/langchaingo's httprr traces (testdata/README.md, "langchaingo");
// the expectations are checked by hand against the recorded bodies and
// headers.
var lcgChatUnary = []recordedUnary{
	// Moonshot kimi-k2.5 (api.moonshot.ai), unary: "content": "" beside
	// reasoning_content and one call with Moonshot's id "get_weather:0"
	// (arguments with a space), usage without details. Moonshot sends no
	// x-request-id: its request id is the Msh-Request-Id header (it was
	// lost), X-Msh-Trace-Id being a trace id.
	{"real_lcg_moonshot_multi_turn_reasoning_1", "tools_parallel", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); r.GetText() != "The user is asking for the weather in Beijing. I have a function available called `get_weather` that takes a location parameter (the city name) and returns the current weather for that location.\n\nI need to call the `get_weather` function with \"Beijing\" as the location parameter." || r.GetRedacted() {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "get_weather:0" || tc.GetName() != "get_weather" || tc.GetArguments() != `{"location": "Beijing"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 61, OutputTokens: 81, TotalTokens: 142}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetProviderRequestId() != "e571b2df-0033-11f1-9d11-00163e7a3687" || res.Meta.GetResponseId() != "chatcmpl-69809a775276a7d916e38571" || res.Meta.GetResolvedModel() != "kimi-k2.5" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	// The turn after the tool's result: text with a non-BMP emoji and
	// reasoning_content, finish stop.
	{"real_lcg_moonshot_multi_turn_reasoning_2", "chat_plain", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); r.GetText() != "Great! I received the weather information for Beijing. The result shows:\n- Temperature: 22°C\n- Condition: sunny\n\nI should present this information clearly to the user." {
			t.Errorf("reasoning %v", r)
		}
		if parts[1].GetText() != "The weather in Beijing is currently **22°C** and **sunny**. ☀️" {
			t.Errorf("text %q", parts[1].GetText())
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 174, OutputTokens: 57, TotalTokens: 231}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetProviderRequestId() != "e84b3cee-0033-11f1-b68e-00163e0a4aa2" || res.Meta.GetResponseId() != "chatcmpl-69809a7c542a33e713929f15" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	// OpenRouter relaying openai/o4-mini-high, unary: fourteen padding
	// lines before the JSON, "content": "" beside the reasoning and one
	// call, a reasoning.summary detail and a reasoning.encrypted one (the
	// rs_ item's encrypted content) both at index 0: one block, the
	// summary its text, the encrypted content its signature and the item
	// its id (as OpenRouter numbers them; at index 1 they would be two
	// blocks, real_fantasy_openrouter_gpt_5_thinking). 320 of 348 output
	// tokens reasoning.
	{"real_lcg_function_call_synchronous_openrouter_o4_mini_high", "tools_parallel", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		r := parts[0].GetReasoning()
		if !strings.HasPrefix(r.GetText(), "**Checking Boston weather**\n\nThe user wants") || !strings.HasSuffix(r.GetText(), "So, I’ll initiate the function call and await the results!") ||
			r.GetRedacted() || r.GetId() != "rs_02d56d9ecbf2aa20016972815fbc708190ae02581f548ceeb5" ||
			len(r.GetSignature()) != 2936 || !strings.HasPrefix(r.GetSignature(), "gAAAAABpcoFkgCXPAu-c") || !strings.HasSuffix(r.GetSignature(), "GwxypFFk=") {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_4jC4iEEpR2b3YsWnDQRQkQPh" || tc.GetName() != "getCurrentWeather" ||
			tc.GetArguments() != `{"location":"Boston, MA","unit":"fahrenheit"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 78, OutputTokens: 348, TotalTokens: 426, ReasoningTokens: 320}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetResponseId() != "gen-1769111903-iGaJP0V1glLLVSkxuYn7" || res.Meta.GetResolvedModel() != "openai/o4-mini-high" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	// OpenRouter relaying deepseek/deepseek-r1 on Novita, unary: 52
	// padding lines before the JSON, the reasoning both in "reasoning"
	// and in a reasoning.text detail with "format": null (one block, not
	// two), the text with a non-BMP emoji, "system_fingerprint": "",
	// 443 of 600 output tokens reasoning.
	{"real_lcg_multi_content_text_openrouter_deepseek_r1", "chat_plain", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); len(r.GetText()) != 2104 || !strings.HasPrefix(r.GetText(), "Okay, let's see. The user says they're a Pomeranian") ||
			!strings.HasSuffix(r.GetText(), "still providing the necessary scientific terms.\n") || r.GetRedacted() || r.GetSignature() != "" {
			t.Errorf("reasoning %d %v", len(r.GetText()), r)
		}
		if txt := parts[1].GetText(); !strings.HasPrefix(txt, "You are a **domestic dog** (*Canis lupus familiaris*)") || !strings.HasSuffix(txt, "Spitz-type dogs! 🐾") {
			t.Errorf("text %q", txt)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 19, OutputTokens: 600, TotalTokens: 619, ReasoningTokens: 443}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetResponseId() != "gen-1769111316-V8iQb6OJXl7jB10Q9jEW" || res.Meta.GetResolvedModel() != "deepseek/deepseek-r1" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
}

func TestLangchaingoChatUnary(t *testing.T) {
	t.Parallel()
	runRecordedUnary(t, lcgChatUnary)
}

// lcgMoonshotTurn2 is what langchaingo sent Moonshot after
// real_lcg_moonshot_multi_turn_reasoning_1, the request of the trace's
// second exchange, which the live API answered with
// real_lcg_moonshot_multi_turn_reasoning_2: its assistant turn and the
// tool's result.
const lcgMoonshotTurn2 = `[{"role":"assistant","content":"","tool_calls":[{"id":"get_weather:0","type":"function","function":{"name":"get_weather","arguments":"{\"location\": \"Beijing\"}"}}],"reasoning_content":"The user is asking for the weather in Beijing. I have a function available called ` + "`get_weather`" + ` that takes a location parameter (the city name) and returns the current weather for that location.\n\nI need to call the ` + "`get_weather`" + ` function with \"Beijing\" as the location parameter."},{"role":"tool","content":"{\"temperature\": \"22°C\", \"condition\": \"sunny\"}","name":"get_weather","tool_call_id":"get_weather:0"}]`

// TestLangchaingoMoonshotToolTurn: Moonshot's thinking models answer 400
// when a tool-call turn lacks its reasoning_content, so the request we
// build for api.moonshot.ai from the first answer and the tool's result
// carries the same assistant turn as the one the live API accepted: the
// call by its id with the arguments as sent, the reasoning as
// reasoning_content, then the result under the call's id. The one
// difference is the assistant's content, null where langchaingo sent ""
// (a turn with calls and no text; both are valid Chat Completions).
func TestLangchaingoMoonshotToolTurn(t *testing.T) {
	t.Parallel()
	first := providertest.Load(t, td("real_lcg_moonshot_multi_turn_reasoning_1.http"))
	p, err := New(testKey, WithBaseURL("https://api.moonshot.ai/v1"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseChatResponse(first.Body)
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "kimi-k2.5", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Beijing?")),
			res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("get_weather:0", `{"temperature": "22°C", "condition": "sunny"}`)),
		},
		Tools: []*llmrelayv1.Tool{weatherTool(t)},
	}
	body, _, err := p.buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	if err := json.Unmarshal([]byte(lcgMoonshotTurn2), &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 3 {
		t.Fatalf("messages %v", got.Messages)
	}
	asst, tool := got.Messages[1], got.Messages[2]
	if asst["content"] != nil {
		t.Errorf("assistant content %v, want null", asst["content"])
	}
	for _, k := range []string{"role", "tool_calls", "reasoning_content"} {
		if !reflect.DeepEqual(asst[k], want[0][k]) {
			t.Errorf("assistant %s: %v, want %v", k, asst[k], want[0][k])
		}
	}
	for _, k := range []string{"role", "content", "tool_call_id"} {
		if !reflect.DeepEqual(tool[k], want[1][k]) {
			t.Errorf("tool %s: %v, want %v", k, tool[k], want[1][k])
		}
	}
}

// lcgChatStreams replays Chat Completions streams recorded in
// langchaingo's httprr traces; the expectations are checked by hand
// against the recorded chunks and headers.
var lcgChatStreams = []recordedStream{
	// grok-4.5 on api.x.ai: 25 reasoning_content deltas (the first with
	// the role after it), the call whole in one delta (id
	// "call-<uuid>-0", "index" after "function"), the finish in its own
	// chunk, then the usage with choices [] in xAI's dialect:
	// completion_tokens 14 is the call alone, the 25 reasoning tokens
	// come on top (total 374 = 335 + 14 + 25), 128 cached, cost ticks.
	// The request id is the x-request-id, the same UUID as the answer's
	// id; the rate limits come without reset headers. Every chunk carries
	// the second it was sent ("created" goes from 1785787907 to
	// 1785787908 at the 22nd): the response's creation time is the first
	// (it was replaced by the later one mid-stream).
	{"real_lcg_function_call_streaming_xai_grok_4_5", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); r.GetText() != "The user wants to know the weather in Boston, MA. I have the getCurrentWeather tool. I should use that." || r.GetRedacted() {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "call-c9fb0be8-f98b-4ae6-bb02-30cc74f74c7c-0" || tc.GetName() != "getCurrentWeather" ||
			tc.GetArguments() != `{"location":"Boston, MA"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 335, OutputTokens: 39, TotalTokens: 374, CachedInputTokens: 128, ReasoningTokens: 25}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetProviderRequestId() != "7f65a7f9-d1ad-9fd6-8e7a-3df9c57b3d67" || f.Meta.GetResponseId() != "7f65a7f9-d1ad-9fd6-8e7a-3df9c57b3d67" ||
			f.Meta.GetResolvedModel() != "grok-4.5" || f.Meta.GetServiceTier() != "default" || f.Meta.GetCreateTime().GetSeconds() != 1785787907 {
			t.Errorf("meta %v", f.Meta)
		}
		if rl := f.Meta.GetRateLimit(); rl.GetRequestsLimit() != 7200 || rl.GetRequestsRemaining() != 7200 || rl.GetTokensLimit() != 50000000 || rl.GetTokensRemaining() != 50000000 ||
			rl.GetRequestsResetTime() != nil || rl.GetTokensResetTime() != nil {
			t.Errorf("rate limit %v", rl)
		}
	}},
	// OpenRouter relaying anthropic/claude-3.7-sonnet:thinking (served
	// by Google): two OPENROUTER PROCESSING comments, a reasoning.text
	// detail opening the block with text and signature "", 40 text
	// details (the same text in "reasoning"), an empty one, then the
	// signature alone; "content": "" in every reasoning delta; the text;
	// the call opened with arguments "" and a second fragment repeating
	// "type" with arguments "" again; "content": null beside the
	// fragments; the finish, then the usage on a chunk of its own (149 of
	// 231 output tokens reasoning, cost fields).
	{"real_lcg_function_call_streaming_openrouter_claude_3_7_sonnet_thinking", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 3 {
			t.Fatalf("parts %v", parts)
		}
		const reasoning = "Let's analyze the request:\n- The user wants to know the current weather in Boston, MA\n- I have a function called `getCurrentWeather` that can retrieve this information\n" +
			"- This function requires a \"location\" parameter, which the user has provided as \"Boston, MA\"\n- There's an optional \"unit\" parameter that can be \"celsius\" or \"fahrenheit\"\n\n" +
			"Since the user didn't specify a unit preference, I'll default to using the common unit in the United States, which is Fahrenheit.\n\n" +
			"I'll now call the `getCurrentWeather` function with the location \"Boston, MA\" and unit \"fahrenheit\"."
		if r := parts[0].GetReasoning(); r.GetText() != reasoning || r.GetRedacted() || len(r.GetSignature()) != 256 ||
			!strings.HasPrefix(r.GetSignature(), "ErkBCkoICxACGAIiQD62") || !strings.HasSuffix(r.GetSignature(), "+8/gdAA6nzDhFTZvfzBgYAg==") {
			t.Errorf("reasoning %q %v", r.GetText(), r)
		}
		if parts[1].GetText() != "I'll check the current weather in Boston, MA for you." {
			t.Errorf("text %q", parts[1].GetText())
		}
		if tc := parts[2].GetToolCall(); tc.GetCallId() != "toolu_vrtx_017t4KEiZaydEY2w1NTQVTxe" || tc.GetName() != "getCurrentWeather" ||
			tc.GetArguments() != `{"location": "Boston, MA", "unit": "fahrenheit"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 454, OutputTokens: 231, TotalTokens: 685, ReasoningTokens: 149}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if d := f.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap(); d["cost"] != 0.004827 {
			t.Errorf("usage_details %v", d)
		}
		if f.Meta.GetResponseId() != "gen-1769111907-5Z5kXd6puOSOnhx6M1Nh" || f.Meta.GetResolvedModel() != "anthropic/claude-3.7-sonnet:thinking" || f.Meta.GetToolCallCount() != 1 {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// OpenRouter relaying google/gemini-2.5-flash: both calls whole in
	// the first chunk, which also carries the finish (native "STOP"),
	// "reasoning_details": [] and "annotations": []; then a chunk with
	// "content": "" and the usage (cost fields, no reasoning).
	{"real_lcg_function_parallel_call_streaming_openrouter_gemini_2_5_flash", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		for i, want := range []struct{ id, name string }{
			{"tool_getCurrentWeather_3lhCz5SSaZG604yaibNB", "getCurrentWeather"},
			{"tool_getCurrentTime_ljJXl2E9hr87YwAgPI1B", "getCurrentTime"},
		} {
			if tc := parts[i].GetToolCall(); tc.GetCallId() != want.id || tc.GetName() != want.name || tc.GetArguments() != `{"location":"Boston, MA"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %d: %v", i, tc)
			}
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 71, OutputTokens: 12, TotalTokens: 83}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "gen-1769111920-C4gWchv6Vg3abgcZ92D5" || f.Meta.GetToolCallCount() != 2 {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// OpenRouter relaying mistralai/mistral-medium-3: an opening chunk
	// with "content": "", then both calls whole in one delta (Mistral's
	// 9-character ids, "index" after "function", arguments with spaces)
	// beside the finish, then the usage.
	{"real_lcg_function_parallel_call_streaming_openrouter_mistral_medium_3", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		for i, want := range []struct{ id, name, args string }{
			{"GQe2XRHv1", "getCurrentWeather", `{"location": "Boston, MA", "unit": "fahrenheit"}`},
			{"LyNv9vSHA", "getCurrentTime", `{"location": "Boston, MA"}`},
		} {
			if tc := parts[i].GetToolCall(); tc.GetCallId() != want.id || tc.GetName() != want.name || tc.GetArguments() != want.args || !tc.GetArgumentsValid() {
				t.Errorf("call %d: %v", i, tc)
			}
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 191, OutputTokens: 34, TotalTokens: 225}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "gen-1769111921-RrwVOvvQZbuvTtEHNELO" || f.Meta.GetResolvedModel() != "mistralai/mistral-medium-3" {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// gpt-4.1 on api.openai.com: two parallel calls, each opened with
	// arguments "" and continued by index in six fragments, an
	// "obfuscation" field (sometimes "") on every chunk, "usage": null
	// until the usage chunk with choices [] after the finish. OpenAI's
	// headers: the x-request-id, openai-processing-ms and the rate limits
	// with resets "6ms" and "0s".
	{"real_lcg_function_parallel_call_streaming_openai", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		for i, want := range []struct{ id, name string }{
			{"call_oStfjbrEyya6I2px3EzDuGVB", "getCurrentWeather"},
			{"call_YZ4lwwqnfF0SkJgYRUhpJnn4", "getCurrentTime"},
		} {
			if tc := parts[i].GetToolCall(); tc.GetCallId() != want.id || tc.GetName() != want.name || tc.GetArguments() != `{"location": "Boston, MA"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %d: %v", i, tc)
			}
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 121, OutputTokens: 50, TotalTokens: 171}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetProviderRequestId() != "req_4e92b0718e374c29bddb098f2de23f16" || f.Meta.GetResponseId() != "chatcmpl-D0v79SZ1jIg58OjhfbzYsII57FtIr" ||
			f.Meta.GetResolvedModel() != "gpt-4.1-2025-04-14" || f.Meta.GetServiceTier() != "default" ||
			f.Meta.GetExtended().GetFields()["openai_processing_ms"].GetNumberValue() != 917 {
			t.Errorf("meta %v", f.Meta)
		}
		if rl := f.Meta.GetRateLimit(); rl.GetRequestsLimit() != 10000 || rl.GetRequestsRemaining() != 9999 || rl.GetTokensLimit() != 30000000 || rl.GetTokensRemaining() != 29999987 ||
			rl.GetRequestsResetTime() == nil || rl.GetTokensResetTime() == nil {
			t.Errorf("rate limit %v", rl)
		}
	}},
	// deepseek-chat on api.deepseek.com: 29 text deltas, then a call
	// (DeepSeek's call_00_ id) whose arguments come in eleven fragments,
	// "usage": null on every chunk but the last, which carries "content":
	// "", the finish and the usage (320 cached, also as
	// prompt_cache_hit_tokens). DeepSeek's request id is X-Ds-Trace-Id.
	{"real_lcg_function_call_streaming_deepseek", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if parts[0].GetText() != "I can help you get the current weather in Boston, MA. However, I need to know which temperature unit you prefer - Celsius or Fahrenheit?" {
			t.Errorf("text %q", parts[0].GetText())
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_00_EtMTWqXVcdPddoVWO36UqydK" || tc.GetName() != "getCurrentWeather" ||
			tc.GetArguments() != `{"location": "Boston, MA"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 347, OutputTokens: 74, TotalTokens: 421, CachedInputTokens: 320}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetProviderRequestId() != "83493e1b5247a1fe802b7eba85b7318e" || f.Meta.GetResponseId() != "63cb051e-3929-455e-b949-f43635961e93" || f.Meta.GetResolvedModel() != "deepseek-chat" {
			t.Errorf("meta %v", f.Meta)
		}
	}},
}

func TestLangchaingoChatStreams(t *testing.T) {
	t.Parallel()
	runRecordedStreams(t, lcgChatStreams)
}
