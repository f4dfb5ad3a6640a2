package anthropic

import (
	"encoding/json"
	"math"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestThinkingBudgetNearInt32Max: a thinking budget near 2^31 without a
// max_tokens made budget+default wrap to a negative max_tokens; it now
// saturates (and a model's output limit still caps it where one is known).
func TestThinkingBudgetNearInt32Max(t *testing.T) {
	p := newTestProvider(t, "http://unused.invalid")
	for _, model := range []string{"claude-future-x", "claude-sonnet-4-5"} {
		req := &provider.Request{
			Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
			Model:    model,
			Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("hi"))},
			Options:  &llmrelayv1.GenerationOptions{},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{
				Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](math.MaxInt32 - 10)},
			}},
		}
		body, _, _, err := p.buildRequest(req, false)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		var w struct {
			MaxTokens int64 `json:"max_tokens"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatal(err)
		}
		if w.MaxTokens <= 0 {
			t.Errorf("%s: max_tokens %d, want positive", model, w.MaxTokens)
		}
	}
}

// TestDocumentTitleFromFilename: a File's filename is the document block's
// title (it was dropped without a word).
func TestDocumentTitleFromFilename(t *testing.T) {
	p := newTestProvider(t, "http://unused.invalid")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    "claude-sonnet-4-5",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{
			{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: "https://example.com/q3.pdf"}, MimeType: "application/pdf", Filename: "q3-report.pdf"}}},
			text("Summarize."),
		}}},
		Options: &llmrelayv1.GenerationOptions{},
	}
	body, _, _, err := p.buildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Messages []struct {
			Content []struct {
				Type  string `json:"type"`
				Title string `json:"title"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.Messages[0].Content[0]; got.Type != "document" || got.Title != "q3-report.pdf" {
		t.Errorf("first block %+v, want a document titled q3-report.pdf", got)
	}
}
