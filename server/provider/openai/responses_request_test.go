package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func toolCallPart(id, name, args string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: name, Arguments: args, ArgumentsValid: fold.ValidArguments(args)}}}
}

func toolResultPart(id, content string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Name: "get_weather", Content: content}}}
}

// Call ids of the multi-turn scenario.
const (
	mtCallParis = "call_Vt6pRk2NsWq9LbX4cHm7ZyJd"
	mtCallTokyo = "call_Jq3mZt8Xw2VbN6pL0sRdYh4K"
)

// responsesRequests are the normalized requests of the recorded Responses
// API scenarios (keyed by recording name; stream recordings share the
// request of their unary twin).
func responsesRequests(t testing.TB) map[string]*provider.Request {
	plain := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-mini", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Answer in one sentence.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")),
		},
		Options: &llmrelayv1.GenerationOptions{
			Temperature: proto.Float64(0.2), TopP: proto.Float64(0.9), MaxTokens: proto.Int32(64),
			Stop: []string{"\n\n"}, Seed: proto.Int64(42),
		},
		ProviderOptions: &llmrelayv1.ProviderOptions{
			Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{
				User: "user-1234", Metadata: map[string]string{"team": "search", "env": "test"}, ServiceTier: "default",
			}},
		},
	}
	tools := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and Tokyo, in celsius?"))},
		Tools:    []*llmrelayv1.Tool{weatherTool(t)},
		Options: &llmrelayv1.GenerationOptions{
			ToolChoice:        &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}},
			ParallelToolCalls: proto.Bool(true),
		},
	}
	reasoningTools := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "o4-mini", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris, in celsius?"))},
		Tools:    []*llmrelayv1.Tool{weatherTool(t)},
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{
			Openai: &llmrelayv1.OpenAIOptions{ReasoningSummary: "auto"}}},
	}
	// The second turn sends back the assistant message Generate returned
	// for the first (reasoning with its encrypted content, then the call).
	firstTurn := reasoningFirstTurn(t)
	reasoningMultiturn := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "o4-mini", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris, in celsius?")),
			firstTurn,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(rtCallParis, `{"temp_c":18,"sky":"cloudy"}`)),
		},
		Tools:           reasoningTools.Tools,
		Options:         reasoningTools.Options,
		ProviderOptions: reasoningTools.ProviderOptions,
	}
	return map[string]*provider.Request{
		"responses_reasoning_tools":                                           reasoningTools,
		"responses_reasoning_tools_stream":                                    reasoningTools,
		"responses_reasoning_multiturn":                                       reasoningMultiturn,
		"responses_plain":                                                     plain,
		"responses_plain_stream":                                              plain,
		"responses_stream_cut":                                                plain,
		"responses_stream_error_event":                                        plain,
		"responses_stream_failed":                                             plain,
		"real_responses_error_stream":                                         plain,
		"real_responses_tool_call_stream":                                     tools,
		"real_responses_web_search_stream":                                    plain,
		"real_responses_encrypted_reasoning_stream":                           reasoningTools,
		"real_pyd_openai_responses_raw_cot_stream_openrouter":                 plain,
		"real_pyd_gpt5_freeform_text_streaming_1":                             tools,
		"real_pyd_openai_responses_model_web_search_tool_with_invalid_region": plain,
		"real_pyd_openai_responses_non_reasoning_model_no_item_ids_1":         tools,
		"responses_tools_parallel":                                            tools,
		"responses_tools_parallel_stream":                                     tools,
		"responses_no_call_id":                                                tools,
		"responses_no_call_id_stream":                                         tools,
		"responses_multiturn": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: formatResponses,
			Messages: []*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a weather assistant.")),
				msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and Tokyo?")),
				msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
					text("Let me check both cities."),
					toolCallPart(mtCallParis, "get_weather", `{"city":"Paris","unit":"celsius"}`),
					toolCallPart(mtCallTokyo, "get_weather", `{"city":"Tokyo","unit":"celsius"}`),
				),
				// Results in the opposite order of the calls: each is keyed
				// by its call_id, not by position.
				msgOf(llmrelayv1.Role_ROLE_TOOL,
					toolResultPart(mtCallTokyo, `{"temp_c":22,"sky":"sunny"}`),
					toolResultPart(mtCallParis, `{"temp_c":18,"sky":"cloudy"}`),
				),
			},
			Tools: []*llmrelayv1.Tool{weatherTool(t)},
			Options: &llmrelayv1.GenerationOptions{
				ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}},
			},
		},
		"responses_vision": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_VISION, Model: "gpt-4o", Format: formatResponses,
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
				text("Describe both images."),
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Url{Url: "https://upload.wikimedia.org/wikipedia/commons/4/41/Left_side_of_Flying_Pigeon.jpg"},
					Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Data{Data: tinyPNG}, MimeType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Data{Data: tinyPNG}}}}, // mime type sniffed, detail defaults to auto
			)},
			Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(300)},
		},
		"responses_reasoning": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "o4-mini", Format: formatResponses, Reasoning: true,
			Messages: []*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be terse.")),
				msgOf(llmrelayv1.Role_ROLE_USER, text("What is 17 × 23?")),
			},
			Options: &llmrelayv1.GenerationOptions{
				Temperature: proto.Float64(0.7), MaxTokens: proto.Int32(2048),
				ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH,
				ResponseFormat: &llmrelayv1.ResponseFormat{
					Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_TEXT,
				},
			},
		},
		"responses_incomplete": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-mini", Format: formatResponses,
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Tell me about Paris."))},
			Options:  &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(16)},
		},
		"responses_azure_v1": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4.1-mini-prod", Format: formatResponses,
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Dis bonjour."))},
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
				Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, SchemaName: "greeting", Strict: proto.Bool(true),
				Schema: jsonText(t, map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}},
					"required": []any{"text"}, "additionalProperties": false}),
			}},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{
				Store: proto.Bool(true)}}},
		},
	}
}

// Ids of the first turn of the reasoning scenario
// (responses_reasoning_tools.http).
const (
	rtReasoningID = "rs_34a7fd1615a5cbfe55c7f40d7091420809114cf682109277"
	rtCallParis   = "call_ch41rwnSSvxwSsXIkK36cbJG"
)

// reasoningFirstTurn is the assistant message of
// responses_reasoning_tools.http, as the adapter parses it.
func reasoningFirstTurn(t testing.TB) *llmrelayv1.Message {
	t.Helper()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseResponsesResponse(providertest.Load(t, td("responses_reasoning_tools.http")).Body, "o4-mini")
	if err != nil {
		t.Fatal(err)
	}
	return res.Message
}

// decodeBody unmarshals a request body into a generic map.
func decodeBody(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	return m
}

func TestBuildResponsesRequest(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	reqs := responsesRequests(t)

	t.Run("plain: options, warnings, store false by default", func(t *testing.T) {
		body, warnings, err := p.buildResponsesRequest(reqs["responses_plain"], false)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeBody(t, body)
		if m["store"] != false || m["stream"] != nil || m["max_output_tokens"] != 64.0 || m["safety_identifier"] != "user-1234" {
			t.Errorf("body %s", body)
		}
		for _, absent := range []string{"stop", "seed", "instructions", "previous_response_id", "include", "user", "messages"} {
			if _, ok := m[absent]; ok {
				t.Errorf("%s must not be sent: %s", absent, body)
			}
		}
		if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "stop ") || !strings.HasPrefix(warnings[1], "seed ") {
			t.Errorf("warnings %q", warnings)
		}
		input := m["input"].([]any)
		if first := input[0].(map[string]any); first["role"] != "system" || first["type"] != "message" {
			t.Errorf("system message item %v", first)
		}
	})

	t.Run("reasoning: developer role, no sampling, encrypted reasoning included", func(t *testing.T) {
		body, warnings, err := p.buildResponsesRequest(reqs["responses_reasoning"], true)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeBody(t, body)
		if _, ok := m["temperature"]; ok {
			t.Errorf("temperature sent to a reasoning model: %s", body)
		}
		if inc, _ := m["include"].([]any); len(inc) != 1 || inc[0] != includeEncryptedReasoning {
			t.Errorf("include %v", m["include"])
		}
		if r, _ := m["reasoning"].(map[string]any); r["effort"] != "high" {
			t.Errorf("reasoning %v", m["reasoning"])
		}
		if m["stream"] != true {
			t.Errorf("stream not set: %s", body)
		}
		if input := m["input"].([]any); input[0].(map[string]any)["role"] != "developer" {
			t.Errorf("system message of a reasoning model must be a developer item: %v", input[0])
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "temperature") {
			t.Errorf("warnings %q", warnings)
		}
	})

	t.Run("store true: no encrypted reasoning, logprobs", func(t *testing.T) {
		r := *reqs["responses_reasoning"]
		r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{
			Store: proto.Bool(true), Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(3)}}}
		body, _, err := p.buildResponsesRequest(&r, false)
		if err != nil {
			t.Fatal(err)
		}
		m := decodeBody(t, body)
		if m["store"] != true || m["top_logprobs"] != 3.0 {
			t.Errorf("body %s", body)
		}
		if inc, _ := m["include"].([]any); len(inc) != 1 || inc[0] != includeLogprobs {
			t.Errorf("include %v", m["include"])
		}
	})

	t.Run("assistant parts keep their order; empty assistant turn", func(t *testing.T) {
		r := &provider.Request{Model: "m", Format: formatResponses, Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("call_a", "f", ""), text("done"),
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: "no"}}),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT),
		}}
		body, _, err := p.buildResponsesRequest(r, false)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"model":"m","input":[` +
			`{"type":"message","role":"user","content":[{"type":"input_text","text":""}]},` +
			`{"type":"function_call","call_id":"call_a","name":"f","arguments":"{}"},` +
			`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"},{"type":"refusal","refusal":"no"}]},` +
			`{"type":"message","role":"assistant","content":[{"type":"output_text","text":""}]}],"store":false}`
		if string(body) != want {
			t.Errorf("body\n%s\nwant\n%s", body, want)
		}
	})

	t.Run("named tool choice, json_object, extra_body", func(t *testing.T) {
		r := &provider.Request{Model: "m", Format: formatResponses,
			Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("x")}, Name: "bob"}},
			Options: &llmrelayv1.GenerationOptions{
				ToolChoice:     &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "f"}},
				ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT},
				TopK:           proto.Int32(3), PresencePenalty: proto.Float64(1), FrequencyPenalty: proto.Float64(1),
			},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: jsonText(t, map[string]any{"truncation": "auto", "store": true})},
		}
		body, warnings, err := p.buildResponsesRequest(r, false)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}],` +
			`"tool_choice":{"type":"function","name":"f"},"text":{"format":{"type":"json_object"}},"store":false,"truncation":"auto"}`
		if string(body) != want {
			t.Errorf("body\n%s\nwant\n%s", body, want)
		}
		// store is the adapter's (provider_options.openai.store decides
		// it, and with it how reasoning items are sent back).
		if len(warnings) != 5 || !strings.Contains(warnings[0], "names") || warnings[4] != "extra_body.store ignored: the gateway sets it" {
			t.Errorf("warnings %q", warnings)
		}
	})
}

func TestBuildResponsesRequestErrors(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	img := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://x/y.png"}}}}
	cases := []struct {
		name string
		req  *provider.Request
		want string
	}{
		{"nil request", nil, "nil request"},
		{"image in a system message", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, img)}}, "user messages only"},
		{"tool message with text", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_TOOL, text("x"))}}, "tool_result parts only"},
		{"empty tool message", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_TOOL)}}, "without tool_result"},
		{"tool result without call id", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("", "x"))}}, "without call_id"},
		{"tool call without call id", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("", "f", "{}"))}}, "without call_id"},
		{"image in an assistant message", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_ASSISTANT, img)}}, "assistant messages carry"},
		{"unknown role", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_UNSPECIFIED, text("x"))}}, "unsupported role"},
		{"image without source", &provider.Request{Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{}}})}}, "without url or data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := p.buildResponsesRequest(tc.req, false)
			pe := providerError(t, err)
			if pe.Kind != provider.KindInvalidRequest || !strings.Contains(pe.Message, tc.want) {
				t.Errorf("got %s, want invalid_request containing %q", renderErr(err), tc.want)
			}
		})
	}
}

// TestResponsesReasoningInput: assistant Reasoning parts become reasoning
// input items in their position; parts the API cannot resolve, and
// tool-call signatures, are left out with a warning.
func TestResponsesReasoningInput(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	reasoning := func(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
	}
	call := toolCallPart("call_a", "f", `{}`)
	call.GetToolCall().Signature = "gemini-thought-signature"
	turn := msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
		reasoning(&llmrelayv1.Reasoning{Id: "rs_1", Text: "**Plan**\n\nThink.", Signature: "gAAAA1"}),
		text("Let me look."),
		reasoning(&llmrelayv1.Reasoning{Signature: "gAAAA2"}),                                 // no id, no text
		reasoning(&llmrelayv1.Reasoning{Id: "rs_3", Text: "summary only"}),                    // no encrypted content
		reasoning(&llmrelayv1.Reasoning{Text: "", Signature: "EuYBCkQYAiJA", Redacted: true}), // Anthropic redacted_thinking
		call,
	)
	cases := []struct {
		name     string
		store    bool
		want     string
		warnings []string
	}{
		// rs_1 goes without its id: the message after it has no item id
		// (TestResponsesReasoningPairing).
		{"unstored", false,
			`[{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**\n\nThink."}],"encrypted_content":"gAAAA1"},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me look."}]},` +
				`{"type":"reasoning","summary":[],"encrypted_content":"gAAAA2"},` +
				`{"type":"function_call","call_id":"call_a","name":"f","arguments":"{}"}]`,
			[]string{"messages[0].parts[3]: reasoning without encrypted content", "messages[0].parts[4]: redacted reasoning", "messages[0]: tool call signatures"}},
		{"stored: an id alone resolves", true,
			`[{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**\n\nThink."}],"encrypted_content":"gAAAA1"},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me look."}]},` +
				`{"type":"reasoning","id":"rs_3","summary":[{"type":"summary_text","text":"summary only"}]},` +
				`{"type":"function_call","call_id":"call_a","name":"f","arguments":"{}"}]`,
			// The id-less reasoning item is followed by another one, not by
			// the call: left out (pairReasoning).
			[]string{"messages[0].parts[4]: redacted reasoning", "messages[0]: tool call signatures",
				"reasoning item (without id) was not sent: another reasoning item follows it"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &provider.Request{Model: "o4-mini", Format: formatResponses, Reasoning: true, Messages: []*llmrelayv1.Message{turn},
				ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(tc.store)}}}}
			body, warnings, err := p.buildResponsesRequest(r, false)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			if string(m.Input) != tc.want {
				t.Errorf("input\n%s\nwant\n%s", m.Input, tc.want)
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %q", warnings, tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warning %d: %q, want prefix %q", i, warnings[i], w)
				}
			}
		})
	}
}

// TestHostedMCPTool: a hosted MCP server becomes an "mcp" tool: the bearer
// token in authorization, other headers passed on, no approvals.
func TestHostedMCPTool(t *testing.T) {
	p := &Provider{}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4.1", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Search the docs"))},
		HostedMCP: []provider.HostedMCP{{Label: "docs", URL: "https://mcp.example.test/mcp", AllowedTools: []string{"search"},
			Headers: map[string]string{"authorization": "Bearer tok-hosted-1", "X-Team": "t1"}}}}
	body, _, err := p.buildResponsesRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tools []map[string]any `json:"tools"`
		Store *bool            `json:"store"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := `[{"allowed_tools":["search"],"authorization":"tok-hosted-1","headers":{"X-Team":"t1"},"require_approval":"never","server_label":"docs","server_url":"https://mcp.example.test/mcp","type":"mcp"}]`
	if b, _ := json.Marshal(got.Tools); string(b) != want {
		t.Errorf("tools %s\nwant  %s", b, want)
	}
	if got.Store == nil || *got.Store || strings.Contains(string(body), "previous_response_id") {
		t.Errorf("not stateless: %s", body)
	}
}

// TestResponsesReasoningPairing: the Responses API refuses a reasoning item
// sent with its id unless the item that followed it in the answer comes
// right after it by its own id ("Item 'rs_…' of type 'reasoning' was
// provided without its required following item"). A message goes back with
// its item id (and the output message's status and annotations, as
// pydantic-ai's recorded second request sent it and the API accepted:
// TestRound9PhaseCommentary); a reasoning item keeps its id only before
// such a message, a function call or another reasoning item; otherwise it
// goes without it (its encrypted content carries it) or, with only an id,
// is left out with a warning.
func TestResponsesReasoningPairing(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	reasoning := func(id, enc string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Id: id, Signature: enc}}}
	}
	itemText := func(s, item, phase string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}, ItemId: item, Phase: phase}
	}
	refusal := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: "No."}, ItemId: "msg_p5"}
	cases := []struct {
		name    string
		store   bool
		parts   []*llmrelayv1.Part
		want    string
		warning string
	}{
		{"encrypted, then a message with its id", false,
			[]*llmrelayv1.Part{reasoning("rs_p1", "gAAAAp1"), itemText("Hi.", "msg_p1", "final_answer")},
			`[{"type":"reasoning","id":"rs_p1","summary":[],"encrypted_content":"gAAAAp1"},` +
				`{"type":"message","id":"msg_p1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi.","annotations":[]}],"phase":"final_answer"}]`, ""},
		{"stored by id, then a message with its id", true,
			[]*llmrelayv1.Part{reasoning("rs_p2", ""), itemText("Hi.", "msg_p2", "")},
			`[{"type":"reasoning","id":"rs_p2","summary":[]},` +
				`{"type":"message","id":"msg_p2","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi.","annotations":[]}]}]`, ""},
		{"stored by id, then a message without one", true,
			[]*llmrelayv1.Part{reasoning("rs_p3", ""), text("Hi.")},
			`[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi."}]}]`,
			"reasoning item rs_p3 was not sent: the Responses API refuses"},
		{"encrypted, last: nothing follows it (pairReasoning)", false,
			[]*llmrelayv1.Part{itemText("Hi.", "msg_p4", ""), reasoning("rs_p4", "gAAAAp4")},
			`[{"type":"message","id":"msg_p4","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi.","annotations":[]}]}]`,
			"reasoning item rs_p4 was not sent: nothing follows it"},
		{"stored by id, after a message with its id, before one without", true,
			[]*llmrelayv1.Part{itemText("A.", "msg_p7", ""), reasoning("rs_p6", ""), text("Hi.")},
			`[{"type":"message","id":"msg_p7","status":"completed","role":"assistant","content":[{"type":"output_text","text":"A.","annotations":[]}]},` +
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi."}]}]`,
			"reasoning item rs_p6 was not sent: the Responses API refuses"},
		{"two messages of one phase stay two items; a refusal joins its message", false,
			[]*llmrelayv1.Part{itemText("A.", "msg_p6", ""), itemText("B.", "msg_p5", ""), refusal},
			`[{"type":"message","id":"msg_p6","status":"completed","role":"assistant","content":[{"type":"output_text","text":"A.","annotations":[]}]},` +
				`{"type":"message","id":"msg_p5","status":"completed","role":"assistant","content":[{"type":"output_text","text":"B.","annotations":[]},{"type":"refusal","refusal":"No."}]}]`, ""},
		{"a function call pairs by call_id", true,
			[]*llmrelayv1.Part{reasoning("rs_p7", ""), toolCallPart("call_p7", "f", `{}`)},
			`[{"type":"reasoning","id":"rs_p7","summary":[]},{"type":"function_call","call_id":"call_p7","name":"f","arguments":"{}"}]`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &provider.Request{Model: "o4-mini", Format: formatResponses, Reasoning: true,
				Messages:        []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_ASSISTANT, tc.parts...)},
				ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(tc.store)}}}}
			body, warnings, err := p.buildResponsesRequest(r, false)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			if string(m.Input) != tc.want {
				t.Errorf("input\n%s\nwant\n%s", m.Input, tc.want)
			}
			switch {
			case tc.warning == "" && len(warnings) != 0:
				t.Errorf("warnings %q", warnings)
			case tc.warning != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], tc.warning)):
				t.Errorf("warnings %q, want one beginning %q", warnings, tc.warning)
			}
		})
	}
}
