package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 20: DataDog/dd-trace-js's LLM Observability cassettes for
// api.openai.com and Azure OpenAI (testdata/README.md, "Round 20:
// DataDog/dd-trace-js"). The expectations are read off the recordings by
// hand; each recorded request is compared with the one we build.

// ddjsCharacterSchema is the schema the Vercel AI SDK's generateObject
// sent as the parameters of its forced "json" tool (with its $schema key).
const ddjsCharacterSchema = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"number"},"height":{"type":"string"}},"required":["name","age","height"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`

// ddjsForcedSent is the request the live API accepted for
// real_ddjs_forced_json_tool_stream.
const ddjsForcedSent = `{"model":"gpt-4o-mini","temperature":0,"messages":[{"role":"user","content":"Invent a character for a video game"}],"tool_choice":{"type":"function","function":{"name":"json"}},"tools":[{"type":"function","function":{"name":"json","description":"Respond with a JSON object.","parameters":` +
	ddjsCharacterSchema + `}}],"stream":true,"stream_options":{"include_usage":true}}`

// ddjsForcedRequest is generateObject's call in the contract: the forced
// "json" tool, temperature 0.
func ddjsForcedRequest() *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Invent a character for a video game"))},
		Tools:    []*llmrelayv1.Tool{{Name: "json", Description: "Respond with a JSON object.", Parameters: ddjsCharacterSchema}},
		Options: &llmrelayv1.GenerationOptions{Temperature: proto.Float64(0),
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "json"}}}}
}

// TestRound20DDForcedJSONToolStream: the AI SDK's generateObject through
// a forced tool (tool_choice {"type":"function","function":{"name":"json"}}),
// gpt-4o-mini-2024-07-18, streamed (August 2025). The call
// call_rJbp0gvn18boFYcyaWvt0166 opens with arguments "" and the object
// comes in 19 pieces, one of them a lone escaped quote (\\\" on the wire),
// so the arguments are {"name":"Zara Nightshade","age":28,"height":"5'7\""}
// byte for byte. The finish is "stop", not "tool_calls" (OpenAI's answer to
// a forced function): the turn still ended in a call, so it is reported as
// tool calls with "stop" as the provider's word. 65 in, 19 out; the
// organization datadog-staging, rate limits 30000 requests and 150000000
// tokens (resets 2ms and 0s).
func TestRound20DDForcedJSONToolStream(t *testing.T) {
	t.Parallel()
	const name = "real_ddjs_forced_json_tool_stream"
	evs, f, srv := oljsStream(t, name, kOpenAI, ddjsForcedRequest())

	// What the chunks say, read independently of the adapter.
	var args strings.Builder
	var pieces int
	var finish string
	for _, c := range oljsChunks(t, name) {
		for _, ch := range c["choices"].([]any) {
			ch := ch.(map[string]any)
			if s, ok := ch["finish_reason"].(string); ok {
				finish = s
			}
			calls, _ := ch["delta"].(map[string]any)["tool_calls"].([]any)
			for _, call := range calls {
				if a := call.(map[string]any)["function"].(map[string]any)["arguments"].(string); a != "" {
					args.WriteString(a)
					pieces++
				}
			}
		}
	}
	const wantArgs = `{"name":"Zara Nightshade","age":28,"height":"5'7\""}`
	if args.String() != wantArgs || pieces != 19 || finish != "stop" {
		t.Fatalf("the recording has %d pieces %q and finish %q", pieces, args.String(), finish)
	}
	want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
		CallId: "call_rJbp0gvn18boFYcyaWvt0166", Name: "json", Arguments: wantArgs, ArgumentsValid: true}}}}}
	if !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	var relayed strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCall {
			relayed.WriteString(ev.ToolCall.Arguments)
		}
	}
	if relayed.String() != wantArgs {
		t.Errorf("argument deltas relayed %q", relayed.String())
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 65, OutputTokens: 19, TotalTokens: 84}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-C0qBRex1Iiv5dJSqLQIBIBh3ZTw7R" || m.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
		m.GetProviderRequestId() != "req_bae6581873ad4b3eae53c5bd575053fc" || m.GetServiceTier() != "default" ||
		m.GetExtended().AsMap()["system_fingerprint"] != "fp_34a54ae93c" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1754316629, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	oljsOpenAIRateLimit(t, m, 30000, 29999, 150000000, 149999990, 2*time.Millisecond, time.Date(2025, 8, 4, 14, 10, 29, 0, time.UTC))
	oljsSent(t, srv.Last(t).Body, ddjsForcedSent, "model", "temperature", "messages", "tool_choice", "tools", "stream", "stream_options")
}

// TestRound20DDForcedJSONTool: the same generateObject call unary, a
// moment earlier (August 2025): the same object in one call
// call_Rr2BYEYbMQchLteRxri3EIwN (content null, refusal null), finish "stop"
// beside the call, reported as tool calls with "stop" as the provider's
// word; 65 in, 19 out. Our request has the recorded messages, tools,
// tool_choice and temperature.
func TestRound20DDForcedJSONTool(t *testing.T) {
	t.Parallel()
	const name = "real_ddjs_forced_json_tool"
	res, srv := oljsUnary(t, name, kOpenAI, ddjsForcedRequest())
	const wantArgs = `{"name":"Zara Nightshade","age":28,"height":"5'7\""}`
	var body struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct {
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(oljsBody(t, name), &body); err != nil || len(body.Choices) != 1 || len(body.Choices[0].Message.ToolCalls) != 1 ||
		body.Choices[0].Message.ToolCalls[0].Function.Arguments != wantArgs || body.Choices[0].FinishReason != "stop" {
		t.Fatalf("recorded body %+v (%v)", body, err)
	}
	want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
		CallId: "call_Rr2BYEYbMQchLteRxri3EIwN", Name: "json", Arguments: wantArgs, ArgumentsValid: true}}}}}
	if !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 65, OutputTokens: 19, TotalTokens: 84}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-C0qBOZC1r3Ruk20Dvg8J2JOQpw7gQ" || m.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
		m.GetProviderRequestId() != "req_3dafe73314d74d04a2b7ccac41e31691" || m.GetServiceTier() != "default" ||
		m.GetExtended().AsMap()["system_fingerprint"] != "fp_34a54ae93c" || m.GetToolCallCount() != 1 ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1754316626, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	oljsOpenAIRateLimit(t, m, 30000, 29999, 150000000, 149999990, 2*time.Millisecond, time.Date(2025, 8, 4, 14, 10, 27, 0, time.UTC))
	oljsSent(t, srv.Last(t).Body, strings.Replace(ddjsForcedSent, `,"stream":true,"stream_options":{"include_usage":true}`, "", 1),
		"model", "temperature", "messages", "tool_choice", "tools")
	if b := decodeBody(t, srv.Last(t).Body); b["stream"] != nil || b["stream_options"] != nil {
		t.Errorf("a unary request with stream %v, stream_options %v", b["stream"], b["stream_options"])
	}
}

// ddjsWeatherSchema is the weather tool's schema in the tool loop below.
const ddjsWeatherSchema = `{"type":"object","properties":{"location":{"type":"string","description":"The location to get the weather for"}},"required":["location"]}`

// ddjsWeatherSent is the follow-up the live API accepted (September 2026):
// the call sent back with its id and argument bytes, then the tool's
// result.
const ddjsWeatherSent = `{"model":"gpt-4o-mini","temperature":0,"messages":[{"role":"system","content":"You are a helpful assistant"},{"role":"user","content":"What is the weather in Tokyo?"},` +
	`{"role":"assistant","content":"","tool_calls":[{"id":"call_QFJDNJKbeCGDAokS9EfcB8Ks","type":"function","function":{"name":"weather","arguments":"{\"location\":\"Tokyo\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_QFJDNJKbeCGDAokS9EfcB8Ks","content":"{\"location\":\"Tokyo\",\"temperature\":72}"}],` +
	`"tools":[{"type":"function","function":{"name":"weather","description":"Get the weather in a given location","parameters":` + ddjsWeatherSchema + `}}],` +
	`"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true}}`

// TestRound20DDWeatherToolResultStream: the second turn of a tool loop,
// streamed (gpt-4o-mini-2024-07-18, September 2026): "The current weather
// in Tokyo is 72°F." in ten deltas ("°F" one of them, written \u00b0F in
// the cassette), every chunk with "usage": null and an obfuscation pad,
// the finish stop on an empty delta, then the usage alone (95 in, 11 out).
// The request we build from the contract's history (the assistant's call,
// the tool's result) is the one the API accepted, but for the assistant's
// content, sent "" by the client and null by us beside the call.
func TestRound20DDWeatherToolResultStream(t *testing.T) {
	t.Parallel()
	const name = "real_ddjs_weather_tool_result_stream"
	const callID = "call_QFJDNJKbeCGDAokS9EfcB8Ks"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Tokyo?")),
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
				CallId: callID, Name: "weather", Arguments: `{"location":"Tokyo"}`, ArgumentsValid: true}}}}},
			msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: callID, Name: "weather", Content: `{"location":"Tokyo","temperature":72}`}}}),
		},
		Tools: []*llmrelayv1.Tool{{Name: "weather", Description: "Get the weather in a given location", Parameters: ddjsWeatherSchema}},
		Options: &llmrelayv1.GenerationOptions{Temperature: proto.Float64(0),
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}}}
	_, f, srv := oljsStream(t, name, kOpenAI, req)

	var said strings.Builder
	var deltas, nullUsage int
	for _, c := range oljsChunks(t, name) {
		if u, ok := c["usage"]; ok && u == nil {
			nullUsage++
		}
		if _, ok := c["obfuscation"].(string); !ok {
			t.Fatalf("a chunk without obfuscation: %v", c)
		}
		for _, ch := range c["choices"].([]any) {
			if s, ok := ch.(map[string]any)["delta"].(map[string]any)["content"].(string); ok && s != "" {
				said.WriteString(s)
				deltas++
			}
		}
	}
	const answer = "The current weather in Tokyo is 72°F."
	if said.String() != answer || deltas != 10 || nullUsage != 12 {
		t.Fatalf("the recording says %q in %d deltas, %d chunks with usage null", said.String(), deltas, nullUsage)
	}
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text(answer)); !proto.Equal(f.Message, want) {
		t.Errorf("message %v", f.Message)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 95, OutputTokens: 11, TotalTokens: 106}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-EJj0ZYOppeOxqF6AruHUovdaH9BqR" || m.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
		m.GetProviderRequestId() != "req_aaae3b29bb4940809b8df2f597d22d82" || m.GetServiceTier() != "default" ||
		m.GetExtended().AsMap()["system_fingerprint"] != "fp_73c73d24da" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1788369951, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	oljsOpenAIRateLimit(t, m, 30000, 29999, 150000000, 149999970, 2*time.Millisecond, time.Date(2026, 9, 2, 17, 25, 51, 0, time.UTC))

	sent := decodeBody(t, srv.Last(t).Body)
	recorded := decodeBody(t, []byte(ddjsWeatherSent))
	ours, _ := sent["messages"].([]any)
	theirs := recorded["messages"].([]any)
	if len(ours) != 4 {
		t.Fatalf("sent %d messages: %s", len(ours), srv.Last(t).Body)
	}
	a, _ := ours[2].(map[string]any)
	if a == nil || a["content"] != nil {
		t.Fatalf("assistant message %v, want content null or absent", ours[2])
	}
	delete(a, "content")
	delete(theirs[2].(map[string]any), "content")
	if !jsonEqualAny(ours, theirs) {
		t.Errorf("messages %v, want %v", ours, theirs)
	}
	oljsSent(t, srv.Last(t).Body, ddjsWeatherSent, "model", "temperature", "tools", "tool_choice", "stream", "stream_options")
}

// TestRound20DDAzureChatRoute404: dd-trace-js pointed the OpenAI SDK at an
// Azure resource's root (POST https://dd.openai.azure.com/chat/completions,
// no /openai/deployments/... and no api-version; August 2025). Azure's
// gateway answers 404 "Resource Not Found" with
// {"error":{"code":"404","message": "Resource not found"}}: a route, not a
// deployment, unknown. The kind is not found, the code Azure's string
// "404", the request id the apim-request-id; no retry.
func TestRound20DDAzureChatRoute404(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("real_ddjs_azure_chat_route_404.http"))
		p := newTestProvider(t, kAzure, srv.URL)
		req := simpleRequest("gpt-4.1")
		var err error
		if streaming {
			var s provider.Stream
			if s, err = p.Stream(context.Background(), req); s != nil {
				t.Fatal("stream returned with an error status")
			}
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		pe := providerError(t, err)
		if pe.Provider != "azure" || pe.Kind != provider.KindNotFound || pe.HTTPStatus != 404 || pe.Code != "404" || pe.Message != "Resource not found" ||
			pe.RequestID != "49a7f7ae-f881-4784-816e-855d03e730d8" || pe.RetryAfter != 0 || pe.Param != "" {
			t.Errorf("streaming=%v: %s", streaming, renderErr(err))
		}
	}
}

// ddjsTool0Schema is the schema of the AI SDK's weather tool, which it
// named "0" (its tools were given as an array).
const ddjsTool0Schema = `{"type":"object","properties":{"location":{"type":"string","description":"The location to get the weather for"}},"required":["location"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`

// ddjsTool0Turn1 and ddjsTool0Turn2 are the requests the live API
// accepted in the loop below.
const (
	ddjsTool0Turn1 = `{"model":"gpt-4o-mini","temperature":0,"messages":[{"role":"system","content":"You are a helpful assistant"},{"role":"user","content":"What is the weather in Tokyo?"}],` +
		`"tools":[{"type":"function","function":{"name":"0","description":"Get the weather in a given location","parameters":` + ddjsTool0Schema + `}}],"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true}}`
	ddjsTool0Turn2 = `{"model":"gpt-4o-mini","temperature":0,"messages":[{"role":"system","content":"You are a helpful assistant"},{"role":"user","content":"What is the weather in Tokyo?"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_qWVBE6zsPQgbIjLGGsYoNit7","type":"function","function":{"name":"0","arguments":"{\"location\":\"Tokyo\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_qWVBE6zsPQgbIjLGGsYoNit7","content":"{\"location\":\"Tokyo\",\"temperature\":72}"}],` +
		`"tools":[{"type":"function","function":{"name":"0","description":"Get the weather in a given location","parameters":` + ddjsTool0Schema + `}}],"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true}}`
)

// TestRound20DDToolZeroLoopStream: the AI SDK's streamText tool loop,
// both turns streamed (gpt-4o-mini-2024-07-18, August 2025), with a tool
// named "0".
//
// Turn 1: the call call_qWVBE6zsPQgbIjLGGsYoNit7 to "0", opened with
// arguments "" then four pieces, {"location":"Tokyo"}; finish tool_calls
// on an empty delta; 67 in, 14 out.
//
// Turn 2 is built from turn 1's answer and the tool's result
// {"location":"Tokyo","temperature":72}: the request the API accepted has
// the call with the same id, name and argument bytes, then one tool
// message; ours is the same but for the assistant's content ("" there,
// null in ours). The answer: "The current weather in Tokyo is 72°F." (the
// cassette's YAML wrote ° as \xB0), 97 in, 11 out.
func TestRound20DDToolZeroLoopStream(t *testing.T) {
	t.Parallel()
	const callID = "call_qWVBE6zsPQgbIjLGGsYoNit7"
	tool := &llmrelayv1.Tool{Name: "0", Description: "Get the weather in a given location", Parameters: ddjsTool0Schema}
	opts := &llmrelayv1.GenerationOptions{Temperature: proto.Float64(0),
		ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}}
	msgs := []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Tokyo?")),
	}
	req1 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat", Messages: msgs, Tools: []*llmrelayv1.Tool{tool}, Options: opts}
	_, f1, srv1 := oljsStream(t, "real_ddjs_tool0_loop_stream_1", kOpenAI, req1)
	want1 := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
		CallId: callID, Name: "0", Arguments: `{"location":"Tokyo"}`, ArgumentsValid: true}}}}}
	if !proto.Equal(f1.Message, want1) {
		t.Fatalf("turn 1 message %v", f1.Message)
	}
	m := f1.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if want := (&llmrelayv1.Usage{InputTokens: 67, OutputTokens: 14, TotalTokens: 81}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("turn 1 usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-C0qCMgtaUrexT6PAAGByzxzZ3ntYf" || m.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
		m.GetProviderRequestId() != "req_99dab26267e94a829ef8ef8ec3b8d1b9" || m.GetServiceTier() != "default" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1754316686, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("turn 1 meta %v", m)
	}
	oljsOpenAIRateLimit(t, m, 30000, 29999, 150000000, 149999982, 2*time.Millisecond, time.Date(2025, 8, 4, 14, 11, 26, 0, time.UTC))
	oljsSent(t, srv1.Last(t).Body, ddjsTool0Turn1, "model", "temperature", "messages", "tools", "tool_choice", "stream", "stream_options")

	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat", Tools: []*llmrelayv1.Tool{tool}, Options: opts,
		Messages: append(append([]*llmrelayv1.Message{}, msgs...), f1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: callID, Name: "0", Content: `{"location":"Tokyo","temperature":72}`}}}))}
	_, f2, srv2 := oljsStream(t, "real_ddjs_tool0_loop_stream_2", kOpenAI, req2)
	if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("The current weather in Tokyo is 72°F.")); !proto.Equal(f2.Message, want) {
		t.Errorf("turn 2 message %v", f2.Message)
	}
	m = f2.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 97, OutputTokens: 11, TotalTokens: 108}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("turn 2 usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-C0qCM2g4dnk7uNCBDEGG8ve51Db5a" || m.GetProviderRequestId() != "req_a9120596b63fd92bfef961db61f754e8" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1754316686, 0)) || len(m.GetWarnings()) != 0 {
		t.Errorf("turn 2 meta %v", m)
	}
	oljsOpenAIRateLimit(t, m, 30000, 29999, 150000000, 149999970, 2*time.Millisecond, time.Date(2025, 8, 4, 14, 11, 27, 0, time.UTC))
	sent := decodeBody(t, srv2.Last(t).Body)
	recorded := decodeBody(t, []byte(ddjsTool0Turn2))
	ours, _ := sent["messages"].([]any)
	theirs := recorded["messages"].([]any)
	if len(ours) != 4 {
		t.Fatalf("sent %d messages: %s", len(ours), srv2.Last(t).Body)
	}
	a, _ := ours[2].(map[string]any)
	if a == nil || a["content"] != nil {
		t.Fatalf("assistant message %v, want content null or absent", ours[2])
	}
	delete(a, "content")
	delete(theirs[2].(map[string]any), "content")
	if !jsonEqualAny(ours, theirs) {
		t.Errorf("turn 2 messages %v, want %v", ours, theirs)
	}
	oljsSent(t, srv2.Last(t).Body, ddjsTool0Turn2, "model", "temperature", "tools", "tool_choice", "stream", "stream_options")
}
