package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19: langchain-ai/langsmith-sdk's cassettes (testdata/README.md,
// "Round 19").

// The recordings this file replays join round17Recordings (which
// TestAllRecordingsUsed reads) here, not in that list's file.
func init() {
	round17Recordings = append(round17Recordings, "real_langsmith_adk_weather_tool_1", "real_langsmith_adk_weather_tool_2")
}

// adk's two requests (google-adk under langsmith's tracer), as the
// cassette recorded them.
const (
	r19AdkSystem     = "Use get_weather tool. Only New York is supported.\n\nYou are an agent. Your internal name is \"weather_agent\".\n\n The description about you is \"Provides weather info.\""
	r19AdkSig        = "Ct0BAQw51sfguKjosxghj1C+0T9M5ylgzu8ew2iO79B3R731+G7G8L3zgvbjLDwH/iStxm9yRrqHmscPeiKvQkG7i35fFSjS4RAVDcDNACFdtREOvx8j9e6op/4eExLI2X9SiOcj6eGRRLgQuf5q5ZSCfTAyQ3IDcVBedXchCIQgoMAq39LVYdU6xsVwr4HpBpsuChbXAtaq0xcyC+YGFtuazBf5iEc4tX4mC5I/S1WqVRTRwlJXqio73VYx9ynoU3cM3rnGuGQRrUoIO350FYLJEXxk+TIgPh2nk99iGwY="
	r19AdkRequest1   = `{"contents": [{"parts": [{"text": "What is the weather in New York?"}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Use get_weather tool. Only New York is supported.\n\nYou are an agent. Your internal name is \"weather_agent\".\n\n The description about you is \"Provides weather info.\""}], "role": "user"}, "tools": [{"functionDeclarations": [{"description": "Get weather for a city. Only supports New York.", "name": "get_weather", "parameters": {"properties": {"city": {"type": "STRING"}}, "required": ["city"], "type": "OBJECT"}}]}], "generationConfig": {}}`
	r19AdkRequest2   = `{"contents": [{"parts": [{"text": "What is the weather in New York?"}], "role": "user"}, {"parts": [{"functionCall": {"args": {"city": "New York"}, "name": "get_weather"}, "thoughtSignature": "Ct0BAQw51sfguKjosxghj1C-0T9M5ylgzu8ew2iO79B3R731-G7G8L3zgvbjLDwH_iStxm9yRrqHmscPeiKvQkG7i35fFSjS4RAVDcDNACFdtREOvx8j9e6op_4eExLI2X9SiOcj6eGRRLgQuf5q5ZSCfTAyQ3IDcVBedXchCIQgoMAq39LVYdU6xsVwr4HpBpsuChbXAtaq0xcyC-YGFtuazBf5iEc4tX4mC5I_S1WqVRTRwlJXqio73VYx9ynoU3cM3rnGuGQRrUoIO350FYLJEXxk-TIgPh2nk99iGwY="}], "role": "model"}, {"parts": [{"functionResponse": {"name": "get_weather", "response": {"status": "success", "report": "Sunny, 25C in New York."}}}], "role": "user"}], "systemInstruction": {"parts": [{"text": "Use get_weather tool. Only New York is supported.\n\nYou are an agent. Your internal name is \"weather_agent\".\n\n The description about you is \"Provides weather info.\""}], "role": "user"}, "tools": [{"functionDeclarations": [{"description": "Get weather for a city. Only supports New York.", "name": "get_weather", "parameters": {"properties": {"city": {"type": "STRING"}}, "required": ["city"], "type": "OBJECT"}}]}], "generationConfig": {}}`
	r19AdkToolParams = `{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`
	r19AdkToolResult = `{"status": "success", "report": "Sunny, 25C in New York."}`
)

// TestRound19LangsmithAdkWeatherTool: gemini-2.5-flash (unary, under
// google-adk) calls get_weather with {"city": "New York"}: one call
// without id, its thoughtSignature beside it, STOP with finishMessage: a
// tool-call finish, the call's id derived from the responseId, the
// signature on the call; 91 in, 16 + 48 thought tokens out, 155 total;
// X-Gemini-Service-Tier standard (the body names none).
//
// adk sent the call back (the signature re-encoded as URL-safe base64, the
// bytes the API gave) with the tool's object result, and the API answered
// (_2): "The weather in New York is Sunny, 25C." in 13 tokens after 136, no
// thought count. Ours sends the same contents: the signature's bytes in
// standard base64, as received, and the object result as the
// functionResponse's response itself (JSON text content is passed as the
// object, not wrapped in {"result": …}).
func TestRound19LangsmithAdkWeatherTool(t *testing.T) {
	t.Parallel()
	const first, second = "real_langsmith_adk_weather_tool_1", "real_langsmith_adk_weather_tool_2"
	const respID = "_gzpaYO7HOGR_uMPrpiCsAs"
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text(r19AdkSystem)),
			msg(llmrelayv1.Role_ROLE_USER, text("What is the weather in New York?")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get weather for a city. Only supports New York.", Parameters: r19AdkToolParams}},
	}
	p, srv := replay(t, first)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderResult(t, res))
	c := srv.Last(t)
	if c.Path != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Errorf("request to %s", c.Path)
	}
	r17CompareRequest(t, c.Body, r19AdkRequest1)
	// adk wrote the schema in the API's OpenAPI subset (upper-case types);
	// ours is the caller's JSON Schema: the same declaration otherwise.
	decl := r17JSON(t, c.Body)["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
	if decl["name"] != "get_weather" || decl["description"] != "Get weather for a city. Only supports New York." {
		t.Errorf("declaration %v", decl)
	}
	call := toolCallPart(generatedID(respID, 0, "", ""), "get_weather", `{"city":"New York"}`)
	call.GetToolCall().Signature = r19AdkSig
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, call); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != respID || m.GetResolvedModel() != "gemini-2.5-flash" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got, _ := r17Ext(m)[extFinishMessage].(string); got != "Model generated function call(s)." {
		t.Errorf("finish message %q", got)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 91, OutputTokens: 16 + 48, TotalTokens: 155, ReasoningTokens: 48}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}

	// The follow-up.
	req.Messages = append(req.Messages, res.Message,
		msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call.GetToolCall().GetCallId(), r19AdkToolResult)))
	next, srv2 := replay(t, second)
	res2, err := next.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderResult(t, res2))
	got := r17JSON(t, srv2.Last(t).Body)
	want := r17JSON(t, []byte(r19AdkRequest2))
	gc, wc := got["contents"].([]any), want["contents"].([]any)
	if len(gc) != 3 || !jsonEqual(gc[0], wc[0]) || !jsonEqual(gc[2], wc[2]) {
		t.Fatalf("contents\n got %v\nwant %v", gc, wc)
	}
	gp := gc[1].(map[string]any)["parts"].([]any)
	wp := wc[1].(map[string]any)["parts"].([]any)
	if len(gp) != 1 {
		t.Fatalf("model turn %v, want one part", gc[1])
	}
	gs, _ := gp[0].(map[string]any)["thoughtSignature"].(string)
	ws, _ := wp[0].(map[string]any)["thoughtSignature"].(string)
	gb, err1 := base64.StdEncoding.DecodeString(gs)
	wb, err2 := base64.URLEncoding.DecodeString(ws)
	if err1 != nil || err2 != nil || !bytes.Equal(gb, wb) || gs != r19AdkSig {
		t.Errorf("signature %q (%v), want the bytes of %q (%v)", gs, err1, ws, err2)
	}
	delete(gp[0].(map[string]any), "thoughtSignature")
	delete(wp[0].(map[string]any), "thoughtSignature")
	if !jsonEqual(gc[1], wc[1]) {
		t.Errorf("model turn\n got %v\nwant %v", gc[1], wc[1])
	}
	if si, _ := got["systemInstruction"].(map[string]any); !jsonEqual(si["parts"], want["systemInstruction"].(map[string]any)["parts"]) {
		t.Errorf("systemInstruction %v", si)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("The weather in New York is Sunny, 25C.")); !proto.Equal(res2.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res2.Message, want)
	}
	m2 := res2.Meta
	if m2.GetResponseId() != "_wzpafnXINvh_uMPlPL-4Ao" || m2.GetServiceTier() != "standard" ||
		m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m2.GetProviderFinishReason() != "STOP" ||
		m2.GetToolCallCount() != 0 || len(m2.GetWarnings()) != 0 || strings.Contains(m2.GetExtended().String(), "finish_message") {
		t.Errorf("meta %v", m2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 136, OutputTokens: 13, TotalTokens: 149}); !proto.Equal(m2.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m2.GetUsage(), want)
	}
}
