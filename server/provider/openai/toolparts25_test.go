package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

var pngBytes25 = []byte("\x89PNG\r\n\x1a\n")

// toolPartsReq is a turn whose tool result carries parts
// (ToolResult.parts) after its content.
func toolPartsReq(format, model string, parts ...*llmrelayv1.Part) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: model, Format: format,
		Tools: []*llmrelayv1.Tool{{Name: "screenshot", Parameters: `{"type":"object","properties":{"page":{"type":"string"}}}`}},
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("What does the login page look like?")}},
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_Tp25ShotQ4mW", Name: "screenshot", Arguments: `{"page":"login"}`}}}}},
			{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: "call_Tp25ShotQ4mW", Content: "Captured the login page.", Parts: parts}}}}},
		}, Options: &llmrelayv1.GenerationOptions{}}
}

func shotParts25() []*llmrelayv1.Part {
	return []*llmrelayv1.Part{
		text("Viewport 1280x800."),
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: pngBytes25}, MimeType: "image/png", Detail: llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH}}},
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/login-full.png"}}}},
		{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("%PDF-1.4")}, MimeType: "application/pdf", Filename: "login.pdf"}}},
		{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_FileId{FileId: "file-Tp25Ab12Cd34Ef56"}}}},
	}
}

// sentInput is the input items of a captured Responses request.
func sentInput(t *testing.T, body []byte) []any {
	t.Helper()
	var b struct {
		Input []any `json:"input"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return b.Input
}

// The Responses API takes a function_call_output's output as a list of
// input_text, input_image and input_file items: a tool result with parts
// goes so, its content the first input_text.
func TestResponsesToolResultParts(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_pyd_openai_document_url_input_response_api.http"))
	if _, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), toolPartsReq(formatResponses, "gpt-4.1-nano", shotParts25()...)); err != nil {
		t.Fatal(err)
	}
	last := srv.Last(t)
	in := sentInput(t, last.Body)
	if len(in) != 3 {
		t.Fatalf("input %s", last.Body)
	}
	want := jsonOf(t, `{"type":"function_call_output","call_id":"call_Tp25ShotQ4mW","output":[`+
		`{"type":"input_text","text":"Captured the login page."},{"type":"input_text","text":"Viewport 1280x800."},`+
		`{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"high"},`+
		`{"type":"input_image","image_url":"https://example.com/login-full.png"},`+
		`{"type":"input_file","file_data":"data:application/pdf;base64,JVBERi0xLjQ=","filename":"login.pdf"},`+
		`{"type":"input_file","file_id":"file-Tp25Ab12Cd34Ef56"}]}`)
	if !reflect.DeepEqual(in[2], want) {
		g, _ := json.Marshal(in[2])
		t.Errorf("output item %s", g)
	}
	providertest.Golden(t, td("toolresult_parts_responses.request.golden"), providertest.RequestGolden(last, authHeaders...))
}

// A file the Responses API does not take is refused naming the part of the
// tool result.
func TestResponsesToolResultPartsRefused(t *testing.T) {
	t.Parallel()
	audio := &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"}}}
	_, err := newTestProvider(t, kOpenAI, "http://127.0.0.1:1").Generate(context.Background(), toolPartsReq(formatResponses, "gpt-4.1-nano", text("x"), audio))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "messages[2].parts[0].tool_result.parts[1].file.mime_type" {
		t.Errorf("err %v", err)
	}
}

// Chat Completions' tool message takes text only: a result's text parts
// join its content with newlines; an image is refused naming its part
// (never dropped).
func TestChatToolResultParts(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_pyd_openai_uploaded_file_input.http"))
	if _, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), toolPartsReq("openai-chat", "gpt-4o", text("Viewport 1280x800."), text(""), text("Title: Sign in"))); err != nil {
		t.Fatal(err)
	}
	last := srv.Last(t)
	var b struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(last.Body, &b); err != nil || len(b.Messages) != 3 {
		t.Fatalf("body %s", last.Body)
	}
	if c := b.Messages[2]["content"]; c != "Captured the login page.\nViewport 1280x800.\nTitle: Sign in" {
		t.Errorf("tool content %q", c)
	}
	providertest.Golden(t, td("toolresult_parts_chat_text.request.golden"), providertest.RequestGolden(last, authHeaders...))

	img := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: pngBytes25}, MimeType: "image/png"}}}
	_, err := newTestProvider(t, kOpenAI, "http://127.0.0.1:1").Generate(context.Background(), toolPartsReq("openai-chat", "gpt-4o", text("x"), img))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "messages[2].parts[0].tool_result.parts[1].image" {
		t.Errorf("err %v", err)
	}
}

// OpenAI's refusal of an output item of a function_call_output names the
// tool result's part it was built from (the content is item 0 when set).
func TestResponsesToolResultPartsRefusalField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ param, want string }{
		{"input[2].output[3].image_url", "messages[2].parts[0].tool_result.parts[2]"},
		{"input[2].output[0]", "messages[2].parts[0].tool_result.content"},
		{"input[2].output", "messages[2].parts[0].tool_result"},
	} {
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("x-request-id", "req_tp25refusal")
		body := `{"error":{"message":"Invalid image in tool output.","type":"invalid_request_error","param":"` + tc.param + `","code":"invalid_value"}}`
		srv := providertest.Replay(t, providertest.Recording{Status: 400, Header: h, Body: []byte(body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), toolPartsReq(formatResponses, "gpt-4.1-nano", shotParts25()...))
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Param != tc.want {
			t.Errorf("%s: %v", tc.param, err)
		}
	}
}
