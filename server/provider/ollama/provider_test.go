package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const testKey = "test-key"

// requestHeaders are the headers shown in request goldens.
var requestHeaders = []string{"Authorization", "Content-Type", "Accept"}

func td(name string) string { return filepath.Join("testdata", name) }

func newTestProvider(t *testing.T, srv *providertest.Server) *Provider {
	t.Helper()
	p, err := New(testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func text(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }

func msg(role llmrelayv1.Role, parts ...*llmrelayv1.Part) *llmrelayv1.Message {
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
		Name:        "get_current_weather",
		Description: "Get the current weather for a location",
		Parameters: jsonText(t, map[string]any{
			"type": "object",
			"properties": map[string]any{
				"location": map[string]any{"type": "string", "description": "The location, e.g. San Francisco, CA"},
				"format":   map[string]any{"type": "string", "enum": []any{"celsius", "fahrenheit"}},
			},
			"required": []any{"location", "format"},
		}),
	}
}

func ptr[T any](v T) *T { return &v }

// Requests of the recorded scenarios.

func textRequest(t testing.TB) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "llama3.2",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("You are a concise assistant.")),
			msg(llmrelayv1.Role_ROLE_USER, text("Why is the sky blue?")),
		},
		Options: &llmrelayv1.GenerationOptions{
			Temperature: ptr(0.2), TopP: ptr(0.9), TopK: ptr(int32(40)), MaxTokens: ptr(int32(256)),
			Seed: ptr(int64(42)), Stop: []string{"\n\n\n"},
		},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{
			NumCtx: ptr(int32(8192)), KeepAlive: durationpb.New(5 * time.Minute),
		}}},
	}
}

func toolsRequest(t testing.TB) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "qwen3:8b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris and in Tokyo?"))},
		Tools:    []*llmrelayv1.Tool{weatherTool(t)},
		Options:  &llmrelayv1.GenerationOptions{},
	}
}

func malformedRequest(t testing.TB) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "mistral-nemo:12b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Weather and local time in Paris?"))},
		Tools: []*llmrelayv1.Tool{weatherTool(t), {
			Name: "get_time", Description: "Current time in a timezone",
			Parameters: jsonText(t, map[string]any{"type": "object", "properties": map[string]any{"timezone": map[string]any{"type": "string"}}}),
		}},
		Options: &llmrelayv1.GenerationOptions{},
	}
}

// pngBytes is the start of a PNG file; Ollama receives whatever bytes are
// given, base64-encoded.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02")

func visionRequest(t testing.TB) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_VISION, Model: "llava:7b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER,
			text("Describe both images."),
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: pngBytes}, MimeType: "image/png"}}},
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs="}}}},
		)},
		Options: &llmrelayv1.GenerationOptions{},
	}
}

const (
	callParis = "call_5d1f0c9a7e3b42d8a6c1f0e2"
	callTokyo = "call_9b8e2a4c6d0f13e5b7a9c2d4"
)

func toolResultsRequest(t testing.TB) *provider.Request {
	call := func(id, args string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: id, Name: "get_current_weather", Arguments: args, ArgumentsValid: true,
		}}}
	}
	result := func(id, name, content string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Name: name, Content: content}}}
	}
	r := toolsRequest(t)
	r.Messages = append(r.Messages,
		msg(llmrelayv1.Role_ROLE_ASSISTANT,
			call(callParis, `{"location": "Paris, FR", "format": "celsius"}`),
			call(callTokyo, `{"location":"Tokyo, JP","format":"celsius"}`)),
		msg(llmrelayv1.Role_ROLE_TOOL,
			// No name: looked up by call_id.
			result(callTokyo, "", `{"temperature":22,"unit":"celsius"}`),
			result(callParis, "get_current_weather", `{"temperature":18,"unit":"celsius"}`)),
	)
	return r
}

func thinkingRequest(t testing.TB) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "qwen3:8b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is 17 * 3?"))},
		Options:  &llmrelayv1.GenerationOptions{},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{
			Think: ptr(true),
		}}},
	}
}

// thinkingToolsRequest is toolsRequest with thinking on: the answer
// thinks, then calls the tool twice.
func thinkingToolsRequest(t testing.TB) *provider.Request {
	r := toolsRequest(t)
	r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{
		Think: ptr(true),
	}}}
	return r
}

// renderResult is the golden form of a Result.
func renderResult(t testing.TB, res *provider.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if res.Message != nil {
		b.WriteString("message:\n")
		b.Write(providertest.ProtoJSON(t, res.Message))
	}
	for _, e := range res.Embeddings {
		fmt.Fprintf(&b, "embedding %d: %v\n", e.Index, e.Values)
	}
	b.WriteString("meta:\n")
	b.Write(providertest.ProtoJSON(t, res.Meta))
	return b.Bytes()
}

func TestGenerateGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(testing.TB) *provider.Request
	}{
		{"chat_text", textRequest},
		{"chat_tools_parallel", toolsRequest},
		{"chat_tools_malformed", malformedRequest},
		{"chat_vision", visionRequest},
		{"chat_tool_results", toolResultsRequest},
		{"chat_thinking", thinkingRequest},
		{"chat_thinking_tools", thinkingToolsRequest},
		{"chat_inline_think", textRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, srv).Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			providertest.Golden(t, td(tc.name+".request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

func TestGenerateInvariants(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("chat_tools_parallel.http"))
	res, err := newTestProvider(t, srv).Generate(context.Background(), toolsRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Meta.FinishReason; got != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("finish reason = %v, want TOOL_CALLS", got)
	}
	if res.Meta.ProviderFinishReason != "stop" {
		t.Errorf("provider finish reason = %q, want stop", res.Meta.ProviderFinishReason)
	}
	var ids []string
	for _, p := range res.Message.Parts {
		tc := p.GetToolCall()
		if tc == nil {
			t.Fatalf("unexpected part %v", p)
		}
		ids = append(ids, tc.CallId)
	}
	if len(ids) != 2 || ids[0] == ids[1] || !strings.HasPrefix(ids[0], "call_") {
		t.Errorf("tool call ids = %v, want two distinct call_ ids", ids)
	}
	// Key order of the arguments object is kept as the model produced it.
	if got := res.Message.Parts[0].GetToolCall().Arguments; got != `{"location":"Paris, FR","format":"celsius"}` {
		t.Errorf("arguments = %s", got)
	}
	if u := res.Meta.Usage; u.InputTokens != 213 || u.OutputTokens != 52 || u.TotalTokens != 265 {
		t.Errorf("usage = %v", u)
	}
	if got := res.Meta.Extended.Fields["total_duration"].GetNumberValue(); got != 2211457125 {
		t.Errorf("extended total_duration = %v", got)
	}
	// The same conversation gives the same ids again; a longer one others.
	res2, err := newTestProvider(t, srv).Generate(context.Background(), toolsRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := res2.Message.Parts[0].GetToolCall().CallId; got != ids[0] {
		t.Errorf("id not stable: %s vs %s", got, ids[0])
	}
	longer := toolsRequest(t)
	longer.Messages = append([]*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_SYSTEM, text("Be brief."))}, longer.Messages...)
	res3, err := newTestProvider(t, srv).Generate(context.Background(), longer)
	if err != nil {
		t.Fatal(err)
	}
	if got := res3.Message.Parts[0].GetToolCall().CallId; got == ids[0] {
		t.Errorf("id %s reused for another conversation", got)
	}
}

func TestEmbedGolden(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed.http"))
	req := &provider.EmbedRequest{
		Model: "nomic-embed-text", Inputs: []string{"The sky is blue.", "Grass is green."}, Dimensions: ptr(int32(4)),
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{
			KeepAlive: durationpb.New(10 * time.Minute),
		}}},
	}
	res, err := newTestProvider(t, srv).Embed(context.Background(), req)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(res.Embeddings) != 2 || res.Meta.EmbeddingsCount != 2 || res.Meta.Usage.GetInputTokens() != 8 {
		t.Errorf("result = %v", res)
	}
	providertest.Golden(t, td("embed.golden"), renderResult(t, res))
	providertest.Golden(t, td("embed.request.golden"), providertest.RequestGolden(srv.Last(t), requestHeaders...))
}

func TestEmbedCountMismatch(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("embed.http"))
	_, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"only one"}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse {
		t.Fatalf("err = %v, want bad response", err)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	cases := []struct {
		base    string
		wantErr bool
		want    string
	}{
		{"", true, ""},
		{"127.0.0.1:11434", true, ""},
		{"ftp://host", true, ""},
		{"http://", true, ""},
		{"http://host:11434?x=1", true, ""},
		{"http://[::1", true, ""},
		{"http://localhost:11434/", false, "http://localhost:11434"},
		{"https://proxy.example.com/ollama/", false, "https://proxy.example.com/ollama"},
	}
	for _, tc := range cases {
		p, err := New("", WithBaseURL(tc.base))
		if (err != nil) != tc.wantErr {
			t.Errorf("New(%q) err = %v, wantErr %v", tc.base, err, tc.wantErr)
			continue
		}
		if err == nil && p.baseURL != tc.want {
			t.Errorf("New(%q) base = %q, want %q", tc.base, p.baseURL, tc.want)
		}
	}
	p, err := New("")
	if err != nil || p.baseURL != DefaultBaseURL || p.client != http.DefaultClient {
		t.Errorf("defaults: %v %+v", err, p)
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("chat_text.http"))
	// No key: no Authorization header. Extra headers on every request.
	p, err := New("", WithBaseURL(srv.URL), WithHeaders(http.Header{"X-Tenant": {"acme"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(context.Background(), textRequest(t)); err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	if _, ok := c.Header["Authorization"]; ok {
		t.Error("Authorization sent without an API key")
	}
	if c.Header.Get("X-Tenant") != "acme" || c.Path != "/api/chat" || c.Method != http.MethodPost {
		t.Errorf("request = %s %s %v", c.Method, c.Path, c.Header)
	}
	// With a path prefix (a proxy), the prefix is kept.
	p2, err := New(testKey, WithBaseURL(srv.URL+"/ollama/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Generate(context.Background(), textRequest(t)); err != nil {
		t.Fatal(err)
	}
	if c := srv.Last(t); c.Path != "/ollama/api/chat" || c.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("path %s auth %q", c.Path, c.Header.Get("Authorization"))
	}
}

// closedAddr returns an address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	if _, err := New(testKey, WithBaseURL("http://user:pw@"+addr)); err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("a base URL with credentials: %v", err) // refused, without showing them
	}
	p, err := New(testKey, WithBaseURL("http://"+addr))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(name string, err error) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v, want *provider.Error", name, err)
		}
		if pe.Kind != provider.KindConnection || pe.HTTPStatus != 0 {
			t.Errorf("%s: kind %v status %d", name, pe.Kind, pe.HTTPStatus)
		}
		want := "Ollama is not reachable at http://" + addr
		if !strings.Contains(pe.Message, want) {
			t.Errorf("%s: message %q does not contain %q", name, pe.Message, want)
		}
		if strings.Contains(pe.Error(), testKey) {
			t.Errorf("%s: key leaked: %s", name, pe.Error())
		}
	}
	_, err = p.Generate(ctx, textRequest(t))
	check("Generate", err)
	_, err = p.Stream(ctx, textRequest(t))
	check("Stream", err)
	_, err = p.Embed(ctx, &provider.EmbedRequest{Model: "m", Inputs: []string{"x"}})
	check("Embed", err)
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("chat_text.http"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newTestProvider(t, srv).Generate(ctx, textRequest(t))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindCanceled {
		t.Fatalf("err = %v, want canceled", err)
	}
}

// TestAPIKeyNeverInErrors runs every failure path with a distinctive key
// and checks that the adapter adds it to no error text (a provider echoing
// it back is redacted by the server: TestE2EEchoedKeyRedacted).
func TestAPIKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-ollama-SECRET-7d1e9a"
	files := []string{"error_400_tools", "error_context_length", "error_401", "error_403", "error_404", "error_429",
		"error_429_body", "error_500", "error_502_html", "error_503", "stream_error", "stream_cut"}
	var errs []error
	for _, f := range files {
		srv := providertest.ReplayFile(t, td(f+".http"))
		p, err := New(key, WithBaseURL(srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Generate(context.Background(), textRequest(t)); err != nil {
			errs = append(errs, err)
		}
		st, err := p.Stream(context.Background(), textRequest(t))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		_, err = collect(st)
		errs = append(errs, err)
	}
	p, err := New(key, WithBaseURL("http://"+closedAddr(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Generate(context.Background(), textRequest(t))
	errs = append(errs, err)
	if len(errs) < len(files)+1 {
		t.Fatalf("only %d errors", len(errs))
	}
	for _, e := range errs {
		if e == nil {
			continue
		}
		var pe *provider.Error
		if !errors.As(e, &pe) {
			t.Errorf("not a *provider.Error: %v", e)
			continue
		}
		dump, err := json.Marshal(pe)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(e.Error(), key) || strings.Contains(pe.Message, key) || bytes.Contains(dump, []byte(key)) {
			t.Errorf("key leaked in %v", e)
		}
	}
}

// compactProto renders a message on one line.
func compactProto(t testing.TB, m proto.Message) string {
	t.Helper()
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// collect reads a stream to its end.
func collect(st provider.Stream) ([]*provider.Event, error) {
	defer st.Close()
	var evs []*provider.Event
	for {
		ev, err := st.Recv()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// TestThinkingRoundTrip continues a conversation with the answer Generate
// gave (thinking and two tool calls) and the tool results: the assistant
// turn goes back with its thinking and its calls, the results keyed by the
// calls' ids, and the next answer's thinking is a Reasoning part again.
func TestThinkingRoundTrip(t *testing.T) {
	t.Parallel()
	first := providertest.ReplayFile(t, td("chat_thinking_tools.http"))
	res, err := newTestProvider(t, first).Generate(context.Background(), thinkingToolsRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Message.Parts) != 3 || res.Message.Parts[0].GetReasoning() == nil {
		t.Fatalf("first answer parts = %v", res.Message.Parts)
	}
	calls := map[string]string{} // call id -> city
	for _, p := range res.Message.Parts[1:] {
		tc := p.GetToolCall()
		var args struct{ Location string }
		if err := json.Unmarshal([]byte(tc.GetArguments()), &args); err != nil {
			t.Fatal(err)
		}
		calls[tc.CallId] = args.Location
	}
	temps := map[string]string{"Paris, FR": `{"temperature":18,"unit":"celsius"}`, "Tokyo, JP": `{"temperature":22,"unit":"celsius"}`}
	tool := msg(llmrelayv1.Role_ROLE_TOOL)
	for _, p := range res.Message.Parts[1:] {
		id := p.GetToolCall().CallId
		tool.Parts = append(tool.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: id, Content: temps[calls[id]],
		}}})
	}
	req := thinkingToolsRequest(t)
	req.Messages = append(req.Messages, res.Message, tool)

	second := providertest.ReplayFile(t, td("chat_thinking_followup.http"))
	res2, err := newTestProvider(t, second).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Meta.Warnings) != 0 {
		t.Errorf("warnings = %v", res2.Meta.Warnings)
	}
	c := second.Last(t)
	var body chatRequest
	if err := json.Unmarshal(c.Body, &body); err != nil {
		t.Fatal(err)
	}
	if got, want := body.Messages[1].Thinking, res.Message.Parts[0].GetReasoning().GetText(); got != want || got == "" {
		t.Errorf("assistant thinking sent = %q, want %q", got, want)
	}
	for _, m := range body.Messages[2:] {
		if m.Role != "tool" || temps[calls[m.ToolCallID]] != m.Content {
			t.Errorf("tool message %+v not keyed by its call id", m)
		}
	}
	providertest.Golden(t, td("chat_thinking_followup.golden"), renderResult(t, res2))
	providertest.Golden(t, td("chat_thinking_followup.request.golden"), providertest.RequestGolden(c, requestHeaders...))
}
