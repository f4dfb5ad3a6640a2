package gemini

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// toolPartsTurn is two parallel screenshot calls answered out of order:
// the admin page's result (JSON content, no parts) first, then the login
// page's with text, a PNG, a PDF, an image by URL and a wav.
func toolPartsTurn(model string) *provider.Request {
	png := []byte("\x89PNG\r\n\x1a\n")
	login := &llmrelayv1.ToolResult{CallId: "call_tp25_login", Content: "Captured the login page.", Parts: []*llmrelayv1.Part{
		text("Viewport 1280x800."),
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: png}, MimeType: "image/png"}}},
		{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("%PDF-1.4")}, MimeType: "application/pdf"}}},
		{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/login-full.png"}}}},
		{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("RIFF")}, MimeType: "audio/wav"}}},
	}}
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: model, Format: "gemini",
		Tools: []*llmrelayv1.Tool{{Name: "screenshot", Parameters: `{"type":"object","properties":{"page":{"type":"string"}}}`}},
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("Compare the login and admin pages.")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("call_tp25_login", "screenshot", `{"page":"login"}`), toolCallPart("call_tp25_admin", "screenshot", `{"page":"admin"}`)),
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_tp25_admin", `{"title":"Admin"}`)),
			msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: login}}),
		}, Options: &llmrelayv1.GenerationOptions{}}
}

// sentTurn is the last content of a captured request.
func sentTurn(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Contents) == 0 {
		t.Fatalf("body %s: %v", body, err)
	}
	var v any
	if err := json.Unmarshal(b.Contents[len(b.Contents)-1], &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func normJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// Gemini 3 takes a tool result's inline png/jpeg/webp images and PDF or
// plain text documents inside the functionResponse (parts[].inlineData),
// each with a displayName the response references once as {"$ref": …}
// (round 26: Google's multimodal function responses);
// the text parts join the response's text; media it does not take there
// (by URL, audio) follow the turn's function responses as parts of the
// user turn, behind a text naming the call, with a warning. The
// results go back in the order of the calls.
func TestToolResultPartsGemini3(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, fileRecording)
	res, err := p.Generate(context.Background(), toolPartsTurn("gemini-3-flash-preview"))
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	want := normJSON(t, `{"role":"user","parts":[
		{"functionResponse":{"id":"call_tp25_login","name":"screenshot",
		 "response":{"result":"Captured the login page.\nViewport 1280x800."},
		 "parts":[{"inlineData":{"displayName":"image_1.png","mimeType":"image/png","data":"iVBORw0KGgo="}},
		          {"inlineData":{"displayName":"file_2.pdf","mimeType":"application/pdf","data":"JVBERi0xLjQ="}}]}},
		{"functionResponse":{"id":"call_tp25_admin","name":"screenshot","response":{"title":"Admin"}}},
		{"text":"The result of screenshot call call_tp25_login continues with these attachments:"},
		{"fileData":{"mimeType":"image/png","fileUri":"https://example.com/login-full.png"}},
		{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}]}`)
	if got := sentTurn(t, c.Body); got != want {
		t.Errorf("turn\n got %s\nwant %s", got, want)
	}
	w := res.Meta.GetWarnings()
	if len(w) != 2 || !strings.Contains(w[0], "messages[3].parts[0].tool_result.parts[3].image sent as a part of the user turn") ||
		!strings.Contains(w[1], "messages[3].parts[0].tool_result.parts[4].file sent as a part of the user turn") {
		t.Errorf("warnings %q", w)
	}
	providertest.Golden(t, filepath.Join("testdata", "toolresult_parts_gemini3.request.golden"), providertest.RequestGolden(c, requestHeaders...))
}

// Before Gemini 3 a functionResponse takes no media (a 400 "Multimodal
// function responses are not supported for this model"): every medium
// follows the turn's function responses in the user turn.
func TestToolResultPartsGemini25(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, fileRecording)
	res, err := p.Generate(context.Background(), toolPartsTurn("gemini-2.5-flash"))
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	want := normJSON(t, `{"role":"user","parts":[
		{"functionResponse":{"id":"call_tp25_login","name":"screenshot","response":{"result":"Captured the login page.\nViewport 1280x800."}}},
		{"functionResponse":{"id":"call_tp25_admin","name":"screenshot","response":{"title":"Admin"}}},
		{"text":"The result of screenshot call call_tp25_login continues with these attachments:"},
		{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},
		{"inlineData":{"mimeType":"application/pdf","data":"JVBERi0xLjQ="}},
		{"fileData":{"mimeType":"image/png","fileUri":"https://example.com/login-full.png"}},
		{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}]}`)
	if got := sentTurn(t, c.Body); got != want {
		t.Errorf("turn\n got %s\nwant %s", got, want)
	}
	if w := res.Meta.GetWarnings(); len(w) != 4 || !strings.Contains(w[0], "takes no media in a functionResponse") {
		t.Errorf("warnings %q", w)
	}
	if !reflect.DeepEqual(res.Meta.GetWarnings()[0][:len("messages[3].parts[0].tool_result.parts[1].image")], "messages[3].parts[0].tool_result.parts[1].image") {
		t.Errorf("warning %q", res.Meta.GetWarnings()[0])
	}
	providertest.Golden(t, filepath.Join("testdata", "toolresult_parts_gemini25.request.golden"), providertest.RequestGolden(c, requestHeaders...))
}
