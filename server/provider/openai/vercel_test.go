package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// replayVercelStream replays one stream taken from the Vercel AI SDK's
// fixtures (testdata/README.md), checks its golden and returns its events
// and terminal error.
func replayVercelStream(t *testing.T, name string, req *provider.Request) ([]*provider.Event, error) {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	return evs, err
}

// TestVercelChatStreams replays Chat Completions streams from the Vercel
// AI SDK's openai-compatible fixtures; the expectations are what the AI
// SDK's tests and snapshots make of the same chunks.
func TestVercelChatStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, req string
		check     func(t *testing.T, f folded)
	}{
		// tool_calls: [] in every delta, content "" beside the reasoning:
		// no tool call, reasoning then text.
		{"real_compat_issue_20203_empty_tool_calls_stream", "chat_plain", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != "Think more..." || parts[1].GetText() != "Hello" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		}},
		// A first chunk with empty id, model and created (a proxy's
		// placeholder): the ids are those of the real chunks.
		{"real_compat_placeholder_first_chunk_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "Hello" {
				t.Fatalf("parts %v", parts)
			}
			if f.Meta.GetResponseId() != "chatcmpl-123" || f.Meta.GetResolvedModel() != "actual-model-name" || f.Meta.GetCreateTime().GetSeconds() != 1700000000 {
				t.Errorf("meta %v", f.Meta)
			}
			if want := (&llmrelayv1.Usage{InputTokens: 10, OutputTokens: 1, TotalTokens: 11}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// gpt-4o: text, then a call whose arguments come whole ("{}").
		{"real_compat_issue_15789_step_1_stream", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 2 || parts[0].GetText() != "PRE_TOOL" {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_NZa7xqfefoaMI2YYHowVXVlU" || tc.GetName() != "weather" ||
				tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 58, OutputTokens: 12, TotalTokens: 70}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// gpt-4o, the turn after step 1: text only, finish stop, the usage
		// chunk with choices: [] and an empty obfuscation.
		{"real_compat_issue_15789_step_2_stream", "tools_parallel", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "POST_TOOL" {
				t.Fatalf("parts %v", parts)
			}
			if f.Meta.GetResponseId() != "chatcmpl-E6yvkr7hjcsBF18tAhF6z9yBFDts4" || f.Meta.GetResolvedModel() != "gpt-4o-2024-08-06" {
				t.Errorf("meta %v", f.Meta)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 86, OutputTokens: 2, TotalTokens: 88}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// Azure model router (gpt-5-nano): the prompt_filter_results
		// chunk with empty ids, content_filter_results on every chunk,
		// 64 reasoning tokens inside 78 completion tokens.
		{"real_azure_model_router_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "Capital of Denmark." {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 15, OutputTokens: 78, TotalTokens: 93, ReasoningTokens: 64}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt" || f.Meta.GetResolvedModel() != "gpt-5-nano-2025-08-07" {
				t.Errorf("ids %q %q", f.Meta.GetResponseId(), f.Meta.GetResolvedModel())
			}
		}},
		// Groq (llama-3.3-70b): a call with Groq's short id and whole
		// arguments; the last chunk has the same usage twice, in usage
		// and in x_groq.usage: counted once.
		{"real_groq_tool_call_stream", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "tk85n1k4m" || tc.GetName() != "weather" || tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 210, OutputTokens: 15, TotalTokens: 225}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// zai-glm-5-2 through Mistral's API: the second fragment of the
		// call repeats "type" and sends "name": "" (not a rename), and
		// the delta carries an "index" of its own.
		{"real_mistral_incremental_tool_call_stream", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "chatcmpl-tool-9f149c74c42f265b" || tc.GetName() != "webSearchTool" ||
				tc.GetArguments() != `{"query": "current Berlin weather"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 171, OutputTokens: 14, TotalTokens: 185, CachedInputTokens: 128}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// Mistral: a usage object on an intermediate chunk, replaced by
		// the last chunk's.
		{"real_mistral_usage_details_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "OK" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if u := f.Meta.GetUsage(); u.GetInputTokens() != 20 || u.GetOutputTokens() != 2 || u.GetTotalTokens() != 22 {
				t.Errorf("usage %v", u)
			}
			// The details are the last usage object's alone: its
			// additional_usage_field is an object, the intermediate
			// chunk's string value is gone, its service_tier replaced.
			d := f.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap()
			if _, stale := d["additional_usage_field"]; stale || d["additional_usage_field.nested"] != true || d["service_tier"] != "standard" ||
				d["prompt_audio_seconds"] != 1.0 || d["request_count"] != 1.0 || len(d) != 10 {
				t.Errorf("usage_details %v", d)
			}
			// Mistral's service tier is inside its usage: the last one's.
			if f.Meta.GetServiceTier() != "standard" {
				t.Errorf("service tier %q, want standard", f.Meta.GetServiceTier())
			}
		}},
		// xAI's model through the Vercel AI Gateway: gateway routing
		// metadata in a delta, 674 of 675 prompt tokens cached, cost
		// fields in the usage.
		{"real_xai_gateway_issue_19639_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "OK" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 675, OutputTokens: 1, TotalTokens: 676, CachedInputTokens: 674}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// Moonshot kimi-k2.5: no top-level usage, the usage is inside
		// the choice that finishes (the AI SDK reads it there).
		{"real_moonshot_choice_usage_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "OK." {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 12, OutputTokens: 5, TotalTokens: 17, ReasoningTokens: 1}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// Moonshot's parallel calls without "index": one delta opens both
		// (by id), the next carries both arguments by position.
		{"real_moonshot_indexless_tool_calls_stream", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 2 {
				t.Fatalf("parts %v", parts)
			}
			want := [][3]string{{"weather_0", "weather", `{"location":"San Francisco"}`}, {"time_1", "time", `{"zone":"UTC"}`}}
			for i, w := range want {
				if tc := parts[i].GetToolCall(); tc.GetCallId() != w[0] || tc.GetName() != w[1] || tc.GetArguments() != w[2] || !tc.GetArgumentsValid() {
					t.Errorf("call %d: %v, want %v", i, tc, w)
				}
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 61, OutputTokens: 25, TotalTokens: 86}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// Moonshot kimi-k3: two calls opened by id without "index", then
		// fragments that name them by index (1, then 0): the index is
		// the call's position in the delta that opened it.
		{"real_moonshot_tool_calls_stream", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 2 {
				t.Fatalf("parts %v", parts)
			}
			want := [][3]string{{"call-weather", "get_weather", `{"city":"Paris"}`}, {"call-time", "get_time", `{"zone":"UTC"}`}}
			for i, w := range want {
				if tc := parts[i].GetToolCall(); tc.GetCallId() != w[0] || tc.GetName() != w[1] || tc.GetArguments() != w[2] || !tc.GetArgumentsValid() {
					t.Errorf("call %d: %v, want %v", i, tc, w)
				}
			}
			if w := f.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "top_k") { // the request's top_k is expected
				t.Errorf("warnings %q", w)
			}
		}},
		// Alibaba qwen3-max: later fragments repeat "id": "" and "type",
		// a chunk with an empty fragment and no finish_reason, the usage
		// in a last chunk.
		{"real_alibaba_tool_call_stream", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_eee11723464a4b9eb8cee71d" || tc.GetName() != "weather" ||
				tc.GetArguments() != `{"location": "San Francisco"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 295, OutputTokens: 22, TotalTokens: 317}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// DeepSeek deepseek-v4-pro cut by max_tokens while reasoning: no
		// text, finish "length", both output tokens reasoning.
		{"real_deepseek_issue_19381_thinking_length_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetReasoning().GetText() != "We need" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
			if want := (&llmrelayv1.Usage{InputTokens: 87, OutputTokens: 2, TotalTokens: 89, ReasoningTokens: 2}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// DeepSeek deepseek-v4-flash (ids sanitized by the SDK authors, no
		// "created"): the finish and the usage on the chunk with the text.
		{"real_deepseek_issue_19789_usage_length_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "sanitized" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
			if want := (&llmrelayv1.Usage{InputTokens: 88, OutputTokens: 4, TotalTokens: 92, ReasoningTokens: 4}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// Perplexity sonar: the usage (with its cost object) on every
		// chunk, the last chunk's object "chat.completion.done".
		{"real_perplexity_usage_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "OK" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 6, OutputTokens: 1, TotalTokens: 7}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, err := replayVercelStream(t, tc.name, chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			tc.check(t, accFold(t, evs))
		})
	}
}

// TestVercelResponsesStreams replays Responses API streams from the Vercel
// AI SDK's openai fixtures.
func TestVercelResponsesStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		check func(t *testing.T, evs []*provider.Event, err error)
	}{
		// A lone error event with "code": null: a server error, mapped
		// by its type.
		{"real_responses_error_null_code_stream", func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindUnavailable || pe.Code != "server_error" || pe.Message != "Sorry, something went wrong." || pe.HTTPStatus != http.StatusOK {
				t.Errorf("got %s", renderErr(err))
			}
		}},
		// response.created then response.failed (rate_limit_exceeded),
		// no error event.
		{"real_responses_failed_only_stream", func(t *testing.T, evs []*provider.Event, err error) {
			pe := providerError(t, err)
			if pe.Kind != provider.KindRateLimited || pe.Code != "rate_limit_exceeded" || !strings.HasPrefix(pe.Message, "Request too large for gpt-4o-mini") {
				t.Errorf("got %s", renderErr(err))
			}
		}},
		// GitHub Copilot (gpt-5.3-codex): every event names its item,
		// and every response object, with an id of its own. The AI SDK
		// correlates them by output index: one reasoning item (the id
		// of output_item.added), one text, once; the response id is the
		// one response.completed names (the unary answer's; round 24:
		// it was response.created's capture-id-1).
		{"real_responses_copilot_id_rotation_stream", func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			parts := f.Message.GetParts()
			const text = "There are **3** letter **“r”**s in **“strawberry.”**\n\nBreakdown: **s t r a w b e r r y**  \nYou can see **r** at positions **3, 8, and 9**."
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != "**Counting character occurrences**" || parts[0].GetReasoning().GetId() != "capture-id-3" ||
				parts[1].GetText() != text {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 19, OutputTokens: 105, TotalTokens: 124, ReasoningTokens: 44}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "capture-id-69" || f.Meta.GetResolvedModel() != "gpt-5.3-codex" || len(f.Meta.GetWarnings()) != 2 {
				t.Errorf("meta %v", f.Meta)
			}
		}},
		// xAI's Responses API (grok-4.3): "sequence_number" first in
		// each event, item ids derived from the response's UUID, a
		// streamed summary, 198 reasoning tokens of 199, cached input,
		// xAI's cost and context fields in the usage.
		{"real_xai_responses_issue_17936_stream", func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			parts := f.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != "The user says: \"Reply with exactly: hello\"\n" ||
				parts[0].GetReasoning().GetId() != "rs_0d7f672c-6cf5-9f88-af4b-a8b16c2c965d" || parts[1].GetText() != "hello" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			want := &llmrelayv1.Usage{InputTokens: 197, OutputTokens: 199, TotalTokens: 396, CachedInputTokens: 192, ReasoningTokens: 198}
			if !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// gpt-4o-mini (ids named by the SDK authors): one text item,
		// service_tier "auto" in response.created but "default" in
		// response.completed, a tool_usage object beside the usage.
		{"real_responses_issue_20047_stream", func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "OK" {
				t.Fatalf("parts %v", parts)
			}
			if f.Meta.GetResponseId() != "resp_sanitized_streaming" || f.Meta.GetResolvedModel() != "gpt-4o-mini-2024-07-18" {
				t.Errorf("meta %v", f.Meta)
			}
			if f.Meta.GetServiceTier() != "default" {
				t.Errorf("service tier %q, want the completed response's %q", f.Meta.GetServiceTier(), "default")
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			want := &llmrelayv1.Usage{InputTokens: 12, OutputTokens: 2, TotalTokens: 14}
			if !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
		// DeepSeek's Responses API (deepseek-v4-flash): bare UUID item
		// ids, raw reasoning_text, a function call with DeepSeek's
		// call_00_ id, cached and reasoning tokens.
		{"real_deepseek_responses_tool_call_stream", func(t *testing.T, evs []*provider.Event, err error) {
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			parts := f.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != "The user asks about weather in San Francisco. I have a weather tool. Let me call it." {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_00_N9BNUr3rAx4twPOHpyRN4076" || tc.GetName() != "weather" ||
				tc.GetArguments() != `{"location": "San Francisco"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			want := &llmrelayv1.Usage{InputTokens: 296, OutputTokens: 64, TotalTokens: 360, CachedInputTokens: 256, ReasoningTokens: 20}
			if !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, err := replayVercelStream(t, tc.name, responsesRequests(t)["responses_plain"])
			checkRespStreamInvariants(t, evs)
			tc.check(t, evs, err)
		})
	}
}

// TestMoonshotCachedTokens: Moonshot counts cached prompt tokens in
// usage.cached_tokens, at the top of the usage object. The chunks are
// those of the Vercel AI SDK's moonshot-cached-tokens fixture
// (packages/moonshotai/src/__fixtures__/moonshot-cached-tokens.chunks.txt
// @ f46806c6c372bf7e0c0b137a5f74111b76445391; inline rather than a
// recording: its chatcmpl-123 id is another recording's), where the AI SDK
// reads 80 cached tokens.
func TestMoonshotCachedTokens(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	chunks := []string{
		`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1234567890,"model":"kimi-k2.5","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1234567890,"model":"kimi-k2.5","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1234567890,"model":"kimi-k2.5","choices":[{"index":0,"delta":{"content":", world!"},"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1234567890,"model":"kimi-k2.5","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"cached_tokens":80}}`,
	}
	var body strings.Builder
	for _, c := range chunks {
		body.WriteString("data: " + c + "\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	s := streamFrom(p, body.String())
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	f := accFold(t, evs)
	want := &llmrelayv1.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110, CachedInputTokens: 80}
	if !proto.Equal(f.Meta.GetUsage(), want) || f.Meta.GetExtended() != nil {
		t.Errorf("stream usage %v (extended %v), want %v", f.Meta.GetUsage(), f.Meta.GetExtended(), want)
	}
	res, err := p.parseChatResponse([]byte(`{"id":"chatcmpl-moonshot-unary","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"cached_tokens":80}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(res.Meta.GetUsage(), want) {
		t.Errorf("unary usage %v, want %v", res.Meta.GetUsage(), want)
	}
}

// TestMoonshotStreamError: a Moonshot stream whose second chunk is an
// error object (Vercel AI SDK fixture moonshotai-stream-error): the text
// already streamed stays, the stream ends with that error.
func TestMoonshotStreamError(t *testing.T) {
	t.Parallel()
	evs, err := replayVercelStream(t, "real_moonshot_stream_error", chatRequests(t)["chat_plain"])
	pe := providerError(t, err)
	if pe.Kind != provider.KindUnavailable || pe.Code != "stream_failure" || pe.Message != "Stream failed" || pe.HTTPStatus != http.StatusOK {
		t.Errorf("got %s", renderErr(err))
	}
	var text strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			text.WriteString(ev.Text)
		}
	}
	if text.String() != "Partial" {
		t.Errorf("text %q", text.String())
	}
}
