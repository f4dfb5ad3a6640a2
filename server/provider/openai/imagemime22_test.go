package openai

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestImageMediaTypeParameters: an image's mime_type with parameters (a
// Content-Type forwarded as it came) goes into the data URL bare, in both
// APIs: "data:image/png; charset=binary;base64,…" is no data URL a server
// reads as a PNG.
func TestImageMediaTypeParameters(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"openai-chat", formatResponses} {
		req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_VISION, Model: "gpt-4o", Format: format,
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is it?"), &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
				Source: &llmrelayv1.Image_Data{Data: tinyPNG}, MimeType: "Image/PNG; charset=binary"}}})},
			Options: &llmrelayv1.GenerationOptions{}}
		var body []byte
		if format == formatResponses {
			body, _, err = p.buildResponsesRequest(req, false)
		} else {
			body, _, err = p.buildChatRequest(req, false)
		}
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !strings.Contains(string(body), `"data:image/png;base64,`) || strings.Contains(string(body), "charset") {
			t.Errorf("%s: %s", format, body)
		}
	}
}
