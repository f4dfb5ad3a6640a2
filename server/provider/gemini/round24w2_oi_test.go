package gemini

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Round 24 (second wave): Arize-ai/openinference's google-genai cassette of
// automatic function calling (testdata/README.md, "Round 24 (second
// wave): openinference's automatic function calling cassette").

func init() {
	round17Recordings = append(round17Recordings, "real_oi_google_genai_automatic_tool_calling_1", "real_oi_google_genai_automatic_tool_calling_2")
}

// TestRound24W2OIAutomaticToolCalling: gemini-2.0-flash, unary, with a
// system instruction: the id-less call get_weather({"location": "San
// Francisco"}) in a candidate without index (STOP, avgLogprobs; 64 in, 6
// out); then, after the result, the text answer (89 in, 23 out). The
// second request is the recorded one but for the result's wrapping: the
// SDK wraps the function's return value as {"result": …}, a caller's JSON
// object result goes as the object.
func TestRound24W2OIAutomaticToolCalling(t *testing.T) {
	t.Parallel()
	tool := &llmrelayv1.Tool{Name: "get_weather", Description: "This function will be automatically executed by Google GenAI.\nIt must return a JSON-serializable value.",
		Parameters: `{"properties":{"location":{"type":"string"},"unit":{"default":"fahrenheit","type":"string"}},"required":["location"],"type":"object"}`}
	const system = "You are a helpful assistant that can answer questions and help with tasks. Use the available tools when appropriate."
	user := msg(llmrelayv1.Role_ROLE_USER, text("What's the weather like in San Francisco?"))
	req := r21User("gemini-2.0-flash", system, user)
	req.Protocol, req.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, []*llmrelayv1.Tool{tool}
	res, srv := r21Unary(t, "real_oi_google_genai_automatic_tool_calling_1", req)
	sent := r20Sent(t, srv, "/v1beta/models/gemini-2.0-flash:generateContent", `[{"parts":[{"text":"What's the weather like in San Francisco?"}],"role":"user"}]`)
	if si := sent["systemInstruction"]; !jsonEqual(si.(map[string]any)["parts"], r19Decode(t, `[{"text":"`+system+`"}]`)) {
		t.Errorf("systemInstruction %v", si)
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 || parts[0].GetToolCall().GetName() != "get_weather" || parts[0].GetToolCall().GetArguments() != `{"location":"San Francisco"}` ||
		!isGeneratedID(parts[0].GetToolCall().GetCallId()) {
		t.Fatalf("parts %v", parts)
	}
	m := res.Meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetResponseId() != "hpGfafeJA8OGz7IP2LSV2Qs" ||
		r17Ext(m)[extAvgLogprobs] != -0.0079295722146828975 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 64, OutputTokens: 6, TotalTokens: 70}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}

	call := parts[0].GetToolCall()
	result := msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call.GetCallId(), `{"location": "San Francisco", "temperature": 65, "unit": "fahrenheit", "condition": "foggy", "humidity": "85%"}`))
	req2 := r21User("gemini-2.0-flash", system, user, msg(llmrelayv1.Role_ROLE_ASSISTANT, parts[0]), result)
	req2.Protocol, req2.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, []*llmrelayv1.Tool{tool}
	res2, srv2 := r21Unary(t, "real_oi_google_genai_automatic_tool_calling_2", req2)
	r20Sent(t, srv2, "/v1beta/models/gemini-2.0-flash:generateContent", `[{"parts":[{"text":"What's the weather like in San Francisco?"}],"role":"user"},`+
		`{"parts":[{"functionCall":{"args":{"location":"San Francisco"},"name":"get_weather"}}],"role":"model"},`+
		`{"parts":[{"functionResponse":{"name":"get_weather","response":{"location":"San Francisco","temperature":65,"unit":"fahrenheit","condition":"foggy","humidity":"85%"}}}],"role":"user"}]`)
	if got := providerText(res2.Message); got != "The weather in San Francisco is foggy with a temperature of 65 degrees Fahrenheit and 85% humidity." {
		t.Errorf("text %q", got)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 89, OutputTokens: 23, TotalTokens: 112}); !proto.Equal(res2.Meta.GetUsage(), want) ||
		res2.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || res2.Meta.GetResponseId() != "hpGfaZ3dMo-cz7IPmcqV2QQ" {
		t.Errorf("meta %v", res2.Meta)
	}
}

// providerText is the message's text parts joined.
func providerText(m *llmrelayv1.Message) string {
	var s string
	for _, p := range m.GetParts() {
		s += p.GetText()
	}
	return s
}
