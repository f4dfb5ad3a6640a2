package openai

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// r24NextInput is the input items of the request p builds for messages
// (PROTOCOL_CHAT, a reasoning model), decoded.
func r24NextInput(t *testing.T, p *Provider, model string, msgs ...*llmrelayv1.Message) ([]any, []string) {
	t.Helper()
	req := r21Request(model, "")
	req.Reasoning, req.Messages = true, msgs
	in, warnings := r24Built(t, p, req)
	return in.Input, warnings
}

// r24Body is the input of a built Responses request.
type r24Body struct {
	Input []any `json:"input"`
}

// r24Built is the streamed Responses request p builds for req, and its
// warnings.
func r24Built(t *testing.T, p *Provider, req *provider.Request) (r24Body, []string) {
	t.Helper()
	b, warnings, err := p.buildResponsesRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	var in r24Body
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	return in, warnings
}

// r24RecordedInput is the input of a recorded follow-up request
// (<name>.next_request.json, as the source recorded it).
// r24SameInput checks a follow-up's input against the recorded one: no
// warnings, the same number of items, and the items between the first and
// the last user turns (the assistant's) equal, but for the "annotations": []
// our output_text parts carry (the output message's shape, which OpenAI
// takes as well). The user turns are ours to write.
func r24SameInput(t *testing.T, name string, got []any, warnings []string) {
	t.Helper()
	want := r24RecordedInput(t, name)
	if len(warnings) != 0 || len(got) != len(want) {
		t.Fatalf("input %v, warnings %q; recorded %v", got, warnings, want)
	}
	r24DropEmptyAnnotations(got)
	for i := 1; i < len(want)-1; i++ {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("input[%d]\n got %v\nwant %v", i, got[i], want[i])
		}
	}
}

func r24RecordedInput(t *testing.T, name string) []any {
	t.Helper()
	raw, err := os.ReadFile(td(name + ".next_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Input []any `json:"input"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	return in.Input
}

// TestRound24OpencodeReasoningContinuation: gpt-5.5 on OpenAI, store
// false with reasoning.encrypted_content (anomalyco/opencode's
// openai-responses-gpt-5-5-reasoning-continuation recording): a reasoning
// item without summary whose encrypted_content changes between its
// output_item.added, its output_item.done and response.completed, then
// "Hello!" (phase final_answer). The recorded follow-up, which OpenAI
// answered, sends the reasoning item with the done event's
// encrypted_content and its id, and the message with its id, status and
// phase: the request built from our fold sends the same items.
func TestRound24OpencodeReasoningContinuation(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_gpt55_reasoning_continuation_stream"
	req := r21Request("gpt-5.5", "Think briefly, then reply exactly with: Hello!")
	req.Reasoning = true
	f := r21Stream(t, name, req)
	if got := f.Meta.GetResponseId(); got != "resp_0a0794dab3b8ec7d016a1235e74e148195beb46e1925d20292" {
		t.Errorf("response id %q", got)
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 31 || u.GetOutputTokens() != 20 || u.GetReasoningTokens() != 12 {
		t.Errorf("usage %v", u)
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	got, warnings := r24NextInput(t, p, "gpt-5.5",
		msgOf(llmrelayv1.Role_ROLE_USER, text("Think briefly, then reply exactly with: Hello!")),
		f.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("Now reply exactly with: Done.")))
	r24SameInput(t, name, got, warnings)
}

// r24DropEmptyAnnotations removes the empty "annotations" lists of the
// message items' content parts in input.
func r24DropEmptyAnnotations(input []any) {
	for _, it := range input {
		m, _ := it.(map[string]any)
		parts, _ := m["content"].([]any)
		for _, c := range parts {
			if cm, ok := c.(map[string]any); ok {
				if a, ok := cm["annotations"].([]any); ok && len(a) == 0 {
					delete(cm, "annotations")
				}
			}
		}
	}
}

// TestRound24OpencodeMantleContinuation: gpt-5.5 on Amazon Bedrock's
// Mantle endpoint (bedrock-mantle.<region>.api.aws/openai/v1/responses;
// anomalyco/opencode's bedrock-mantle-responses recording): each event's
// "event:" line comes after its "data:" line, the JSON's keys sorted with
// "type" last, the reasoning item with "content": [] and an rsn_
// encrypted content that does not change between events, "obfuscation":
// "ab". The recorded follow-up, which Mantle answered, sends the
// reasoning with its id and encrypted content and the message with its
// id, status and phase: ours sends the same items.
func TestRound24OpencodeMantleContinuation(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_mantle_gpt55_continuation_stream"
	req := r21Request("openai.gpt-5.5", `Reply with exactly "OK".`)
	req.Reasoning = true
	f := r21Stream(t, name, req)
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetId() != "rs_b54b9cb62e565a3ca0a0319706e276e8" || parts[1].GetText() != "OK" {
		t.Fatalf("parts %v", parts)
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 12 || u.GetOutputTokens() != 17 || u.GetReasoningTokens() != 10 ||
		f.Meta.GetResponseId() != "resp_stjavl4f342yiizqhiexcwquel3vuo4ew4aqobyeimnoaw6ugecq" || len(f.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", f.Meta)
	}
	p, err := New(testKey, WithBaseURL("https://bedrock-mantle.us-east-1.api.aws/openai/v1"))
	if err != nil {
		t.Fatal(err)
	}
	got, warnings := r24NextInput(t, p, "openai.gpt-5.5",
		msgOf(llmrelayv1.Role_ROLE_USER, text(`Reply with exactly "OK".`)),
		f.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text(`Now reply with exactly "TEST".`)))
	r24SameInput(t, name, got, warnings)
}

// TestRound24OpencodeToolLoop: gpt-5.5 on OpenAI calling one function
// (anomalyco/opencode's gpt-5-5-drives-a-tool-loop recording, store left
// to OpenAI's default, true). The recorded follow-up, which OpenAI
// answered, sends the call with its call_id, name, arguments and item id,
// then its output: the request built from our fold sends the same two
// items, stored or not, but for the call's item id (fc_…), which ours
// leaves out: OpenAI pairs a call by its call_id (pairReasoning), and the
// recordings of earlier rounds' follow-ups without it were answered.
func TestRound24OpencodeToolLoop(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_gpt55_tool_loop_stream"
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	req := r21Request("gpt-5.5", "What is the weather in Paris?")
	req.Protocol, req.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	f := r21Stream(t, name, req)
	if c := f.Message.GetParts(); len(c) != 1 || c[0].GetToolCall().GetCallId() != "call_JCuVTkQxVB3cCmFWx52adJKZ" || len(f.Meta.GetWarnings()) != 0 {
		t.Fatalf("parts %v, warnings %q", c, f.Meta.GetWarnings())
	}
	want := r24RecordedInput(t, name)
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []bool{false, true} {
		next := r21Request("gpt-5.5", "")
		next.Protocol, next.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
		next.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris?")), f.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: "call_JCuVTkQxVB3cCmFWx52adJKZ", Content: `{"temperature":22,"condition":"sunny"}`}}})}
		next.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: &store}}}
		in, warnings := r24Built(t, p, next)
		if len(warnings) != 0 || len(in.Input) != 3 {
			t.Fatalf("store %v: input %v, warnings %q", store, in.Input, warnings)
		}
		if call, _ := in.Input[1].(map[string]any); call["id"] != nil {
			t.Errorf("store %v: call sent with item id %v", store, call["id"])
		}
		recorded := map[string]any{}
		for k, v := range want[2].(map[string]any) {
			if k != "id" {
				recorded[k] = v
			}
		}
		for i, w := range []any{recorded, want[3]} {
			if !reflect.DeepEqual(in.Input[i+1], w) {
				t.Errorf("store %v: input[%d]\n got %v\nwant %v", store, i+1, in.Input[i+1], w)
			}
		}
	}
}

// TestRound24OpencodeOpenRouterToolLoop: openai/gpt-5.5 through
// OpenRouter's Responses endpoint (anomalyco/opencode's
// openrouter-gpt-5-5-tool-loop recording): ": " keep-alive comments before
// the first event, fc_tmp_ item ids, a gen- response id, OpenRouter's cost
// in the usage, "data: [DONE]" after response.completed. The call is
// relayed with its call_id, the stream ends complete, and the follow-up
// carries the call and its output as the recorded one OpenRouter
// answered (but for the call's item id, as on OpenAI).
func TestRound24OpencodeOpenRouterToolLoop(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_openrouter_gpt55_tool_loop_stream"
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	req := r21Request("openai/gpt-5.5", "What is the weather in Paris?")
	req.Protocol, req.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	f := r21Stream(t, name, req)
	if c := f.Message.GetParts(); len(c) != 1 || c[0].GetToolCall().GetCallId() != "call_0hH2I7anIhRzJVMaXGgZsSAZ" || c[0].GetToolCall().GetArguments() != `{"city":"Paris"}` {
		t.Fatalf("parts %v", c)
	}
	if f.Meta.GetResponseId() != "gen-1790785408-P7WTOJJIqq20Fmtefin3" || f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS ||
		f.Meta.GetUsage().GetInputTokens() != 74 || f.Meta.GetUsage().GetOutputTokens() != 18 {
		t.Errorf("meta %v", f.Meta)
	}
	p, err := New(testKey, WithBaseURL("https://openrouter.ai/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	next := r21Request("openai/gpt-5.5", "")
	next.Protocol, next.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	next.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris?")), f.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: "call_0hH2I7anIhRzJVMaXGgZsSAZ", Content: `{"temperature":22,"condition":"sunny"}`}}})}
	in, warnings := r24Built(t, p, next)
	want := r24RecordedInput(t, name)
	call := map[string]any{}
	for k, v := range want[1].(map[string]any) {
		if k != "id" {
			call[k] = v
		}
	}
	if len(warnings) != 0 || len(in.Input) != 3 || !reflect.DeepEqual(in.Input[1], call) || !reflect.DeepEqual(in.Input[2], want[2]) {
		t.Errorf("input %v, warnings %q; recorded %v", in.Input, warnings, want)
	}
}

// TestRound24OpencodeMissingToolOutput: OpenAI's 400 for a continuation
// that answers one of two parallel calls (anomalyco/opencode's
// openai-recovery/rejects-continuation-with-a-missing-parallel-tool-result
// recording: "No tool output found for function call call_time.", param
// input) names the unanswered call of the request, not the whole input:
// an invalid request, unary and streamed.
func TestRound24OpencodeMissingToolOutput(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.5", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("Look up the weather and local time in Paris.")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("I should use both lookup tools."),
				toolCallPart("call_weather", "lookup_weather", `{"city":"Paris"}`), toolCallPart("call_time", "lookup_time", `{"city":"Paris"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_weather", "sunny")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("The previous response was interrupted. Continue from where you left off without repeating completed content.")),
		},
		Tools: []*llmrelayv1.Tool{
			{Name: "lookup_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`},
			{Name: "lookup_time", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`},
		}}
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("real_opencode_openai_err_400_no_tool_output.http"))
		p := newTestProvider(t, kOpenAI, srv.URL)
		var err error
		if streaming {
			_, err = p.Stream(context.Background(), req)
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		e := providerError(t, err)
		if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Param != "messages[1].parts[2].tool_call.call_id" ||
			e.Message != "No tool output found for function call call_time." {
			t.Errorf("streaming %v: error %+v", streaming, e)
		}
	}
}

// TestRound24OpencodeOpenRouterNativeSearch: x-ai/grok-4.3 through
// OpenRouter's Responses endpoint with web_search_preview engine
// "native" (hand-built from anomalyco/opencode's
// openrouter-responses/preserves-native-hosted-search-events recording:
// its events, order and sequence numbers, encrypted contents and ids
// shortened and renamed). The reasoning item's output_item.done comes
// with sequence_number 9, then the search's added (7) and in_progress
// (8): nothing is lost, and no warning may say so. The search's output
// rides in a reasoning item whose id and encrypted content start "tco_"
// (xAI's tool-call output), which comes back as a reasoning item.
func TestRound24OpencodeOpenRouterNativeSearch(t *testing.T) {
	t.Parallel()
	const name = "opencode_openrouter_grok_search_stream"
	req := r21Request("x-ai/grok-4.3", "Use web search once to find the official OpenRouter Responses API documentation. Reply with its URL.")
	req.Reasoning = true
	f := r21Stream(t, name, req)
	if w := f.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if got := f.Meta.GetResponseId(); got != "gen-1790785401-hbSearchOrder0000001" {
		t.Errorf("response id %q", got)
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 4900 || u.GetOutputTokens() != 232 || u.GetReasoningTokens() != 201 || u.GetCachedInputTokens() != 2048 {
		t.Errorf("usage %v", u)
	}
	if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("finish %v", f.Meta.GetFinishReason())
	}
	// The follow-up to OpenRouter sends the answer's items back in their
	// order: the tco_ item is a reasoning item like the others, with its
	// encrypted content, and the run of two reasoning items before the
	// message goes whole (not OpenAI's host).
	p, err := New(testKey, WithBaseURL("https://openrouter.ai/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	got, warnings := r24NextInput(t, p, "x-ai/grok-4.3",
		msgOf(llmrelayv1.Role_ROLE_USER, text("Use web search once to find the official OpenRouter Responses API documentation. Reply with its URL.")),
		f.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("Thanks.")))
	var kinds []string
	for _, it := range got[1 : len(got)-1] {
		m := it.(map[string]any)
		id, _ := m["id"].(string)
		kinds = append(kinds, m["type"].(string)+" "+id)
	}
	wantKinds := []string{"reasoning rs_1c2b3a49-5d6e-4f70-8192-a3b4c5d6e7f8",
		"web_search_call ws_1c2b3a49-5d6e-4f70-8192-a3b4c5d6e7f8_call-0a1b2c3d-4e5f-4061-8273-9485a6b7c8d9-0",
		"reasoning tco_1c2b3a49-5d6e-4f70-8192-a3b4c5d6e7f8_call-0a1b2c3d-4e5f-4061-8273-9485a6b7c8d9-0",
		"reasoning rs_tmp_hbsrch0rs2", "message msg_tmp_hbsrch0msg"}
	if len(warnings) != 0 || !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("follow-up items %q, warnings %q", kinds, warnings)
	}
	if ec, _ := got[3].(map[string]any)["encrypted_content"].(string); ec != "tco_1c2b3a49-5d6e-4f70-8192-a3b4c5d6e7f8_call-0a1b2c3d-4e5f-4061-8273-9485a6b7c8d9-0_aGFuZC1idWlsdDogdGhlIHNlYXJjaCdzIG91dHB1dA==.eyJlbmRwb2ludF9zbHVnIjoieC1haS9ncm9rLTQuMy0yMDI2MDQzMHx4YWkifQ" {
		t.Errorf("tco_ item's encrypted content %q", ec)
	}
}

// TestRound24OpencodeCachedTokens: gpt-4.1-mini on OpenAI (May 2026), the
// second of two identical calls with a 4.7K-token system prompt and a
// prompt_cache_key (anomalyco/opencode's openai-responses-cache
// recording): 4608 of the 4765 input tokens cached, "Hi." in two deltas
// with obfuscation, store true in the response though the request sent
// false. The usage counts the cached tokens, the text is whole, no
// warning.
func TestRound24OpencodeCachedTokens(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_gpt41mini_cached_stream"
	req := r21Request("gpt-4.1-mini", "Say hi.")
	f := r21Stream(t, name, req)
	if w := f.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	u := f.Meta.GetUsage()
	if u.GetInputTokens() != 4765 || u.GetCachedInputTokens() != 4608 || u.GetOutputTokens() != 3 || u.GetTotalTokens() != 4768 || u.GetReasoningTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	if got := f.Message.GetParts(); len(got) != 1 || got[0].GetText() != "Hi." || got[0].GetItemId() != "msg_06a66d5dbf005c28006a0133e6a2b0819d90b31eabe0bb0568" {
		t.Errorf("parts %v", got)
	}
	if f.Meta.GetResponseId() != "resp_06a66d5dbf005c28006a0133e48a28819d957163a92a5a56cc" || f.Meta.GetResolvedModel() != "gpt-4.1-mini-2025-04-14" ||
		f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("meta %v", f.Meta)
	}
}

// TestRound24OpencodeSettledParallelContinuation: the request OpenAI
// answered (200) in anomalyco/opencode's openai-recovery
// accepts-settled-parallel-tools-followed-by-continuation recording
// (gpt-5.5, August 2026): an assistant turn of text without an item id
// and two parallel calls, both outputs, then a user turn, tool_choice
// none. The same history through the contract builds the same input
// items, tools and tool choice.
func TestRound24OpencodeSettledParallelContinuation(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(td("opencode_openai_recovery_settled_parallel.recorded_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	strict := false
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	req := r21Request("gpt-5.5", "Look up the weather and local time in Paris.")
	req.Reasoning, req.Protocol = true, llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{
		{Name: "lookup_weather", Description: "Return benign weather data for a city.", Parameters: schema, Strict: &strict},
		{Name: "lookup_time", Description: "Return the benign local time for a city.", Parameters: schema, Strict: &strict}}
	call := func(id, name string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: name, Arguments: `{"city":"Paris"}`}}}
	}
	result := func(id, out string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: out}}}
	}
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("I should use both lookup tools."), call("call_weather", "lookup_weather"), call("call_time", "lookup_time")),
		msgOf(llmrelayv1.Role_ROLE_TOOL, result("call_weather", "sunny"), result("call_time", "12:00")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("The previous response was interrupted. Continue from where you left off without repeating completed content.")))
	req.Options = &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	b, warnings, err := p.buildResponsesRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	// The user turns: opencode leaves "type": "message" out, which
	// OpenAI takes either way; ours says it.
	in := got["input"].([]any)
	for _, i := range []int{0, len(in) - 1} {
		delete(in[i].(map[string]any), "type")
	}
	for _, k := range []string{"input", "tools", "tool_choice"} {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s\n got %v\nwant %v", k, got[k], want[k])
		}
	}
}

// TestRound24OpencodeDigitalOceanToolLoopAnswer: openai-gpt-5-nano on
// DigitalOcean's serverless inference Responses endpoint
// (inference.do-ai.run/v1/responses, October 2026; anomalyco/opencode's
// digitalocean-responses continues-an-automatic-tool-call recording, its
// second answer): LiteLLM underneath (a base64 "litellm:custom_llm_provider:
// openai;…" response id, keys sorted with "type" last), "phase": null on
// the final message, "cost": null and null token details in the usage.
// The text is whole, the usage counted, the nulls read as absent, no
// warning.
func TestRound24OpencodeDigitalOceanToolLoopAnswer(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_digitalocean_tool_loop_stream_2"
	req := r21Request("openai-gpt-5-nano", "What is the weather in Paris?")
	req.Reasoning = true
	f := r21Stream(t, name, req)
	if w := f.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if got := f.Message.GetParts(); len(got) != 1 || got[0].GetText() != "Paris is sunny." || got[0].GetPhase() != "" {
		t.Errorf("parts %v", got)
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 354 || u.GetOutputTokens() != 8 || u.GetTotalTokens() != 362 || u.GetCachedInputTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("finish %v", f.Meta.GetFinishReason())
	}
}

// TestRound24OpencodeOpenRouterGrokToolLoop: x-ai/grok-4.3 through
// OpenRouter's Responses endpoint at reasoning effort "none"
// (anomalyco/opencode's openrouter-grok-4-3-tool-loop recording): turn 1
// one call whose call_id is xAI's ("call-<uuid>-0", hyphens), its
// arguments in one delta, no reasoning item; turn 2 "Paris is sunny.".
// The follow-up built from our fold carries the call and its output as
// the recorded one OpenRouter answered (but for the call's item id, as on
// OpenAI), without a warning.
func TestRound24OpencodeOpenRouterGrokToolLoop(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_openrouter_grok43_tool_loop_stream_1"
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	req := r21Request("x-ai/grok-4.3", "What is the weather in Paris?")
	req.Protocol, req.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	f := r21Stream(t, name, req)
	const callID = "call-b8fc2f91-196a-424e-806c-809d8210716c-0"
	if c := f.Message.GetParts(); len(c) != 1 || c[0].GetToolCall().GetCallId() != callID || c[0].GetToolCall().GetArguments() != `{"city":"Paris"}` {
		t.Fatalf("parts %v", c)
	}
	if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || len(f.Meta.GetWarnings()) != 0 ||
		f.Meta.GetUsage().GetInputTokens() != 319 || f.Meta.GetUsage().GetCachedInputTokens() != 128 || f.Meta.GetUsage().GetOutputTokens() != 10 {
		t.Errorf("meta %v", f.Meta)
	}
	p, err := New(testKey, WithBaseURL("https://openrouter.ai/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	next := r21Request("x-ai/grok-4.3", "What is the weather in Paris?")
	next.Protocol, next.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools
	next.Messages = append(next.Messages, f.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, `{"temperature":22,"condition":"sunny"}`)))
	in, warnings := r24Built(t, p, next)
	want := r24RecordedInput(t, name)
	call := map[string]any{}
	for k, v := range want[1].(map[string]any) {
		if k != "id" {
			call[k] = v
		}
	}
	if len(warnings) != 0 || len(in.Input) != 3 || !reflect.DeepEqual(in.Input[1], call) || !reflect.DeepEqual(in.Input[2], want[2]) {
		t.Errorf("input %v, warnings %q; recorded %v", in.Input, warnings, want)
	}
	// Turn 2: the sentence, OpenRouter's cost kept, no warning.
	f2 := r21Stream(t, "real_opencode_openrouter_grok43_tool_loop_stream_2", next)
	if got := f2.Message.GetParts(); len(got) != 1 || got[0].GetText() != "Paris is sunny." || len(f2.Meta.GetWarnings()) != 0 ||
		f2.Meta.GetUsage().GetInputTokens() != 344 || f2.Meta.GetUsage().GetOutputTokens() != 4 {
		t.Errorf("turn 2: parts %v, meta %v", got, f2.Meta)
	}
}

// TestRound24OpencodeVercelGatewayGrokToolLoop: spacexai/grok-4.7 through
// the Vercel AI Gateway's Responses endpoint (anomalyco/opencode's
// vercel-native continues-responses-grok-reasoning-and-tools recording,
// October 2026): a reasoning item (id rs_<uuid>, a summary streamed word
// by word, the gateway's "gwenc1." encrypted content) whose
// output_item.done comes after the call's, the call with xAI's call id,
// the model "xai/grok-4.7" while streaming and "grok-4.7" at the end,
// the gateway's provider_metadata on response.completed, whose routing's
// finalProvider ("xai") was dropped: it is meta.extended.upstream_provider
// now, as on the gateway's Chat Completions answers. The follow-up built from our fold
// sends the reasoning item (id, summary, encrypted content) before the
// call and its output, as the recorded one the gateway answered (but for
// the call's item id).
func TestRound24OpencodeVercelGatewayGrokToolLoop(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_vercelgw_grok47_tool_loop_stream"
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	req := r21Request("spacexai/grok-4.7", "What is the weather in Paris?")
	req.Protocol, req.Tools, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools, true
	f := r21Stream(t, name, req)
	const callID = "call-37a29db2-38ae-4f89-95ef-321aba43ee4e-0"
	if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || len(f.Meta.GetWarnings()) != 0 ||
		f.Meta.GetUsage().GetInputTokens() != 1356 || f.Meta.GetUsage().GetReasoningTokens() != 38 || f.Meta.GetUsage().GetCachedInputTokens() != 1152 {
		t.Errorf("meta %v", f.Meta)
	}
	// The provider the gateway routed the call to
	// (provider_metadata.gateway.routing.finalProvider on the final
	// response), as on the gateway's Chat Completions answers.
	if got := f.Meta.GetExtended().GetFields()["upstream_provider"]; got == nil || got.GetStringValue() != "xai" {
		t.Errorf("upstream_provider %v", got)
	}
	p, err := New(testKey, WithBaseURL("https://ai-gateway.vercel.sh/v1"))
	if err != nil {
		t.Fatal(err)
	}
	next := r21Request("spacexai/grok-4.7", "What is the weather in Paris?")
	next.Protocol, next.Tools, next.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools, true
	next.Messages = append(next.Messages, f.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, `{"temperature":22,"condition":"sunny"}`)))
	in, warnings := r24Built(t, p, next)
	want := r24RecordedInput(t, name)
	delete(want[2].(map[string]any), "id")
	if len(warnings) != 0 || len(in.Input) != len(want) {
		t.Fatalf("input %v, warnings %q; recorded %v", in.Input, warnings, want)
	}
	for i := 1; i < len(want); i++ {
		if !reflect.DeepEqual(in.Input[i], want[i]) {
			t.Errorf("input[%d]\n got %v\nwant %v", i, in.Input[i], want[i])
		}
	}
}

// TestRound24VercelGatewayUpstreamUnary: the unary answer of the Vercel
// AI Gateway's Responses endpoint carries the same provider_metadata on
// its response object (hand-built from the final response of
// real_opencode_vercelgw_grok47_tool_loop_stream.http, its routing and
// output cut down, ids its own): the routed provider is
// meta.extended.upstream_provider there too.
func TestRound24VercelGatewayUpstreamUnary(t *testing.T) {
	t.Parallel()
	p, err := New(testKey, WithBaseURL("https://ai-gateway.vercel.sh/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"gen_01HBUNARYUPSTREAM0000000000","object":"response","created_at":1790912122,"status":"completed",` +
		`"output":[{"type":"message","id":"msg_hb_unary_upstream","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi.","annotations":[]}]}],` +
		`"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7},"model":"grok-4.7",` +
		`"provider_metadata":{"xai":{"serviceTier":"default"},"gateway":{"routing":{"originalModelId":"spacexai/grok-4.7","resolvedProvider":"xai","finalProvider":"xai"},"cost":"0.0001"}}}`)
	res, err := p.parseResponsesResponse(body, "spacexai/grok-4.7")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Meta.GetExtended().GetFields()["upstream_provider"]; got == nil || got.GetStringValue() != "xai" {
		t.Errorf("upstream_provider %v", got)
	}
}

// TestRound24OpencodeVercelGatewayGptToolLoop: openai/gpt-6-luna through
// the Vercel AI Gateway's Responses endpoint (anomalyco/opencode's
// vercel-native continues-responses-gpt-reasoning-and-tools recording):
// turn 1 a call (no reasoning item, 0 reasoning tokens), turn 2 a message
// whose output_item.added already holds an empty output_text part, then
// content_part.added for it again, phase final_answer. Both turns name
// OpenAI as the provider that served them; turn 2's text comes once; the
// follow-up's call and output are the recorded ones (but for the call's
// item id).
func TestRound24OpencodeVercelGatewayGptToolLoop(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_vercelgw_gpt6luna_tool_loop_stream_1"
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	req := r21Request("openai/gpt-6-luna", "What is the weather in Paris?")
	req.Protocol, req.Tools, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools, true
	f := r21Stream(t, name, req)
	const callID = "call_iUMyf0iR7KJvUJl7O30wRmGi"
	if c := f.Message.GetParts(); len(c) != 1 || c[0].GetToolCall().GetCallId() != callID || c[0].GetToolCall().GetArguments() != `{"city":"Paris"}` {
		t.Fatalf("parts %v", c)
	}
	if got := f.Meta.GetExtended().GetFields()["upstream_provider"]; got == nil || got.GetStringValue() != "openai" || len(f.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", f.Meta)
	}
	p, err := New(testKey, WithBaseURL("https://ai-gateway.vercel.sh/v1"))
	if err != nil {
		t.Fatal(err)
	}
	next := r21Request("openai/gpt-6-luna", "What is the weather in Paris?")
	next.Protocol, next.Tools, next.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, tools, true
	next.Messages = append(next.Messages, f.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, `{"temperature":22,"condition":"sunny"}`)))
	in, warnings := r24Built(t, p, next)
	want := r24RecordedInput(t, name)
	delete(want[1].(map[string]any), "id")
	if len(warnings) != 0 || len(in.Input) != 3 || !reflect.DeepEqual(in.Input[1:], want[1:]) {
		t.Errorf("input %v, warnings %q; recorded %v", in.Input, warnings, want)
	}
	f2 := r21Stream(t, "real_opencode_vercelgw_gpt6luna_tool_loop_stream_2", next)
	if got := f2.Message.GetParts(); len(got) != 1 || got[0].GetText() != "Paris is sunny." || got[0].GetPhase() != "final_answer" || len(f2.Meta.GetWarnings()) != 0 {
		t.Errorf("turn 2 parts %v, meta %v", got, f2.Meta)
	}
	if got := f2.Meta.GetExtended().GetFields()["upstream_provider"]; got == nil || got.GetStringValue() != "openai" {
		t.Errorf("turn 2 upstream_provider %v", got)
	}
}

// TestRound24OpencodeOpenRouterMuseNamespace: meta/muse-spark-1.3
// through OpenRouter's Responses endpoint with two tool namespaces (crm,
// inventory) each declaring "lookup" (hand-built from anomalyco/opencode's
// openrouter-responses/openrouter-muse-spark-1-3-tool-loop recording: its
// events and keys, the encrypted content shortened, ids its own): a
// reasoning item, a commentary message, then the call to lookup with
// "namespace": "crm". The namespace has no place in the contract: the
// stream says so (as the unary answer does), and the follow-up sends the
// reasoning, the commentary message (id, status, phase) and the call in
// the recorded follow-up's order, the call without its namespace, which
// the recorded one OpenRouter answered carries.
func TestRound24OpencodeOpenRouterMuseNamespace(t *testing.T) {
	t.Parallel()
	const callID = "call_01a0hbnamespace00000000000000b3"
	req := r21Request("meta/muse-spark-1.3", "Call only crm.lookup once with query ping. Do not call inventory.lookup. Wait for the result.")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "lookup", Description: "Look up a reference value",
		Parameters: `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`}}
	f := r21Stream(t, "opencode_openrouter_muse_namespace_stream", req)
	if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != namespaceWarning(callID, "crm") {
		t.Errorf("warnings %q", w)
	}
	p, err := New(testKey, WithBaseURL("https://openrouter.ai/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	next := r21Request("meta/muse-spark-1.3", "Call only crm.lookup once with query ping. Do not call inventory.lookup. Wait for the result.")
	next.Protocol, next.Reasoning, next.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, true, req.Tools
	next.Messages = append(next.Messages, f.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, `"pong"`)))
	b, warnings, err := p.buildResponsesRequest(next, true)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, it := range in.Input {
		id, _ := it["id"].(string)
		kinds = append(kinds, it["type"].(string)+" "+id)
	}
	want := []string{"message ", "reasoning rs_6abd0000hbnamespace0000:rs_01a0hbnamespace000000000000001", "message msg_tmp_hbnsmsg0001", "function_call ", "function_call_output "}
	if len(warnings) != 0 || !reflect.DeepEqual(kinds, want) {
		t.Fatalf("input %q, warnings %q", kinds, warnings)
	}
	if m := in.Input[2]; m["phase"] != "commentary" || m["status"] != "completed" {
		t.Errorf("commentary message %v", m)
	}
	if c := in.Input[3]; c["call_id"] != callID || c["name"] != "lookup" || c["namespace"] != nil {
		t.Errorf("call %v", c)
	}
}
