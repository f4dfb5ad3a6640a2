package provider_test

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// A tool result's text is its content and text parts joined by newlines,
// empty pieces left out; which formats take an image or file in a tool
// result, and the field blamed otherwise.
func TestToolResultTextAndFormats(t *testing.T) {
	txt := func(s string) *llmrelayv1.Part { return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}} }
	img := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("x")}, MimeType: "image/png"}}}
	pdf := &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("x")}, MimeType: "application/pdf"}}}
	wav := &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("x")}, MimeType: "audio/wav"}}}
	tr := &llmrelayv1.ToolResult{Content: "a", Parts: []*llmrelayv1.Part{txt(""), img, txt("b")}}
	if got := provider.ToolResultText(tr); got != "a\nb" {
		t.Errorf("text %q", got)
	}
	if got := provider.ToolResultText(&llmrelayv1.ToolResult{Parts: []*llmrelayv1.Part{txt("b")}}); got != "b" {
		t.Errorf("text %q", got)
	}
	if !provider.ToolResultMedia(tr) || provider.ToolResultMedia(&llmrelayv1.ToolResult{Content: "a", Parts: []*llmrelayv1.Part{txt("b")}}) {
		t.Error("media")
	}
	if b := provider.ToolResultBlocks(tr); len(b) != 4 || b[0].GetText() != "a" {
		t.Errorf("blocks %v", b)
	}
	for _, tc := range []struct {
		format string
		part   *llmrelayv1.Part
		field  string // "" when sent
	}{
		{"anthropic-messages", img, ""}, {"anthropic-messages", pdf, ""}, {"anthropic-messages", wav, "file.mime_type"},
		{"openai-responses", img, ""}, {"openai-responses", pdf, ""}, {"openai-responses", wav, "file.mime_type"},
		{"gemini", img, ""}, {"gemini", pdf, ""}, {"gemini", wav, ""},
		{"ollama", img, ""}, {"ollama", pdf, "file"},
		{"openai-chat", img, "image"}, {"openai-tools", pdf, "file"}, {"openai-reasoning", txt("x"), ""},
	} {
		field, reason := provider.CheckToolResultPart(tc.format, tc.part)
		if field != tc.field || (tc.field == "") != (reason == "") {
			t.Errorf("%s %v: field %q (%s)", tc.format, tc.part, field, reason)
		}
	}
}
