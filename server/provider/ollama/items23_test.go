package ollama

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestProviderItemDropped: Ollama's chat API has no place for a provider
// item: it is not sent, with a warning naming the part.
func TestProviderItemDropped(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Model: "llama3.2", Messages: []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("q")}},
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{text("a"), {Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{
			Type: "web_search_call", Json: `{"type":"web_search_call","id":"ws_9d"}`}}}}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{text("more")}},
	}}
	b, err := buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b.body), "ws_9d") || len(b.warnings) != 1 ||
		b.warnings[0] != "messages[1].parts[1]: provider item web_search_call not sent: Ollama's chat API has no place for it" {
		t.Errorf("%q\n%s", b.warnings, b.body)
	}
}
