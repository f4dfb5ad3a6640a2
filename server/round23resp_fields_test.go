package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23ResponsesInputItemField: OpenAI's 400 naming a Responses
// input item (input[2].call_id: a call id longer than 64) is the
// caller's field. The model's configured context is input[0], the
// caller's user message input[1], its assistant message's call input[2]:
// the field is messages[1].parts[0].tool_call.call_id, counted over the
// caller's messages; the provider's path stays in the message.
func TestRound23ResponsesInputItemField(t *testing.T) {
	t.Parallel()
	const yaml = `
defaults:
  retry: {max_attempts: 1}
providers:
  - {name: oai, type: openai, base_url: "{{URL}}/v1", api_key: sk-test-r23resp-0000}
models:
  - name: m
    provider: oai
    upstream_model: gpt-5.4
    capabilities:
      tools: {format: openai-responses}
    context:
      - {role: system, text: "Answer briefly."}
`
	up := providertest.Replay(t, providertest.Load(t, "provider/openai/testdata/responses_err_400_call_id_too_long.http"))
	c, _ := startWith(t, yaml, up.URL)
	long := "call_" + strings.Repeat("x", 111)
	_, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m",
		Messages: []*llmrelayv1.Message{
			user("What is the weather in Paris?"),
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
				CallId: long, Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}},
			{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: long, Name: "get_weather", Content: "18°C"}}}}},
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}}}`}}})
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br == nil || len(br.GetFieldViolations()) != 1 ||
		br.GetFieldViolations()[0].GetField() != "messages[1].parts[0].tool_call.call_id" {
		t.Fatalf("%v %v, want InvalidArgument on messages[1].parts[0].tool_call.call_id", st.Code(), br)
	}
	if !strings.Contains(st.Message(), "'input[2].call_id'") {
		t.Errorf("message %q lost the provider's path", st.Message())
	}
}

// TestRound23ResponsesItemNotFound: OpenAI's 404 for an input item it
// does not have (param input: a stored request's reasoning part sent by
// its id) is not NotFound with reason MODEL_NOT_FOUND: it asks for the
// item to be removed ("… or remove this item from your input."), and
// since round 25 the gateway does so (pipeline.SignatureRetryReason): the
// same deployment answers the input without the reasoning item, even with
// retries off; the adapter still places the refusal on the part's id
// (provider/openai round23resp_fields_test.go).
func TestRound23ResponsesItemNotFound(t *testing.T) {
	t.Parallel()
	const yaml = `
defaults:
  retry: {max_attempts: 1}
providers:
  - {name: oai, type: openai, base_url: "{{URL}}/v1", api_key: sk-test-r23resp-0001}
models:
  - name: m
    provider: oai
    upstream_model: gpt-5.4
    capabilities:
      chat: {format: openai-responses}
`
	up := providertest.Replay(t, providertest.Load(t, "provider/openai/testdata/responses_err_404_item_not_found.http"),
		providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(openaiResponses.okBody)})
	c, _ := startWith(t, yaml, up.URL)
	res, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m",
		Messages: []*llmrelayv1.Message{
			user("Pick a number."),
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
				{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Id: "rs_037db69c59ceb65f0169c774068f0c81918788deadface5709"}}},
				{Kind: &llmrelayv1.Part_Text{Text: "7"}, ItemId: "msg_037db69c59ceb65f0169c77406a2f48191b2a1c0ffee5709"}}},
			user("Another."),
		},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}})
	if err != nil {
		t.Fatal(err)
	}
	rr := res.GetMeta().GetRetryReasons()
	if len(rr) != 1 || rr[0].GetReason() != "reasoning_signature_refused" || rr[0].GetUpstreamStatus() != 404 {
		t.Errorf("retry reasons %v", rr)
	}
	reqs := up.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0].Body), "rs_037db69c") || strings.Contains(string(reqs[1].Body), "rs_037db69c") {
		t.Errorf("requests %d: %s", len(reqs), reqs[len(reqs)-1].Body)
	}
}
