package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const testKey = "test-key"

// requestHeaders are shown in request goldens.
var requestHeaders = []string{"x-goog-api-key", "content-type", "x-extra"}

func replay(t *testing.T, name string) (*Provider, *providertest.Server) {
	t.Helper()
	srv := providertest.ReplayFile(t, filepath.Join("testdata", name+".http"))
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return p, srv
}

func text(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }

func msg(role llmrelayv1.Role, parts ...*llmrelayv1.Part) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: role, Parts: parts}
}

func toolCallPart(id, name, args string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: name, Arguments: args, ArgumentsValid: true}}}
}

func toolResultPart(id, content string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: content}}}
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
			"required":             []any{"city"},
			"additionalProperties": false,
		}),
	}
}

// The generated ids of the two calls in tools_parallel.http.
var (
	parisCallID  = generatedID("axGvvM4fPan_vt4Pv7vxeBv", 0, "", "")
	londonCallID = generatedID("axGvvM4fPan_vt4Pv7vxeBv", 1, "", "")
)

// The generated ids of the two calls in thinking_tools.http.
var (
	thinkParisID  = generatedID("hYMnyJO3Uks-5ViKjBFB0Bf", 0, "", "")
	thinkLondonID = generatedID("hYMnyJO3Uks-5ViKjBFB0Bf", 1, "", "")
)

// Signatures in thinking_text.http and thinking_tools.http.
const (
	textSignature = "EtQDCtEDAdHtim9oYnJkR1FxN2x2cWtUcm1Xb0Z4UnZmRTBhOEhkQ2p1aG5YUzJ3dE9iY0ZxNnJ6S1ZkV3pGcGpMZ2hLZ0N0c0ZJcVZ0c0pmRUt2cW5Ya2hZbG9ZV1N6V3BPUmJRbkl3ZFNqSQ=="
	callSignature = "CqgEAdHtim9YcVZ2c0hFZHpPd0RCbmdxaFlKb0xsZ3BnTmN1N0ZpU3lPZmRmYVlwV0dXVG14bWRsRkhPTlZyRnJ0b2NOd0ZtYWh3U3F2V2pYbU1CQ0l4dUJwSlFYUkJzR0lVb0pTbHRrQWhvZ3B2R2l3Ylh5ZUZ2TlZ3bA=="
)

func reasoningPart(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
}

func includeThoughts() *llmrelayv1.ProviderOptions {
	yes := true
	return &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{IncludeThoughts: &yes}}}
}

// pngBytes is a 1x1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")

// generateCases are the unary scenarios; streamed twins share the request.
func generateCases(t testing.TB) map[string]*provider.Request {
	temp, maxTok, cutTok := 0.2, int32(256), int32(32)
	signedCall := toolCallPart(thinkParisID, "get_weather", `{"city":"Paris","unit":"celsius"}`)
	signedCall.GetToolCall().Signature = callSignature
	cases := map[string]*provider.Request{
		"thinking_text": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-3-flash-preview",
			Messages:        []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Is 1001 prime?"))},
			Options:         &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW},
			ProviderOptions: includeThoughts(),
		},
		"thinking_tools": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3-pro-preview",
			Messages:        []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and London?"))},
			Tools:           []*llmrelayv1.Tool{weatherTool(t)},
			Options:         &llmrelayv1.GenerationOptions{},
			ProviderOptions: includeThoughts(),
		},
		// The conversation of thinking_text and thinking_tools sent back
		// as Generate returned them, plus a redacted thinking block from
		// another provider (dropped with a warning).
		"multiturn_reasoning": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3-pro-preview",
			Messages: []*llmrelayv1.Message{
				msg(llmrelayv1.Role_ROLE_USER, text("Is 1001 prime?")),
				msg(llmrelayv1.Role_ROLE_ASSISTANT,
					reasoningPart(&llmrelayv1.Reasoning{Text: "**Testing Divisibility of 1001**\n\nTrying 7: 7 × 143 = 1001.\n\n\n"}),
					text("No. 1001 is not prime: 1001 = 7 × 11 × 13."),
					reasoningPart(&llmrelayv1.Reasoning{Signature: textSignature})),
				msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and London?")),
				msg(llmrelayv1.Role_ROLE_ASSISTANT,
					reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"}),
					reasoningPart(&llmrelayv1.Reasoning{Text: "**Fetching the Weather**\n\nI'll call get_weather for Paris and for London in parallel.\n\n\n"}),
					signedCall,
					toolCallPart(thinkLondonID, "get_weather", `{"city":"London","unit":"celsius"}`)),
				msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(thinkParisID, `{"temp": 18, "sky": "clear"}`)),
				msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(thinkLondonID, "14°C, cloudy")),
			},
			Tools:           []*llmrelayv1.Tool{weatherTool(t)},
			Options:         &llmrelayv1.GenerationOptions{},
			ProviderOptions: includeThoughts(),
		},
		"plain": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.5-flash",
			Messages: []*llmrelayv1.Message{
				msg(llmrelayv1.Role_ROLE_SYSTEM, text("Answer in one sentence.")),
				msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")),
			},
			Options: &llmrelayv1.GenerationOptions{
				Temperature: &temp, MaxTokens: &maxTok, Stop: []string{"\n\n"},
				ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW,
			},
		},
		"tools_parallel": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and London?"))},
			Tools:    []*llmrelayv1.Tool{weatherTool(t)},
			Options: &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{
				Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}},
		},
		"max_tokens_call": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and London?"))},
			Tools:    []*llmrelayv1.Tool{weatherTool(t)},
			Options:  &llmrelayv1.GenerationOptions{MaxTokens: &cutTok},
		},
		"malformed_call": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris?"))},
			Tools:    []*llmrelayv1.Tool{weatherTool(t)},
			Options: &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{
				Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}},
		},
		"vision": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_VISION, Model: "gemini-2.0-flash",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER,
				text("What do these images show?"),
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Url{Url: "https://example.com/images/circle.JPG?sig=abc"}}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Data{Data: pngBytes}, MimeType: "image/png"}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
					Source: &llmrelayv1.Image_Url{Url: "data:image/png;base64,iVBORw0KGgo="}}}},
			)},
			Options: &llmrelayv1.GenerationOptions{},
		},
		"multiturn": {
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3-flash-preview",
			Messages: []*llmrelayv1.Message{
				msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and London?")),
				msg(llmrelayv1.Role_ROLE_ASSISTANT,
					toolCallPart(parisCallID, "get_weather", `{"unit":"celsius","city":"Paris"}`),
					toolCallPart(londonCallID, "get_weather", `{"unit": "celsius", "city": "London"}`)),
				// Results in the other order, one as a JSON object, one as text.
				msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(londonCallID, "14°C, cloudy")),
				msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(parisCallID, `{"temp": 18, "sky": "clear"}`)),
			},
			Tools: []*llmrelayv1.Tool{weatherTool(t)},
			Options: &llmrelayv1.GenerationOptions{
				ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
			},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{
				SafetySettings: []*llmrelayv1.SafetySetting{{Category: "HARM_CATEGORY_HARASSMENT", Threshold: "BLOCK_ONLY_HIGH"}},
			}}},
		},
	}
	// Real recordings (see testdata/README.md).
	cases["real_tool_call"] = cases["tools_parallel"]
	// pydantic/pydantic-ai cassettes (see testdata/README.md).
	cases["real_pyd_google_model_max_tokens"] = cases["plain"]
	cases["real_pyd_google_model_max_tokens_thinking_model_empty_response"] = cases["plain"]
	cases["real_pyd_google_no_finish_reason"] = cases["plain"]
	cases["real_pyd_openai_multiple_agent_tool_calls_1"] = cases["tools_parallel"]
	cases["real_pyd_google_model_safety_settings"] = cases["plain"]
	cases["real_pyd_google_model_armor_response_template_real_block"] = cases["plain"]
	return cases
}

// renderResult is the golden form of a Result.
func renderResult(t testing.TB, r *provider.Result) []byte {
	var b bytes.Buffer
	if r.Message != nil {
		b.WriteString("# message\n")
		b.Write(providertest.ProtoJSON(t, r.Message))
	}
	for _, e := range r.Embeddings {
		b.WriteString("# embedding\n")
		b.Write(providertest.ProtoJSON(t, e))
	}
	b.WriteString("# meta\n")
	b.Write(providertest.ProtoJSON(t, r.Meta))
	return b.Bytes()
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	for name, req := range generateCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, name)
			res, err := p.Generate(context.Background(), req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
			c := srv.Last(t)
			if c.Path != "/v1beta/models/"+req.Model+":generateContent" || c.Query != "" {
				t.Errorf("request to %s?%s", c.Path, c.Query)
			}
			providertest.Golden(t, filepath.Join("testdata", name+".request.golden"), providertest.RequestGolden(c, requestHeaders...))
		})
	}
}

func TestGenerateToolCalls(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "tools_parallel")
	res, err := p.Generate(context.Background(), generateCases(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	var calls []*llmrelayv1.ToolCall
	for _, pt := range res.Message.GetParts() {
		if tc := pt.GetToolCall(); tc != nil {
			calls = append(calls, tc)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("got %d tool calls, want 2", len(calls))
	}
	want := []struct{ id, args string }{
		{parisCallID, `{"unit":"celsius","city":"Paris"}`},
		{londonCallID, `{"unit":"celsius","city":"London"}`},
	}
	for i, w := range want {
		if calls[i].GetCallId() != w.id || calls[i].GetArguments() != w.args || !calls[i].GetArgumentsValid() {
			t.Errorf("call %d = %v, want id %s args %s", i, calls[i], w.id, w.args)
		}
	}
	if calls[0].GetCallId() == calls[1].GetCallId() {
		t.Error("call ids are not unique")
	}
	if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || res.Meta.GetProviderFinishReason() != "STOP" {
		t.Errorf("finish = %v / %q", res.Meta.GetFinishReason(), res.Meta.GetProviderFinishReason())
	}
	u := res.Meta.GetUsage()
	if u.GetInputTokens() != 61 || u.GetOutputTokens() != 38+45 || u.GetReasoningTokens() != 45 || u.GetTotalTokens() != 144 {
		t.Errorf("usage = %v", u)
	}
}

func TestMultiturnRequest(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, "multiturn")
	if _, err := p.Generate(context.Background(), generateCases(t)["multiturn"]); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Last(t).Body)
	// Both results in one user content, each named after its call, with no
	// gateway-made id sent back, in the order of the calls (Paris, London):
	// without ids Gemini pairs them by position, and the client gave them
	// in the other order.
	for _, want := range []string{
		`{"functionResponse":{"name":"get_weather","response":{"temp":18,"sky":"clear"}}},{"functionResponse":{"name":"get_weather","response":{"result":"14°C, cloudy"}}}`,
		`"thoughtSignature":"skip_thought_signature_validator"`,
		`"thinkingConfig":{"thinkingLevel":"medium"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("request body lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, genIDPrefix) {
		t.Errorf("gateway call ids leaked into the request: %s", body)
	}
}

// TestMultiturnReasoningRequest checks that reasoning and signatures go
// back where Generate put them.
func TestMultiturnReasoningRequest(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, "multiturn_reasoning")
	res, err := p.Generate(context.Background(), generateCases(t)["multiturn_reasoning"])
	if err != nil {
		t.Fatal(err)
	}
	body := string(srv.Last(t).Body)
	for _, want := range []string{
		// The thought summary as a thought part, then the text with the
		// signature Gemini gave it.
		`{"text":"**Testing Divisibility of 1001**\n\nTrying 7: 7 × 143 = 1001.\n\n\n","thought":true},{"text":"No. 1001 is not prime: 1001 = 7 × 11 × 13.","thoughtSignature":"` + textSignature + `"}`,
		// The real call signature replaces the placeholder.
		`{"functionCall":{"name":"get_weather","args":{"city":"Paris","unit":"celsius"}},"thoughtSignature":"` + callSignature + `"},{"functionCall":{"name":"get_weather","args":{"city":"London","unit":"celsius"}}}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("request body lacks %s:\n%s", want, body)
		}
	}
	for _, not := range []string{skipSignature, "EmwKAhgBEgy3va3pzix", genIDPrefix} {
		if strings.Contains(body, not) {
			t.Errorf("request body contains %s", not)
		}
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "message 3 part 0: redacted reasoning dropped") {
		t.Errorf("warnings %q", w)
	}
}

// TestReasoningRoundTrip sends the message Generate returned back as the
// assistant turn: Gemini gets the parts it sent, with their signatures.
func TestReasoningRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"thinking_text", "thinking_tools"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, name)
			res, err := p.Generate(context.Background(), generateCases(t)[name])
			if err != nil {
				t.Fatal(err)
			}
			wire, warnings, err := buildRequest(&provider.Request{Model: "gemini-3-pro-preview", Options: &llmrelayv1.GenerationOptions{},
				Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("q")), res.Message}})
			if err != nil || len(warnings) != 0 {
				t.Fatal(err, warnings)
			}
			got, err := json.Marshal(wire.Contents[1].Parts)
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Candidates []struct {
					Content struct {
						Parts []json.RawMessage `json:"parts"`
					} `json:"content"`
				} `json:"candidates"`
			}
			if err := json.Unmarshal(providertest.Load(t, filepath.Join("testdata", name+".http")).Body, &rec); err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(rec.Candidates[0].Content.Parts)
			if err != nil {
				t.Fatal(err)
			}
			if canonJSON(t, got) != canonJSON(t, want) {
				t.Errorf("sent back\n%s\nreceived\n%s", canonJSON(t, got), canonJSON(t, want))
			}
		})
	}
}

// canonJSON re-encodes JSON with sorted keys.
func canonJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestBlockedPrompt(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "blocked")
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *provider.Error", err)
	}
	if pe.Kind != provider.KindContentFilter || !strings.Contains(pe.Message, "PROHIBITED_CONTENT") || pe.Provider != "gemini" {
		t.Errorf("err = %+v", pe)
	}
}

func TestEmbed(t *testing.T) {
	t.Parallel()
	dims := int32(4)
	cases := []struct {
		name   string
		req    *provider.EmbedRequest
		method string
	}{
		{"embed_single", &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"hello"}, Dimensions: &dims}, "embedContent"},
		{"embed_batch", &provider.EmbedRequest{Model: "models/gemini-embedding-001", Inputs: []string{"hello", "world"}}, "batchEmbedContents"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, tc.name)
			res, err := p.Embed(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Embeddings) != len(tc.req.Inputs) || res.Meta.GetEmbeddingsCount() != int32(len(tc.req.Inputs)) {
				t.Errorf("got %d embeddings (count %d)", len(res.Embeddings), res.Meta.GetEmbeddingsCount())
			}
			c := srv.Last(t)
			if c.Path != "/v1beta/models/gemini-embedding-001:"+tc.method {
				t.Errorf("path %s", c.Path)
			}
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderResult(t, res))
			providertest.Golden(t, filepath.Join("testdata", tc.name+".request.golden"), providertest.RequestGolden(c, requestHeaders...))
		})
	}
}

func TestEmbedCountMismatch(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "embed_batch")
	_, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"a", "b", "c"}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse {
		t.Fatalf("err = %v, want bad response", err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		kind       provider.Kind
		status     int
		code       string
		retryAfter time.Duration
		msg        string
		param      string
	}{
		{"error_400", provider.KindInvalidRequest, 400, "INVALID_ARGUMENT", 0, `Unknown name "maxTokens"`, "generation_config"},
		{"error_context_length", provider.KindContextLength, 400, "INVALID_ARGUMENT", 0, "exceeds the maximum number of tokens", ""},
		{"error_401", provider.KindUnauthenticated, 400, "INVALID_ARGUMENT/API_KEY_INVALID", 0, "API key not valid", ""},
		{"error_403", provider.KindPermissionDenied, 403, "PERMISSION_DENIED/CONSUMER_SUSPENDED", 0, "api_key:[REDACTED]", ""},
		{"error_404", provider.KindNotFound, 404, "NOT_FOUND", 0, "is not found for API version v1beta", ""},
		{"error_429", provider.KindRateLimited, 429, "RESOURCE_EXHAUSTED", 34 * time.Second, "You exceeded your current quota", ""},
		{"error_500", provider.KindUnavailable, 500, "INTERNAL", 0, "An internal error has occurred", ""},
		{"error_503", provider.KindUnavailable, 503, "UNAVAILABLE", 0, "The model is overloaded", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check := func(t *testing.T, err error) {
				t.Helper()
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *provider.Error", err)
				}
				if pe.Provider != "gemini" || pe.Kind != tc.kind || pe.HTTPStatus != tc.status || pe.Code != tc.code ||
					pe.RetryAfter != tc.retryAfter || pe.Param != tc.param || pe.RequestID != "" {
					t.Errorf("got %+v", pe)
				}
				if !strings.Contains(pe.Message, tc.msg) {
					t.Errorf("message %q lacks %q", pe.Message, tc.msg)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error text contains the API key: %s", err)
				}
			}
			p, _ := replay(t, tc.name)
			_, err := p.Generate(context.Background(), generateCases(t)["plain"])
			check(t, err)
			_, err = p.Stream(context.Background(), generateCases(t)["plain"])
			check(t, err)
			_, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "gemini-embedding-001", Inputs: []string{"x"}})
			check(t, err)
		})
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const key = "AIzaSyD-secretsecretsecret-0123456789"
	// A server that echoes the key in every way Google does.
	srv := providertest.Replay(t, providertest.Recording{
		Status: 403, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
		Body: []byte(`{"error":{"code":403,"message":"Permission denied: Consumer 'api_key:` + key + `' has been suspended. key=` + key + `","status":"PERMISSION_DENIED"}}`),
	})
	p, err := New(key, WithBaseURL(srv.URL), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Generate(context.Background(), generateCases(t)["plain"])
	if err == nil || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "AIza") {
		t.Errorf("err = %v", err)
	}
	if got := srv.Last(t); got.Header.Get("X-Goog-Api-Key") != key || strings.Contains(got.Query, key) {
		t.Errorf("key sent as header %q query %q", got.Header.Get("X-Goog-Api-Key"), got.Query)
	}
	// Transport errors: the connection is refused.
	dead, err := New(key, WithBaseURL("http://127.0.0.1:1/v1beta"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = dead.Generate(context.Background(), generateCases(t)["plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindConnection || strings.Contains(err.Error(), key) {
		t.Errorf("transport err = %v", err)
	}
}

func TestNewValidation(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "ftp://x", "://", "https://", "https://h/v1?key=x", "generativelanguage.googleapis.com"} {
		if _, err := New(testKey, WithBaseURL(bad)); err == nil {
			t.Errorf("New(base %q) succeeded", bad)
		}
	}
	if _, err := New(testKey, WithHTTPClient(nil)); err == nil {
		t.Error("New with nil client succeeded")
	}
	p, err := New(testKey)
	if err != nil || p.baseURL != DefaultBaseURL || p.client != http.DefaultClient {
		t.Errorf("defaults: %v %+v", err, p)
	}
}

func TestHeadersAndCancel(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, filepath.Join("testdata", "plain.http"))
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta/"), WithHTTPClient(srv.Client()),
		WithHeaders(http.Header{"X-Extra": {"1"}, "X-Goog-Api-Key": {"ignored"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(context.Background(), generateCases(t)["plain"]); err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	if c.Header.Get("X-Extra") != "1" || c.Header.Values("X-Goog-Api-Key")[0] != testKey || len(c.Header.Values("X-Goog-Api-Key")) != 1 {
		t.Errorf("headers %v", c.Header)
	}
	if c.Path != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Errorf("path %s", c.Path)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Generate(ctx, generateCases(t)["plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindCanceled {
		t.Errorf("canceled: %v", err)
	}
}

func TestBadSuccessBody(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not json":      `<html>oops</html>`,
		"no candidates": `{"modelVersion":"gemini-2.5-flash"}`,
		"truncated":     `{"candidates":[{"content":{"parts":[{"text":"hi"`,
	} {
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{}, Body: []byte(body)})
		p, err := New(testKey, WithBaseURL(srv.URL), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Generate(context.Background(), generateCases(t)["plain"])
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
