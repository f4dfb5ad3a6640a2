package server

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func reasoningPart(r *llmrelayv1.Reasoning) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: r}}
}

func TestForeignReasoning(t *testing.T) {
	t.Parallel()
	text := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: "4"}}
	user := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "2+2?"}}}}
	assistant := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
		reasoningPart(&llmrelayv1.Reasoning{Text: "adding", Signature: "sig-anthropic", Provider: "anthropic"}),
		reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: "opaque", Provider: "anthropic"}),
		reasoningPart(&llmrelayv1.Reasoning{Text: "untagged", Signature: "s"}),
		text,
	}}
	msgs := []*llmrelayv1.Message{user, assistant}
	before := proto.CloneOf(assistant)

	same, warnings := foreignReasoning(msgs, "anthropic")
	if len(warnings) != 0 || &same[0] != &msgs[0] {
		t.Errorf("same provider type: %v, copied %v", warnings, &same[0] != &msgs[0])
	}

	out, warnings := foreignReasoning(msgs, "gemini")
	if len(warnings) != 2 {
		t.Fatalf("warnings = %v", warnings)
	}
	if out[0] != user {
		t.Error("an unchanged message must be shared, not copied")
	}
	parts := out[1].GetParts()
	if len(parts) != 3 {
		t.Fatalf("parts = %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetText() != "adding" || r.GetSignature() != "" || r.GetProvider() != "anthropic" {
		t.Errorf("foreign reasoning kept its signature: %v", r)
	}
	if r := parts[1].GetReasoning(); r.GetSignature() != "s" {
		t.Errorf("untagged reasoning must pass unchanged: %v", r)
	}
	if parts[2] != text {
		t.Error("text part changed")
	}
	if !proto.Equal(assistant, before) {
		t.Error("the caller's message was modified")
	}
}

// TestForeignProviderItems: a provider item goes only to a deployment of
// the provider type that produced it; to another it is dropped, with a
// warning naming the part (its JSON means nothing there). An untagged
// item passes to the adapter, which drops it if its format has no place
// for it.
func TestForeignProviderItems(t *testing.T) {
	t.Parallel()
	item := func(provider string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{
			Provider: provider, Type: "web_search_call", Json: `{"type":"web_search_call","id":"ws_0a1f"}`}}}
	}
	text := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: "found"}}
	untagged := item("")
	assistant := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{item("openai"), untagged, text}}
	msgs := []*llmrelayv1.Message{assistant}
	before := proto.CloneOf(assistant)

	if same, warnings := foreignReasoning(msgs, "openai"); len(warnings) != 0 || same[0] != assistant {
		t.Errorf("same provider type: %v", warnings)
	}
	out, warnings := foreignReasoning(msgs, "anthropic")
	if len(warnings) != 1 || warnings[0] != "messages[0].parts[0]: provider item web_search_call from openai dropped for anthropic" {
		t.Errorf("warnings = %q", warnings)
	}
	if parts := out[0].GetParts(); len(parts) != 2 || parts[0] != untagged || parts[1] != text {
		t.Errorf("parts = %v", parts)
	}
	if !proto.Equal(assistant, before) {
		t.Error("the caller's message was modified")
	}
}
