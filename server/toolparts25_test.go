package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

const toolPartsYAML = `
defaults:
  retry: {max_attempts: 1}
providers:
  - name: oai
    type: openai
    base_url: {{URL}}
    api_key: sk-test-toolparts
models:
  - name: tools-blind
    provider: oai
    upstream_model: gpt-4o
    capabilities:
      tools: {format: openai-tools}
  - name: chat-vision
    provider: oai
    upstream_model: gpt-4o
    capabilities:
      tools: {format: openai-tools}
      vision: {format: openai-chat}
      documents: {format: openai-chat}
  - name: responses
    provider: oai
    upstream_model: gpt-5
    capabilities:
      tools: {format: openai-responses}
      vision: {format: openai-responses}
`

// toolTurn is a conversation whose last message answers a get_weather call
// with a result carrying parts (ToolResult.parts).
func toolTurn(parts ...*llmrelayv1.Part) []*llmrelayv1.Message {
	return []*llmrelayv1.Message{
		user("What does the forecast map show?"),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_tp25srv", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}},
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: "call_tp25srv", Content: `{"temp_c":18}`, Parts: parts}}}}},
	}
}

func pngPart() *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MimeType: "image/png"}}}
}

// A tool result's parts are checked as user parts are: kinds (text, image,
// file), image and file rules, the capability each needs (vision for an
// image, documents for a document), and whether the capability's format
// takes them in a tool result; each refusal names the field, none calls the
// provider. What the format takes reaches it as a list of output items.
func TestToolResultParts(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies []string
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"resp_tp25srv","object":"response","status":"completed","model":"gpt-5","output":[{"type":"message","id":"msg_tp25srv","status":"completed","role":"assistant","content":[{"type":"output_text","text":"A sunny map.","annotations":[]}]}],"usage":{"input_tokens":30,"output_tokens":4,"total_tokens":34}}`)
	}))
	defer up.Close()
	c, _ := startWith(t, toolPartsYAML, up.URL+"/v1")
	ctx := context.Background()
	tools := func(model string, parts ...*llmrelayv1.Part) func() error {
		return func() error {
			_, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: model, Messages: toolTurn(parts...), Tools: weatherTools(t)})
			return err
		}
	}
	text := func(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }
	nested := &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "c", Name: "n"}}}
	noMime := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("x")}}}}
	emptyFile := filePart(&llmrelayv1.File{Source: &llmrelayv1.File_Data{}, MimeType: "application/pdf"})
	wav := filePart(&llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"})
	cases := []refusalCase{
		{"another kind", tools("responses", text("x"), nested), codes.InvalidArgument, "INVALID_REQUEST", "messages[2].parts[0].tool_result.parts[1]"},
		{"image without mime_type", tools("responses", noMime), codes.InvalidArgument, "INVALID_REQUEST", "messages[2].parts[0].tool_result.parts[0].image.mime_type"},
		{"empty file", tools("responses", emptyFile), codes.InvalidArgument, "INVALID_REQUEST", "messages[2].parts[0].tool_result.parts[0].file.data"},
		{"image without vision", tools("tools-blind", pngPart()), codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", "no vision capability"},
		{"document without documents", tools("responses", pdfPartTP()), codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", "no documents capability"},
		{"chat completions: image", tools("chat-vision", text("map"), pngPart()), codes.InvalidArgument, "INVALID_REQUEST", "messages[2].parts[0].tool_result.parts[1].image"},
		{"chat completions: document", tools("chat-vision", pdfPartTP()), codes.InvalidArgument, "INVALID_REQUEST", "messages[2].parts[0].tool_result.parts[0].file"},
		{"audio without audio", tools("responses", wav), codes.FailedPrecondition, "CAPABILITY_NOT_SUPPORTED", "no audio capability"},
	}
	checkRefusals(t, cases)
	mu.Lock()
	if len(bodies) != 0 {
		t.Fatalf("the provider was called %d times for refused requests", len(bodies))
	}
	mu.Unlock()

	if err := tools("responses", text("Legend: sun."), pngPart())(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var body struct {
		Input []json.RawMessage `json:"input"`
	}
	if len(bodies) != 1 || json.Unmarshal([]byte(bodies[0]), &body) != nil || len(body.Input) != 3 {
		t.Fatalf("bodies = %q", bodies)
	}
	want := `{"type":"function_call_output","call_id":"call_tp25srv","output":[{"type":"input_text","text":"{\"temp_c\":18}"},{"type":"input_text","text":"Legend: sun."},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}`
	if string(body.Input[2]) != want {
		t.Errorf("output item %s\nwant        %s", body.Input[2], want)
	}
}

func pdfPartTP() *llmrelayv1.Part { return filePart(pdfData("%PDF-1.4")) }
