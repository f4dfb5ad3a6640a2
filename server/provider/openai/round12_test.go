package openai

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// round12Unary: Chat Completions answers not replayed before
// (testdata/README.md, "Round 12"); every expectation below was checked by
// hand against the recorded body.
var round12Unary = []recordedUnary{
	// gpt-4o-audio-preview answering a question about an mp3 input: the
	// prompt's 64 tokens are 44 audio and 20 text tokens, the completion's 9
	// all text; no counter holds audio or text tokens, so the non-zero ones
	// are in usage_details (the zero counts are not).
	{"real_pyd_openai_audio_as_binary_content_input", "chat_plain", kOpenAI, func(t *testing.T, res *provider.Result) {
		if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "The name mentioned in the audio is Marcelo." {
			t.Fatalf("parts %v", parts)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 64, OutputTokens: 9, TotalTokens: 73}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		want := map[string]any{"prompt_tokens_details.audio_tokens": float64(44), "prompt_tokens_details.text_tokens": float64(20),
			"completion_tokens_details.text_tokens": float64(9)}
		if d := res.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap(); !reflect.DeepEqual(d, want) {
			t.Errorf("usage_details %v, want %v", d, want)
		}
		if res.Meta.GetResponseId() != "chatcmpl-B4T2pf07aQydY6rACSYxY6YxRiUnR" || res.Meta.GetResolvedModel() != "gpt-4o-audio-preview-2024-12-17" {
			t.Errorf("meta %v", res.Meta)
		}
		if len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("warnings %v", res.Meta.GetWarnings())
		}
	}},
	// gpt-4o-mini cut by max_tokens 10 (the crewAI cassette's body is
	// gzip, decoded): finish "length" after "**Title: The Last Ember of
	// Eldoria**\n\n", usage details all zero; the headers are crewAI's
	// placeholders, so the request id is X-REQUEST-ID-XXX and no rate-limit
	// state is read.
	{"real_crew_openai_async_with_max_tokens", "chat_plain", kOpenAI, func(t *testing.T, res *provider.Result) {
		if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "**Title: The Last Ember of Eldoria**\n\n" {
			t.Fatalf("parts %v", parts)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
		if want := (&llmrelayv1.Usage{InputTokens: 16, OutputTokens: 10, TotalTokens: 26}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		if _, ok := res.Meta.GetExtended().GetFields()["usage_details"]; ok {
			t.Errorf("usage_details %v", res.Meta.GetExtended().GetFields()["usage_details"])
		}
		if res.Meta.GetResponseId() != "chatcmpl-ChrU8RBawYyEMyrvlZTsV90yo7uCl" || res.Meta.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
			res.Meta.GetProviderRequestId() != "X-REQUEST-ID-XXX" || res.Meta.GetServiceTier() != "default" || res.Meta.GetRateLimit() != nil {
			t.Errorf("meta %v", res.Meta)
		}
		if len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("warnings %v", res.Meta.GetWarnings())
		}
	}},
	// gpt-5.6-luna under verbosity low: "4", annotations [],
	// "system_fingerprint": null, cache_write_tokens 0 beside cached_tokens
	// 0 (no cache counter set, no usage_details, no fingerprint reported).
	{"real_pyd_openai_text_verbosity_chat_completions_1", "chat_plain", kOpenAI, func(t *testing.T, res *provider.Result) {
		if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "4" {
			t.Fatalf("parts %v", parts)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 4, TotalTokens: 17}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		ext := res.Meta.GetExtended().GetFields()
		if _, ok := ext["usage_details"]; ok {
			t.Errorf("usage_details %v", ext["usage_details"])
		}
		if _, ok := ext["system_fingerprint"]; ok {
			t.Errorf("system_fingerprint %v", ext["system_fingerprint"])
		}
		if res.Meta.GetResponseId() != "chatcmpl-EUdLNAdMtxCINLxt41tZdtpc5jxyq" || res.Meta.GetResolvedModel() != "gpt-5.6-luna" ||
			res.Meta.GetServiceTier() != "default" || len(res.Meta.GetWarnings()) != 0 {
			t.Errorf("meta %v", res.Meta)
		}
	}},
}

func TestRound12Unary(t *testing.T) { runRecordedUnary(t, round12Unary) }

// round12Streams: Chat Completions streams not replayed before, checked by
// hand as round12Unary is.
var round12Streams = []recordedStream{
	// gpt-4o-mini: the first chunk opens the call beside role, content null
	// and refusal null, with arguments ""; the arguments follow in five
	// fragments ({", country, ":", UK, "}), finish tool_calls on an empty
	// delta, the usage on a choices: [] chunk, obfuscation on every chunk.
	// The cassette's second request sends the call back with exactly
	// {"country":"UK"}.
	{"real_pyd_openai_run_stream_sync_streams_real_model_1", "multiturn_tools", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 1 {
			t.Fatalf("parts %v", parts)
		}
		if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_ZR5UUuTt3pf61kjwAJIYdVMj" || tc.GetName() != "get_capital" ||
			tc.GetArguments() != `{"country":"UK"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 53, OutputTokens: 15, TotalTokens: 68}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl" || f.Meta.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
			f.Meta.GetServiceTier() != "default" || f.Meta.GetProviderRequestId() != "" || f.Meta.GetRateLimit() != nil {
			t.Errorf("meta %v", f.Meta)
		}
		if len(f.Meta.GetWarnings()) != 0 {
			t.Errorf("warnings %v", f.Meta.GetWarnings())
		}
	}},
	// Hand-written fixture (testdata/README.md, "Fixtures written for one
	// behaviour"; no real n>1 stream is among the sources): two choices
	// interleaved chunk by chunk, choice 1 finishing with "length". Only
	// choice 0 is the answer; choice 1 is dropped with one warning (it was
	// warned once per chunk of choice 1: here three times).
	{"chat_n2_stream", "multiturn_tools", kOpenAI, func(t *testing.T, f folded) {
		if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "Paris." {
			t.Fatalf("parts %v", parts)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := []string{"ignored choice 1 (only choice 0 is read)"}; !reflect.DeepEqual(f.Meta.GetWarnings(), want) {
			t.Errorf("warnings %q, want %q", f.Meta.GetWarnings(), want)
		}
		if want := (&llmrelayv1.Usage{InputTokens: 14, OutputTokens: 4, TotalTokens: 18}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
	}},
}

func TestRound12Streams(t *testing.T) { runRecordedStreams(t, round12Streams) }
