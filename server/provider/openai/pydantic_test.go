package openai

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestPydanticCassettesUnary replays unary answers recorded in
// pydantic/pydantic-ai's VCR cassettes (testdata/README.md) and checks
// them against what pydantic-ai's own tests assert of the same answers.
func TestPydanticCassettesUnary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		req   string
		check func(t *testing.T, res *provider.Result)
	}{
		// Groq, openai/gpt-oss-120b: reasoning in "reasoning", a call whose
		// id is Groq's fc_ UUID, reasoning tokens in completion details.
		{"real_pyd_groq_tool_use_failed_error_1", "tools_parallel", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() == "" {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[1].GetToolCall(); tc.GetCallId() != "fc_413afe56-4a4f-4689-b045-7d2411cf3bef" || tc.GetName() != "get_something_by_name" ||
				tc.GetArguments() != `{"name":"test"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 157, OutputTokens: 149, TotalTokens: 306, ReasoningTokens: 112}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetResponseId() != "chatcmpl-985a7f0a-3e31-4839-b964-35c28795da46" || res.Meta.GetResolvedModel() != "openai/gpt-oss-120b" {
				t.Errorf("ids %q %q", res.Meta.GetResponseId(), res.Meta.GetResolvedModel())
			}
		}},
		// Gemini's OpenAI-compatible endpoint: a call with a
		// "function-call-<n>" id, no content, and a total_tokens larger than
		// prompt + completion (the thinking tokens are counted only there).
		{"real_pyd_openai_compatible_api_with_tool_calls_without_id_1", "tools_parallel", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "function-call-2900024254458648715" || tc.GetName() != "get_current_time" ||
				tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			u := res.Meta.GetUsage()
			if u.GetInputTokens() != 35 || u.GetTotalTokens() != 126 {
				t.Errorf("usage %v", u)
			}
		}},
		// OpenAI gpt-4o-mini (from a cassette that also records Gemini):
		// content and refusal null, annotations [], usage details all zero.
		{"real_pyd_openai_multiple_agent_tool_calls_3", "tools_parallel", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_NihFwNUckQ2eDoE0a9OQaO5l" || tc.GetName() != "get_capital" ||
				tc.GetArguments() != `{"country":"England"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 104, OutputTokens: 15, TotalTokens: 119}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
		}},
		{"real_pyd_openai_compatible_api_with_tool_calls_without_id_2", "chat_plain", func(t *testing.T, res *provider.Result) {
			if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "The current time is Noon. \n" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 66, OutputTokens: 6, TotalTokens: 72}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
		}},
		// Cerebras gpt-oss-120b: reasoning in "reasoning", Cerebras's
		// time_info, cached tokens given as zero.
		{"real_pyd_openai_model_cerebras_provider_harmony", "chat_plain", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != "User asks simple question: capital of France. Answer: Paris. Provide concise answer." ||
				parts[1].GetText() != "The capital of France is **Paris**." {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 74, OutputTokens: 36, TotalTokens: 110}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetResponseId() != "chatcmpl-bc3bbd04-e8df-4ab6-bd82-9fb33726cb93" || res.Meta.GetResolvedModel() != "gpt-oss-120b" {
				t.Errorf("ids %q %q", res.Meta.GetResponseId(), res.Meta.GetResolvedModel())
			}
			// Cerebras's request id is its inference-id header.
			if got := res.Meta.GetProviderRequestId(); got != "chatcmpl-bc3bbd04-e8df-4ab6-bd82-9fb33726cb93" {
				t.Errorf("provider request id %q", got)
			}
		}},
		// Together via Hugging Face's router, Llama 4 Scout: content "",
		// reasoning null, a call whose arguments have a space after the
		// colon (kept as sent), Together's "prompt": [] and metadata.
		{"real_pyd_together_500_on_tool_continuation_2", "tools_parallel", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_f7631c2901964a6db675853a" || tc.GetName() != "get_weather" ||
				tc.GetArguments() != `{"city": "Paris"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 616, OutputTokens: 7, TotalTokens: 623}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetResponseId() != "oS9Xt2L-3pDw3Z-9b97ab8bcfbbe5fe" || res.Meta.GetResolvedModel() != "meta-llama/Llama-4-Scout-17B-16E-Instruct" {
				t.Errorf("ids %q %q", res.Meta.GetResponseId(), res.Meta.GetResolvedModel())
			}
		}},
		// o3-mini: reasoning tokens inside completion_tokens (87 of which
		// 64 reasoning), no reasoning text.
		{"real_pyd_max_completion_tokens_o3_mini", "chat_plain", func(t *testing.T, res *provider.Result) {
			if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "Hello there! How can I help you today?" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 7, OutputTokens: 87, TotalTokens: 94, ReasoningTokens: 64}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
		}},
		// DeepSeek-R1 on Nebius via Hugging Face's router: no reasoning
		// parser, so the reasoning is a <think> block opening the content
		// (reasoning_content null); pydantic-ai splits it into a thinking
		// part and the text.
		{"real_pyd_hf_max_completion_tokens_deepseek_r1", "chat_plain", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 2 {
				t.Fatalf("parts %v", parts)
			}
			if r := parts[0].GetReasoning().GetText(); !strings.HasPrefix(r, "\nOkay, the user just said “hello”.") || !strings.HasSuffix(r, "they might want companionship.\n") {
				t.Errorf("reasoning %q", r)
			}
			if txt := parts[1].GetText(); txt != "\nHello! 😊 How can I assist you today?" {
				t.Errorf("text %q", txt)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 6, OutputTokens: 165, TotalTokens: 171}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
		}},
		// Groq deepseek-r1-distill-llama-70b with reasoning_format "raw":
		// an empty think block ("<think>\n\n</think>") opens the content;
		// the text is what follows "</think>", as pydantic-ai sends it back
		// in the cassette's second request ("\n\nTo cross ...").
		{"real_pyd_groq_model_thinking_part_raw_format_1", "chat_plain", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != "\n\n" ||
				!strings.HasPrefix(parts[1].GetText(), "\n\nTo cross the street safely, follow these steps:\n\n1. **Find") ||
				!strings.HasSuffix(parts[1].GetText(), "cross the street safely and responsibly.") {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 10, OutputTokens: 216, TotalTokens: 226}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
		}},
		// Mistral mistral-large-latest: a 32-hex id, "tool_calls": null,
		// an emoji outside the BMP, no x-request-id (Mistral sends a
		// mistral-correlation-id header instead).
		{"real_pyd_mistral_forwards_penalties", "chat_plain", func(t *testing.T, res *provider.Result) {
			want := "Hello! 😊 How can I assist you today? Whether you have a question, need help with something, or just want to chat, I'm here for you!"
			if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != want {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 4, OutputTokens: 36, TotalTokens: 40}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetResponseId() != "74b5a04853d2428f8c69b8b35dc2d30b" || res.Meta.GetResolvedModel() != "mistral-large-latest" || res.Meta.GetToolCallCount() != 0 {
				t.Errorf("meta %v", res.Meta)
			}
			if got := res.Meta.GetProviderRequestId(); got != "019ef358-aa9c-7608-80de-5e23e136b528" {
				t.Errorf("provider request id %q, want the mistral-correlation-id", got)
			}
		}},
		// DeepSeek deepseek-reasoner: reasoning_content, reasoning tokens,
		// DeepSeek's prompt_cache_hit/miss_tokens beside cached_tokens.
		{"real_pyd_deepseek_model_thinking_part", "chat_plain", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 2 || !strings.HasPrefix(parts[0].GetReasoning().GetText(), "Okay, the user is asking how to cross the street.") ||
				!strings.HasSuffix(parts[0].GetReasoning().GetText(), "Need to present it clearly and concisely.") ||
				!strings.HasPrefix(parts[1].GetText(), "Crossing the street safely involves careful observation") ||
				!strings.HasSuffix(parts[1].GetText(), "stay alert until you've fully crossed.") {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 12, OutputTokens: 789, TotalTokens: 801, ReasoningTokens: 415}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetResponseId() != "181d9669-2b3a-445e-bd13-2ebff2c378f6" {
				t.Errorf("id %q", res.Meta.GetResponseId())
			}
		}},
		// OpenRouter relaying Kimi K2.5: the same reasoning in "reasoning"
		// and in one reasoning.text block (format "unknown"), read once;
		// OpenRouter's cost fields in the usage.
		// OpenRouter relaying mistralai/mistral-small: content "" beside
		// a call with Mistral's 9-character id and arguments with spaces,
		// native_finish_reason and provider beside them.
		{"real_pyd_openrouter_tool_calling", "tools_parallel", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "3sniiMddS" || tc.GetName() != "divide" ||
				tc.GetArguments() != `{"numerator": 123, "denominator": 456, "on_inf": "infinity"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 134, OutputTokens: 43, TotalTokens: 177}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetResponseId() != "gen-1762047030-dJUcJW4ildNGqK4UV6iJ" || res.Meta.GetResolvedModel() != "mistralai/mistral-small" {
				t.Errorf("ids %q %q", res.Meta.GetResponseId(), res.Meta.GetResolvedModel())
			}
		}},
		{"real_pyd_openrouter_kimi_k2_5", "chat_plain", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			want := "The user is asking for the answer to 2+2. They want just the number as the answer, nothing else.\n\n2+2 = 4\n\nI should respond with just \"4\" and nothing else."
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != want || parts[0].GetReasoning().GetRedacted() || parts[1].GetText() != "4" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 20, OutputTokens: 48, TotalTokens: 68, ReasoningTokens: 42}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}

// TestReasoningTextContent: a reasoning item without a summary whose text
// is in reasoning_text content parts (the response.completed output of
// testdata/real_pyd_openai_responses_raw_cot_stream_openrouter.http) is
// reasoning with that text, unary as streamed; a summary, when there is
// one, is still the text.
func TestReasoningTextContent(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseResponsesResponse([]byte(`{"id":"gen-unary-raw-cot","status":"completed","output":[`+
		`{"type":"reasoning","id":"rs_tmp_ku4i7pagjwn","summary":[],"content":[{"type":"reasoning_text","text":"Two and two."},{"type":"reasoning_text","text":"Four."}]},`+
		`{"type":"message","status":"completed","content":[{"type":"output_text","text":"4","annotations":[]}],"id":"msg_tmp_8cjof4f6zpw","role":"assistant"}]}`), "m")
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "Two and two.\n\nFour." || parts[0].GetReasoning().GetId() != "rs_tmp_ku4i7pagjwn" ||
		parts[1].GetText() != "4" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("parts %v, warnings %q", parts, res.Meta.GetWarnings())
	}
	res, err = p.parseResponsesResponse([]byte(`{"id":"resp-unary-summary","status":"completed","output":[`+
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Summed."}],"content":[{"type":"reasoning_text","text":"raw"}]}]}`), "m")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Message.GetParts()[0].GetReasoning(); r.GetText() != "Summed." {
		t.Errorf("reasoning %v", r)
	}

	// Streamed: summary deltas after raw text are dropped with a warning,
	// the raw text stays the item's text.
	s := respStreamFrom(p, `data: {"type":"response.created","response":{"id":"resp-mixed","status":"in_progress","output":[]}}`+"\n\n"+
		`data: {"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_mixed","summary":[]}}`+"\n\n"+
		`data: {"type":"response.reasoning_text.delta","output_index":0,"item_id":"rs_mixed","content_index":0,"delta":"raw"}`+"\n\n"+
		`data: {"type":"response.reasoning_summary_text.delta","output_index":0,"item_id":"rs_mixed","summary_index":0,"delta":"sum"}`+"\n\n"+
		`data: {"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_mixed","summary":[{"type":"summary_text","text":"sum"}],"content":[{"type":"reasoning_text","text":"raw text"}]}}`+"\n\n"+
		`data: {"type":"response.completed","response":{"id":"resp-mixed","status":"completed","output":[]}}`+"\n\n")
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	f := accFold(t, evs)
	if r := f.Message.GetParts()[0].GetReasoning(); r.GetText() != "raw text" || len(f.Message.GetParts()) != 1 {
		t.Errorf("parts %v", f.Message.GetParts())
	}
	if w := f.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "summary text after its raw reasoning text was ignored") {
		t.Errorf("warnings %q", w)
	}
}

// TestPydanticCassettesStream replays streamed Chat Completions answers
// from pydantic/pydantic-ai's cassettes (testdata/README.md).
func TestPydanticCassettesStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		req   string
		check func(t *testing.T, f folded)
	}{
		// Groq's compound model: a server-run search in
		// delta.executed_tools, then text; the usage only in x_groq.usage
		// of the last chunk (the pydantic-ai authors shortened the ids).
		{"real_pyd_groq_model_web_search_tool_stream_single_chunk", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "The weather in San Francisco is sunny and 62°F." {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != warnExecutedTools {
				t.Errorf("warnings %q", w)
			}
		}},
		// OpenRouter relaying x-ai/grok-4: ten comments, one delta whose
		// reasoning_details is a lone encrypted block (xAI's rs_ id, no
		// text), then text; the usage with 686 cached and 184 reasoning
		// tokens and OpenRouter's cost fields, on a chunk after the finish.
		{"real_pyd_openrouter_stream_with_native_options", "chat_plain", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			const text = "I'm Grok, an AI built by xAI. My goal is to help users with their questions and curiosity about the universe, while being maximally truthful and a bit cheeky. " +
				"I'm inspired by the Hitchhiker's Guide to the Galaxy and JARVIS from Iron Man, so expect some humor along the way.\n\nWhat can I help you with today?"
			if len(parts) != 2 || parts[1].GetText() != text {
				t.Fatalf("parts %v", parts)
			}
			r := parts[0].GetReasoning()
			if r == nil || !r.GetRedacted() || r.GetText() != "" || r.GetId() != "rs_9032908f-9d4f-aec6-6bc3-8c5a39dccb2a" ||
				!strings.HasPrefix(r.GetSignature(), "RvCOWjP2iWe/c12Io7YL") || !strings.HasSuffix(r.GetSignature(), "TwLg") || len(r.GetSignature()) != 1255 {
				t.Errorf("reasoning %v (signature length %d)", r, len(r.GetSignature()))
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			want := &llmrelayv1.Usage{InputTokens: 687, OutputTokens: 254, TotalTokens: 941, CachedInputTokens: 686, ReasoningTokens: 184}
			if !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "gen-1770044155-jEc8jq97DQBmH0pjR97n" || f.Meta.GetResolvedModel() != "x-ai/grok-4" {
				t.Errorf("ids %q %q", f.Meta.GetResponseId(), f.Meta.GetResolvedModel())
			}
		}},
		// OpenAI gpt-5 with moderation: the usage chunk, then a last chunk
		// with no choices, the moderation results and "usage": null.
		{"real_pyd_openai_moderation_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "Paris." {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 11, TotalTokens: 24}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "chatcmpl-E4Rjs6IxaJVge9Ntk5keJsaeDy6vS" || f.Meta.GetResolvedModel() != "gpt-5-2025-08-07" {
				t.Errorf("ids %q %q", f.Meta.GetResponseId(), f.Meta.GetResolvedModel())
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			tc.check(t, accFold(t, evs))
		})
	}
}

// TestGroqUsageUnary: a unary answer whose usage is only in x_groq.usage,
// with executed_tools, as Groq's compound models answer.
func TestGroqUsageUnary(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseChatResponse([]byte(`{"id":"chatcmpl-groq-unary","choices":[{"index":0,"message":{"role":"assistant","content":"Sunny.",` +
		`"executed_tools":[{"index":0,"type":"search","arguments":"{}"}]},"finish_reason":"stop"}],` +
		`"x_groq":{"id":"req_groqunary01","usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}); !proto.Equal(res.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != warnExecutedTools {
		t.Errorf("warnings %q", w)
	}
}

// TestPydanticStreamErrorChunk replays pydantic-ai's OpenRouter stream
// whose last chunk (minimax-m2, max_tokens 10) carries an "error" object
// with the HTTP status as its code, after two chunks that finished with
// "length"; pydantic-ai raises ModelHTTPError for it. The reasoning
// already streamed stays, and the stream ends with that error.
func TestPydanticStreamErrorChunk(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openrouter_stream_error"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["chat_plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	pe := providerError(t, err)
	if pe.Kind != provider.KindInvalidRequest || pe.Code != "400" || pe.Message != "Token limit reached" || pe.HTTPStatus != 200 {
		t.Errorf("got %s", renderErr(err))
	}
	var reasoning strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			reasoning.WriteString(ev.Reasoning.Text)
		}
	}
	if reasoning.String() != "We need to respond to a greeting. The user" {
		t.Errorf("reasoning %q", reasoning.String())
	}
}

// TestPydanticInvalidResponse replays pydantic-ai's test_invalid_response
// cassette: a 200 whose JSON body is {"x": 42}, which pydantic-ai rejects
// as unexpected model behavior. It is a bad response, not an empty
// answer, in both formats; a body with "choices": [] (or a response with
// "output": []) stays an empty answer with a warning.
func TestPydanticInvalidResponse(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_pyd_openai_invalid_response.http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
	if err == nil {
		t.Fatalf("got %v, want an error", res)
	}
	if pe := providerError(t, err); pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "not a chat completion") {
		t.Errorf("got %s", renderErr(err))
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	// The same body from the Responses API.
	if _, err := p.parseResponsesResponse([]byte(`{"x": 42}`), "m"); err == nil {
		t.Error("Responses: {\"x\": 42} parsed")
	} else if pe := providerError(t, err); pe.Kind != provider.KindBadResponse {
		t.Errorf("Responses: got %s", renderErr(err))
	}
	if res, err := p.parseResponsesResponse([]byte(`{"id":"resp_empty","status":"completed","output":[]}`), "m"); err != nil {
		t.Errorf("Responses, empty output: %v", err)
	} else if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != "response has no output items" {
		t.Errorf("Responses, empty output: warnings %q", w)
	}
	for _, body := range []string{`{"choices":[]}`, `{"choices":null,"usage":{"prompt_tokens":1,"completion_tokens":0,"total_tokens":1}}`} {
		res, err := p.parseChatResponse([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != "response has no choices" {
			t.Errorf("%s: warnings %q", body, w)
		}
	}
}
