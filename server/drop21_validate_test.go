package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// The drop21 audit: every request field either reaches the provider,
// is refused naming the field, or is dropped with a warning. These are the
// cases found dropped silently or refused by the provider naming no field
// of the request, through the whole server.

const d21YAML = `
defaults:
  retry: {max_attempts: 1}
providers:
  - {name: ant, type: anthropic, base_url: "{{URL}}", api_key: sk-ant-test-drop21-0000, default_max_tokens: 64}
  - {name: goog, type: gemini, base_url: "{{URL}}", api_key: AIzaSyTEST-drop21-00000000000000000000}
  - {name: oai, type: openai, base_url: "{{URL}}/v1", api_key: sk-test-drop21-0000}
  - {name: oll, type: ollama, base_url: "{{URL}}"}
models:
  - name: claude
    provider: ant
    upstream_model: claude-sonnet-4-5
    capabilities:
      chat: {format: anthropic-messages}
      tools: {format: anthropic-messages}
  - name: claudectx
    provider: ant
    upstream_model: claude-sonnet-4-5
    capabilities:
      tools: {format: anthropic-messages}
    context:
      - {role: system, text: "Answer briefly."}
      - {role: user, text: "I live in Paris."}
  - name: flash
    provider: goog
    upstream_model: gemini-2.5-flash
    capabilities:
      chat: {format: gemini}
      tools: {format: gemini}
      vision: {format: gemini}
      embeddings: {format: gemini-embeddings}
  - name: embed
    provider: oai
    upstream_model: text-embedding-3-small
    capabilities:
      embeddings: {format: openai-embeddings}
  - name: llama
    provider: oll
    upstream_model: llama3.2
    capabilities:
      tools: {format: ollama}
  - name: nomic
    provider: oll
    upstream_model: nomic-embed-text
    capabilities:
      embeddings: {format: ollama-embeddings}
`

const (
	d21GeminiJSON = `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"modelVersion":"gemini-2.5-flash","responseId":"d21"}`
	d21EmbedJSON = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`
)

// d21Upstream answers Gemini's generateContent and OpenAI's embeddings,
// and keeps the bodies it was sent.
type d21Upstream struct {
	mu     sync.Mutex
	bodies []string
}

func (u *d21Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, r.URL.Path+" "+string(b))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.Contains(r.URL.Path, ":generateContent"):
		_, _ = io.WriteString(w, d21GeminiJSON)
	case strings.HasSuffix(r.URL.Path, "/embeddings"):
		_, _ = io.WriteString(w, d21EmbedJSON)
	default:
		http.Error(w, `{"error":{"message":"not expected in this test"}}`, http.StatusTeapot)
	}
}

func (u *d21Upstream) sent() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

func d21Call(id string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: "get_weather", Arguments: `{"city":"Paris"}`}}}
}

func d21Result(id string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: "sunny"}}}
}

// TestDrop21Refusals: each case is InvalidArgument with a BadRequest
// naming the request's own field, and no provider is called.
func TestDrop21Refusals(t *testing.T) {
	t.Parallel()
	up := &d21Upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	c, _ := startWith(t, d21YAML, srv.URL)
	ctx := context.Background()
	six := []string{"a", "b", "c", "d", "e", "f"}
	tools := func(req *llmrelayv1.ToolsRequest) func() error {
		return func() error { _, err := c.Tools(ctx, req); return err }
	}
	chat := func(req *llmrelayv1.ChatRequest) func() error {
		return func() error { _, err := c.Chat(ctx, req); return err }
	}
	embed := func(req *llmrelayv1.EmbedRequest) func() error {
		return func() error { _, err := c.Embed(ctx, req); return err }
	}
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"gemini: six stop sequences", chat(&llmrelayv1.ChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("hi")},
			Options: &llmrelayv1.GenerationOptions{Stop: six}}), "options.stop"},
		{"schema name without a schema", chat(&llmrelayv1.ChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("hi")},
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT, SchemaName: "answer"}}}),
			"options.response_format.schema_name"},
		{"strict without a schema", chat(&llmrelayv1.ChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("hi")},
			Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT, Strict: proto.Bool(true)}}}),
			"options.response_format.strict"},
		{"gemini: a result named for another function than its call", tools(&llmrelayv1.ToolsRequest{Model: "flash", Tools: []*llmrelayv1.Tool{{Name: "get_weather"}},
			Messages: []*llmrelayv1.Message{user("hi"), {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{d21Call("c1")}},
				{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "c1", Name: "get_time", Content: "12:00"}}}}}}}),
			"messages[2].parts[0].tool_result.name"},
		{"ollama: a result named for another function than its call", tools(&llmrelayv1.ToolsRequest{Model: "llama", Tools: []*llmrelayv1.Tool{{Name: "get_weather"}},
			Messages: []*llmrelayv1.Message{user("hi"), {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{d21Call("c1")}},
				{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "c1", Name: "get_time", Content: "12:00"}}}}}}}),
			"messages[2].parts[0].tool_result.name"},
		{"gemini: 64-bit seed", chat(&llmrelayv1.ChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{user("hi")},
			Options: &llmrelayv1.GenerationOptions{Seed: proto.Int64(1 << 40)}}), "options.seed"},
		{"anthropic: dotted tool name", tools(&llmrelayv1.ToolsRequest{Model: "claude", Messages: []*llmrelayv1.Message{user("hi")},
			Tools: []*llmrelayv1.Tool{{Name: "web.search"}}}), "tools[0].name"},
		{"anthropic: result answering no call", tools(&llmrelayv1.ToolsRequest{Model: "claude", Tools: []*llmrelayv1.Tool{{Name: "get_weather"}},
			Messages: []*llmrelayv1.Message{user("hi"), {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{d21Call("toolu_1")}},
				{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{d21Result("toolu_1"), d21Result("toolu_9")}}}}), "messages[2].parts[1].tool_result.call_id"},
		{"anthropic: unanswered call", tools(&llmrelayv1.ToolsRequest{Model: "claude", Tools: []*llmrelayv1.Tool{{Name: "get_weather"}},
			Messages: []*llmrelayv1.Message{user("hi"), {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{d21Call("toolu_1")}}, user("well?")}}),
			"messages[1].parts[0].tool_call.call_id"},
		// The model's configured context (two messages) comes first in
		// the adapter's conversation: the field is still the caller's.
		{"anthropic with prompt context: result answering no call", tools(&llmrelayv1.ToolsRequest{Model: "claudectx", Tools: []*llmrelayv1.Tool{{Name: "get_weather"}},
			Messages: []*llmrelayv1.Message{user("hi"), {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{d21Call("toolu_1")}},
				{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{d21Result("toolu_1"), d21Result("toolu_9")}}}}), "messages[2].parts[1].tool_result.call_id"},
		{"anthropic: temperature with a thinking budget", chat(&llmrelayv1.ChatRequest{Model: "claude", Messages: []*llmrelayv1.Message{user("hi")},
			Options:         &llmrelayv1.GenerationOptions{Temperature: proto.Float64(0.5)},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: proto.Int32(1024)}}}}),
			"options.temperature"},
		{"openai embeddings: store", embed(&llmrelayv1.EmbedRequest{Model: "embed", Inputs: []string{"a"},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{User: "u", Store: proto.Bool(true)}}}}),
			"provider_options.openai.store"},
		{"gemini embeddings: thinking budget", embed(&llmrelayv1.EmbedRequest{Model: "flash", Inputs: []string{"a"},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{ThinkingBudget: proto.Int32(0)}}}}),
			"provider_options.gemini.thinking_budget"},
		{"ollama embeddings: think", embed(&llmrelayv1.EmbedRequest{Model: "nomic", Inputs: []string{"a"},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{NumCtx: proto.Int32(2048), Think: proto.Bool(true)}}}}),
			"provider_options.ollama.think"},
	}
	for _, tc := range cases {
		err := tc.call()
		st, _, br := statusDetails(t, err)
		if st.Code() != codes.InvalidArgument {
			t.Errorf("%s: %v %s, want InvalidArgument", tc.name, st.Code(), st.Message())
			continue
		}
		if br == nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != tc.field {
			t.Errorf("%s: BadRequest %v, want field %q (%s)", tc.name, br, tc.field, st.Message())
		}
	}
	if sent := up.sent(); len(sent) != 0 {
		t.Errorf("the provider was called: %q", sent)
	}
}

// TestDrop21Warnings: what a provider has no place for is not sent, and
// meta says so: Gemini's message names and a mid-conversation system
// message (warnings), an image's detail level on Gemini 2.5, an embeddings
// option no embeddings request carries with ignore_invalid_options
// (dropped_options, and not in the upstream request).
func TestDrop21Warnings(t *testing.T) {
	t.Parallel()
	up := &d21Upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	c, _ := startWith(t, d21YAML, srv.URL)
	ctx := context.Background()
	img := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/a.png"}, Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW}}}
	named := user("hi")
	named.Name = "alice"
	named.Parts = append(named.Parts, img)
	resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "flash", Messages: []*llmrelayv1.Message{
		named, {Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: user("be brief").Parts},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`messages[0]: name "alice" not sent`,
		"messages[0].parts[1].image.detail IMAGE_DETAIL_LOW not sent: only Gemini 3 models take a part's media resolution",
		"messages[1]: a system message after the conversation began is sent in systemInstruction",
	}
	got := resp.GetMeta().GetWarnings()
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, w)
		}
		if !found {
			t.Errorf("warnings %q lack %q", got, w)
		}
	}
	er, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "embed", Inputs: []string{"a"}, Call: &llmrelayv1.CallOptions{IgnoreInvalidOptions: true},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{
			User: "u-1", Store: proto.Bool(true), ServiceTier: "flex"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var dropped []string
	for _, d := range er.GetMeta().GetDroppedOptions() {
		dropped = append(dropped, d.GetOption())
	}
	if strings.Join(dropped, ",") != "provider_options.openai.service_tier,provider_options.openai.store" {
		t.Errorf("dropped options %q", dropped)
	}
	sent := up.sent()
	last := sent[len(sent)-1]
	if !strings.Contains(last, `"user":"u-1"`) || strings.Contains(last, "store") || strings.Contains(last, "flex") {
		t.Errorf("embeddings request sent %s", last)
	}
}

// TestDrop21ProviderFieldsNamed: a provider's refusal names the field in
// its wire terms; the status names the request's. Real recordings:
// OpenAI's 400 param "stop" (pydantic/logfire's gpt-5.4-nano refusing stop
// sequences) is options.stop, Anthropic's "tools.0.custom.input_schema.type:
// Field required" (vercel/ai's fixture) is tools[0].parameters. The
// provider's own path stays in the message.
func TestDrop21ProviderFieldsNamed(t *testing.T) {
	t.Parallel()
	const yaml = `
defaults:
  retry: {max_attempts: 1}
providers:
  - {name: oai, type: openai, base_url: "{{URL}}/v1", api_key: sk-test-drop21-0000}
  - {name: ant, type: anthropic, base_url: "{{URL}}", api_key: sk-ant-test-drop21-0000, default_max_tokens: 64}
models:
  - name: nano
    provider: oai
    upstream_model: gpt-5.4-nano
    reasoning: true
    capabilities:
      chat: {format: openai-reasoning}
    context:
      - {role: system, text: "Answer briefly."}
  - name: claude
    provider: ant
    upstream_model: claude-sonnet-4-5
    capabilities:
      tools: {format: anthropic-messages}
`
	cases := []struct {
		recording string
		call      func(llmrelayv1.GatewayServiceClient) error
		field     string
		inMessage string
	}{
		{"provider/openai/testdata/real_logfire_chat_stop_unsupported.http", func(c llmrelayv1.GatewayServiceClient) error {
			_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "nano", Messages: []*llmrelayv1.Message{user("count to 10")},
				Options: &llmrelayv1.GenerationOptions{Stop: []string{"5"}}})
			return err
		}, "options.stop", "'stop'"},
		{"provider/anthropic/testdata/real_root_union_tool_schema_error.http", func(c llmrelayv1.GatewayServiceClient) error {
			_, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "claude", Messages: []*llmrelayv1.Message{user("hi")},
				Tools: []*llmrelayv1.Tool{{Name: "lookup", Parameters: `{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"string"}}}]}`}}})
			return err
		}, "tools[0].parameters", "tools.0.custom.input_schema.type"},
	}
	for _, tc := range cases {
		up := providertest.Replay(t, providertest.Load(t, tc.recording))
		c, _ := startWith(t, yaml, up.URL)
		err := tc.call(c)
		st, _, br := statusDetails(t, err)
		if st.Code() != codes.InvalidArgument || br == nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != tc.field {
			t.Errorf("%s: %v %v, want InvalidArgument on %s", tc.recording, st.Code(), br, tc.field)
			continue
		}
		if !strings.Contains(st.Message(), tc.inMessage) {
			t.Errorf("%s: message %q lost the provider's path %q", tc.recording, st.Message(), tc.inMessage)
		}
	}
}

// TestDrop21AgentSetupFields: an agent run names the client's fields under
// setup: an option the format refuses (setup.options.stop, it said
// options.stop) and what the first round's model call refuses of the
// setup's tools (setup.tools[0].name, it said tools[0].name).
func TestDrop21AgentSetupFields(t *testing.T) {
	t.Parallel()
	up := &d21Upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	c, _ := startWith(t, d21YAML, srv.URL)
	cases := []struct {
		setup *llmrelayv1.AgentSetup
		field string
	}{
		{&llmrelayv1.AgentSetup{Model: "flash", Messages: []*llmrelayv1.Message{user("hi")}, Tools: []*llmrelayv1.Tool{{Name: "get_weather"}},
			Options: &llmrelayv1.GenerationOptions{Stop: []string{"1", "2", "3", "4", "5", "6"}}}, "setup.options.stop"},
		{&llmrelayv1.AgentSetup{Model: "claude", Messages: []*llmrelayv1.Message{user("hi")}, Tools: []*llmrelayv1.Tool{{Name: "web.search"}}}, "setup.tools[0].name"},
	}
	for _, tc := range cases {
		s, err := c.Agent(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: tc.setup}}); err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = s.Recv()
		}
		st, _, br := statusDetails(t, err)
		if st.Code() != codes.InvalidArgument || br == nil || br.GetFieldViolations()[0].GetField() != tc.field {
			t.Errorf("%s: %v %v, want InvalidArgument on %s", tc.field, st.Code(), br, tc.field)
		}
	}
	if sent := up.sent(); len(sent) != 0 {
		t.Errorf("the provider was called: %q", sent)
	}
}
