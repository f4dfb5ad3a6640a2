package openai

import (
	"context"
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
		{"real_pyd_openai_compatible_api_with_tool_calls_without_id_2", "chat_plain", func(t *testing.T, res *provider.Result) {
			if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "The current time is Noon. \n" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 66, OutputTokens: 6, TotalTokens: 72}); !proto.Equal(res.Meta.GetUsage(), want) {
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
