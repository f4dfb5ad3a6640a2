package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// pngBytes is the start of a PNG file: enough for an inline image.
var pngBytes = []byte("\x89PNG\r\n\x1a\n")

// toolPartsRequest is a turn whose tool results carry parts
// (ToolResult.parts): a screenshot's result with its text, a PNG, a PDF
// and an image by URL, and an error result whose only part is an image.
func toolPartsRequest(parts ...*llmrelayv1.Part) *provider.Request {
	results := []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "toolu_01Tp25ShotA7cQ", Content: "Captured the login page.", Parts: parts}}},
		{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "toolu_01Tp25ShotB8dR", IsError: true, Parts: []*llmrelayv1.Part{
			{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: pngBytes}, MimeType: "image/png"}}},
		}}}},
	}
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-sonnet-4-5", Format: "anthropic-messages",
		Tools: []*llmrelayv1.Tool{{Name: "screenshot", Parameters: `{"type":"object","properties":{"page":{"type":"string"}}}`}},
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("What does the login page look like?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("toolu_01Tp25ShotA7cQ", "screenshot", `{"page":"login"}`), toolCallPart("toolu_01Tp25ShotB8dR", "screenshot", `{"page":"admin"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, results...),
		}, Options: &llmrelayv1.GenerationOptions{}}
}

func screenshotParts() []*llmrelayv1.Part {
	return []*llmrelayv1.Part{
		text("Viewport 1280x800."),
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: pngBytes}, MimeType: "image/png"}}},
		{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("%PDF-1.4")}, MimeType: "application/pdf", Filename: "login.pdf"}}},
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/login-full.png"}}}},
	}
}

// A tool result with parts goes as a tool_result whose content is an array
// of blocks: the content text first, then text, image (base64 or url
// source) and document blocks in order, is_error kept.
func TestToolResultParts(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_document_url_input.http")
	if _, err := newTestProvider(t, srv.URL).Generate(context.Background(), toolPartsRequest(screenshotParts()...)); err != nil {
		t.Fatal(err)
	}
	last := srv.Last(t)
	var b struct {
		Messages []struct {
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(last.Body, &b); err != nil || len(b.Messages) != 3 {
		t.Fatalf("body %s: %v", last.Body, err)
	}
	want := []string{
		`{"type":"tool_result","tool_use_id":"toolu_01Tp25ShotA7cQ","content":[{"type":"text","text":"Captured the login page."},{"type":"text","text":"Viewport 1280x800."},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="},"title":"login.pdf"},{"type":"image","source":{"type":"url","url":"https://example.com/login-full.png"}}]}`,
		`{"type":"tool_result","tool_use_id":"toolu_01Tp25ShotB8dR","is_error":true,"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}`,
	}
	if len(b.Messages[2].Content) != len(want) {
		t.Fatalf("tool turn %s", last.Body)
	}
	for i, w := range want {
		if !jsonEqual(t, b.Messages[2].Content[i], w) {
			t.Errorf("block %d\n got %s\nwant %s", i, b.Messages[2].Content[i], w)
		}
	}
	providertest.Golden(t, "testdata/toolresult_parts.request.golden", providertest.RequestGolden(last, requestHeaders...))
}

// An image Anthropic cannot take inline is refused naming the part inside
// the tool result.
func TestToolResultPartsRefused(t *testing.T) {
	t.Parallel()
	bmp := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("BM")}, MimeType: "image/bmp"}}}
	audio := &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"}}}
	for _, tc := range []struct {
		part  *llmrelayv1.Part
		param string
	}{
		{bmp, "messages[2].parts[0].tool_result.parts[0].image.mime_type"},
		{audio, "messages[2].parts[0].tool_result.parts[0].file.mime_type"},
	} {
		_, err := newTestProvider(t, "http://127.0.0.1:1").Generate(context.Background(), toolPartsRequest(tc.part))
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != tc.param {
			t.Errorf("%s: %v", tc.param, err)
		}
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}
