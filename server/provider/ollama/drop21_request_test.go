package ollama

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestDrop21ImageDetail: Ollama's images are bare base64; an image's detail
// level (LOW, HIGH) has no place and was dropped silently: it is warned
// about now. AUTO asks for nothing.
func TestDrop21ImageDetail(t *testing.T) {
	t.Parallel()
	img := func(d llmrelayv1.ImageDetail) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: []byte("\x89PNG")}, MimeType: "image/png", Detail: d}}}
	}
	b, err := buildChatRequest(&provider.Request{Model: "llava", Options: &llmrelayv1.GenerationOptions{}, Messages: []*llmrelayv1.Message{{
		Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{
			{Kind: &llmrelayv1.Part_Text{Text: "what is it?"}}, img(llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH), img(llmrelayv1.ImageDetail_IMAGE_DETAIL_AUTO),
		}}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.warnings) != 1 || !strings.HasPrefix(b.warnings[0], "messages[0].parts[1].image.detail IMAGE_DETAIL_HIGH not sent") {
		t.Errorf("warnings %q", b.warnings)
	}
	if !strings.Contains(string(b.body), `"images":["iVBORw==","iVBORw=="]`) {
		t.Errorf("body %s", b.body)
	}
}
