package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const testKey = "test-key"

// requestHeaders are the request headers shown in request goldens.
var requestHeaders = []string{"x-api-key", "anthropic-version", "anthropic-beta", "content-type", "accept"}

func newTestProvider(t *testing.T, baseURL string, opts ...Option) *Provider {
	t.Helper()
	p, err := New(testKey, append([]Option{WithBaseURL(baseURL)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func text(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }

func msgOf(role llmrelayv1.Role, parts ...*llmrelayv1.Part) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: role, Parts: parts}
}

func toolCallPart(id, name, args string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: name, Arguments: args, ArgumentsValid: fold.ValidArguments(args)}}}
}

func toolResultPart(id, content string, isErr bool) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: content, IsError: isErr}}}
}

func weatherTool(t *testing.T) *llmrelayv1.Tool {
	t.Helper()
	params, err := jsonString(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"city": map[string]any{"type": "string", "description": "City name"},
			"unit": map[string]any{"type": "string", "enum": []any{"celsius", "fahrenheit"}},
		},
		"required": []any{"city"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &llmrelayv1.Tool{Name: "get_weather", Description: "Current weather for a city", Parameters: params}
}

func ptr[T any](v T) *T { return &v }

const model = "claude-sonnet-4-5-20250929"

func plainRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    model,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You answer in one sentence.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")),
		},
		Options: &llmrelayv1.GenerationOptions{Temperature: ptr(0.2), MaxTokens: ptr[int32](256)},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			UserId: "user-7f3a", Betas: []string{"context-1m-2025-08-07"},
		}}},
	}
}

func toolsRequest(t *testing.T) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS,
		Model:    model,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Paris and in Tokyo?"))},
		Tools:    []*llmrelayv1.Tool{weatherTool(t)},
		Options: &llmrelayv1.GenerationOptions{
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}},
		},
	}
}

// onePixelPNG is a 1x1 white PNG.
var onePixelPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
	0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xff, 0xff, 0x3f,
	0x00, 0x05, 0xfe, 0x02, 0xfe, 0xa7, 0x35, 0x81, 0x84, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
	0x44, 0xae, 0x42, 0x60, 0x82,
}

func visionRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_VISION,
		Model:    model,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
			text("Describe these images."),
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
				Source: &llmrelayv1.Image_Url{Url: "https://upload.wikimedia.org/wikipedia/commons/4/41/Left_side_of_Flying_Pigeon.jpg"},
				Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH,
			}}},
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
				Source: &llmrelayv1.Image_Data{Data: onePixelPNG}, MimeType: "image/png",
			}}},
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
				Source: &llmrelayv1.Image_Url{Url: "data:image/gif;base64,R0lGODlhAQABAAAAACw="},
			}}},
		)},
		Options: &llmrelayv1.GenerationOptions{},
	}
}

// multiturnRequest is a conversation with tool calls and their results,
// split over two tool messages and followed by a user message (all three
// become one Anthropic user turn). The second call's stored arguments are
// malformed.
func multiturnRequest(t *testing.T) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS,
		Model:    model,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a weather assistant."), text("Be brief.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Paris and in Tokyo?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
				text("I'll check the weather in both cities."),
				toolCallPart("toolu_01Mt7QdzWv3KcR9pYh2LxNa6", "get_weather", `{"city": "Paris", "unit": "celsius"}`),
				toolCallPart("toolu_01Hq4ZsVb8nTe2GwJk6PcRy3", "get_weather", `{"city": "Tok`),
			),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Mt7QdzWv3KcR9pYh2LxNa6", `{"temp_c":18,"sky":"cloudy"}`, false)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Hq4ZsVb8nTe2GwJk6PcRy3", "invalid arguments; retried with city=Tokyo: 24°C, sunny", true)),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Summarize both.")),
		},
		Tools: []*llmrelayv1.Tool{weatherTool(t)},
		Options: &llmrelayv1.GenerationOptions{
			ParallelToolCalls: ptr(false), TopK: ptr[int32](40), Stop: []string{"\n\nObservation:"},
		},
	}
}

// Signatures of the thinking recordings (opaque to the adapter).
const (
	thinkingSig  = "EqMDCkYIBxgCKkAg5nKxYjSFSuavMhrIHLXoF63aI1KSwLhq0WjIC55Rp1zrskboLe1OIzg52YnPwEnI21tiea+TVFfaV5GKxV8oPnPASDkOOUtlioBGh8FcFFNNO1Il0XRT02nOIH5cx4/HI+aWlPmp19Z4XIXkQE4mYUpwy5y4kqNY1EtUpyuGzNZWCJz58X9eNWykRRmt/cfm+beZw7yBPV2EpqWN/YeMqXCSS8zn2TtRfpBRiBG2rT6yXYB"
	redactedData = "EmwKAhgBEgyrZd0vrYM4co5D8ZI22ADaptOa6J4PK+8c1fkdTODvm57HawfJ0Ac+SXIokKBjhirkHIYnyxf9TexBmRtbswH1rNdHAkyI+R/0egMU3ktz4nQvz2lbHxBke9HVzpcbqd8Pw1LxNTzIeogitEqrVIUfpi1PWbLAOWQHKb/PU7niCo5xudH6Gfvp79AXvYq2MqnPWsuQouc"
	followupSig  = "EuYBCkYIBxgCKkBWxhqYEX253+XBjfWY9QjZVNkWRKygk5WITx+KgEi4jgIA066NwbaOFz6RvNj+nq9JSqB0ca8CACWRDv7vrN750TwP2I4QI/QB7cjRKKio0pDgNuHzHKKeqJNB4gvNC1wBYS3mCNuODClwwAVgBGFOO1J9DbiYxnV"
	thinkingText = "The user wants the current weather in Paris. I have a get_weather tool that takes a city and an optional unit. Paris uses Celsius, so I'll ask for celsius."
)

func reasoningPart(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
}

// thinkingRequest asks a tool question with extended thinking on.
func thinkingRequest(t *testing.T) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS,
		Model:    model,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Paris?"))},
		Tools:    []*llmrelayv1.Tool{weatherTool(t)},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096)},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			ThinkingBudgetTokens: ptr[int32](2048),
		}}},
	}
}

// thinkingMultiturnRequest continues thinkingRequest's conversation after
// the tool ran: the assistant turn goes back with its thinking and
// redacted_thinking blocks (as Generate returned them). An earlier turn
// holds reasoning without a signature (as another provider gives it),
// which Anthropic cannot take back.
func thinkingMultiturnRequest(t *testing.T) *provider.Request {
	r := thinkingRequest(t)
	r.Messages = []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a weather assistant.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Hi!")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
			reasoningPart(&llmrelayv1.Reasoning{Text: "A greeting; no tool needed."}),
			text("Hello! How can I help?"),
		),
		msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Paris?")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
			reasoningPart(&llmrelayv1.Reasoning{Text: thinkingText, Signature: thinkingSig}),
			reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: redactedData}),
			text("I'll look up the current weather in Paris."),
			toolCallPart("toolu_01Rb5NvXe3LhWq8TzK2mYsD7", "get_weather", `{"city":"Paris","unit":"celsius"}`),
		),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Rb5NvXe3LhWq8TzK2mYsD7", `{"temp_c":18,"sky":"cloudy"}`, false)),
	}
	return r
}

func renderResult(t *testing.T, res *provider.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("message:\n")
	b.Write(providertest.ProtoJSON(t, res.Message))
	b.WriteString("meta:\n")
	b.Write(providertest.ProtoJSON(t, res.Meta))
	return b.Bytes()
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(t *testing.T) *provider.Request
	}{
		{"plain", func(*testing.T) *provider.Request { return plainRequest() }},
		{"tools", toolsRequest},
		{"vision", func(*testing.T) *provider.Request { return visionRequest() }},
		{"multiturn", multiturnRequest},
		{"stop_sequence", func(*testing.T) *provider.Request {
			r := plainRequest()
			r.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Count from 1 to 10."))}
			r.Options = &llmrelayv1.GenerationOptions{Stop: []string{"4"}, MaxTokens: ptr[int32](2048)}
			r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](1024)}}}
			return r
		}},
		{"refusal", func(*testing.T) *provider.Request {
			r := plainRequest()
			r.ProviderOptions = nil
			return r
		}},
		{"thinking", thinkingRequest},
		{"thinking_multiturn", thinkingMultiturnRequest},
		// Real recordings (see testdata/README.md).
		{"real_thinking_tool_noargs", thinkingRequest},
		{"real_refusal", func(*testing.T) *provider.Request { return plainRequest() }},
		// pydantic/pydantic-ai cassettes (see testdata/README.md).
		{"real_pyd_anthropic_cache_real_api_1", func(*testing.T) *provider.Request { return plainRequest() }},
		{"real_pyd_anthropic_tool_with_thinking_1", thinkingRequest},
		{"real_pyd_anthropic_compaction_round_trip", func(*testing.T) *provider.Request { return plainRequest() }},
		{"real_pyd_anthropic_extended_thinking_with_tool_use_2", thinkingRequest},
		{"real_pyd_anthropic_fable_5_1_drops_a_stale_thinking_block_streamed_1", thinkingRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			p := newTestProvider(t, srv.URL)
			res, err := p.Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

// TestGenerateSemantics checks the key normalization rules directly, so a
// wrong golden accepted with -update cannot hide them.
func TestGenerateSemantics(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, name string, req *provider.Request) (*provider.Result, providertest.Captured) {
		t.Helper()
		srv := providertest.ReplayFile(t, "testdata/"+name+".http")
		res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		return res, srv.Last(t)
	}
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		res, c := run(t, "plain", plainRequest())
		m := res.Meta
		if m.GetResponseId() != "msg_01EDBIJFDdZBIggtkwsAaTVN" || m.GetResolvedModel() != model || m.GetProviderRequestId() != "req_010WHun1dD4gR8eJ4Vk3jUhB" {
			t.Errorf("ids: %v / %v / %v", m.GetResponseId(), m.GetResolvedModel(), m.GetProviderRequestId())
		}
		want := &llmrelayv1.Usage{InputTokens: 21 + 1843, OutputTokens: 10, TotalTokens: 21 + 1843 + 10, CachedInputTokens: 1843}
		if !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage = %v, want %v", m.GetUsage(), want)
		}
		if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "end_turn" {
			t.Errorf("finish = %v %q", m.GetFinishReason(), m.GetProviderFinishReason())
		}
		rl := m.GetRateLimit()
		if rl.GetRequestsLimit() != 4000 || rl.GetRequestsRemaining() != 3999 || rl.GetTokensLimit() != 2400000 ||
			!rl.GetRequestsResetTime().AsTime().Equal(time.Date(2025, 10, 14, 9, 12, 30, 0, time.UTC)) {
			t.Errorf("rate limit = %v", rl)
		}
		if got := windowValue(m, "output_tokens", "limit"); got != "400000" {
			t.Errorf("output tokens window limit = %v", got)
		}
		if got := c.Header.Get("X-Api-Key"); got != testKey {
			t.Errorf("x-api-key = %q", got)
		}
		if got := c.Header.Get("Anthropic-Beta"); got != "context-1m-2025-08-07" {
			t.Errorf("anthropic-beta = %q", got)
		}
		var body map[string]any
		if err := json.Unmarshal(c.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body["system"] != "You answer in one sentence." || body["max_tokens"] != 256.0 {
			t.Errorf("system/max_tokens = %v / %v", body["system"], body["max_tokens"])
		}
	})
	t.Run("tools", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, "tools", toolsRequest(t))
		parts := res.Message.GetParts()
		if len(parts) != 3 || parts[0].GetText() == "" {
			t.Fatalf("parts = %v", parts)
		}
		for i, want := range []struct{ id, args string }{
			{"toolu_01O84t63zp16mb157096qu4", `{"city":"Paris","unit":"celsius"}`},
			{"toolu_01TOkTu6Up8cS8vUw3Ue3BtJ", `{"city":"Tokyo","unit":"celsius"}`},
		} {
			tc := parts[i+1].GetToolCall()
			if tc.GetCallId() != want.id || tc.GetArguments() != want.args || !tc.GetArgumentsValid() || tc.GetName() != "get_weather" {
				t.Errorf("tool call %d = %v", i, tc)
			}
		}
		if res.Meta.GetToolCallCount() != 2 || res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
			t.Errorf("meta = %v", res.Meta)
		}
	})
	t.Run("multiturn", func(t *testing.T) {
		t.Parallel()
		res, c := run(t, "multiturn", multiturnRequest(t))
		var body messagesRequest
		if err := json.Unmarshal(c.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Messages) != 3 {
			t.Fatalf("want user, assistant, user turns; got %d messages", len(body.Messages))
		}
		last := body.Messages[2]
		if last.Role != "user" || len(last.Content) != 3 {
			t.Fatalf("last turn = %+v", last)
		}
		if last.Content[0].ToolUseID != "toolu_01Mt7QdzWv3KcR9pYh2LxNa6" || last.Content[0].IsError ||
			last.Content[1].ToolUseID != "toolu_01Hq4ZsVb8nTe2GwJk6PcRy3" || !last.Content[1].IsError ||
			last.Content[2].Type != "text" {
			t.Errorf("tool results not keyed right: %+v", last.Content)
		}
		if got := string(body.Messages[1].Content[2].Input); got != "{}" {
			t.Errorf("malformed stored arguments sent as %s, want {}", got)
		}
		if body.ToolChoice == nil || body.ToolChoice.Type != "auto" || !body.ToolChoice.DisableParallelToolUse {
			t.Errorf("tool_choice = %+v", body.ToolChoice)
		}
		if len(res.Meta.GetWarnings()) != 1 || !strings.Contains(res.Meta.GetWarnings()[0], "toolu_01Hq4ZsVb8nTe2GwJk6PcRy3") {
			t.Errorf("warnings = %q", res.Meta.GetWarnings())
		}
		want := &llmrelayv1.Usage{InputTokens: 96 + 512 + 1024, OutputTokens: 26, TotalTokens: 96 + 512 + 1024 + 26, CachedInputTokens: 512, CacheCreationInputTokens: 1024}
		if !proto.Equal(res.Meta.GetUsage(), want) {
			t.Errorf("usage = %v, want %v", res.Meta.GetUsage(), want)
		}
	})
	t.Run("thinking", func(t *testing.T) {
		t.Parallel()
		res, c := run(t, "thinking", thinkingRequest(t))
		want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: thinkingText, Signature: thinkingSig}),
			reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: redactedData}),
			text("I'll look up the current weather in Paris."),
			toolCallPart("toolu_01Q8w0aG90tIqg8dPZwG9Pd5", "get_weather", `{"city":"Paris","unit":"celsius"}`),
		}}
		if !proto.Equal(res.Message, want) {
			t.Errorf("message:\n got %v\nwant %v", res.Message, want)
		}
		if _, ok := res.Meta.GetExtended().GetFields()["thinking_blocks"]; ok {
			t.Errorf("thinking still counted in extended: %v", res.Meta.GetExtended())
		}
		if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || res.Meta.GetToolCallCount() != 1 {
			t.Errorf("meta = %v", res.Meta)
		}
		if !bytes.Contains(c.Body, []byte(`"thinking":{"type":"enabled","budget_tokens":2048}`)) {
			t.Errorf("thinking not enabled: %s", c.Body)
		}
	})
	t.Run("thinking_multiturn", func(t *testing.T) {
		t.Parallel()
		res, c := run(t, "thinking_multiturn", thinkingMultiturnRequest(t))
		var body messagesRequest
		if err := json.Unmarshal(c.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Messages) != 5 {
			t.Fatalf("messages = %+v", body.Messages)
		}
		// The unsigned reasoning of the first assistant turn is dropped.
		if first := body.Messages[1].Content; len(first) != 1 || first[0].Type != "text" {
			t.Errorf("first assistant turn = %+v", first)
		}
		got := body.Messages[3].Content
		var types []string
		for _, b := range got {
			types = append(types, b.Type)
		}
		if strings.Join(types, ",") != "thinking,redacted_thinking,text,tool_use" {
			t.Fatalf("assistant turn block types = %v", types)
		}
		if got[0].Thinking == nil || *got[0].Thinking != thinkingText || got[0].Signature != thinkingSig || got[0].Data != "" {
			t.Errorf("thinking block = %+v", got[0])
		}
		if got[1].Data != redactedData || got[1].Signature != "" || got[1].Thinking != nil {
			t.Errorf("redacted_thinking block = %+v", got[1])
		}
		if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "messages[2].parts[0]") || !strings.Contains(w[0], "without a signature") {
			t.Errorf("warnings = %q", w)
		}
		r := res.Message.GetParts()[0].GetReasoning()
		if r.GetSignature() != followupSig || r.GetRedacted() || !strings.HasPrefix(r.GetText(), "The tool says") {
			t.Errorf("follow-up reasoning = %v", r)
		}
	})
	t.Run("refusal", func(t *testing.T) {
		t.Parallel()
		req := plainRequest()
		req.ProviderOptions = nil
		res, _ := run(t, "refusal", req)
		if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER || len(res.Message.GetParts()) != 0 {
			t.Errorf("refusal: %v %v", res.Meta.GetFinishReason(), res.Message)
		}
	})
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file       string
		kind       provider.Kind
		status     int
		code       string
		retryAfter time.Duration
		requestID  string
		message    string
	}{
		{"error_400", provider.KindInvalidRequest, 400, "invalid_request_error", 0, "req_016FLahw8Xu6Uj8Cq9Bl7Rh9", "max_tokens: 200000 > 64000"},
		{"error_context_length", provider.KindContextLength, 400, "invalid_request_error", 0, "req_019ATnfu7Xs4Zw4Di3Lc7Ms8", "prompt is too long: 208310 tokens > 200000 maximum"},
		{"error_400_credit_balance", provider.KindRateLimited, 400, "invalid_request_error", 0, "req_011CbT4nQeWz7yHk2Pq9Lm3R", "credit balance is too low"},
		{"error_401", provider.KindUnauthenticated, 401, "authentication_error", 0, "req_010XQmkx0Du9Ji3Rs0Ia7Ik5", "invalid x-api-key"},
		{"error_403", provider.KindPermissionDenied, 403, "permission_error", 0, "req_014GTafu7Sg1Bn5An2Ec1Pk6", "does not have permission"},
		{"error_404", provider.KindNotFound, 404, "not_found_error", 0, "req_015GKabn7Dv5Ny3Jp5El1Pi4", "model: claude-sonnet-9-20990101"},
		{"error_413", provider.KindInvalidRequest, 413, "request_too_large", 0, "req_015WTywl6Pw9Ai1Gg4Vu7Ys4", "maximum allowed number of bytes"},
		{"error_429", provider.KindRateLimited, 429, "rate_limit_error", 24 * time.Second, "req_011NHpbs0Bs5Fy0Fa5Ky6Gg1", "exceed the rate limit"},
		{"error_500", provider.KindUnavailable, 500, "api_error", 0, "req_019EKgwf4Xs8Fb3Sx6Kc9Ma3", "Internal server error"},
		{"error_529", provider.KindUnavailable, 529, "overloaded_error", 0, "req_013OVqjx2Kq9Sz4Hw2Gc3Hm2", "Overloaded"},
		// pydantic/pydantic-ai cassettes (see testdata/README.md): no
		// request-id header, the body's request_id is the only one.
		{"real_pyd_anthropic_count_tokens_error", provider.KindNotFound, 404, "not_found_error", 0, "req_011CVEA3SF7rnb3DuBZytqQa", "model: claude-does-not-exist"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			for _, streaming := range []bool{false, true} {
				srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
				p := newTestProvider(t, srv.URL)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), plainRequest())
					if s != nil {
						t.Fatal("Stream returned a stream with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), plainRequest())
				}
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("stream=%v: error %T %v is not a *provider.Error", streaming, err, err)
				}
				if pe.Kind != tc.kind || pe.HTTPStatus != tc.status || pe.Code != tc.code || pe.RetryAfter != tc.retryAfter ||
					pe.RequestID != tc.requestID || pe.Provider != "anthropic" || !strings.Contains(pe.Message, tc.message) {
					t.Errorf("stream=%v: got kind=%v status=%d code=%q retry=%v rid=%q msg=%q", streaming,
						pe.Kind, pe.HTTPStatus, pe.Code, pe.RetryAfter, pe.RequestID, pe.Message)
				}
			}
		})
	}
}

func TestErrorBodyNotJSON(t *testing.T) {
	t.Parallel()
	srv := providertest.Replay(t, providertest.Recording{
		Status: 502, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html><body>502 Bad Gateway</body></html>"),
	})
	_, err := newTestProvider(t, srv.URL).Generate(context.Background(), plainRequest())
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindUnavailable || pe.HTTPStatus != 502 || pe.Message != "Bad Gateway" {
		t.Fatalf("err = %#v", err)
	}
}

func TestBadSuccessBody(t *testing.T) {
	t.Parallel()
	// An empty body is no answer at all, a cut (provider.ReadBody), not bad output.
	for _, body := range []string{"not json", `{"content":5}`, `{"type":"completion"}`} {
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		_, err := newTestProvider(t, srv.URL).Generate(context.Background(), plainRequest())
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse {
			t.Errorf("body %q: err = %v, want bad response", body, err)
		}
	}
}

// TestAPIKeyNeverInErrors runs every failure path with a recognizable key
// and checks that the adapter adds it to no error text (the key travels in
// a header; a provider echoing it back in its own text is redacted by the
// server: TestE2EEchoedKeyRedacted).
func TestAPIKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const secret = "sk-ant-api03-SECRETVALUE-do-not-log-0123456789"
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("want an error")
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%T is not a *provider.Error", err)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(pe.Message, secret) || strings.Contains(fmt.Sprintf("%+v", pe), secret) {
			t.Errorf("key leaked: %v", err)
		}
	}
	files := []string{"error_400", "error_401", "error_403", "error_404", "error_429", "error_500", "error_529", "stream_overloaded", "stream_cut"}
	for _, f := range files {
		srv := providertest.ReplayFile(t, "testdata/"+f+".http")
		p, err := New(secret, WithBaseURL(srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(f, "stream_") {
			s, err := p.Stream(context.Background(), plainRequest())
			if err != nil {
				t.Fatal(err)
			}
			_, err = collect(s)
			check(t, err)
			continue
		}
		_, err = p.Generate(context.Background(), plainRequest())
		check(t, err)
	}
	// Connection failure.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	p, err := New(secret, WithBaseURL(dead.URL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Generate(context.Background(), plainRequest())
	check(t, err)
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Kind != provider.KindConnection {
		t.Errorf("kind = %v, want connection error", pe.Kind)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/plain.http")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newTestProvider(t, srv.URL).Generate(ctx, plainRequest())
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindCanceled {
		t.Fatalf("err = %v, want canceled", err)
	}
}

func TestEmbedUnsupported(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "https://api.anthropic.com")
	_, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "x", Inputs: []string{"a"}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindUnsupported || !strings.Contains(pe.Message, "no embeddings API") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewValidation(t *testing.T) {
	t.Parallel()
	bad := []struct {
		name string
		key  string
		opts []Option
	}{
		{"empty key", "", nil},
		{"relative url", "k", []Option{WithBaseURL("/v1")}},
		{"ftp url", "k", []Option{WithBaseURL("ftp://api.anthropic.com")}},
		{"unparseable url", "k", []Option{WithBaseURL("http://[::1")}},
		{"query in url", "k", []Option{WithBaseURL("https://api.anthropic.com?x=1")}},
		{"nil client", "k", []Option{WithHTTPClient(nil)}},
		{"empty version", "k", []Option{WithVersion(" ")}},
		{"zero max tokens", "k", []Option{WithDefaultMaxTokens(0)}},
	}
	for _, tc := range bad {
		if _, err := New(tc.key, tc.opts...); err == nil {
			t.Errorf("%s: New succeeded", tc.name)
		}
	}
	p, err := New("k")
	if err != nil {
		t.Fatal(err)
	}
	if p.baseURL != DefaultBaseURL || p.version != DefaultVersion || p.defaultMaxTokens != DefaultMaxTokens || p.client != http.DefaultClient {
		t.Errorf("defaults: %+v", p)
	}
}

func TestOptionsReachTheWire(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/plain.http")
	client := &http.Client{Timeout: 10 * time.Second}
	p := newTestProvider(t, srv.URL+"/proxy/", WithHTTPClient(client), WithVersion("2023-01-01"), WithDefaultMaxTokens(1000),
		WithHeaders(http.Header{"Anthropic-Beta": {"prompt-caching-2024-07-31"}, "X-Team": {"search"}, "x-api-key": {"overridden?"}}))
	req := plainRequest()
	req.Options = &llmrelayv1.GenerationOptions{}
	if _, err := p.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	if c.Path != "/proxy/v1/messages" || c.Method != http.MethodPost {
		t.Errorf("request line = %s %s", c.Method, c.Path)
	}
	for h, want := range map[string]string{
		"Anthropic-Version": "2023-01-01", "X-Team": "search", "X-Api-Key": testKey,
		"Anthropic-Beta": "prompt-caching-2024-07-31,context-1m-2025-08-07",
	} {
		if got := strings.Join(c.Header.Values(h), ","); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if !bytes.Contains(c.Body, []byte(`"max_tokens":1000`)) {
		t.Errorf("default max tokens not used: %s", c.Body)
	}
}
