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
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// The round 23 input matrix: every request field of Chat, Tools and Embed
// (each part kind, tool definitions and choice, the generation options,
// provider options and extra_body, options merged with the configured
// ones) against every adapter (OpenAI Chat Completions on a compatible
// server, Azure OpenAI, the OpenAI Responses API, Anthropic, Gemini,
// Ollama), through the gRPC server against an upstream that keeps what it
// is sent. Each cell is one of three outcomes, never a fourth: the field
// reaches the provider (the body holds it as the provider's API names it);
// the call is InvalidArgument with a BadRequest naming the request's field
// and no provider is called; or the request is relayed without it and
// meta.warnings (or meta.dropped_options) says so. A cell with neither
// refusal nor warning also asserts that the answer carries no warning.
//
// The limits are the providers' documented ones: Anthropic's inline image
// media_type enum (image/jpeg, image/png, image/gif, image/webp: the Python
// SDK's Base64ImageSourceParam, anthropics/anthropic-sdk-python
// src/anthropic/types/base64_image_source_param.py @
// 539422cde127564a60d9bf1e700445f39e0cff33); OpenAI's and Azure's image
// types (PNG, JPEG, WEBP, non-animated GIF: OpenAI's images and vision
// guide, and Azure's 400 "You uploaded an unsupported image. Ensure the
// image is below 20 MB and in one of these formats: png, jpeg, gif, webp");
// Ollama's placing of a message's images before its text (ollama/ollama
// server/prompt.go chatPrompt @ 0159e10a0eafcbd615a2767f5dc687ae77fcf199
// prefixes an [img-N] tag per image to the content); the others as the
// catalog and the adapters cite them (OpenAI 4 stop sequences and 1-64
// character tool names, Gemini 5 stop sequences and an int32 seed,
// Anthropic 1-128 character tool names without dots, temperature 0-1).

const in23YAML = `
defaults:
  retry: {max_attempts: 1}
providers:
  - {name: oai, type: openai, base_url: "{{URL}}/v1", api_key: sk-test-input23-0000}
  - {name: az, type: azure, api_version: "2024-10-21", base_url: "{{URL}}", api_key: in23azurekey000000000000000000000}
  - {name: ant, type: anthropic, base_url: "{{URL}}", api_key: sk-ant-test-input23-0000, default_max_tokens: 64}
  - {name: goog, type: gemini, base_url: "{{URL}}", api_key: AIzaSyTEST-input23-000000000000000000000}
  - {name: oll, type: ollama, base_url: "{{URL}}"}
models:
  - name: chat
    provider: oai
    upstream_model: gpt-4o
    capabilities: {chat: {format: openai-chat}, tools: {format: openai-tools}, vision: {format: openai-chat}, documents: {format: openai-chat}, audio: {format: openai-chat}}
  - name: azure
    provider: az
    upstream_model: gpt-4o-in23
    capabilities: {chat: {format: openai-chat}, tools: {format: openai-tools}, vision: {format: openai-chat}, documents: {format: openai-chat}, audio: {format: openai-chat}}
  - name: resp
    provider: oai
    upstream_model: gpt-4.1
    capabilities: {chat: {format: openai-responses}, tools: {format: openai-responses}, vision: {format: openai-responses}, documents: {format: openai-responses}}
  - name: claude
    provider: ant
    upstream_model: claude-sonnet-4-5
    capabilities: {chat: {format: anthropic-messages}, tools: {format: anthropic-messages}, vision: {format: anthropic-messages}, documents: {format: anthropic-messages}}
  - name: claudecfg
    provider: ant
    upstream_model: claude-sonnet-4-5
    capabilities:
      chat: {format: anthropic-messages, options: {temperature: 0.7}}
  - name: flash
    provider: goog
    upstream_model: gemini-2.5-flash
    capabilities: {chat: {format: gemini}, tools: {format: gemini}, vision: {format: gemini}, documents: {format: gemini}, audio: {format: gemini}}
  - name: flashcfg
    provider: goog
    upstream_model: gemini-2.5-flash
    capabilities:
      chat: {format: gemini, options: {stop: ["a", "b", "c", "d"]}}
  - name: llama
    provider: oll
    upstream_model: llama3.2
    capabilities: {chat: {format: ollama}, tools: {format: ollama}, vision: {format: ollama}}
  - {name: e-oai, provider: oai, upstream_model: text-embedding-3-small, capabilities: {embeddings: {format: openai-embeddings}}}
  - {name: e-gem, provider: goog, upstream_model: gemini-embedding-001, capabilities: {embeddings: {format: gemini-embeddings}}}
  - {name: e-oll, provider: oll, upstream_model: nomic-embed-text, capabilities: {embeddings: {format: ollama-embeddings}}}
`

// in23Upstream answers every adapter's endpoint with a short success and
// keeps the bodies it was sent (path, anthropic-beta header, body).
type in23Upstream struct {
	mu   sync.Mutex
	sent []string
}

func (u *in23Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.sent = append(u.sent, r.URL.Path+" beta="+r.Header.Get("anthropic-beta")+" "+string(b))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	var body string
	switch {
	case strings.HasSuffix(p, ":generateContent"):
		body = `{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}],` +
			`"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":1,"totalTokenCount":10},"modelVersion":"gemini-2.5-flash","responseId":"in23-gem"}`
	case strings.HasSuffix(p, ":embedContent"):
		body = `{"embedding":{"values":[0.125,-0.5]}}`
	case strings.HasSuffix(p, "/v1/messages"):
		body = `{"model":"claude-sonnet-4-5-20250929","id":"msg_in23","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],` +
			`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}`
	case strings.HasSuffix(p, "/api/chat"):
		body = `{"model":"llama3.2","created_at":"2025-11-25T00:23:00.1Z","message":{"role":"assistant","content":"ok"},"done_reason":"stop","done":true,"prompt_eval_count":9,"eval_count":1}`
	case strings.HasSuffix(p, "/api/embed"):
		body = `{"model":"nomic-embed-text","embeddings":[[0.125,-0.5]]}`
	case strings.HasSuffix(p, "/responses"):
		body = `{"id":"resp_in23","object":"response","created_at":1764030180,"status":"completed","model":"gpt-4.1-2025-04-14",` +
			`"output":[{"id":"msg_in23","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"ok"}],"role":"assistant"}],` +
			`"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":0},"output_tokens":1,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":10}}`
	case strings.HasSuffix(p, "/embeddings"):
		body = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.125,-0.5]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`
	case strings.HasSuffix(p, "/chat/completions"):
		body = `{"id":"chatcmpl-in23","object":"chat.completion","created":1764030180,"model":"gpt-4o-2024-08-06",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`
	default:
		http.Error(w, `{"error":{"message":"not expected in this test"}}`, http.StatusTeapot)
		return
	}
	_, _ = io.WriteString(w, body)
}

// take returns the bodies sent since the last take.
func (u *in23Upstream) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.sent
	u.sent = nil
	return s
}

type in23Call func(llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error)

// in23Want is one cell's outcome: refused naming field (code
// InvalidArgument unless code says otherwise); or sent, the body holding
// every sent and none of absent, with the warning warn (none when empty)
// and the dropped option dropped.
type in23Want struct {
	field   string
	code    codes.Code
	sent    []string
	absent  []string
	warn    string
	dropped string
}

func refused(field string) in23Want { return in23Want{field: field, code: codes.InvalidArgument} }

func sends(s ...string) in23Want { return in23Want{sent: s} }

func warns(w string, s ...string) in23Want { return in23Want{warn: w, sent: s} }

func noCapability() in23Want { return in23Want{code: codes.FailedPrecondition} }

var in23Off = &llmrelayv1.ResponseFormat{Validation: llmrelayv1.OutputValidationMode_OUTPUT_VALIDATION_MODE_OFF}

func in23Chat(model string, msgs []*llmrelayv1.Message, o *llmrelayv1.GenerationOptions, po *llmrelayv1.ProviderOptions) in23Call {
	return func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
		r, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: model, Messages: msgs, Options: o, ProviderOptions: po})
		return r.GetMeta(), err
	}
}

func in23Tools(model string, msgs []*llmrelayv1.Message, tools []*llmrelayv1.Tool, o *llmrelayv1.GenerationOptions) in23Call {
	return func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
		r, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: model, Messages: msgs, Tools: tools, Options: o})
		return r.GetMeta(), err
	}
}

func in23Embed(req *llmrelayv1.EmbedRequest) in23Call {
	return func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
		r, err := c.Embed(context.Background(), req)
		return r.GetMeta(), err
	}
}

func in23Text(s string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}}
}

func in23User(parts ...*llmrelayv1.Part) []*llmrelayv1.Message {
	return []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: parts}}
}

func in23Image(img *llmrelayv1.Image) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: img}}
}

func in23ImageData(data, mt string) *llmrelayv1.Part {
	return in23Image(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte(data)}, MimeType: mt})
}

func in23ImageURL(u string) *llmrelayv1.Part {
	return in23Image(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: u}})
}

func in23File(f *llmrelayv1.File) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: f}}
}

func in23FileData(data, mt string) *llmrelayv1.Part {
	return in23File(&llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte(data)}, MimeType: mt})
}

// in23History is a conversation with a named user, an assistant turn
// calling get_weather (with a Gemini signature) and a failed result.
func in23History() []*llmrelayv1.Message {
	return []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_USER, Name: "alice", Parts: []*llmrelayv1.Part{in23Text("Weather in Lyon?")}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: "call_in23_lyon", Name: "get_weather", Arguments: `{"city":"Lyon"}`, Signature: "c2lnLWluMjM="}}}}},
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: "call_in23_lyon", Content: "station offline", IsError: true}}}}},
	}
}

func in23Tool(name string) *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: name, Description: "Weather for a city",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}
}

func TestInput23Matrix(t *testing.T) {
	up := &in23Upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	c, _ := startWith(t, in23YAML, srv.URL)

	look := func(p *llmrelayv1.Part) []*llmrelayv1.Message { return in23User(in23Text("look"), p) }
	chat := func(model string, msgs []*llmrelayv1.Message) in23Call { return in23Chat(model, msgs, nil, nil) }
	opts := func(model string, o *llmrelayv1.GenerationOptions) in23Call {
		return in23Chat(model, in23User(in23Text("hi")), o, nil)
	}
	po := func(model string, p *llmrelayv1.ProviderOptions) in23Call {
		return in23Chat(model, in23User(in23Text("hi")), nil, p)
	}
	ignoring := func(model string, o *llmrelayv1.GenerationOptions) in23Call {
		return func(c llmrelayv1.GatewayServiceClient) (*llmrelayv1.ResponseMeta, error) {
			r, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: model, Messages: in23User(in23Text("hi")), Options: o,
				Call: &llmrelayv1.CallOptions{IgnoreInvalidOptions: true}})
			return r.GetMeta(), err
		}
	}
	tools := func(model string, o *llmrelayv1.GenerationOptions, ts ...*llmrelayv1.Tool) in23Call {
		return in23Tools(model, in23User(in23Text("Weather in Lyon?")), ts, o)
	}
	f64, i32, i64 := proto.Float64, proto.Int32, proto.Int64
	choice := func(mode llmrelayv1.ToolChoiceMode) *llmrelayv1.ToolChoice {
		return &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: mode}}
	}
	schemaFormat := &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, Validation: in23Off.Validation}
	jsonFormat := &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT, Validation: in23Off.Validation}
	openai := func(o *llmrelayv1.OpenAIOptions) *llmrelayv1.ProviderOptions {
		return &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: o}}
	}
	five := []string{"s1", "s2", "s3", "s4", "s5"}
	bigMeta := map[string]string{}
	for _, k := range strings.Fields("a b c d e f g h i j k l m n o p q") {
		bigMeta[k] = "v"
	}
	interleaved := in23User(in23Text("first:"), in23ImageData("PNG1", "image/png"), in23Text("second:"), in23ImageData("PNG2", "image/png"))
	foreignReasoning := []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{in23Text("q")}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
			{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: "pondering", Signature: "c2ln", Provider: "elsewhere"}}}, in23Text("a")}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{in23Text("q2")}},
	}
	refusalTurn := []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{in23Text("q")}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Refusal{Refusal: "I cannot help with that"}}}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{in23Text("why")}},
	}
	midSystem := []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{in23Text("q")}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{in23Text("a")}},
		{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{in23Text("now be terse")}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{in23Text("q2")}},
	}
	detailHigh := in23Image(&llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/in23.png"}, Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH})
	detailData := in23Image(&llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("PNG")}, MimeType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH})
	pdfURL := in23File(&llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://example.com/in23.pdf"}, MimeType: "application/pdf"})
	fileID := in23File(&llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "file-in23abc"}, MimeType: "application/pdf"})

	cases := []struct {
		name string
		call in23Call
		want in23Want
	}{
		// Text.
		{"text/chat", chat("chat", in23User(in23Text("look"))), sends(`"content":"look"`)},
		{"text/azure", chat("azure", in23User(in23Text("look"))), sends(`"content":"look"`)},
		{"text/resp", chat("resp", in23User(in23Text("look"))), sends(`{"type":"input_text","text":"look"}`)},
		{"text/claude", chat("claude", in23User(in23Text("look"))), sends(`{"type":"text","text":"look"}`)},
		{"text/flash", chat("flash", in23User(in23Text("look"))), sends(`{"text":"look"}`)},
		{"text/llama", chat("llama", in23User(in23Text("look"))), sends(`"content":"look"`)},

		// An image by http(s) URL: Ollama takes bytes only; Gemini fetches
		// external URLs (fileData).
		{"image url/chat", chat("chat", look(in23ImageURL("https://example.com/in23.png"))), sends(`"image_url":{"url":"https://example.com/in23.png"}`)},
		{"image url/resp", chat("resp", look(in23ImageURL("https://example.com/in23.png"))), sends(`"type":"input_image","image_url":"https://example.com/in23.png"`)},
		{"image url/claude", chat("claude", look(in23ImageURL("https://example.com/in23.png"))), sends(`"source":{"type":"url","url":"https://example.com/in23.png"}`)},
		{"image url/flash", chat("flash", look(in23ImageURL("https://example.com/in23.png"))), sends(`"fileData":{"mimeType":"image/png","fileUri":"https://example.com/in23.png"}`)},
		{"image url/llama", chat("llama", look(in23ImageURL("https://example.com/in23.png"))), refused("messages[0].parts[1].image.url")},

		// An image's bytes.
		{"image png/chat", chat("chat", look(in23ImageData("PNG", "image/png"))), sends(`"url":"data:image/png;base64,UE5H"`)},
		{"image png/azure", chat("azure", look(in23ImageData("PNG", "image/png"))), sends(`"url":"data:image/png;base64,UE5H"`)},
		{"image png/resp", chat("resp", look(in23ImageData("PNG", "image/png"))), sends(`"image_url":"data:image/png;base64,UE5H"`)},
		{"image png/claude", chat("claude", look(in23ImageData("PNG", "image/png"))), sends(`"source":{"type":"base64","media_type":"image/png","data":"UE5H"}`)},
		{"image png/flash", chat("flash", look(in23ImageData("PNG", "image/png"))), sends(`"inlineData":{"mimeType":"image/png","data":"UE5H"}`)},
		{"image png/llama", chat("llama", look(in23ImageData("PNG", "image/png"))), sends(`"images":["UE5H"]`)},

		// An image type the provider refuses: named before the call
		// (OpenAI's and Azure's own APIs, Anthropic); a compatible server,
		// Gemini and Ollama judge for themselves.
		{"image bmp/chat (compatible server)", chat("chat", look(in23ImageData("BMP", "image/bmp"))), sends(`data:image/bmp;base64,Qk1Q`)},
		{"image bmp/azure", chat("azure", look(in23ImageData("BMP", "image/bmp"))), refused("messages[0].parts[1].image.mime_type")},
		{"image svg data url/azure", chat("azure", look(in23ImageURL("data:image/svg+xml;base64,PHN2Zz4="))), refused("messages[0].parts[1].image.url")},
		{"image bmp/claude", chat("claude", look(in23ImageData("BMP", "image/bmp"))), refused("messages[0].parts[1].image.mime_type")},
		{"image heic/claude", chat("claude", look(in23ImageData("HEIC", "image/heic"))), refused("messages[0].parts[1].image.mime_type")},
		{"image svg data url/claude", chat("claude", look(in23ImageURL("data:image/svg+xml;base64,PHN2Zz4="))), refused("messages[0].parts[1].image.url")},
		{"image jpg/claude", chat("claude", look(in23ImageData("JPG", "image/jpg"))), sends(`"media_type":"image/jpeg","data":"SlBH"`)},
		{"image heic/flash", chat("flash", look(in23ImageData("HEIC", "image/heic"))), sends(`"inlineData":{"mimeType":"image/heic"`)},

		// An image's detail level.
		{"image detail/chat", chat("chat", look(detailHigh)), sends(`"detail":"high"`)},
		{"image detail/resp", chat("resp", look(detailHigh)), sends(`"detail":"high"`)},
		{"image detail/claude", chat("claude", look(detailHigh)), warns("messages[0].parts[1].image.detail IMAGE_DETAIL_HIGH not sent")},
		{"image detail/flash", chat("flash", look(detailHigh)), warns("messages[0].parts[1].image.detail IMAGE_DETAIL_HIGH not sent")},
		{"image detail/llama", chat("llama", look(detailData)), warns("messages[0].parts[1].image.detail IMAGE_DETAIL_HIGH not sent")},

		// Text and images interleaved: Ollama puts images before the text.
		{"interleaved/chat", chat("chat", interleaved), sends(`"text":"first:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5HMQ=="}},{"type":"text","text":"second:"}`)},
		{"interleaved/claude", chat("claude", interleaved), sends(`"text":"first:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"UE5HMQ=="}},{"type":"text","text":"second:"}`)},
		{"interleaved/flash", chat("flash", interleaved), sends(`{"text":"first:"},{"inlineData":{"mimeType":"image/png","data":"UE5HMQ=="}},{"text":"second:"}`)},
		{"interleaved/llama", chat("llama", interleaved), warns("messages[0].parts[2]: text and images interleave", `"content":"first:\nsecond:","images":["UE5HMQ==","UE5HMg=="]`)},
		{"image then text/llama", chat("llama", in23User(in23ImageData("PNG", "image/png"), in23Text("what is it?"))), sends(`"content":"what is it?","images":["UE5H"]`)},
		{"text then images/llama", chat("llama", in23User(in23Text("compare"), in23ImageData("PNG1", "image/png"), in23ImageData("PNG2", "image/png"))), sends(`"content":"compare","images":["UE5HMQ==","UE5HMg=="]`)},

		// A PDF's bytes.
		{"pdf data/chat", chat("chat", look(in23FileData("%PDF-1.4", "application/pdf"))), sends(`"file":{"file_data":"data:application/pdf;base64,JVBERi0xLjQ="`)},
		{"pdf data/resp", chat("resp", look(in23FileData("%PDF-1.4", "application/pdf"))), sends(`"type":"input_file","file_data":"data:application/pdf;base64,JVBERi0xLjQ="`)},
		{"pdf data/claude", chat("claude", look(in23FileData("%PDF-1.4", "application/pdf"))), sends(`"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="}`)},
		{"pdf data/flash", chat("flash", look(in23FileData("%PDF-1.4", "application/pdf"))), sends(`"inlineData":{"mimeType":"application/pdf","data":"JVBERi0xLjQ="}`)},
		{"pdf data/llama", chat("llama", look(in23FileData("%PDF-1.4", "application/pdf"))), noCapability()},

		// A PDF by URL.
		{"pdf url/chat", chat("chat", look(pdfURL)), refused("messages[0].parts[1].file.url")},
		{"pdf url/resp", chat("resp", look(pdfURL)), sends(`"type":"input_file","file_url":"https://example.com/in23.pdf"`)},
		{"pdf url/claude", chat("claude", look(pdfURL)), sends(`"type":"document","source":{"type":"url","url":"https://example.com/in23.pdf"}`)},
		{"pdf url/flash", chat("flash", look(pdfURL)), sends(`"fileData":{"mimeType":"application/pdf","fileUri":"https://example.com/in23.pdf"}`)},

		// A plain text document.
		{"text file/chat", chat("chat", look(in23FileData("hello", "text/plain"))), refused("messages[0].parts[1].file.mime_type")},
		{"text file/resp", chat("resp", look(in23FileData("hello", "text/plain"))), sends(`"file_data":"data:text/plain;base64,aGVsbG8="`)},
		{"text file/claude", chat("claude", look(in23FileData("hello", "text/plain"))), sends(`"source":{"type":"text","media_type":"text/plain","data":"hello"}`)},
		{"text file/flash", chat("flash", look(in23FileData("hello", "text/plain"))), sends(`"inlineData":{"mimeType":"text/plain","data":"aGVsbG8="}`)},

		// An uploaded file.
		{"file id/chat", chat("chat", look(fileID)), sends(`"file":{"file_id":"file-in23abc"}`)},
		{"file id/resp", chat("resp", look(fileID)), sends(`"type":"input_file","file_id":"file-in23abc"`)},
		{"file id/claude", chat("claude", look(fileID)), sends(`beta=files-api-2025-04-14`, `"source":{"type":"file","file_id":"file-in23abc"}`)},
		{"file id/flash", chat("flash", look(fileID)), sends(`"fileData":{"mimeType":"application/pdf","fileUri":"file-in23abc"}`)},

		// Audio.
		{"wav/chat", chat("chat", look(in23FileData("RIFF", "audio/wav"))), sends(`"input_audio":{"data":"UklGRg==","format":"wav"}`)},
		{"mp3/azure", chat("azure", look(in23FileData("ID3", "audio/mpeg"))), sends(`"input_audio":{"data":"SUQz","format":"mp3"}`)},
		{"ogg/chat", chat("chat", look(in23FileData("OggS", "audio/ogg"))), refused("messages[0].parts[1].file.mime_type")},
		{"wav url/chat", chat("chat", look(in23File(&llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://example.com/in23.wav"}, MimeType: "audio/wav"}))),
			refused("messages[0].parts[1].file.url")},
		{"wav/resp", chat("resp", look(in23FileData("RIFF", "audio/wav"))), noCapability()},
		{"wav/claude", chat("claude", look(in23FileData("RIFF", "audio/wav"))), noCapability()},
		{"ogg/flash", chat("flash", look(in23FileData("OggS", "audio/ogg"))), sends(`"inlineData":{"mimeType":"audio/ogg","data":"T2dnUw=="}`)},

		// Video.
		{"mp4/chat", chat("chat", look(in23FileData("ftyp", "video/mp4"))), refused("messages[0].parts[1].file.mime_type")},
		{"mp4/resp", chat("resp", look(in23FileData("ftyp", "video/mp4"))), refused("messages[0].parts[1].file.mime_type")},
		{"mp4/claude", chat("claude", look(in23FileData("ftyp", "video/mp4"))), refused("messages[0].parts[1].file.mime_type")},
		{"mp4/flash", chat("flash", look(in23FileData("ftyp", "video/mp4"))), sends(`"inlineData":{"mimeType":"video/mp4","data":"ZnR5cA=="}`)},

		// An earlier refusal.
		{"refusal/chat", chat("chat", refusalTurn), sends(`"role":"assistant","content":null,"refusal":"I cannot help with that"`)},
		{"refusal/resp", chat("resp", refusalTurn), sends(`{"type":"refusal","refusal":"I cannot help with that"}`)},
		{"refusal/claude", chat("claude", refusalTurn), sends(`"role":"assistant","content":[{"type":"text","text":"I cannot help with that"}]`)},
		{"refusal/flash", chat("flash", refusalTurn), sends(`"role":"model","parts":[{"text":"I cannot help with that"}]`)},
		{"refusal/llama", chat("llama", refusalTurn), sends(`"role":"assistant","content":"I cannot help with that"`)},

		// Reasoning from another provider: its text only, or nothing.
		{"foreign reasoning/chat", chat("chat", foreignReasoning), warns("reasoning part(s) of earlier assistant turns not sent")},
		{"foreign reasoning/claude", chat("claude", foreignReasoning), warns("reasoning without a signature not sent")},
		{"foreign reasoning/flash", chat("flash", foreignReasoning), warns("reasoning from elsewhere sent to gemini without its signature", `{"text":"pondering","thought":true}`)},
		{"foreign reasoning/llama", chat("llama", foreignReasoning), warns("reasoning from elsewhere sent to ollama without its signature", `"thinking":"pondering"`)},

		// A system message after the conversation began.
		{"mid system/chat", chat("chat", midSystem), sends(`{"role":"system","content":"now be terse"}`)},
		{"mid system/claude", chat("claude", midSystem), warns("messages[2]: a system message after the conversation began is sent in the system prompt", `"system":"now be terse"`)},
		{"mid system/flash", chat("flash", midSystem), warns("messages[2]: a system message after the conversation began is sent in systemInstruction")},
		{"mid system/llama", chat("llama", midSystem), sends(`{"role":"system","content":"now be terse"}`)},

		// A tool loop: message names, a call's signature, a failed result.
		{"history/chat", in23Tools("chat", in23History(), []*llmrelayv1.Tool{in23Tool("get_weather")}, nil),
			warns("is_error of 1 tool result(s) not sent (messages[2].parts[0])", `"name":"alice"`, `"tool_call_id":"call_in23_lyon"`)},
		{"history/resp", in23Tools("resp", in23History(), []*llmrelayv1.Tool{in23Tool("get_weather")}, nil),
			warns("message names are not part of the OpenAI Responses format", `{"type":"function_call_output","call_id":"call_in23_lyon","output":"station offline"}`)},
		{"history/claude", in23Tools("claude", in23History(), []*llmrelayv1.Tool{in23Tool("get_weather")}, nil),
			warns(`messages[0]: name "alice" not sent`, `"tool_use_id":"call_in23_lyon","content":"station offline","is_error":true`)},
		{"history/flash", in23Tools("flash", in23History(), []*llmrelayv1.Tool{in23Tool("get_weather")}, nil),
			warns(`messages[0]: name "alice" not sent`, `"thoughtSignature":"c2lnLWluMjM="`, `"response":{"error":"station offline"}`)},
		{"history/llama", in23Tools("llama", in23History(), []*llmrelayv1.Tool{in23Tool("get_weather")}, nil),
			warns(`messages[1].parts[0]: tool call "call_in23_lyon" signature is not supported by Ollama; dropped`, `"content":"Error: station offline","tool_name":"get_weather"`)},

		// Tool names: OpenAI's and Azure's APIs take 1-64 of [A-Za-z0-9_-],
		// Anthropic 1-128 without dots or colons, Gemini dots and colons.
		{"dotted tool/chat (compatible server)", tools("chat", nil, in23Tool("web.search")), sends(`"name":"web.search"`)},
		{"dotted tool/azure", tools("azure", nil, in23Tool("web.search")), refused("tools[0].name")},
		{"dotted tool/claude", tools("claude", nil, in23Tool("web.search")), refused("tools[0].name")},
		{"dotted tool/flash", tools("flash", nil, in23Tool("web.search")), sends(`"name":"web.search"`)},
		{"65-character tool/azure", tools("azure", nil, in23Tool(strings.Repeat("t", 65))), refused("tools[0].name")},
		{"65-character tool/claude", tools("claude", nil, in23Tool(strings.Repeat("t", 65))), sends(`"name":"` + strings.Repeat("t", 65) + `"`)},
		{"129-character tool/flash", tools("flash", nil, in23Tool(strings.Repeat("t", 129))), refused("tools[0].name")},

		// Strict tools.
		{"strict tool/chat", tools("chat", nil, &llmrelayv1.Tool{Name: "get_weather", Parameters: in23Tool("x").Parameters, Strict: proto.Bool(true)}), sends(`"strict":true`)},
		{"strict tool/claude", tools("claude", nil, &llmrelayv1.Tool{Name: "get_weather", Parameters: in23Tool("x").Parameters, Strict: proto.Bool(true)}), sends(`"strict":true`)},
		{"strict tool/flash", tools("flash", nil, &llmrelayv1.Tool{Name: "get_weather", Parameters: in23Tool("x").Parameters, Strict: proto.Bool(true)}), sends(`"functionCallingConfig":{"mode":"VALIDATED"}`)},
		{"strict tool/llama", tools("llama", nil, &llmrelayv1.Tool{Name: "get_weather", Parameters: in23Tool("x").Parameters, Strict: proto.Bool(true)}), warns("tools[0]: strict is not supported by Ollama")},

		// Tool choice and parallel calls.
		{"choice required/chat", tools("chat", &llmrelayv1.GenerationOptions{ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}, in23Tool("get_weather")), sends(`"tool_choice":"required"`)},
		{"choice required/resp", tools("resp", &llmrelayv1.GenerationOptions{ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}, in23Tool("get_weather")), sends(`"tool_choice":"required"`)},
		{"choice required/claude", tools("claude", &llmrelayv1.GenerationOptions{ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}, in23Tool("get_weather")), sends(`"tool_choice":{"type":"any"}`)},
		{"choice required/flash", tools("flash", &llmrelayv1.GenerationOptions{ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}, in23Tool("get_weather")), sends(`"functionCallingConfig":{"mode":"ANY"}`)},
		{"choice required/llama", tools("llama", &llmrelayv1.GenerationOptions{ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}, in23Tool("get_weather")), refused("options.tool_choice")},
		{"choice function/chat", tools("chat", &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}}, in23Tool("get_weather")),
			sends(`"tool_choice":{"type":"function","function":{"name":"get_weather"}}`)},
		{"choice function/claude", tools("claude", &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}}, in23Tool("get_weather")),
			sends(`"tool_choice":{"type":"tool","name":"get_weather"}`)},
		{"choice function/flash", tools("flash", &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}}, in23Tool("get_weather")),
			sends(`"allowedFunctionNames":["get_weather"]`)},
		{"choice none/claude", tools("claude", &llmrelayv1.GenerationOptions{ToolChoice: choice(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)}, in23Tool("get_weather")), sends(`"tool_choice":{"type":"none"}`)},
		{"parallel off/chat", tools("chat", &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(false)}, in23Tool("get_weather")), sends(`"parallel_tool_calls":false`)},
		{"parallel off/resp", tools("resp", &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(false)}, in23Tool("get_weather")), sends(`"parallel_tool_calls":false`)},
		{"parallel off/claude", tools("claude", &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(false)}, in23Tool("get_weather")), sends(`"tool_choice":{"type":"auto","disable_parallel_tool_use":true}`)},
		{"parallel off/flash", tools("flash", &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(false)}, in23Tool("get_weather")), refused("options.parallel_tool_calls")},
		{"parallel off/llama", tools("llama", &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(false)}, in23Tool("get_weather")), refused("options.parallel_tool_calls")},
		{"tool options in a Chat call/chat", opts("chat", &llmrelayv1.GenerationOptions{ParallelToolCalls: proto.Bool(false)}), refused("options.parallel_tool_calls")},

		// Sampling options.
		{"temperature/chat", opts("chat", &llmrelayv1.GenerationOptions{Temperature: f64(0.5)}), sends(`"temperature":0.5`)},
		{"temperature/resp", opts("resp", &llmrelayv1.GenerationOptions{Temperature: f64(0.5)}), sends(`"temperature":0.5`)},
		{"temperature/claude", opts("claude", &llmrelayv1.GenerationOptions{Temperature: f64(0.5)}), sends(`"temperature":0.5`)},
		{"temperature/flash", opts("flash", &llmrelayv1.GenerationOptions{Temperature: f64(0.5)}), sends(`"generationConfig":{"temperature":0.5}`)},
		{"temperature/llama", opts("llama", &llmrelayv1.GenerationOptions{Temperature: f64(0.5)}), sends(`"options":{"temperature":0.5}`)},
		{"temperature 1.5/chat", opts("chat", &llmrelayv1.GenerationOptions{Temperature: f64(1.5)}), sends(`"temperature":1.5`)},
		{"temperature 1.5/claude", opts("claude", &llmrelayv1.GenerationOptions{Temperature: f64(1.5)}), refused("options.temperature")},
		{"temperature 2.5/flash", opts("flash", &llmrelayv1.GenerationOptions{Temperature: f64(2.5)}), refused("options.temperature")},
		{"top_p/claude", opts("claude", &llmrelayv1.GenerationOptions{TopP: f64(0.9)}), sends(`"top_p":0.9`)},
		{"top_p 1.5/chat", opts("chat", &llmrelayv1.GenerationOptions{TopP: f64(1.5)}), refused("options.top_p")},
		{"top_k/chat", opts("chat", &llmrelayv1.GenerationOptions{TopK: i32(5)}), refused("options.top_k")},
		{"top_k/azure", opts("azure", &llmrelayv1.GenerationOptions{TopK: i32(5)}), refused("options.top_k")},
		{"top_k/resp", opts("resp", &llmrelayv1.GenerationOptions{TopK: i32(5)}), refused("options.top_k")},
		{"top_k/claude", opts("claude", &llmrelayv1.GenerationOptions{TopK: i32(5)}), sends(`"top_k":5`)},
		{"top_k/flash", opts("flash", &llmrelayv1.GenerationOptions{TopK: i32(5)}), sends(`"topK":5`)},
		{"top_k/llama", opts("llama", &llmrelayv1.GenerationOptions{TopK: i32(5)}), sends(`"top_k":5`)},
		{"top_k dropped/chat", ignoring("chat", &llmrelayv1.GenerationOptions{TopK: i32(5), Temperature: f64(0.5)}),
			in23Want{sent: []string{`"temperature":0.5`}, absent: []string{"top_k"}, dropped: "top_k"}},
		{"seed/chat", opts("chat", &llmrelayv1.GenerationOptions{Seed: i64(7)}), sends(`"seed":7`)},
		{"seed/resp", opts("resp", &llmrelayv1.GenerationOptions{Seed: i64(7)}), refused("options.seed")},
		{"seed/claude", opts("claude", &llmrelayv1.GenerationOptions{Seed: i64(7)}), refused("options.seed")},
		{"seed/flash", opts("flash", &llmrelayv1.GenerationOptions{Seed: i64(7)}), sends(`"seed":7`)},
		{"seed/llama", opts("llama", &llmrelayv1.GenerationOptions{Seed: i64(7)}), sends(`"seed":7`)},
		{"64-bit seed/flash", opts("flash", &llmrelayv1.GenerationOptions{Seed: i64(1 << 40)}), refused("options.seed")},
		{"64-bit seed/chat", opts("chat", &llmrelayv1.GenerationOptions{Seed: i64(1 << 40)}), sends(`"seed":1099511627776`)},
		{"penalties/chat", opts("chat", &llmrelayv1.GenerationOptions{PresencePenalty: f64(0.25), FrequencyPenalty: f64(-0.5)}), sends(`"presence_penalty":0.25,"frequency_penalty":-0.5`)},
		{"penalties/resp", opts("resp", &llmrelayv1.GenerationOptions{PresencePenalty: f64(0.25)}), refused("options.presence_penalty")},
		{"penalties/claude", opts("claude", &llmrelayv1.GenerationOptions{FrequencyPenalty: f64(0.25)}), refused("options.frequency_penalty")},
		{"penalties/flash", opts("flash", &llmrelayv1.GenerationOptions{PresencePenalty: f64(0.25), FrequencyPenalty: f64(-0.5)}), sends(`"presencePenalty":0.25,"frequencyPenalty":-0.5`)},
		{"penalty 2/flash", opts("flash", &llmrelayv1.GenerationOptions{PresencePenalty: f64(2)}), refused("options.presence_penalty")},
		{"penalties/llama", opts("llama", &llmrelayv1.GenerationOptions{PresencePenalty: f64(0.25)}), sends(`"presence_penalty":0.25`)},
		{"max tokens/chat", opts("chat", &llmrelayv1.GenerationOptions{MaxTokens: i32(100)}), sends(`"max_tokens":100`)},
		{"max tokens/resp", opts("resp", &llmrelayv1.GenerationOptions{MaxTokens: i32(100)}), sends(`"max_output_tokens":100`)},
		{"max tokens/claude", opts("claude", &llmrelayv1.GenerationOptions{MaxTokens: i32(100)}), sends(`"max_tokens":100`)},
		{"max tokens/flash", opts("flash", &llmrelayv1.GenerationOptions{MaxTokens: i32(100)}), sends(`"maxOutputTokens":100`)},
		{"max tokens/llama", opts("llama", &llmrelayv1.GenerationOptions{MaxTokens: i32(100)}), sends(`"num_predict":100`)},
		{"max tokens 0/chat", opts("chat", &llmrelayv1.GenerationOptions{MaxTokens: i32(0)}), refused("options.max_tokens")},

		// Stop sequences: OpenAI's and Azure's APIs take 4, Gemini 5, the
		// Responses API none; Anthropic refuses blank ones.
		{"five stops/chat (compatible server)", opts("chat", &llmrelayv1.GenerationOptions{Stop: five}), sends(`"stop":["s1","s2","s3","s4","s5"]`)},
		{"five stops/azure", opts("azure", &llmrelayv1.GenerationOptions{Stop: five}), refused("options.stop")},
		{"stop/resp", opts("resp", &llmrelayv1.GenerationOptions{Stop: five[:1]}), refused("options.stop")},
		{"five stops/claude", opts("claude", &llmrelayv1.GenerationOptions{Stop: five}), sends(`"stop_sequences":["s1","s2","s3","s4","s5"]`)},
		{"blank stop/claude", opts("claude", &llmrelayv1.GenerationOptions{Stop: []string{" "}}), refused("options.stop[0]")},
		{"five stops/flash", opts("flash", &llmrelayv1.GenerationOptions{Stop: five}), sends(`"stopSequences":["s1","s2","s3","s4","s5"]`)},
		{"six stops/flash", opts("flash", &llmrelayv1.GenerationOptions{Stop: append(append([]string{}, five...), "s6")}), refused("options.stop")},
		{"five stops/llama", opts("llama", &llmrelayv1.GenerationOptions{Stop: five}), sends(`"stop":["s1","s2","s3","s4","s5"]`)},

		// Options merged with the configured ones.
		{"configured temperature kept/claude", opts("claudecfg", &llmrelayv1.GenerationOptions{TopP: f64(0.5)}), sends(`"temperature":0.7,"top_p":0.5`)},
		{"temperature over the configured one/claude", opts("claudecfg", &llmrelayv1.GenerationOptions{Temperature: f64(1.5)}), refused("options.temperature")},
		{"configured stops/flash", opts("flashcfg", nil), sends(`"stopSequences":["a","b","c","d"]`)},
		{"stops over the configured ones/flash", opts("flashcfg", &llmrelayv1.GenerationOptions{Stop: append(append([]string{}, five...), "s6")}), refused("options.stop")},

		// Reasoning effort.
		{"effort/chat (not a reasoning model)", opts("chat", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}), refused("options.reasoning_effort")},
		{"effort/claude", opts("claude", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH}), sends(`"thinking":{"type":"enabled","budget_tokens":`)},
		{"effort/flash", opts("flash", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE}), sends(`"thinkingConfig":{"thinkingBudget":0}`)},
		{"effort/llama", opts("llama", &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH}), warns("reasoning_effort high: Ollama takes thinking levels for gpt-oss only", `"think":true`)},

		// Response formats.
		{"json object/chat", opts("chat", &llmrelayv1.GenerationOptions{ResponseFormat: jsonFormat}), sends(`"response_format":{"type":"json_object"}`)},
		{"json object/resp", opts("resp", &llmrelayv1.GenerationOptions{ResponseFormat: jsonFormat}), sends(`"text":{"format":{"type":"json_object"}}`)},
		{"json object/flash", opts("flash", &llmrelayv1.GenerationOptions{ResponseFormat: jsonFormat}), sends(`"responseMimeType":"application/json"`)},
		{"json object/llama", opts("llama", &llmrelayv1.GenerationOptions{ResponseFormat: jsonFormat}), sends(`"format":"json"`)},
		{"json schema/chat", opts("chat", &llmrelayv1.GenerationOptions{ResponseFormat: schemaFormat}), sends(`"response_format":{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"`)},
		{"json schema/resp", opts("resp", &llmrelayv1.GenerationOptions{ResponseFormat: schemaFormat}), sends(`"text":{"format":{"type":"json_schema","name":"response","schema":{"type":"object"`)},
		{"json schema/claude", opts("claude", &llmrelayv1.GenerationOptions{ResponseFormat: schemaFormat}), sends(`"tool_choice":{"type":"tool","name":"json_response"}`)},
		{"json schema/flash", opts("flash", &llmrelayv1.GenerationOptions{ResponseFormat: schemaFormat}), sends(`"responseJsonSchema":{"type":"object"`)},
		{"json schema/llama", opts("llama", &llmrelayv1.GenerationOptions{ResponseFormat: schemaFormat}), sends(`"format":{"type":"object"`)},
		{"json schema with tools/flash 2.5", tools("flash", &llmrelayv1.GenerationOptions{ResponseFormat: schemaFormat}, in23Tool("get_weather")), refused("options.response_format")},

		// Provider options.
		{"openai options/chat", po("chat", openai(&llmrelayv1.OpenAIOptions{User: "u-in23", Store: proto.Bool(true), Metadata: map[string]string{"k": "v"}, ServiceTier: "flex", Logprobs: proto.Bool(true), TopLogprobs: i32(3)})),
			// The upstream's answer has no logprobs: the warning is the answer's, not the request's.
			warns("logprobs were asked for and the answer has none: the server did not return them",
				`"user":"u-in23","store":true,"metadata":{"k":"v"},"service_tier":"flex","logprobs":true,"top_logprobs":3`)},
		{"openai options/resp", po("resp", openai(&llmrelayv1.OpenAIOptions{User: "u-in23", ReasoningSummary: "auto", TopLogprobs: i32(3)})),
			sends(`"reasoning":{"summary":"auto"}`, `"top_logprobs":3`, `"safety_identifier":"u-in23"`)},
		{"reasoning summary/chat", po("chat", openai(&llmrelayv1.OpenAIOptions{ReasoningSummary: "auto"})), warns("provider_options.openai.reasoning_summary not sent")},
		{"top_logprobs 21/azure", po("azure", openai(&llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: i32(21)})), refused("provider_options.openai.top_logprobs")},
		{"17 metadata pairs/azure", po("azure", openai(&llmrelayv1.OpenAIOptions{Metadata: bigMeta})), refused("provider_options.openai.metadata")},
		{"openai options/claude", po("claude", openai(&llmrelayv1.OpenAIOptions{User: "u-in23"})), refused("provider_options.openai")},
		{"anthropic options/claude", po("claude", &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{UserId: "u-in23", Betas: []string{"beta-in23"}}}}),
			sends(`beta=beta-in23`, `"metadata":{"user_id":"u-in23"}`)},
		{"anthropic options/flash", po("flash", &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{UserId: "u-in23"}}}), refused("provider_options.anthropic")},
		{"gemini options/flash", po("flash", &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{IncludeThoughts: proto.Bool(true),
			SafetySettings: []*llmrelayv1.SafetySetting{{Category: "HARM_CATEGORY_HARASSMENT", Threshold: "BLOCK_ONLY_HIGH"}}}}}),
			sends(`"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_ONLY_HIGH"}]`, `"thinkingConfig":{"includeThoughts":true}`)},
		{"ollama options/llama", po("llama", &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{NumCtx: i32(4096), RepeatPenalty: f64(1.1)}}}),
			sends(`"options":{"num_ctx":4096,"repeat_penalty":1.1}`)},
		{"ollama options/chat", po("chat", &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{NumCtx: i32(4096)}}}), refused("provider_options.ollama")},

		// extra_body: merged; a gateway-owned field is ignored and a
		// replaced request value named.
		{"extra body/chat", po("chat", &llmrelayv1.ProviderOptions{ExtraBody: `{"logit_bias":{"50256":-100},"model":"other"}`}),
			warns("extra_body.model ignored", `"logit_bias":{"50256":-100}`, `"model":"gpt-4o"`)},
		{"extra body/claude", in23Chat("claude", in23User(in23Text("hi")), &llmrelayv1.GenerationOptions{Temperature: f64(0.5)}, &llmrelayv1.ProviderOptions{ExtraBody: `{"temperature":0.2}`}),
			warns("extra_body.temperature replaced the value the gateway built from the request", `"temperature":0.2`)},
		{"extra body/flash", po("flash", &llmrelayv1.ProviderOptions{ExtraBody: `{"cachedContent":"cachedContents/in23"}`}), sends(`"cachedContent":"cachedContents/in23"`)},
		{"extra body/llama", po("llama", &llmrelayv1.ProviderOptions{ExtraBody: `{"options":{"mirostat":1}}`}), sends(`"options":{"mirostat":1}`)},

		// Embeddings.
		{"embed dimensions/openai", in23Embed(&llmrelayv1.EmbedRequest{Model: "e-oai", Inputs: []string{"a"}, Dimensions: i32(2)}), sends(`"input":["a"],"dimensions":2`)},
		{"embed dimensions/gemini", in23Embed(&llmrelayv1.EmbedRequest{Model: "e-gem", Inputs: []string{"a"}, Dimensions: i32(2)}), sends(`"outputDimensionality":2`)},
		{"embed dimensions/ollama", in23Embed(&llmrelayv1.EmbedRequest{Model: "e-oll", Inputs: []string{"a"}, Dimensions: i32(2)}), sends(`"input":["a"],"dimensions":2`)},
		{"embed empty input/openai", in23Embed(&llmrelayv1.EmbedRequest{Model: "e-oai", Inputs: []string{""}}), refused("inputs[0]")},
		{"embed openai options/gemini", in23Embed(&llmrelayv1.EmbedRequest{Model: "e-gem", Inputs: []string{"a"}, ProviderOptions: openai(&llmrelayv1.OpenAIOptions{User: "u"})}), refused("provider_options.openai")},
	}
	for _, tc := range cases {
		meta, err := tc.call(c)
		sent := up.take()
		w := tc.want
		if w.code != codes.OK {
			st, _ := status.FromError(err)
			if st.Code() != w.code {
				t.Errorf("%s: %v %q, want %v", tc.name, st.Code(), st.Message(), w.code)
				continue
			}
			if len(sent) != 0 {
				t.Errorf("%s: refused, but the provider was called: %q", tc.name, sent)
			}
			if w.field == "" {
				continue
			}
			_, _, br := statusDetails(t, err)
			if br == nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != w.field {
				t.Errorf("%s: BadRequest %v, want field %q (%s)", tc.name, br, w.field, st.Message())
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(sent) != 1 {
			t.Errorf("%s: %d upstream requests, want 1", tc.name, len(sent))
			continue
		}
		for _, s := range w.sent {
			if !strings.Contains(sent[0], s) {
				t.Errorf("%s: the request lacks %s:\n%s", tc.name, s, sent[0])
			}
		}
		for _, s := range w.absent {
			if strings.Contains(sent[0], s) {
				t.Errorf("%s: the request holds %s:\n%s", tc.name, s, sent[0])
			}
		}
		warnings := meta.GetWarnings()
		switch {
		case w.warn == "" && len(warnings) != 0:
			t.Errorf("%s: warnings %q, want none", tc.name, warnings)
		case w.warn != "" && !slicesContain(warnings, w.warn):
			t.Errorf("%s: warnings %q lack %q", tc.name, warnings, w.warn)
		}
		var dropped []string
		for _, d := range meta.GetDroppedOptions() {
			dropped = append(dropped, d.GetOption())
		}
		if strings.Join(dropped, ",") != w.dropped {
			t.Errorf("%s: dropped options %q, want %q", tc.name, dropped, w.dropped)
		}
	}
}

// slicesContain reports whether one of ss contains sub.
func slicesContain(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestInput23AgentSetup: what the first round's model call refuses of an
// agent's setup is named under setup, and no provider is called: an image
// type Anthropic and Azure refuse, a tool name Azure refuses.
func TestInput23AgentSetup(t *testing.T) {
	up := &in23Upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	c, _ := startWith(t, in23YAML, srv.URL)
	bmp := in23User(in23Text("look"), in23ImageData("BMP", "image/bmp"))
	cases := []struct {
		setup *llmrelayv1.AgentSetup
		field string
	}{
		{&llmrelayv1.AgentSetup{Model: "claude", Messages: bmp, Tools: []*llmrelayv1.Tool{in23Tool("get_weather")}}, "setup.messages[0].parts[1].image.mime_type"},
		{&llmrelayv1.AgentSetup{Model: "azure", Messages: bmp, Tools: []*llmrelayv1.Tool{in23Tool("get_weather")}}, "setup.messages[0].parts[1].image.mime_type"},
		{&llmrelayv1.AgentSetup{Model: "azure", Messages: in23User(in23Text("hi")), Tools: []*llmrelayv1.Tool{in23Tool("web.search")}}, "setup.tools[0].name"},
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
		if st.Code() != codes.InvalidArgument || br == nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != tc.field {
			t.Errorf("%s: %v %q %v, want InvalidArgument on %s", tc.setup.GetModel(), st.Code(), st.Message(), br, tc.field)
		}
	}
	if sent := up.take(); len(sent) != 0 {
		t.Errorf("the provider was called: %q", sent)
	}
}

// TestInput23Stream: StreamChat refuses and warns as Chat does: an image
// type refused before the stream starts, naming the field, and the
// interleaving warning in the end's meta.
func TestInput23Stream(t *testing.T) {
	up := &in23Upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	c, _ := startWith(t, in23YAML, srv.URL)
	bmp := in23User(in23Text("look"), in23ImageData("BMP", "image/bmp"))
	for _, model := range []string{"claude", "azure"} {
		s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: model, Messages: bmp})
		for err == nil {
			_, err = s.Recv()
		}
		st, _, br := statusDetails(t, err)
		if st.Code() != codes.InvalidArgument || br == nil || len(br.GetFieldViolations()) != 1 ||
			br.GetFieldViolations()[0].GetField() != "messages[0].parts[1].image.mime_type" {
			t.Errorf("%s: %v %q %v", model, st.Code(), st.Message(), br)
		}
	}
	if sent := up.take(); len(sent) != 0 {
		t.Errorf("the provider was called: %q", sent)
	}
	interleaved := in23User(in23Text("first:"), in23ImageData("PNG1", "image/png"), in23Text("second:"), in23ImageData("PNG2", "image/png"))
	s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "llama", Messages: interleaved})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if end := ev.GetEnd(); end != nil {
			warnings = end.GetMeta().GetWarnings()
		}
	}
	if !slicesContain(warnings, "messages[0].parts[2]: text and images interleave") {
		t.Errorf("stream end warnings %q", warnings)
	}
	if sent := up.take(); len(sent) != 1 || !strings.Contains(sent[0], `"stream":true`) {
		t.Errorf("sent %q", sent)
	}
}
