package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func text(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }

// textIn is a text part of the output message item id.
func textIn(s, id string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}, ItemId: id}
}

func msgOf(role llmrelayv1.Role, parts ...*llmrelayv1.Part) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: role, Parts: parts}
}

// jsonText is m as JSON text (keys sorted), the form schemas and
// extra_body take in the contract.
func jsonText(t testing.TB, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func weatherTool(t testing.TB) *llmrelayv1.Tool {
	return &llmrelayv1.Tool{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters: jsonText(t, map[string]any{
			"type": "object",
			"properties": map[string]any{
				"city": map[string]any{"type": "string"},
				"unit": map[string]any{"type": "string", "enum": []any{"celsius", "fahrenheit"}},
			},
			"required":             []any{"city", "unit"},
			"additionalProperties": false,
		}),
		Strict: proto.Bool(true),
	}
}

// tinyPNG is the start of a PNG file (enough for content sniffing).
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")

// chatRequests are the normalized requests of the recorded scenarios.
func chatRequests(t testing.TB) map[string]*provider.Request {
	return map[string]*provider.Request{
		"chat_plain": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-mini", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Answer in one sentence.")),
				{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("What is the capital of France?")}, Name: "alice"},
			},
			Options: &llmrelayv1.GenerationOptions{
				Temperature: proto.Float64(0), TopP: proto.Float64(0.9), MaxTokens: proto.Int32(64),
				Stop: []string{"\n\n"}, Seed: proto.Int64(42), PresencePenalty: proto.Float64(0.1), FrequencyPenalty: proto.Float64(0.3),
			},
			ProviderOptions: &llmrelayv1.ProviderOptions{
				Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{
					User: "user-1234", Store: proto.Bool(false), Metadata: map[string]string{"team": "search", "env": "test"},
					ServiceTier: "default",
				}},
				ExtraBody: jsonText(t, map[string]any{"temperature": 0.0, "prediction": map[string]any{"type": "content", "content": "Paris"}}),
			},
		},
		"tools_parallel": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and Tokyo, in celsius?"))},
			Tools:    []*llmrelayv1.Tool{weatherTool(t)},
			Options: &llmrelayv1.GenerationOptions{
				ToolChoice:        &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}},
				ParallelToolCalls: proto.Bool(true),
				TopK:              proto.Int32(40),
			},
		},
		"tools_malformed": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Find a flight from Paris to Tokyo in November."))},
			Tools: []*llmrelayv1.Tool{{Name: "search_flights", Description: "Search flights.", Parameters: jsonText(t, map[string]any{
				"type": "object", "properties": map[string]any{"from": map[string]any{"type": "string"}, "to": map[string]any{"type": "string"}, "date": map[string]any{"type": "string"}},
			})}},
			Options: &llmrelayv1.GenerationOptions{
				MaxTokens:  proto.Int32(16),
				ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "search_flights"}},
			},
		},
		"vision": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_VISION, Model: "gpt-4o", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
				text("Describe both images."),
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Url{Url: "https://upload.wikimedia.org/wikipedia/commons/4/41/Left_side_of_Flying_Pigeon.jpg"},
					Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Data{Data: tinyPNG}, MimeType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Data{Data: tinyPNG}}}}, // mime type sniffed
			)},
			Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(300)},
		},
		"multiturn_tools": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a weather assistant.")),
				msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and Tokyo?")),
				msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
					text("Let me check both cities."),
					&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_Vt6pRk2NsWq9LbX4cHm7ZyJd", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`, ArgumentsValid: true}}},
					&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_Jq3mZt8Xw2VbN6pL0sRdYh4K", Name: "get_weather", Arguments: `{"city":"Tokyo","unit":"celsius"}`, ArgumentsValid: true}}},
				),
				msgOf(llmrelayv1.Role_ROLE_TOOL,
					&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_Vt6pRk2NsWq9LbX4cHm7ZyJd", Name: "get_weather", Content: `{"temp_c":18,"sky":"cloudy"}`}}},
					&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_Jq3mZt8Xw2VbN6pL0sRdYh4K", Content: `{"temp_c":22,"sky":"sunny"}`}}},
				),
			},
			Tools:   []*llmrelayv1.Tool{weatherTool(t)},
			Options: &llmrelayv1.GenerationOptions{},
		},
		"chat_reasoning": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "o4-mini", Format: "openai-reasoning", Reasoning: true,
			Messages: []*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be terse.")),
				msgOf(llmrelayv1.Role_ROLE_USER, text("What is 17 × 23?")),
			},
			Options: &llmrelayv1.GenerationOptions{
				Temperature: proto.Float64(0.7), TopP: proto.Float64(1), MaxTokens: proto.Int32(2048),
				ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH,
			},
		},
		"refusal": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Give me step-by-step instructions to pick a lock."))},
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
				Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, SchemaName: "instructions", Strict: proto.Bool(true),
				Schema: jsonText(t, map[string]any{"type": "object", "properties": map[string]any{"steps": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
					"required": []any{"steps"}, "additionalProperties": false}),
			}},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(false)}}},
		},
		"azure_chat": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-prod", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Dis bonjour."))},
			Options:  &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_TEXT}},
		},
		"azure_content_filter_finish": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-prod", Format: "openai-chat",
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Write a gritty duel scene."))},
			Options:  &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}},
		},
	}
}

func TestBuildChatRequestErrors(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	img := func(im *llmrelayv1.Image) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: im}}
	}
	cases := []struct {
		name string
		msgs []*llmrelayv1.Message
		want string
	}{
		{"unspecified role", []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_UNSPECIFIED, text("x"))}, "unsupported role"},
		{"tool without results", []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_TOOL)}, "without tool_result"},
		{"tool with text", []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_TOOL, text("x"))}, "tool_result parts only"},
		{"image in system", []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("a"), img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://x/y.png"}}))}, "user messages only"},
		{"image without source", []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("a"), img(&llmrelayv1.Image{}))}, "without url or data"},
		{"unsniffable bytes", []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("a"), img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("hello")}}))}, "not a recognizable image"},
		{"image in assistant", []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_ASSISTANT, img(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://x/y.png"}}))}, "assistant messages carry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := p.buildChatRequest(&provider.Request{Model: "m", Messages: tc.msgs, Options: &llmrelayv1.GenerationOptions{}}, false)
			pe := providerError(t, err)
			if pe.Kind != provider.KindInvalidRequest || !strings.Contains(pe.Message, tc.want) {
				t.Errorf("got %v, want invalid request containing %q", err, tc.want)
			}
		})
	}
	// An invalid request never reaches the network.
	srvHit := false
	hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { srvHit = true; return nil, context.Canceled })}
	p2, err := New(testKey, WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Generate(context.Background(), &provider.Request{Model: "m", Messages: cases[0].msgs}); err == nil || srvHit {
		t.Errorf("Generate with an invalid message: err=%v, network hit=%v", err, srvHit)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestEmbedRequestDefaults(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := p.buildEmbedRequest(&provider.EmbedRequest{Model: "text-embedding-3-small"})
	if err != nil {
		t.Fatal(err)
	}
	// OpenAI's own API is asked for base64, as its SDKs ask (exact
	// float32, a quarter of the bytes); a compatible server is not asked
	// anything (float is every server's default; not all speak base64).
	if want := `{"model":"text-embedding-3-small","input":[],"encoding_format":"base64"}`; string(body) != want {
		t.Errorf("api.openai.com: got %s, want %s", body, want)
	}
	compat, err := New(testKey, WithBaseURL("http://localhost:8000/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body, _, err = compat.buildEmbedRequest(&provider.EmbedRequest{Model: "BAAI/bge-m3"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"BAAI/bge-m3","input":[]}`; string(body) != want {
		t.Errorf("compatible server: got %s, want %s", body, want)
	}
}

// TestChatDropsHistoryReasoning: an assistant turn that carries reasoning
// (from another provider, or from the Responses API) is sent without it,
// with a warning, instead of failing the call.
func TestChatDropsHistoryReasoning(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "2+2?"}}}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
			{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: "add them", Signature: "sig", Provider: "anthropic"}}},
			{Kind: &llmrelayv1.Part_Text{Text: "4"}},
		}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "and 3+3?"}}}},
	}
	body, warnings, err := p.buildChatRequest(&provider.Request{Model: "m", Messages: msgs, Options: &llmrelayv1.GenerationOptions{}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `{"role":"assistant","content":"4"}`) || strings.Contains(string(body), "add them") {
		t.Errorf("body %s", body)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "1 reasoning part") {
		t.Errorf("warnings %q", warnings)
	}
}

// TestReasoningReplay: DeepSeek's thinking mode and Moonshot's thinking
// models answer 400 when an assistant turn with tool calls comes back
// without its reasoning_content. For those hosts (reasoning_replay auto)
// or when configured, a tool-call turn carries its reasoning text (empty
// when it has none); a turn without tool calls does not (DeepSeek ignores
// it there, its older deepseek-reasoner rejected it), and other servers
// never get the field (OpenAI rejects fields it does not know).
func TestReasoningReplay(t *testing.T) {
	t.Parallel()
	reasoning := func(s string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: s, Provider: "openai"}}}
	}
	call := func(id string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: "get_weather", Arguments: `{"city":"Oslo"}`}}}
	}
	result := func(id string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: "3 °C"}}}
	}
	msgs := []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("2+2?")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning("Simple sum."), text("4")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Oslo?")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning("Need the tool."), call("call_00_kX2bJ7")),
		msgOf(llmrelayv1.Role_ROLE_TOOL, result("call_00_kX2bJ7")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, call("call_01_Qm4vR9")), // from a turn without reasoning
		msgOf(llmrelayv1.Role_ROLE_TOOL, result("call_01_Qm4vR9")),
	}
	for _, tc := range []struct {
		name, baseURL string
		opts          []Option
		replay        bool
	}{
		{"deepseek auto", "https://api.deepseek.com", nil, true},
		{"moonshot auto", "https://api.moonshot.ai/v1", nil, true},
		{"openai auto", "https://api.openai.com/v1", nil, false},
		{"deepseek none", "https://api.deepseek.com", []Option{WithReasoningReplay("none")}, false},
		{"vllm configured", "http://vllm.internal:8000/v1", []Option{WithReasoningReplay("reasoning_content")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := New(testKey, append([]Option{WithBaseURL(tc.baseURL)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			body, warnings, err := p.buildChatRequest(&provider.Request{Model: "m", Messages: msgs, Options: &llmrelayv1.GenerationOptions{}}, false)
			if err != nil {
				t.Fatal(err)
			}
			var req struct {
				Messages []map[string]any `json:"messages"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			got := map[int]any{}
			for i, m := range req.Messages {
				if v, ok := m["reasoning_content"]; ok {
					got[i] = v
				}
			}
			want := map[int]any{}
			dropped := "2 reasoning part"
			if tc.replay {
				want = map[int]any{3: "Need the tool.", 5: ""}
				dropped = "1 reasoning part"
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("reasoning_content by message: %v, want %v", got, want)
			}
			if tc.replay && len(got) != 2 {
				t.Errorf("reasoning_content on %d messages, want 2", len(got))
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], dropped) {
				t.Errorf("warnings %q, want one saying %q", warnings, dropped)
			}
		})
	}
	if _, err := New(testKey, WithReasoningReplay("always")); err == nil {
		t.Error("an unknown reasoning_replay was accepted")
	}
}
