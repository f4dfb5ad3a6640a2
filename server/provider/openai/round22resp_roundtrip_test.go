package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// Encrypted contents of the reasoning item of
// real_responses_issue_11239_1_stream: OpenAI sent one in
// output_item.added, another in output_item.done and a third in
// response.completed's output.
const (
	issue11239Added     = "gAAAAABqyUi0Tp_ex3mdkMNhNHal24xD"
	issue11239Done      = "gAAAAABqyUi1zGMgiU3FG0QU48Fz-KBE"
	issue11239Completed = "gAAAAABqyUi12HqsPMLoEm3WexJqu94p"
)

// issue11239Request is the round trip's request: gpt-5.2, effort low,
// one strict parameterless function, stored false (the adapter's default).
func issue11239Request(msgs ...*llmrelayv1.Message) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.2", Format: formatResponses, Reasoning: true,
		Messages: append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Look up the code and tell me what it is."))}, msgs...),
		Tools:    []*llmrelayv1.Tool{{Name: "lookupCode", Description: "Returns the code requested by the user.", Strict: proto.Bool(true)}},
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}}
}

// TestRound22Issue11239RoundTrip: the Vercel AI SDK's live two-step
// round trip with gpt-5.2 and store false (vercel/ai#11239, "The encrypted
// content for item rs_… could not be verified", reproduced without the
// error in July 2026). Step 1 streams an encrypted reasoning item whose
// encrypted_content differs between output_item.added, output_item.done
// and response.completed, then a call of lookupCode with "{}"; step 2,
// after the call's result, streams the answer "blue-42".
//
// Step 1 relays the reasoning item with its id and the encrypted content
// of its output_item.done (the item as done; the one pydantic-ai sends
// back, real_pyd_gpt5_freeform_text_streaming_1), never the one announced
// with output_item.added; the call by its call_id; 55 in, 25 out of which
// 9 reasoning; service tier "auto" in created, "default" in completed.
// The second request carries the reasoning item (id, encrypted content,
// summary []) right before the function_call it led to, then the output:
// the pairing OpenAI requires, with no warning.
func TestRound22Issue11239RoundTrip(t *testing.T) {
	t.Parallel()
	f := r21Stream(t, "real_responses_issue_11239_1_stream", issue11239Request())
	parts := f.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning()
	if r.GetId() != "rs_0039ff4ed0aeca1e016ac948b4e4c887d2bbf14d31fdc26ccd" || r.GetText() != "" ||
		!strings.HasPrefix(r.GetSignature(), issue11239Done) || !strings.HasSuffix(r.GetSignature(), "Umw9DTtw==") {
		t.Errorf("reasoning %v", r)
	}
	for _, other := range []string{issue11239Added, issue11239Completed} {
		if strings.HasPrefix(r.GetSignature(), other) {
			t.Errorf("signature %.32s…, the item's as done is %s…", r.GetSignature(), issue11239Done)
		}
	}
	c := parts[1].GetToolCall()
	if c.GetCallId() != "call_LUBOONF2cY8HDQdBwiEQ9fk1" || c.GetName() != "lookupCode" || c.GetArguments() != "{}" || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 55, OutputTokens: 25, TotalTokens: 80, ReasoningTokens: 9}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_0039ff4ed0aeca1e016ac948b4252887d2bae0ca8764f6a08e" || m.GetResolvedModel() != "gpt-5.2-2025-12-11" ||
		m.GetServiceTier() != "default" || m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	// Step 2: the answer, the call's result, sent back.
	answer := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts}
	result := msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
		CallId: "call_LUBOONF2cY8HDQdBwiEQ9fk1", Content: "blue-42"}}})
	req := issue11239Request(answer, result)
	srv := providertest.ReplayFile(t, td("real_responses_issue_11239_2_stream.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("real_responses_issue_11239_2_stream.golden"), rendered)
	checkRespStreamInvariants(t, evs)
	var sent struct {
		Store   *bool             `json:"store"`
		Include []string          `json:"include"`
		Input   []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Store == nil || *sent.Store || strings.Join(sent.Include, ",") != "reasoning.encrypted_content" || len(sent.Input) != 4 {
		t.Fatalf("sent store %v include %v, %d input items", sent.Store, sent.Include, len(sent.Input))
	}
	want := []string{
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"Look up the code and tell me what it is."}]}`,
		`{"type":"reasoning","id":"rs_0039ff4ed0aeca1e016ac948b4e4c887d2bbf14d31fdc26ccd","summary":[],"encrypted_content":"` + r.GetSignature() + `"}`,
		`{"type":"function_call","call_id":"call_LUBOONF2cY8HDQdBwiEQ9fk1","name":"lookupCode","arguments":"{}"}`,
		`{"type":"function_call_output","call_id":"call_LUBOONF2cY8HDQdBwiEQ9fk1","output":"blue-42"}`,
	}
	for i, w := range want {
		if string(sent.Input[i]) != w {
			t.Errorf("input[%d]\n%s\nwant\n%s", i, sent.Input[i], w)
		}
	}
	f2 := accFold(t, evs)
	if p := f2.Message.GetParts(); len(p) != 1 || p[0].GetText() != "blue-42" || p[0].GetItemId() != "msg_0039ff4ed0aeca1e016ac948b605cc87d2bae5ee47fda0fa0e" {
		t.Errorf("parts %v", p)
	}
	m = f2.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 91, OutputTokens: 7, TotalTokens: 98}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_0039ff4ed0aeca1e016ac948b5704887d29d49ae212623313e" || m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound22ProgrammaticToolCallingStream: the Vercel AI SDK's live
// stream of gpt-5.6-sol with programmatic tool calling (July 2026; the
// unary twin of another run is real_responses_programmatic_tool_calling):
// an encrypted reasoning item, a program item added with empty code and
// done with its code, then the first function_call the program made,
// done with status in_progress and a caller naming the program. The call
// is relayed by its call_id with its arguments, the program and the
// caller each in one warning, as the unary answer of the final response
// reports them (TestRound22StreamFoldsAsUnary); 631 in, 87 out of which
// 37 reasoning.
func TestRound22ProgrammaticToolCallingStream(t *testing.T) {
	t.Parallel()
	f := r21Stream(t, "real_responses_programmatic_tool_calling_stream", issue11239Request())
	parts := r23Parts(t, f.Message, "program")
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetId() != "rs_0bac52ec5f239d30016a6145ff981c81929899a0e0f283767b" || !strings.HasPrefix(r.GetSignature(), "gAAAAABqYUYAsrLRZ1_ouQPQ") {
		t.Errorf("reasoning %v", r)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_VgDSZztLociNcutQZWkC2fmL" || c.GetName() != "getInventory" || c.GetArguments() != `{"sku":"sku_123"}` {
		t.Errorf("call %v", c)
	}
	m := f.Meta
	if want := (&llmrelayv1.Usage{InputTokens: 631, OutputTokens: 87, TotalTokens: 718, ReasoningTokens: 37}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_0bac52ec5f239d30016a6145ff09a4819291ced3bf727cda6b" || m.GetResolvedModel() != "gpt-5.6-sol" || m.GetToolCallCount() != 1 {
		t.Errorf("meta %v", m)
	}
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	want := []string{
		`tool call call_VgDSZztLociNcutQZWkC2fmL was made by a program (caller_id call_voPdoCqf8APY4DMpam3bdmxq), not by the model directly ` +
			`(programmatic tool calling), which the contract has no place for: the call goes back without its caller (the program item goes back as a provider item)`,
	}
	if strings.Join(m.GetWarnings(), "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%q\nwant\n%q", m.GetWarnings(), want)
	}
}
