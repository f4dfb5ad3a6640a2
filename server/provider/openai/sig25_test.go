package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// sig25Conversation is a stateless Responses tool loop whose reasoning
// items (encrypted content, ids) another organization's deployment
// produced, with store on or off.
func sig25Conversation(store bool) *provider.Request {
	reasoning := func(id, enc, summary string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Id: id, Signature: enc, Text: summary, Provider: "openai"}}}
	}
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5-mini", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Oslo?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
				reasoning("rs_0d61c7f3a8e24b19006a1f5b7c3e9d8190a2f4b6c8e0d1a3f5", "gAAAAABpsig25OtherOrgEncryptedA==", "**Looking up Oslo**"),
				toolCallPart("call_sig25Oslo7Qk", "get_weather", `{"city":"Oslo"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_sig25Oslo7Qk", `{"temp_c":4}`)),
		},
		Tools:           []*llmrelayv1.Tool{{Name: "get_weather", Description: "Weather for a city", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: &store}}},
	}
}

// TestSig25ResponsesReasoningRefused: the Responses API's refusals of
// reasoning state it cannot read are flagged SignatureRefused, unary and
// streamed: 400 invalid_encrypted_content ("The encrypted content … could
// not be verified.", openai/codex#8132) and 404 "Item with id 'rs_…' not
// found. … remove this item from your input." (can1357/oh-my-pi#41);
// another 400 is not.
func TestSig25ResponsesReasoningRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		status int
		code   string
	}{
		{"sig25_responses_invalid_encrypted_content", http.StatusBadRequest, "invalid_encrypted_content"},
		{"sig25_responses_rs_item_not_found", http.StatusNotFound, "invalid_request_error"},
		{"real_responses_err_400_duplicate_item", http.StatusBadRequest, "invalid_request_error"},
	} {
		for _, stream := range []bool{false, true} {
			srv := providertest.ReplayFile(t, td(c.file+".http"))
			p := newTestProvider(t, kOpenAI, srv.URL)
			var err error
			if stream {
				var s provider.Stream
				if s, err = p.Stream(context.Background(), sig25Conversation(false)); s != nil {
					t.Fatalf("%s: a stream for an error", c.file)
				}
			} else {
				_, err = p.Generate(context.Background(), sig25Conversation(false))
			}
			pe := providerError(t, err)
			want := c.file != "real_responses_err_400_duplicate_item"
			if pe.SignatureRefused != want || pe.HTTPStatus != c.status || pe.Code != c.code {
				t.Errorf("%s stream=%v: refused=%v status=%d code=%q", c.file, stream, pe.SignatureRefused, pe.HTTPStatus, pe.Code)
			}
		}
	}
}

// TestSig25ResponsesWithoutReasoningItems: sent again with
// DropSignatures, the input has no reasoning item (neither its encrypted
// content nor its id), the call and its output as before, with a warning.
func TestSig25ResponsesWithoutReasoningItems(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("sig25_responses_invalid_encrypted_content.http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	req := sig25Conversation(false)
	if _, err := p.Generate(context.Background(), req); err == nil {
		t.Fatal("no error")
	}
	if first := string(srv.Last(t).Body); !strings.Contains(first, "gAAAAABpsig25OtherOrgEncryptedA==") || !strings.Contains(first, "rs_0d61c7f3a8e24b19006a1f5b7c3e9d8190a2f4b6c8e0d1a3f5") {
		t.Fatalf("first request: %s", first)
	}
	again := *req
	again.DropSignatures = true
	if _, err := p.Generate(context.Background(), &again); err == nil {
		t.Fatal("no error")
	}
	providertest.Golden(t, td("sig25_responses_without_reasoning.request.golden"), providertest.RequestGolden(srv.Last(t)))
	_, warnings, err := p.buildResponsesRequest(&again, false)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range warnings {
		found = found || strings.Contains(w, "left out 1 reasoning item(s)")
	}
	if !found {
		t.Errorf("warnings %q", warnings)
	}
}
