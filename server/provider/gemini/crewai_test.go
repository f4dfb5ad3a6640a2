package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// crewAIInc/crewAI's VCR cassettes (testdata/README.md, "Real recordings
// from crewAI's cassettes"): the live API's answers to crewAI's tests.
// Every expectation below is read off the cassette by hand.

// crewRecordings are the recordings the tests below replay.
var crewRecordings = []string{
	"real_crew_gemini_cached_prompt_tokens_1", "real_crew_google_streaming_returns_usage_metrics_error",
	"real_crew_gemini_streaming_multiple_tool_calls_unique_ids", "real_crew_gemini_async_conversation",
	"real_crew_gemini_agent_kickoff_structured_output_with_tools_1", "real_crew_gemini_agent_kickoff_structured_output_with_tools_2",
	"real_crew_google_async_streaming_returns_usage_metrics",
}

func crewRequest(prompt string) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text(prompt))},
		Options:  &llmrelayv1.GenerationOptions{},
	}
}

// TestCrewCachedPrompt: gemini-2.5-flash, unary, pretty-printed: "Hello"
// after 22 thought tokens; no cachedContentTokenCount (the implicit cache
// did not hit), so nothing is reported cached. Usage: 1135 in, 1 + 22 out,
// 1158 total as recorded; promptTokensDetails kept in usage_details.
func TestCrewCachedPrompt(t *testing.T) {
	t.Parallel()
	const name = "real_crew_gemini_cached_prompt_tokens_1"
	p, srv := replay(t, name)
	res, err := p.Generate(context.Background(), crewRequest("Say hello in one word."))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "46GLaf60NYmY-8YP--PB6QE" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 0 || len(m.GetWarnings()) != 0 || m.GetRateLimit() != nil {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 1135, OutputTokens: 1 + 22, TotalTokens: 1158, ReasoningTokens: 22}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if got, _ := m.GetExtended().AsMap()["usage_details"].(map[string]any)["promptTokensDetails.TEXT"].(float64); got != 1135 {
		t.Errorf("usage_details %v", m.GetExtended().AsMap()["usage_details"])
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	providertest.Golden(t, filepath.Join("testdata", name+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
}

// TestCrewStreamKeyInvalid: the live API's answer to a streamed request
// (alt=sse) with a bad key: 400 with Content-Type text/event-stream but a
// pretty-printed JSON error body, not SSE. Its ErrorInfo reason
// API_KEY_INVALID makes it an authentication error, not an invalid
// request, and the message is the API's.
func TestCrewStreamKeyInvalid(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "real_crew_google_streaming_returns_usage_metrics_error")
	s, err := p.Stream(context.Background(), crewRequest("What is the capital of Japan?"))
	if err == nil {
		t.Fatalf("Stream: no error (close: %v)", s.Close())
	}
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v, want *provider.Error", err, err)
	}
	if pe.Kind != provider.KindUnauthenticated || pe.HTTPStatus != 400 || pe.Code != "INVALID_ARGUMENT/API_KEY_INVALID" ||
		pe.Message != "API key not valid. Please pass a valid API key." || pe.RetryAfter != 0 {
		t.Errorf("error %+v", pe)
	}
}

// TestCrewStreamTwoCalls: gemini-2.0-flash streaming (alt=sse, one event
// with CRLF CRLF, JSON with spaces after colons as recorded): two
// parallel calls of the same function with no ids, finishReason STOP.
// Each call gets an id of its own (derived from the responseId and its
// index), the same ids as the unary answer would get; the arguments are
// the recorded args. Usage 37 in, 14 out, 51 total.
func TestCrewStreamTwoCalls(t *testing.T) {
	t.Parallel()
	const name = "real_crew_gemini_streaming_multiple_tool_calls_unique_ids"
	const respID = "h99baZTLOoSShMIPgYaAgQw"
	p, srv := replay(t, name)
	req := crewRequest("What is the temperature in Paris and London?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Model = "gemini-2.0-flash"
	req.Tools = []*llmrelayv1.Tool{{
		Name: "get_current_temperature", Description: "Get the current temperature in a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string","description":"The name of the city to get the temperature for."}},"required":["city"]}`,
	}}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	got := foldMessage(t, evs)
	paris := toolCallPart(generatedID(respID, 0, "", ""), "get_current_temperature", `{"city":"Paris"}`)
	london := toolCallPart(generatedID(respID, 1, "", ""), "get_current_temperature", `{"city":"London"}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, paris, london); !proto.Equal(got, want) {
		t.Errorf("message\n got %v\nwant %v", got, want)
	}
	if paris.GetToolCall().GetCallId() == london.GetToolCall().GetCallId() {
		t.Errorf("both calls have id %s", paris.GetToolCall().GetCallId())
	}
	f := foldEvents(evs)
	if want := (&llmrelayv1.Usage{InputTokens: 37, OutputTokens: 14, TotalTokens: 51}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != respID || m.GetResolvedModel() != "gemini-2.0-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	providertest.Golden(t, filepath.Join("testdata", name+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
}

// crewConvSig is the thoughtSignature of real_crew_gemini_async_conversation.
const crewConvSig = "EvQDCvEDAXLI2nz9GP8047tG13f7ZOzI0XMZ3OCm0YSr6D74+bQrUQBrSezrbyjd+tYgOUGPWLtHGI43kn4/PAFjDr32i4r3BXjcw4m5lSGmP/jvtr9a0pI88Nkvh+ZDkhpqjDOAv5phyuDpMGODSnCvMjew45y0zbGF4LREolbFqcm8BSRJ91/lDMBLjO7QlH+q5Afcpgxx3TGMioHXl2A9gC3RP5Q04IE5cSPT9kAe3/w08IB5y1l5yjUZX0mONzcrS3218rXp/vadmXsZrz8RNWsI3369myVPstP/9k4VX0BaXCMDQTtpj4eDPnBO9yxSh7/zaXYn/hrhzpx8H7bfW6nN5Uvt6/95YEzUXo38u+nrD1XWVHAPxJWziA/+7xwkz/b5SweQtMmOJ7R+aesHOMSD1h71awHQNS21rmIEJ5CxERJ0e310mRiu3MVWV5PxGqCXH15pAtRclAmJ6AslX1IzSmWrY+xb650g6YCAVEntULL78LR05A6MNJa7zBQ5Jc/BvRnqIKpF/AQwTaJTELGolL5HLp0lmvK4fwLHCYHyjUeFMfPFfmkqbMhVlTCPIsWF/UasgTUJe4hyRkA3M5Ri2ddmgrkpIi8HmdpaLjDB3Z2anTbiwrXSBVLQxrEmq/VipqCrD0TTGJBbs11YLcBBMDw="

// TestCrewConversation: gemini-3-pro-preview given a conversation whose
// model turn has no thoughtSignature (crewAI wrote it; the live API
// accepted the request). The request must carry the three turns as
// crewAI's did, with nothing added to the unsigned model turn; the answer
// is the text with its signature (kept as a reasoning part after it, as
// for every signed text part), 114 thought tokens.
func TestCrewConversation(t *testing.T) {
	t.Parallel()
	const name = "real_crew_gemini_async_conversation"
	p, srv := replay(t, name)
	req := crewRequest("My name is Alice.")
	req.Model = "gemini-3-pro-preview"
	req.Messages = append(req.Messages, msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello Alice! Nice to meet you.")),
		msg(llmrelayv1.Role_ROLE_USER, text("What is my name?")))
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Your name is Alice."),
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: crewConvSig}}})
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "jTgtac76H9Th_uMP6MTF-QY" || m.GetResolvedModel() != "gemini-3-pro-preview" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 21, OutputTokens: 5 + 114, TotalTokens: 140, ReasoningTokens: 114}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	// crewAI's request's contents, as recorded.
	const recorded = `[{"parts": [{"text": "My name is Alice."}], "role": "user"},` +
		`{"parts": [{"text": "Hello Alice! Nice to meet you."}], "role": "model"},` +
		`{"parts": [{"text": "What is my name?"}], "role": "user"}]`
	var sent struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	if !jsonTextEqual(t, sent.Contents, recorded) {
		t.Errorf("contents\n got %s\nwant %s", sent.Contents, recorded)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	providertest.Golden(t, filepath.Join("testdata", name+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
}

// TestCrewStrictToolWarns: Gemini's function declarations have no strict
// flag, so a tool asked for with strict (as crewAI asks Anthropic in its
// structured-output cassette) is sent without it and the answer says so
// in a warning; it was dropped without a word. Replayed on the two-call
// stream, whose answer is otherwise unchanged.
func TestCrewStrictToolWarns(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, "real_crew_gemini_streaming_multiple_tool_calls_unique_ids")
	req := crewRequest("What is the temperature in Paris and London?")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Model = "gemini-2.0-flash"
	req.Tools = []*llmrelayv1.Tool{{
		Name: "get_current_temperature", Description: "Get the current temperature in a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`,
		Strict:     proto.Bool(true),
	}}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	f := foldEvents(evs)
	if len(f.calls) != 2 {
		t.Errorf("calls %v, want 2", f.calls)
	}
	want := "tools[0] (get_current_temperature): strict is not supported by gemini-2.0-flash; the schema is sent, not enforced"
	if w := f.meta.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want [%q]", w, want)
	}
	if body := string(srv.Last(t).Body); strings.Contains(body, "strict") {
		t.Errorf("request carries strict: %s", body)
	}
}

// crewCalcRequest is crewAI's request of
// test_gemini_agent_kickoff_structured_output_with_tools:
// gemini-2.0-flash-001, a system instruction, one stop sequence, the
// add_numbers tool and crewAI's structured_output tool (schemas as
// recorded, propertyOrdering included).
func crewCalcRequest(msgs ...*llmrelayv1.Message) *provider.Request {
	req := crewRequest(crewCalcTask)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Model = "gemini-2.0-flash-001"
	req.Messages = append([]*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_SYSTEM, text(crewCalcSystem)), req.Messages[0]}, msgs...)
	req.Options.Stop = []string{"\nObservation:"}
	req.Tools = []*llmrelayv1.Tool{{
		Name: "add_numbers", Description: "Add two numbers together and return the sum.",
		Parameters: `{"properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}, "required": ["a", "b"], "type": "object", "additionalProperties": false}`,
	}, {
		Name:        "structured_output",
		Description: "Use this tool to provide your final structured response. Call this tool when you have gathered all necessary information and are ready to provide the final answer in the required format.",
		Parameters:  crewCalcSchema,
	}}
	return req
}

const (
	crewCalcSystem = "You are Calculator. You are a calculator assistant that uses tools to compute results.\nYour personal goal is: Perform calculations using available tools"
	crewCalcTask   = "\nCurrent Task: Calculate 15 + 27 using your add_numbers tool. Report the result."
	crewCalcSchema = `{"description": "Structured output for calculation results.", "properties": {"operation": {"description": "The mathematical operation performed", "title": "Operation", "type": "string"}, ` +
		`"result": {"description": "The result of the calculation", "title": "Result", "type": "integer"}, "explanation": {"description": "Brief explanation of the calculation", "title": "Explanation", "type": "string"}}, ` +
		`"required": ["operation", "result", "explanation"], "title": "CalculationResult", "type": "object", "additionalProperties": false, "propertyOrdering": ["operation", "result", "explanation"]}`
)

// TestCrewCalcRoundTrip: gemini-2.0-flash-001 calls add_numbers with its
// arguments in the order it wrote them ({"b": 27, "a": 15}), no id,
// avgLogprobs; the answer sent back with the tool's result (the object
// {"result": 42}, which goes out as is) must give crewAI's second request
// contents, which the live API answered with the structured_output call
// (_2). Both answers are tool-call finishes from finishReason STOP.
func TestCrewCalcRoundTrip(t *testing.T) {
	t.Parallel()
	const first = "real_crew_gemini_agent_kickoff_structured_output_with_tools_1"
	p, srv := replay(t, first)
	res, err := p.Generate(context.Background(), crewCalcRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	const respID = "0AV8acutBq6PjMcPkpfamQQ"
	call := toolCallPart(generatedID(respID, 0, "", ""), "add_numbers", `{"b":27,"a":15}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, call); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != respID || m.GetResolvedModel() != "gemini-2.0-flash-001" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 98, OutputTokens: 7, TotalTokens: 105}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if got, _ := m.GetExtended().AsMap()["gemini.avg_logprobs"].(float64); got != -5.0267503995980534e-05 {
		t.Errorf("avg logprobs %v", m.GetExtended().AsMap()["gemini.avg_logprobs"])
	}
	// crewAI's first request: stop sequence and both declarations.
	var sent1 struct {
		Tools            json.RawMessage `json:"tools"`
		GenerationConfig json.RawMessage `json:"generationConfig"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent1); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	if !jsonTextEqual(t, sent1.GenerationConfig, `{"stopSequences": ["\nObservation:"]}`) {
		t.Errorf("generationConfig %s", sent1.GenerationConfig)
	}
	// crewAI wrote parameters_json_schema, the adapter parametersJsonSchema
	// (the API takes both spellings); the declarations are otherwise the same.
	var decls []struct {
		FunctionDeclarations []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(sent1.Tools, &decls); err != nil {
		t.Fatalf("sent tools: %v", err)
	}
	if len(decls) != 1 || len(decls[0].FunctionDeclarations) != 2 {
		t.Fatalf("tools %s", sent1.Tools)
	}
	for i, tool := range crewCalcRequest().Tools {
		d := decls[0].FunctionDeclarations[i]
		if d.Name != tool.GetName() || d.Description != tool.GetDescription() || !jsonTextEqual(t, d.Schema, tool.GetParameters()) {
			t.Errorf("declaration %d: %s %q %s", i, d.Name, d.Description, d.Schema)
		}
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderResult(t, res))
	providertest.Golden(t, filepath.Join("testdata", first+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))

	p2, srv2 := replay(t, "real_crew_gemini_agent_kickoff_structured_output_with_tools_2")
	res2, err := p2.Generate(context.Background(), crewCalcRequest(res.Message,
		msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call.GetToolCall().GetCallId(), `{"result": 42}`))))
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	const respID2 = "0AV8ac_4Kr_yjMcPg_a4gA0"
	out := toolCallPart(generatedID(respID2, 0, "", ""), "structured_output", `{"result":42,"operation":"Addition","explanation":"15 + 27 = 42"}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, out); !proto.Equal(res2.Message, want) {
		t.Errorf("follow-up message\n got %v\nwant %v", res2.Message, want)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 110, OutputTokens: 18, TotalTokens: 128}); !proto.Equal(res2.Meta.GetUsage(), want) {
		t.Errorf("follow-up usage %v, want %v", res2.Meta.GetUsage(), want)
	}
	if res2.Meta.GetResponseId() != respID2 || res2.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || len(res2.Meta.GetWarnings()) != 0 {
		t.Errorf("follow-up meta %v", res2.Meta)
	}
	// crewAI's second request's contents, as recorded: the call goes back
	// without an id (the generated one is ours), the response as given.
	const recorded = `[{"parts": [{"text": "\nCurrent Task: Calculate 15 + 27 using your add_numbers tool. Report the result."}], "role": "user"},` +
		`{"parts": [{"functionCall": {"args": {"b": 27, "a": 15}, "name": "add_numbers"}}], "role": "model"},` +
		`{"parts": [{"functionResponse": {"name": "add_numbers", "response": {"result": 42}}}], "role": "user"}]`
	var sent2 struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(srv2.Last(t).Body, &sent2); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	if !jsonTextEqual(t, sent2.Contents, recorded) {
		t.Errorf("contents\n got %s\nwant %s", sent2.Contents, recorded)
	}
}

// TestCrewStreamUsageRevised: gemini-2.0-flash-exp streaming two SSE
// events; the first carries a provisional usage (165 prompt, no
// candidates), the last the final one, whose prompt count is lower (163
// in, 13 out, 176 total): the final usage is the last event's, not a sum
// or a maximum. The text ends with crewAI's "Final Answer" line and a
// newline; finishReason STOP.
func TestCrewStreamUsageRevised(t *testing.T) {
	t.Parallel()
	const name = "real_crew_google_async_streaming_returns_usage_metrics"
	p, srv := replay(t, name)
	req := crewRequest("\nCurrent Task: What is the capital of Canada?")
	req.Model = "gemini-2.0-flash-exp"
	req.Options.Stop = []string{"\nObservation:"}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	f := foldEvents(evs)
	if want := "The capital of Canada is Ottawa.\nFinal Answer: Ottawa\n"; f.text != want || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v; want %q", f.text, f.calls, want)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 163, OutputTokens: 13, TotalTokens: 176}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "s-s5aZrOHoOvgLUPpteaqAQ" || m.GetResolvedModel() != "gemini-2.0-flash-exp" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	providertest.Golden(t, filepath.Join("testdata", name+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
}
