package openai

import (
	"context"
	"net/http"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24AzureOperationNotSupported: Azure OpenAI answers an operation
// the deployment's model does not do (embeddings from a chat model, chat
// from an embedding model) with 400 {"error": {"code":
// "OperationNotSupported", "message": "The embeddings operation does not
// work with the specified model, gpt-35-turbo. …"}} (OpenHands/OpenHands#1003
// quotes the body; langchain-ai/langmem#13 the chat one). It was an invalid
// request, as if the caller's request were malformed; the deployment
// cannot serve the operation: unsupported, with Azure's words and ids.
func TestRound24AzureOperationNotSupported(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("azure_err_400_operation_not_supported.http"))
	_, err := newTestProvider(t, kAzure, srv.URL).Embed(context.Background(), &provider.EmbedRequest{Model: "gpt-35-turbo", Inputs: []string{"a"}})
	pe := providerError(t, err)
	if pe.Kind != provider.KindUnsupported || pe.HTTPStatus != 400 || pe.Code != "OperationNotSupported" || pe.RequestID != "3b8e61d4-2f07-4c9a-a5e3-c71d90f4b28e" ||
		pe.Message != "The embeddings operation does not work with the specified model, gpt-35-turbo. Please choose different model and try again. You can learn more about which models can be used with each operation here: https://go.microsoft.com/fwlink/?linkid=2197993." {
		t.Errorf("embeddings: %+v", pe)
	}
	chat := providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"error":{"code":"OperationNotSupported","message":"The chatCompletion operation does not work with the specified model, text-embedding-3-large. Please choose different model and try again. You can learn more about which models can be used with each operation here: https://go.microsoft.com/fwlink/?linkid=2197993."}}`)}
	srv = providertest.Replay(t, chat)
	_, err = newTestProvider(t, kAzure, srv.URL).Generate(context.Background(), &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "text-embedding-3-large", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("hi"))},
	})
	if pe = providerError(t, err); pe.Kind != provider.KindUnsupported {
		t.Errorf("chat: %+v", pe)
	}
}
