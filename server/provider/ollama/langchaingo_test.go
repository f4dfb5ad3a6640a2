package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Real /api/chat traffic recorded by tmc/langchaingo's httprr traces
// (testdata/README.md, "Real recordings from tmc/langchaingo"). The
// expectations are read off the recordings by hand.

// lcgWeatherTool is the tool of langchaingo's TestCloudToolCall, as it sent it.
func lcgWeatherTool() *llmrelayv1.Tool {
	return &llmrelayv1.Tool{
		Name: "getWeather", Description: "Get the current weather for a location.",
		Parameters: `{"type":"object","required":["location"],"properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"}}}`,
	}
}

func lcgCloudToolRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-oss:120b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What's the weather like in San Francisco?"))},
		Tools:    []*llmrelayv1.Tool{lcgWeatherTool()},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr(int32(16384))},
	}
}

const lcgCloudThinking = "The user asks \"What's the weather like in San Francisco?\" We have a function getWeather that requires location string. We'll call it.\n\n"

// TestLangchaingoCloudToolCall: gpt-oss:120b on ollama.com answering with
// thinking and one call that carries Ollama's own id ("call_onade4wz") and
// function.index; the call id is the provider's, not a made one.
func TestLangchaingoCloudToolCall(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_cloud_tool_call_1"
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, srv).Generate(context.Background(), lcgCloudToolRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != lcgCloudThinking {
		t.Fatalf("parts %v, want the thinking then one call", parts)
	}
	call := parts[1].GetToolCall()
	if call.GetCallId() != "call_onade4wz" || call.GetName() != "getWeather" ||
		call.GetArguments() != `{"location":"San Francisco, CA"}` || !call.GetArgumentsValid() {
		t.Errorf("call %v", call)
	}
	m := res.Meta
	if m.GetResolvedModel() != "gpt-oss:120b" || m.GetProviderRequestId() != "22ddefb1-c42b-452b-ba8f-a39327685e2b" {
		t.Errorf("model %q, request id %q", m.GetResolvedModel(), m.GetProviderRequestId())
	}
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != 1 {
		t.Errorf("finish %v / %q, %d calls", m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 145 || u.GetOutputTokens() != 58 || u.GetTotalTokens() != 203 {
		t.Errorf("usage %v", u)
	}
	ext := m.GetExtended().AsMap()
	if ext[extTotalDuration] != float64(656172228) || ext[extPromptEvalCount] != float64(145) || ext[extEvalCount] != float64(58) {
		t.Errorf("extended %v", ext)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}

	// The follow-up: the answer above plus the tool's result. The recorded
	// second request (which ollama.com answered) sent the user message, the
	// assistant's call and the tool message; ours must carry the same
	// messages, with the call's id, and the thinking given back.
	follow := lcgCloudToolRequest()
	follow.Messages = append(follow.Messages, res.Message,
		msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: "call_onade4wz", Content: `{"temperature": 72, "condition": "sunny"}`,
		}}}))
	built, err := buildChatRequest(follow, false)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []map[string]any `json:"messages"`
		Tools    []any            `json:"tools"`
		Options  map[string]any   `json:"options"`
	}
	if err := json.Unmarshal(built.body, &got); err != nil {
		t.Fatal(err)
	}
	// The recorded request's messages, tools and options, and what we add.
	want := []map[string]any{
		{"role": "user", "content": "What's the weather like in San Francisco?"},
		{"role": "assistant", "content": "", "thinking": lcgCloudThinking, "tool_calls": []any{map[string]any{
			"id": "call_onade4wz", "function": map[string]any{"index": float64(0), "name": "getWeather", "arguments": map[string]any{"location": "San Francisco, CA"}}}}},
		{"role": "tool", "content": `{"temperature": 72, "condition": "sunny"}`, "tool_name": "getWeather", "tool_call_id": "call_onade4wz"},
	}
	if !reflect.DeepEqual(got.Messages, want) {
		b, _ := json.Marshal(got.Messages)
		t.Errorf("follow-up messages\n%s", b)
	}
	var recordedTools []any
	if err := json.Unmarshal([]byte(`[{"type":"function","function":{"name":"getWeather","description":"Get the current weather for a location.","parameters":{"type":"object","required":["location"],"properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"}}}}}]`), &recordedTools); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Tools, recordedTools) || got.Options["num_predict"] != float64(16384) {
		t.Errorf("tools %v, options %v", got.Tools, got.Options)
	}
}

// TestLangchaingoToolsUnsupported: a local Ollama refusing tools for
// gemma3:1b, 400 with the model's registry name in the message: an
// capability the deployment's model lacks (round 25: KindCapability, it was
// an invalid request), not retried, a reason to fall back to a model with
// tools.
func TestLangchaingoToolsUnsupported(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_lcg_tool_call_unsupported.http"))
	req := lcgCloudToolRequest()
	req.Model = "gemma3:1b"
	_, err := newTestProvider(t, srv).Generate(context.Background(), req)
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *provider.Error", err)
	}
	if pe.Kind != provider.KindCapability || pe.HTTPStatus != 400 || pe.Provider != "ollama" ||
		pe.Message != "registry.ollama.ai/library/gemma3:1b does not support tools" || pe.RetryAfter != 0 {
		t.Errorf("error kind %v status %d message %q retry %v", pe.Kind, pe.HTTPStatus, pe.Message, pe.RetryAfter)
	}
	if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("retryable %v, fallback-worthy %v", pipeline.Retryable(err), pipeline.FallbackWorthy(err))
	}
}

// TestLangchaingoCloudStructuredGLM: glm-5.2 on ollama.com with a JSON
// schema as format: the answer's JSON verbatim, the thinking apart.
func TestLangchaingoCloudStructuredGLM(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_cloud_structured_output_glm"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "glm-5.2",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Reply with ONLY a JSON object (no prose, no markdown) giving the capital of France."))},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr(int32(16384)), ResponseFormat: &llmrelayv1.ResponseFormat{
			Type:   llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"type":"object","properties":{"capital":{"type":"string"}},"required":["capital"]}`,
		}},
	}
	res, err := newTestProvider(t, srv).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[1].GetText() != `{"capital": "Paris"}` {
		t.Fatalf("parts %v, want the thinking then the JSON", parts)
	}
	th := parts[0].GetReasoning().GetText()
	if len(th) != 814 || th[:37] != "1.  **Analyze the Request:**\n    *   " || th[len(th)-24:] != " Capital of France? Yes." {
		t.Errorf("thinking %d bytes: %q", len(th), th)
	}
	m := res.Meta
	if m.GetResolvedModel() != "glm-5.2" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" {
		t.Errorf("model %q finish %v / %q", m.GetResolvedModel(), m.GetFinishReason(), m.GetProviderFinishReason())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 31 || u.GetOutputTokens() != 247 || u.GetTotalTokens() != 278 {
		t.Errorf("usage %v", u)
	}
	if m.GetProviderRequestId() != "64187c99-5a2e-4d55-86a5-8a148b71ed4c" || len(m.GetWarnings()) != 0 {
		t.Errorf("request id %q warnings %q", m.GetProviderRequestId(), m.GetWarnings())
	}
	var sent struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	if string(sent.Format) != `{"type":"object","properties":{"capital":{"type":"string"}},"required":["capital"]}` {
		t.Errorf("format sent %s", sent.Format)
	}
}

// TestLangchaingoContextLength: a local Ollama (January 2026) with num_ctx
// 128 and truncate false refusing a long prompt on /api/chat: 400, the body
// de-chunked, {"error":"the input length exceeds the context length"}; a
// context-length error, unary and streamed.
func TestLangchaingoContextLength(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_context_length_no_truncate"
	req := func() *provider.Request {
		return &provider.Request{
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemma3:1b",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("This is a test sentence to fill up the context window. What is 2+2?"))},
			Options:  &llmrelayv1.GenerationOptions{Temperature: ptr(0.0)},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{
				NumCtx: ptr(int32(128)),
			}}},
		}
	}
	check := func(what string, err error) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v, want *provider.Error", what, err)
		}
		if pe.Kind != provider.KindContextLength || pe.HTTPStatus != 400 || pe.Provider != "ollama" ||
			pe.Message != "the input length exceeds the context length" || pe.RetryAfter != 0 {
			t.Errorf("%s: kind %v status %d message %q retry %v", what, pe.Kind, pe.HTTPStatus, pe.Message, pe.RetryAfter)
		}
	}
	_, err := newTestProvider(t, providertest.ReplayFile(t, td(name+".http"))).Generate(context.Background(), req())
	check("Generate", err)
	st, err := newTestProvider(t, providertest.ReplayFile(t, td(name+".http"))).Stream(context.Background(), req())
	if err == nil {
		_, err = collect(st)
	}
	check("Stream", err)
}

// TestLangchaingoCloudStream: gpt-oss:120b streamed from ollama.com, which
// labels the NDJSON stream Content-Type application/json: 64 thinking
// lines, then the content, a line with empty content and done false, then
// the done line with only three of the counters.
func TestLangchaingoCloudStream(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_cloud_streaming"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-oss:120b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Count from 1 to 5"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr(int32(16384))},
	}
	st, err := newTestProvider(t, srv).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatalf("stream ended with %v", err)
	}
	providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, err))
	f := foldEvents(t, evs)
	parts := f.msg.GetParts()
	const thinking = `The user wants "Count from 1 to 5". Likely they just want counting: 1, 2, 3, 4, 5. Provide a simple enumerated list. ` +
		`Could give them like "1. 2. 3. 4. 5." Might be straightforward.`
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != thinking || parts[1].GetText() != "1  \n2  \n3  \n4  \n5" {
		t.Fatalf("parts %v, want the thinking then the count", parts)
	}
	m := f.meta
	if m.GetResolvedModel() != "gpt-oss:120b" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "stop" ||
		m.GetProviderRequestId() != "e39cb47e-18df-4f17-8d5b-8dd3b04cd2c2" {
		t.Errorf("model %q finish %v / %q request id %q", m.GetResolvedModel(), m.GetFinishReason(), m.GetProviderFinishReason(), m.GetProviderRequestId())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 74 || u.GetOutputTokens() != 83 || u.GetTotalTokens() != 157 {
		t.Errorf("usage %v", u)
	}
	ext := m.GetExtended().AsMap()
	if ext[extTotalDuration] != float64(822128072) || ext[extPromptEvalCount] != float64(74) || ext[extEvalCount] != float64(83) {
		t.Errorf("extended %v", ext)
	}
	if _, ok := ext[extLoadDuration]; ok {
		t.Errorf("extended has %s, which the answer does not", extLoadDuration)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}
