package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func toolPartsReq(parts ...*llmrelayv1.Part) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "qwen2.5vl:7b", Format: "ollama",
		Tools: []*llmrelayv1.Tool{{Name: "screenshot", Parameters: `{"type":"object","properties":{"page":{"type":"string"}}}`}},
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("What does the login page look like?")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_tp25_ol", Name: "screenshot", Arguments: `{"page":"login"}`}}}),
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
				CallId: "call_tp25_ol", Content: "Captured the login page.", Parts: parts}}}),
		}, Options: &llmrelayv1.GenerationOptions{}}
}

// A tool result's text parts join its content; its images go in the tool
// message's images (Ollama's prompt builder takes images on any role); a
// file is refused naming its part.
func TestToolResultParts(t *testing.T) {
	t.Parallel()
	png := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MimeType: "image/png"}}}
	srv := providertest.ReplayFile(t, td("chat_vision.http"))
	if _, err := newTestProvider(t, srv).Generate(context.Background(), toolPartsReq(text("Viewport 1280x800."), png)); err != nil {
		t.Fatal(err)
	}
	last := srv.Last(t)
	var b struct {
		Messages []struct {
			Role    string   `json:"role"`
			Content string   `json:"content"`
			Images  []string `json:"images"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(last.Body, &b); err != nil || len(b.Messages) != 3 {
		t.Fatalf("body %s", last.Body)
	}
	if m := b.Messages[2]; m.Role != "tool" || m.Content != "Captured the login page.\nViewport 1280x800." || len(m.Images) != 1 || m.Images[0] != "iVBORw0KGgo=" {
		t.Errorf("tool message %+v", m)
	}
	providertest.Golden(t, td("toolresult_parts.request.golden"), providertest.RequestGolden(last, requestHeaders...))

	pdf := &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("%PDF-1.4")}, MimeType: "application/pdf"}}}
	_, err := newTestProvider(t, srv).Generate(context.Background(), toolPartsReq(pdf))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "messages[2].parts[0].tool_result.parts[0].file" {
		t.Errorf("err %v", err)
	}
}
