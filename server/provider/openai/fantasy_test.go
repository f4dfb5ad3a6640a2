package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// fantasyChatStreams replays Chat Completions streams recorded in
// charmbracelet/fantasy's go-vcr cassettes (testdata/README.md,
// "fantasy"); the expectations are checked by hand against the recorded
// chunks.
var fantasyChatStreams = []recordedStream{
	// OpenRouter relaying google/gemini-3-pro-preview (effort medium): two
	// reasoning.text details at index 0 (format google-gemini-v1, the
	// same text in "reasoning"), then a reasoning.encrypted detail at
	// index 0 too, whose data is Gemini's thought signature and whose id
	// is the id of the call that follows ("reasoning": null beside it).
	// One block: the two texts, the signature and the id; the block is
	// readable, so no piece of it is redacted (the encrypted piece was
	// reported as redacted, a withheld text, on the block's third delta).
	{"real_fantasy_openrouter_gemini_3_pro_thinking_stream", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		r := parts[0].GetReasoning()
		if !strings.HasPrefix(r.GetText(), "**Assessing User Intent**\n\n\\n\\n\n\nI've begun") ||
			!strings.Contains(r.GetText(), "correct function call.\n\n\n**Pinpointing the Tool's Use**") ||
			!strings.HasSuffix(r.GetText(), "the most critical parameter for the weather function call.\n\n\n") {
			t.Errorf("reasoning text %q", r.GetText())
		}
		if r.GetRedacted() || r.GetId() != "tool_weather_wJMhKbJOiIeWsXDA84qT" || len(r.GetSignature()) != 884 ||
			!strings.HasPrefix(r.GetSignature(), "CiUBjz1rX+QNZZDaA519") || !strings.HasSuffix(r.GetSignature(), "Q7X8iQ==") {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "tool_weather_wJMhKbJOiIeWsXDA84qT" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 28, OutputTokens: 120, TotalTokens: 148, ReasoningTokens: 111}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if d := f.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap(); d["cost"] != 0.001496 {
			t.Errorf("usage_details %v", d)
		}
		if f.Meta.GetResponseId() != "gen-1773324252-euYchQc6cJybvZVcHvS8" || f.Meta.GetResolvedModel() != "google/gemini-3-pro-preview-20251117" {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// OpenRouter relaying google/gemini-3-pro-preview, two parallel
	// calls: the thought text (two reasoning.text details at index 0),
	// then the thought signature as a reasoning.encrypted detail at index
	// 0 whose id is the first call's; the second call has none. One
	// readable block carrying the signature and the first call's id,
	// then the calls, each by its own id, with its own arguments.
	{"real_fantasy_openrouter_gemini_3_pro_multi_tool_stream", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 3 {
			t.Fatalf("parts %v", parts)
		}
		r := parts[0].GetReasoning()
		if !strings.HasPrefix(r.GetText(), "**Initiating Operations Concurrently**\n\nI've got the directive") ||
			!strings.Contains(r.GetText(), "as requested.\n\n\n**Constructing Tool Calls**\n\n") ||
			!strings.HasSuffix(r.GetText(), "That list is now ready for execution.\n\n\n") {
			t.Errorf("reasoning text %q", r.GetText())
		}
		if r.GetRedacted() || r.GetId() != "tool_add_pBo1amaXosQZHph2sTIn" || len(r.GetSignature()) != 788 ||
			!strings.HasPrefix(r.GetSignature(), "CiQBjz1rX8jwTvOiEkSd") || !strings.HasSuffix(r.GetSignature(), "LAJ88znEg=") {
			t.Errorf("reasoning %v", r)
		}
		for i, want := range []struct{ id, name, args string }{
			{"tool_add_pBo1amaXosQZHph2sTIn", "add", `{"a":2,"b":3}`},
			{"tool_multiply_4OlsV1nHAV6rIa96boyX", "multiply", `{"b":3,"a":2}`},
		} {
			if tc := parts[i+1].GetToolCall(); tc.GetCallId() != want.id || tc.GetName() != want.name || tc.GetArguments() != want.args || !tc.GetArgumentsValid() {
				t.Errorf("call %d: %v", i, tc)
			}
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 57, OutputTokens: 121, TotalTokens: 178, ReasoningTokens: 103}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "gen-1773324016-ju6o6zsDAama1Oyl2svH" || f.Meta.GetToolCallCount() != 2 {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// Hugging Face's router relaying Qwen3-Coder-480B on Cerebras
	// (":cerebras"): Cerebras's stream as is, both calls whole in one
	// delta (ids 49253c956, 6a614264b), no [DONE] after the chunk with
	// the finish and the usage. Complete, as from Cerebras itself.
	{"real_fantasy_huggingface_cerebras_multi_tool_stream", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		for i, want := range []struct{ id, name string }{{"49253c956", "add"}, {"6a614264b", "multiply"}} {
			if tc := parts[i].GetToolCall(); tc.GetCallId() != want.id || tc.GetName() != want.name || tc.GetArguments() != `{"a": 2, "b": 3}` || !tc.GetArgumentsValid() {
				t.Errorf("call %d: %v", i, tc)
			}
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 408, OutputTokens: 59, TotalTokens: 467}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "chatcmpl-fbef6a2f-2f11-4004-aa3d-797c76e902e4" || f.Meta.GetResolvedModel() != "qwen-3-coder-480b" {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// Cerebras qwen-3-coder-480b: both calls whole in one delta (ids
	// ab8048658 and b249e0b3f, arguments with spaces), then a chunk with
	// the finish reason, the usage and Cerebras's time_info, and the body
	// ends: Cerebras sends no [DONE]. The answer is complete (it was
	// reported as a cut stream, an error after the whole answer).
	{"real_fantasy_cerebras_multi_tool_stream", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		for i, want := range []struct{ id, name string }{{"ab8048658", "add"}, {"b249e0b3f", "multiply"}} {
			if tc := parts[i].GetToolCall(); tc.GetCallId() != want.id || tc.GetName() != want.name || tc.GetArguments() != `{"a": 2, "b": 3}` || !tc.GetArgumentsValid() {
				t.Errorf("call %d: %v", i, tc)
			}
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 408, OutputTokens: 59, TotalTokens: 467}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "chatcmpl-5c5013db-58c5-4c0b-9e7e-10eccacdc535" || f.Meta.GetResolvedModel() != "qwen-3-coder-480b" ||
			f.Meta.GetExtended().GetFields()["system_fingerprint"].GetStringValue() != "fp_386b539e7b02ce3613b7" {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// llama.cpp's server (build b6865) running gpt-oss-20b: eight
	// reasoning_content deltas, a call with llama.cpp's 32-character id
	// whose arguments arrive in eight fragments, the finish in a chunk
	// with an empty delta, then "choices": [] with the usage (no details)
	// and llama.cpp's "timings", whose cache_n 138 says 138 of the 139
	// prompt tokens came from its cache. Those are the cached input
	// tokens (they were lost: the timings were not read).
	{"real_fantasy_llamacpp_gpt_oss_thinking_stream", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); r.GetText() != "We need to call the weather function." || r.GetRedacted() || r.GetSignature() != "" {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "Q2J4SAYY3S9Bwuymis3vFUCFquG4g5Za" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 139, OutputTokens: 34, TotalTokens: 173, CachedInputTokens: 138}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "chatcmpl-6VnA4IQXB7MUKijyHkcSCKqZpkFTSwfL" || f.Meta.GetResolvedModel() != "openai/gpt-oss-20b" ||
			f.Meta.GetExtended().GetFields()["system_fingerprint"].GetStringValue() != "b6865-1c1409e13" {
			t.Errorf("meta %v", f.Meta)
		}
	}},
	// Z.ai glm-4.5 (api.z.ai's coding endpoint, reasoning_effort high):
	// Z.ai's 32-character id and no "object", "content": "\n" before
	// and after 52 reasoning_content deltas (each with the role), the
	// call whole in the chunk that carries the finish, then a second
	// chunk finishing with tool_calls, with "content": "" and the usage
	// (43 cached prompt tokens).
	{"real_fantasy_zai_glm_4_5_thinking_stream", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 4 {
			t.Fatalf("parts %v", parts)
		}
		if parts[0].GetText() != "\n" || parts[2].GetText() != "\n" {
			t.Errorf("texts %q %q", parts[0].GetText(), parts[2].GetText())
		}
		if r := parts[1].GetReasoning(); r.GetText() != "The user is asking for the weather in Florence, Italy. I have access to a weather function that takes a location parameter. "+
			"The user has specified \"Florence, Italy\" as the location, so I have all the required parameters to make the function call." || r.GetRedacted() {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[3].GetToolCall(); tc.GetCallId() != "call_e6e3edb2371843ad9503e65b" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location": "Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 179, OutputTokens: 72, TotalTokens: 251, CachedInputTokens: 43}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "2025092619065217d08d861c2248cd" || f.Meta.GetResolvedModel() != "glm-4.5" || f.Meta.GetToolCallCount() != 1 {
			t.Errorf("meta %v", f.Meta)
		}
	}},
}

func TestFantasyChatStreams(t *testing.T) {
	t.Parallel()
	runRecordedStreams(t, fantasyChatStreams)
}

// checkRedactedReasoning: a reasoning piece marked redacted (the text
// withheld) belongs to a block that had no text before it.
func checkRedactedReasoning(t *testing.T, evs []*provider.Event) {
	t.Helper()
	hasText := map[int]bool{}
	for _, ev := range evs {
		if r := ev.Reasoning; ev.Kind == provider.EventReasoning {
			if r.Redacted && hasText[r.Index] {
				t.Errorf("reasoning %d: a redacted piece after the block's text", r.Index)
			}
			hasText[r.Index] = hasText[r.Index] || r.Text != ""
		}
	}
}

// fantasyChatUnary replays unary Chat Completions answers from
// charmbracelet/fantasy's cassettes.
var fantasyChatUnary = []recordedUnary{
	// grok-3-mini on Azure AI Foundry (a deployment route, api-version
	// 2025-01-01-preview), unary: reasoning_content beside "content": "",
	// a call with "call_id": null inside its function, "stop_reason":
	// null, an id ending in "_sidecar", prompt_filter_results, and grok's
	// usage: completion_tokens 27 is the answer alone, the 294 reasoning
	// tokens come on top (total_tokens 609 = 288 + 27 + 294). Output is
	// 321, reasoning included (it was 27, less than its own reasoning,
	// and input + output fell short of the total).
	{"real_fantasy_azure_grok_3_mini_thinking", "tools_parallel", kAzure, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); len(r.GetText()) != 1467 || !strings.HasPrefix(r.GetText(), "First, the user is asking about the weather in Florence, Italy.") ||
			!strings.Contains(r.GetText(), "within <function_call> tags: <function_call>{") ||
			!strings.HasSuffix(r.GetText(), "output only the function call in the specified format, as per the instructions.") || r.GetRedacted() || r.GetSignature() != "" {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_47156543" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 288, OutputTokens: 321, TotalTokens: 609, ReasoningTokens: 294}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetResponseId() != "e6688144-8493-4d1a-b0b8-0a06d0515dd7_sidecar" || res.Meta.GetResolvedModel() != "grok-3-mini-high" ||
			res.Meta.GetExtended().GetFields()["prompt_filter_results"] == nil {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	// OpenRouter relaying openai/gpt-5 (effort medium), unary: the body
	// opens with sixteen lines of padding whitespace, then the answer;
	// "content": null, a reasoning.summary detail at index 0 and a
	// reasoning.encrypted one (the rs_ item's encrypted content) at
	// index 1, one call. Two reasoning blocks, as OpenRouter numbers
	// them: the summary, then the redacted block with the item's id.
	// Z.ai glm-4.6v (api.z.ai, reasoning_effort high), unary:
	// reasoning_content and content both opening with a newline, a call
	// with Z.ai's id (call_ and a negative number), 44 cached prompt
	// tokens, and Z.ai's request id in the body ("request_id", here the
	// same as "id"); the cassette keeps no header but Content-Type. The
	// request id is the provider request id (it was dropped).
	// grok-3-mini on xAI's own API (reasoning_effort high), unary: the
	// same usage dialect as on Azure (total_tokens 620 = 288 + 27 + 305),
	// 7 cached prompt tokens, an id ending in "_us-east-1",
	// "content": "" beside reasoning_content and the call. Output is 332,
	// reasoning included (it was 27).
	{"real_fantasy_xai_grok_3_mini_thinking", "tools_parallel", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); !strings.HasPrefix(r.GetText(), "First, the user is asking for the weather in Florence, Italy.") ||
			!strings.HasSuffix(r.GetText(), "Is there any reason not to call the function? No, it matches perfectly.") {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_71093541" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 288, OutputTokens: 332, TotalTokens: 620, CachedInputTokens: 7, ReasoningTokens: 305}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetResponseId() != "f34c1057-adbf-c28f-afc3-aa8737faf493_us-east-1" || res.Meta.GetResolvedModel() != "grok-3-mini-high" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	// OpenRouter relaying x-ai/grok-code-fast-1, unary: OpenRouter
	// counts grok's reasoning inside completion_tokens (584 = 395 + 189,
	// 163 of the 189 reasoning), so the usage is taken as it comes (the
	// grok rule must not add the reasoning twice); a reasoning.summary
	// at index 0 and a reasoning.encrypted one (format xai-responses-v1,
	// an rs_ id made of a UUID) at index 1; 192 cached tokens.
	{"real_fantasy_openrouter_grok_code_fast_1_thinking", "tools_parallel", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 3 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); r.GetText() != "The user asked: \"What's the weather in Florence, Italy?\"\n" || r.GetRedacted() || r.GetId() != "" {
			t.Errorf("reasoning 0: %v", r)
		}
		if r := parts[1].GetReasoning(); !r.GetRedacted() || r.GetId() != "rs_2eb9d62a-ef47-c651-d166-91cc28b76633" || len(r.GetSignature()) != 992 ||
			!strings.HasPrefix(r.GetSignature(), "4mPGeaXJQZqEG30d") || !strings.HasSuffix(r.GetSignature(), "huItFIKzuMEr") {
			t.Errorf("reasoning 1: %v", r)
		}
		if tc := parts[2].GetToolCall(); tc.GetCallId() != "call_84645216" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 395, OutputTokens: 189, TotalTokens: 584, CachedInputTokens: 192, ReasoningTokens: 163}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetResponseId() != "gen-1773324191-SpiL1utrerwh5rpnlk8y" || res.Meta.GetResolvedModel() != "x-ai/grok-code-fast-1" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	{"real_fantasy_zai_glm_4_6v_thinking", "tools_parallel", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 3 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); !strings.HasPrefix(r.GetText(), "\nThe user is asking for the weather in Florence, Italy.") ||
			!strings.HasSuffix(r.GetText(), "I should use this exact value for the location parameter.") || r.GetSignature() != "" {
			t.Errorf("reasoning %v", r)
		}
		if parts[1].GetText() != "\nI'll check the weather in Florence, Italy for you.\n" {
			t.Errorf("text %q", parts[1].GetText())
		}
		if tc := parts[2].GetToolCall(); tc.GetCallId() != "call_-8167683298435521960" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 179, OutputTokens: 91, TotalTokens: 270, CachedInputTokens: 44}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetProviderRequestId() != "20251111175712e9c3abb6e9ff40e7" || res.Meta.GetResponseId() != "20251111175712e9c3abb6e9ff40e7" ||
			res.Meta.GetResolvedModel() != "glm-4.6v" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	{"real_fantasy_openrouter_gpt_5_thinking", "tools_parallel", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 3 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); len(r.GetText()) != 432 || !strings.HasPrefix(r.GetText(), "**Checking Florence's weather**\n\nI need to find out") ||
			!strings.HasSuffix(r.GetText(), "Alright, let's get that information!") || r.GetSignature() != "" || r.GetRedacted() || r.GetId() != "" {
			t.Errorf("reasoning 0: %v", r)
		}
		if r := parts[1].GetReasoning(); r.GetText() != "" || !r.GetRedacted() || r.GetId() != "rs_0caf9667a75d08220169b2c7b86c9881969d898ea9b7780716" ||
			len(r.GetSignature()) != 1656 || !strings.HasPrefix(r.GetSignature(), "gAAAAABpsse-I3DUazha") || !strings.HasSuffix(r.GetSignature(), "j27FN_tpT_I=") {
			t.Errorf("reasoning 1: %v", r)
		}
		if tc := parts[2].GetToolCall(); tc.GetCallId() != "call_vYXwqorxYJ1SpkxBfbomGrs4" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 63, OutputTokens: 148, TotalTokens: 211, ReasoningTokens: 64}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if d := res.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap(); d["cost"] != 0.00155875 {
			t.Errorf("usage_details %v", d)
		}
		if res.Meta.GetResponseId() != "gen-1773324215-D7lh5CAt7ZjqsjO9zT2D" || res.Meta.GetResolvedModel() != "openai/gpt-5-2025-08-07" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
	// llama.cpp's server (build b6865) running gpt-oss-20b, unary:
	// reasoning_content, "content": null, one call with a 32-character id
	// ("id" after "function"), the usage without details and, after the
	// id, llama.cpp's "timings" with cache_n 134: 134 of the 139 prompt
	// tokens were cached (they were lost).
	{"real_fantasy_llamacpp_gpt_oss_thinking", "tools_parallel", kOpenAI, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); r.GetText() != "User asks: \"What's the weather in Florence, Italy?\" We have a tool \"weather\" to get weather information. We should call it." {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "u36jVf07R9qUqfK2POEsHz6i6DUtUlrb" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 139, OutputTokens: 55, TotalTokens: 194, CachedInputTokens: 134}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetResponseId() != "chatcmpl-4kIkhSfHyNWuEKyYA5E7TAJXPd43t4TA" || res.Meta.GetResolvedModel() != "openai/gpt-oss-20b" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
}

func TestFantasyChatUnary(t *testing.T) {
	t.Parallel()
	runRecordedUnary(t, fantasyChatUnary)
}

// fantasyResponsesUnary replays unary Responses API answers from
// charmbracelet/fantasy's cassettes.
var fantasyResponsesUnary = []struct {
	name  string
	k     kind
	check func(t *testing.T, res *provider.Result)
}{
	// Azure OpenAI's v1 Responses route, gpt-5-mini (store false,
	// effort high, summary auto; the answer says "detailed"): a reasoning
	// item with its encrypted content and one summary_text part, then a
	// function call; "content_filters": null; 22 output tokens of which
	// reasoning_tokens 0 although the item has a summary (as recorded).
	{"real_fantasy_azure_responses_summary_thinking", kAzureV1Entra, func(t *testing.T, res *provider.Result) {
		parts := res.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		if r := parts[0].GetReasoning(); !strings.HasPrefix(r.GetText(), "**Checking weather in Florence**\n\nThe user is asking") ||
			!strings.HasSuffix(r.GetText(), "present the result to the user. It's straightforward!") || r.GetRedacted() ||
			r.GetId() != "rs_08e75323d01317c301690399f759088190a37f017516202cb2" || len(r.GetSignature()) != 1208 ||
			!strings.HasPrefix(r.GetSignature(), "gAAAAABpA5n8UjdGuSzF") || !strings.HasSuffix(r.GetSignature(), "UNMKXBKVtiE=") {
			t.Errorf("reasoning %v", r)
		}
		if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_Frvkxe2RXaW1CTvkYPyl0U68" || tc.GetName() != "weather" ||
			tc.GetArguments() != `{"location":"Florence, Italy"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
		if want := (&llmrelayv1.Usage{InputTokens: 63, OutputTokens: 22, TotalTokens: 85}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if res.Meta.GetResponseId() != "resp_08e75323d01317c301690399f6df988190bbb2d99c071619c6" || res.Meta.GetResolvedModel() != "gpt-5-mini" ||
			res.Meta.GetServiceTier() != "default" || len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("meta %v", res.Meta)
		}
	}},
}

func TestFantasyResponsesUnary(t *testing.T) {
	t.Parallel()
	for _, tc := range fantasyResponsesUnary {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, tc.k, srv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}

// TestStreamEndWithoutDone: Cerebras ends a complete stream after the
// chunk carrying the finish reason and the usage, without [DONE]
// (real_fantasy_cerebras_multi_tool_stream). Only that end is complete: a
// body that ends before the finish, or after it but before a usage object
// that follows it, is still a cut stream.
func TestStreamEndWithoutDone(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const (
		text      = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"
		finish    = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
		usage     = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n"
		finishUse = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n"
		cut       = `error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="stream ended before [DONE]"`
	)
	stop := `meta {"finish_reason":"FINISH_REASON_STOP","provider_finish_reason":"stop"}`
	use := `usage {"input_tokens":3,"output_tokens":1,"total_tokens":4}`
	cases := []struct {
		name, body string
		want       []string
	}{
		{"finish and usage in one chunk", text + finishUse, []string{`text "hi"`, stop, use, "eof"}},
		{"usage after the finish", text + finish + usage, []string{`text "hi"`, stop, use, "eof"}},
		{"finish without usage", text + finish, []string{`text "hi"`, stop, cut}},
		{"usage before the finish, then the finish", text + usage + finish, []string{`text "hi"`, use, stop, cut}},
		{"usage without finish", text + usage, []string{`text "hi"`, use, cut}},
		{"a chunk cut after the end", text + finishUse + "data: {\"choi", []string{`text "hi"`, stop, use,
			`error provider=openai kind=bad_response http=0 code="" request_id=req_test retry_after=0s message="invalid stream chunk: unexpected end of JSON input"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := streamFrom(p, tc.body)
			if first, err := s.Recv(); err != nil || first.Kind != provider.EventMeta {
				t.Fatalf("first event %v, %v", first, err)
			}
			evs, rendered, _ := collect(t, s)
			checkStreamInvariants(t, evs)
			if got := strings.TrimSuffix(string(rendered), "\n"); got != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestReasoningOutsideCompletion: grok counts its reasoning apart from
// completion_tokens (real_fantasy_azure_grok_3_mini_thinking); the total
// is the evidence. OpenAI's counts, and counts whose total does not say
// so, are taken as they come, except that reasoning tokens beyond the
// output tokens (which include them) are capped at them, with a warning
// that keeps the count sent.
func TestReasoningOutsideCompletion(t *testing.T) {
	t.Parallel()
	details := func(n int) *complDetails { return &complDetails{ReasoningTokens: flexInt(n)} }
	cases := []struct {
		name string
		in   wireUsage
		want *llmrelayv1.Usage
	}{
		{"grok: total = prompt + completion + reasoning", wireUsage{PromptTokens: 288, CompletionTokens: 27, TotalTokens: 609, CompletionTokensDetails: details(294)},
			&llmrelayv1.Usage{InputTokens: 288, OutputTokens: 321, TotalTokens: 609, ReasoningTokens: 294}},
		{"OpenAI: reasoning inside completion", wireUsage{PromptTokens: 63, CompletionTokens: 148, TotalTokens: 211, CompletionTokensDetails: details(64)},
			&llmrelayv1.Usage{InputTokens: 63, OutputTokens: 148, TotalTokens: 211, ReasoningTokens: 64}},
		{"more reasoning than completion, total without it", wireUsage{PromptTokens: 20, CompletionTokens: 2, TotalTokens: 22, CompletionTokensDetails: details(7)},
			&llmrelayv1.Usage{InputTokens: 20, OutputTokens: 2, TotalTokens: 22, ReasoningTokens: 2}},
		{"no total", wireUsage{PromptTokens: 20, CompletionTokens: 2, CompletionTokensDetails: details(7)},
			&llmrelayv1.Usage{InputTokens: 20, OutputTokens: 2, TotalTokens: 22, ReasoningTokens: 2}},
		{"no reasoning", wireUsage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8, CompletionTokensDetails: details(0)},
			&llmrelayv1.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8}},
	}
	for _, tc := range cases {
		if got := normalizeUsage(&tc.in); !proto.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		_, odd := usageDetailsAndOdd(&tc.in)
		capped := strings.HasPrefix(tc.name, "more reasoning") || tc.name == "no total"
		if want := "usage: reasoning_tokens 7 exceed the output tokens 2; reasoning tokens capped at 2"; capped != slices.Contains(odd, want) {
			t.Errorf("%s: warnings %q", tc.name, odd)
		}
	}
}

// TestBodyRequestID: Z.ai's request_id in the body is the provider request
// id unless a request-id header gives one; a request_id that is not a
// top-level string is not read.
func TestBodyRequestID(t *testing.T) {
	t.Parallel()
	const body = `{"id":"a1","model":"m","request_id":"zai-req-1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
	for _, tc := range []struct {
		name, head, body, want string
	}{
		{"body only", "", body, "zai-req-1"},
		{"header wins", "hdr-req-1", body, "hdr-req-1"},
		{"nested key", "", `{"id":"a1","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok","x":{"request_id":"inner"}},"finish_reason":"stop"}]}`, ""},
		{"not a string", "", `{"id":"a1","model":"m","request_id":7,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{"Content-Type": {"application/json"}}
			if tc.head != "" {
				h.Set("X-Request-Id", tc.head)
			}
			srv := providertest.Replay(t, providertest.Recording{Status: http.StatusOK, Header: h, Body: []byte(tc.body)})
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Meta.GetProviderRequestId(); got != tc.want {
				t.Errorf("provider request id %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFantasyZaiToolTurn: fantasy's glm-4.5 cassette holds the request
// it sent after real_fantasy_zai_glm_4_5_thinking_stream, which the live
// API answered: the assistant turn with "content": "\n\n" (the two "\n"
// around the reasoning) and the call, then the tool's result. The request
// we build for api.z.ai from the answer we streamed carries the same
// assistant turn and result, and since session 19 the turn's reasoning as
// reasoning_content: Zhipu's docs require it back with the tool results
// (the live API took the turn without it, but GLM's chat template then
// renders an empty think block for the turn; vercel_reasoning19_test.go).
func TestFantasyZaiToolTurn(t *testing.T) {
	t.Parallel()
	const name = "real_fantasy_zai_glm_4_5_thinking_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	answer := accFold(t, evs).Message
	p, err := New(testKey, WithBaseURL("https://api.z.ai/api/coding/paas/v4"))
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "glm-4.5", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Florence, Italy?")),
			answer,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_e6e3edb2371843ad9503e65b", "40 C")),
		},
		Tools: []*llmrelayv1.Tool{weatherTool(t)},
	}
	body, _, err := p.buildChatRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	const recorded = `[{"content":"\n\n","tool_calls":[{"id":"call_e6e3edb2371843ad9503e65b","function":{"arguments":"{\"location\": \"Florence, Italy\"}","name":"weather"},"type":"function"}],"role":"assistant"},{"content":"40 C","tool_call_id":"call_e6e3edb2371843ad9503e65b","role":"tool"}]`
	var want []map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 4 {
		t.Fatalf("messages %v", got.Messages)
	}
	var reasoning string
	for _, part := range answer.GetParts() {
		reasoning += part.GetReasoning().GetText()
	}
	if rc, ok := got.Messages[2]["reasoning_content"].(string); reasoning == "" || !ok || rc != reasoning {
		t.Errorf("assistant turn reasoning_content %v, want the streamed reasoning %q", got.Messages[2]["reasoning_content"], reasoning)
	}
	for i, w := range want {
		for k, v := range w {
			if !reflect.DeepEqual(got.Messages[i+2][k], v) {
				t.Errorf("message %d %s: %v, want %v", i+2, k, got.Messages[i+2][k], v)
			}
		}
	}
}
