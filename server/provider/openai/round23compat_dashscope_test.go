package openai

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// r23StreamedAnswer checks a unary answer folded from maruel/genai's
// recorded qwen3-30b-a3b square-root stream
// (real_maruel_qwen3_30b_a3b_sqrt_stream, TestRound22mgaQwenStreamToolCall
// reads the same stream streamed): reasoning, the call, usage, finish,
// and the warning that the call was made streamed.
func r23StreamedAnswer(t *testing.T, res *provider.Result) {
	t.Helper()
	checkResultInvariants(t, res)
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning().GetText(); !strings.HasPrefix(r, "Okay, the user wants me to calculate the square root of 132413 using the square_root tool.") ||
		!strings.HasSuffix(r, "Alright, let's proceed with the tool call.\n") {
		t.Errorf("reasoning %q", r)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_eeff263c22094a63953cef" || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "chatcmpl-vSxoTqInIrlBniSW", "", "qwen3-30b-a3b", 1772142601,
		r22mgaUsage(209, 155, 364, 126, 0), llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if res.Meta.GetToolCallCount() != 1 {
		t.Errorf("tool call count %d", res.Meta.GetToolCallCount())
	}
}

// TestRound23DashScopeStreamOnlyFolded: a unary call to a model DashScope
// serves streamed only gets 400 invalid_parameter_error "This model only
// support stream mode, please enable the stream parameter to access the
// model. " (dialect_dashscope_err_400_stream_only, the body
// infiniflow/ragflow#5912 quotes for qwq-32b). **Bug:** the unary call
// failed. Now it is made again streamed and the stream folded into the
// answer, with a warning: the streamed request is the unary one with
// stream and stream_options.
func TestRound23DashScopeStreamOnlyFolded(t *testing.T) {
	t.Parallel()
	req := r22mgaTools("qwen3-30b-a3b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, false, msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion)))
	srv := providertest.Replay(t, providertest.Load(t, td("dialect_dashscope_err_400_stream_only.http")), providertest.Load(t, td("real_maruel_qwen3_30b_a3b_sqrt_stream.http")))
	res, err := newHostProvider(t, r22mgaDashScopeUS, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	first, second := r20Request(t, reqs[0].Body), r20Request(t, reqs[1].Body)
	if _, ok := first["stream"]; ok || second["stream"] != true {
		t.Errorf("first %v, second %v", first, second)
	}
	delete(second, "stream")
	delete(second, "stream_options")
	if !mgbJSONEqual(t, second, string(reqs[0].Body)) {
		t.Errorf("the streamed request differs from the unary one beyond stream: %v vs %v", second, first)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != warnDashScopeStreamed {
		t.Errorf("warnings %v", w)
	}
	res.Meta.Warnings = nil
	r23StreamedAnswer(t, res)

	// Another host's 400 with the same words is not DashScope's.
	srv = providertest.Replay(t, providertest.Load(t, td("dialect_dashscope_err_400_stream_only.http")), providertest.Load(t, td("real_maruel_qwen3_30b_a3b_sqrt_stream.http")))
	if _, err := newHostProvider(t, "https://api.example.com/v1", srv.URL).Generate(context.Background(), req); err == nil || len(srv.Requests()) != 1 {
		t.Errorf("err %v after %d requests", err, len(srv.Requests()))
	}
}

// TestRound23DashScopeThinkingOnlyFolded: a unary call that asked nothing
// of thinking, refused for thinking (dialect_dashscope_err_400_enable_thinking),
// is sent again with enable_thinking false; a thinking-only model refuses
// that too: 400 "<400> InternalError.Algo.InvalidParameter: The value of
// the enable_thinking parameter is restricted to True."
// (dialect_dashscope_err_400_thinking_only, the message lobehub/lobehub#8613
// quotes for qwen3-235b-a22b-thinking-2507). **Bug:** the caller got that
// second refusal, of a parameter it never sent. Now the call is made
// streamed, as asked (no enable_thinking), and folded. A call whose
// enable_thinking false was the caller's (reasoning effort none) keeps
// its refusal: no resend, no stream.
func TestRound23DashScopeThinkingOnlyFolded(t *testing.T) {
	t.Parallel()
	req := r22mgaTools("qwen3-30b-a3b", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO, false, msgOf(llmrelayv1.Role_ROLE_USER, text(r22mgaSqrtQuestion)))
	srv := providertest.Replay(t, providertest.Load(t, td("dialect_dashscope_err_400_enable_thinking.http")),
		providertest.Load(t, td("dialect_dashscope_err_400_thinking_only.http")), providertest.Load(t, td("real_maruel_qwen3_30b_a3b_sqrt_stream.http")))
	res, err := newHostProvider(t, r22mgaDashScopeUS, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	second, third := r20Request(t, reqs[1].Body), r20Request(t, reqs[2].Body)
	if _, ok := third["enable_thinking"]; ok || second["enable_thinking"] != false || third["stream"] != true {
		t.Errorf("second %v, third %v", second, third)
	}
	// The answer has the reasoning: no warning says it has none.
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != warnDashScopeStreamed {
		t.Errorf("warnings %v", w)
	}
	res.Meta.Warnings = nil
	r23StreamedAnswer(t, res)

	srv = providertest.Replay(t, providertest.Load(t, td("dialect_dashscope_err_400_thinking_only.http")), providertest.Load(t, td("real_maruel_qwen3_30b_a3b_sqrt_stream.http")))
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
	_, err = newHostProvider(t, r22mgaDashScopeUS, srv.URL).Generate(context.Background(), req)
	if e := providerError(t, err); e.Kind != provider.KindInvalidRequest || !strings.Contains(e.Message, "restricted to True") || len(srv.Requests()) != 1 {
		t.Errorf("error %+v after %d requests", e, len(srv.Requests()))
	}
}
