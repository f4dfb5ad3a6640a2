package anthropic

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestImageMediaTypeParameters: an image's mime_type with parameters goes
// as the bare type: Anthropic's media_type takes image/jpeg, png, gif or
// webp only.
func TestImageMediaTypeParameters(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, "http://unused.invalid")
	req := reasoning17Request("claude-sonnet-4-5", llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED)
	req.Messages[0].Parts = append(req.Messages[0].Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
		Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG\r\n\x1a\n")}, MimeType: "image/png; charset=binary"}}})
	body, _, _, err := p.buildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"media_type":"image/png"`) || strings.Contains(string(body), "charset") {
		t.Errorf("%s", body)
	}
}
