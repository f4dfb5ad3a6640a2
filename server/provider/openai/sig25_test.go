package openai

import (
	"context"
	"io"
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

// TestSig25GoogleCompatPlaceholder: Google's OpenAI-compatible endpoint
// answers the thought signature of another account with its
// google.rpc.Status ("Corrupted thought signature.", INVALID_ARGUMENT,
// google-gemini/gemini-cli#13467's words) in the array it answers errors
// in: flagged SignatureRefused on Google's host only, where the request
// goes again with Google's placeholder as the call's
// extra_content.google.thought_signature.
func TestSig25GoogleCompatPlaceholder(t *testing.T) {
	t.Parallel()
	const body = `[{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}]`
	for _, c := range []struct {
		base string
		want bool
	}{
		{"https://generativelanguage.googleapis.com/v1beta/openai", true},
		{"https://llm-proxy.example.com/v1", false},
	} {
		p, err := New(testKey, WithBaseURL(c.base))
		if err != nil {
			t.Fatal(err)
		}
		resp := &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
		pe := p.httpError(resp, "gemini-3-flash-preview", secrets{testKey})
		if pe.SignatureRefused != c.want || pe.HTTPStatus != 400 || pe.Message != "Corrupted thought signature." {
			t.Errorf("%s: refused=%v status=%d msg=%q", c.base, pe.SignatureRefused, pe.HTTPStatus, pe.Message)
		}
	}
	p, err := New(testKey, WithBaseURL("https://generativelanguage.googleapis.com/v1beta/openai"))
	if err != nil {
		t.Fatal(err)
	}
	call := toolCallPart("k7Qm2xsig25", "get_weather", `{"city":"Lisbon"}`)
	call.GetToolCall().Signature = "EqQCsig25OtherAccountCallSig"
	req := &provider.Request{Model: "gemini-3-flash-preview", Options: &llmrelayv1.GenerationOptions{}, Messages: []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("Weather in Lisbon?")),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{call}},
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("k7Qm2xsig25", "19 °C")),
	}}
	first, _, err := p.buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	again := *req
	again.DropSignatures = true
	second, warnings, err := p.buildChatRequest(&again, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(first), `"extra_content":{"google":{"thought_signature":"EqQCsig25OtherAccountCallSig"}}`) ||
		!strings.Contains(string(second), `"extra_content":{"google":{"thought_signature":"skip_thought_signature_validator"}}`) ||
		strings.Contains(string(second), "sig25OtherAccount") {
		t.Errorf("first %s\nsecond %s", first, second)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "1 tool call(s) with Google's placeholder signature") {
		t.Errorf("warnings %q", warnings)
	}
	if req.Messages[1].GetParts()[0].GetToolCall().GetSignature() != "EqQCsig25OtherAccountCallSig" {
		t.Error("the caller's conversation was changed")
	}
}
