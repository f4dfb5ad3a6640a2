package anthropic

import (
	"context"
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// th23Request is the conversation of the Vercel AI SDK's live check
// (real_vercel_toolhistory_notools): a search call, its result, and a
// user turn asking for a summary, with no tools declared, as a Chat call
// continuing a Tools conversation sends it.
func th23Request() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-sonnet-4-6",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("Search for climate change information.")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
				CallId: "tc1", Name: "search", Arguments: `{"query":"climate change"}`}}}),
			msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: "tc1", Content: "Climate change is driven by greenhouse gases and affects temperatures, weather patterns, and sea levels."}}}),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Now summarize what you found in one short sentence.")),
		},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr(int32(128))},
	}
}

// TestToolHistory23WithoutTools: a conversation holding tool_use and
// tool_result blocks goes to the Messages API as it is when the request
// declares no tools, no tools and no tool_choice invented: the API takes
// it (claude-sonnet-4-6, July 2026, the recorded request and its 200
// answer), and a tool declared for the occasion would change the prompt
// (Anthropic's tool-use system prompt) of every such Chat call. The sent
// request is the recorded one, whole; the answer is its text, end_turn,
// 111 in, 22 out, with no warning.
func TestToolHistory23WithoutTools(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_toolhistory_notools"
	res, srv := r22Unary(t, name, th23Request())
	r22SameRequest(t, srv.Last(t).Body, name, nil)
	providertest.Golden(t, "testdata/"+name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Climate change, driven by greenhouse gases, impacts global temperatures, weather patterns, and sea levels.")},
		responseID: "msg_011Ccremhn7ZBmUuuRYY9FXx", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(111, 22, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global"}`},
	})
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
	// tool_choice none (or auto) without tools sends neither: the API
	// refuses a tool_choice without tools, and there is nothing to
	// choose from.
	for _, mode := range []llmrelayv1.ToolChoiceMode{llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO} {
		req := th23Request()
		req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: mode}}
		body, _, warnings, err := build(t, req)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if _, ok := body["tools"]; ok {
			t.Errorf("%v: tools sent: %v", mode, body["tools"])
		}
		if _, ok := body["tool_choice"]; ok {
			t.Errorf("%v: tool_choice sent: %v", mode, body["tool_choice"])
		}
		if msgs, _ := body["messages"].([]any); len(msgs) != 3 || len(warnings) != 0 {
			t.Errorf("%v: %d messages, warnings %q; want the 3 of the history, none", mode, len(msgs), warnings)
		}
	}
}

// TestToolHistory23Refused: the 400 the Messages API answered in 2024 to
// tool blocks without tools ("Requests which include `tool_use` or
// `tool_result` blocks must define tools.", as anthropic-sdk-python#494
// quotes it), which an Anthropic-compatible endpoint may still answer:
// an invalid request, not retried, the provider's words and request id
// kept. The request went as built (no tools): the refusal is the
// caller's to see, not a reason to resend something else.
func TestToolHistory23Refused(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/error_400_tool_blocks_need_tools.http")
	_, err := newTestProvider(t, srv.URL).Generate(context.Background(), th23Request())
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v", err, err)
	}
	if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "invalid_request_error" ||
		pe.Message != "Requests which include `tool_use` or `tool_result` blocks must define tools." ||
		pe.RequestID != "req_011CVJeihv2PwdPFZ5xLq7Tm" || pipeline.Retryable(err) {
		t.Errorf("kind=%v status=%d code=%q rid=%q retryable=%v msg=%q", pe.Kind, pe.HTTPStatus, pe.Code, pe.RequestID, pipeline.Retryable(err), pe.Message)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
