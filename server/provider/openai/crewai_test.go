package openai

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// crewChatStreams replays Chat Completions streams recorded in
// crewAIInc/crewAI's VCR cassettes (testdata/README.md, "crewAI"); the
// expectations are checked by hand against the recorded chunks. The
// cassettes redact most headers (x-request-id is the literal
// X-REQUEST-ID-XXX, the rate-limit values X-RATELIMIT-…-XXX); they are
// kept as recorded.
var crewChatStreams = []struct {
	name, req string
	k         kind
	check     func(t *testing.T, f folded)
}{
	// gpt-4o-mini, one call opened with "arguments": "" beside
	// "content": null and "refusal": null, its arguments in six fragments
	// ({" city ":" San " Francisco" "}), finish tool_calls on a chunk with
	// an empty delta, the usage on a choices: [] chunk, obfuscation on
	// every chunk. The rate-limit headers hold redaction placeholders, not
	// numbers: no rate-limit state is reported from them.
	{"real_crew_openai_tool_call_stream", "tools_parallel", kOpenAI, func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 1 {
			t.Fatalf("parts %v", parts)
		}
		if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_QXZLQbxriC1eBnOMXLPMopfe" || tc.GetName() != "get_current_temperature" ||
			tc.GetArguments() != `{"city":"San Francisco"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %v", tc)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
		if want := (&llmrelayv1.Usage{InputTokens: 66, OutputTokens: 16, TotalTokens: 82}); !proto.Equal(f.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
		}
		if f.Meta.GetResponseId() != "chatcmpl-CugUcrVnIGFI01Ty76IqBP4iwcdk1" || f.Meta.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
			f.Meta.GetServiceTier() != "default" || f.Meta.GetProviderRequestId() != "X-REQUEST-ID-XXX" {
			t.Errorf("meta %v", f.Meta)
		}
	}},
}

func TestCrewChatStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range crewChatStreams {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, tc.k, srv.URL).Stream(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			tc.check(t, accFold(t, evs))
		})
	}
}

// crewChatUnary replays unary Chat Completions answers from crewAI's
// cassettes.
var crewChatUnary = []struct {
	name, req string
	k         kind
	check     func(t *testing.T, res *provider.Result)
}{
	// Azure OpenAI gpt-4.1 (deployment route, api-version
	// 2024-12-01-preview), the first of two calls with the same 1706-token
	// prompt and a prompt_cache_key: 1664 tokens cached already. The choice
	// carries Azure's "content_filter_result" (singular) with an error,
	// "The contents are not filtered" (the completion filter did not run),
	// beside an empty "content_filter_results"; the prompt's verdicts are
	// in prompt_filter_results.
	{"real_crew_azure_cached_prompt_tokens_1", "chat_plain", kAzure, func(t *testing.T, res *provider.Result) {
		if got := res.Message.GetParts(); len(got) != 1 || got[0].GetText() != "Hello" {
			t.Errorf("parts %v", got)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 1706, OutputTokens: 2, TotalTokens: 1708, CachedInputTokens: 1664}); !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
		}
		ext := res.Meta.GetExtended().GetFields()
		cfr := ext[extContentFilterResult].GetStructValue().AsMap()
		e, _ := cfr["error"].(map[string]any)
		if e["code"] != "content_filter_error" || e["message"] != "The contents are not filtered" {
			t.Errorf("content_filter_result %v (extended %v)", cfr, ext)
		}
		if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != "Azure content filter error (content_filter_error): The contents are not filtered" {
			t.Errorf("warnings %q", w)
		}
		if p := ext[extPromptFilterResults].GetListValue().GetValues(); len(p) != 1 {
			t.Errorf("prompt_filter_results %v", p)
		}
		if res.Meta.GetResponseId() != "chatcmpl-D7nhgAk20kAYYkxM6JC43UvzZfRVN" || res.Meta.GetResolvedModel() != "gpt-4.1-2025-04-14" {
			t.Errorf("meta %v", res.Meta)
		}
	}},
}

func TestCrewChatUnary(t *testing.T) {
	t.Parallel()
	for _, tc := range crewChatUnary {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, tc.k, srv.URL).Generate(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}
