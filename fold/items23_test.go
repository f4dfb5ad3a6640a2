package fold

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestProviderItemsFold: provider items are whole parts, kept in their
// place among text, reasoning and calls, for both streams; the event is a
// copy (the caller's message may be reused).
func TestProviderItemsFold(t *testing.T) {
	t.Parallel()
	item := &llmrelayv1.ProviderItem{Provider: "anthropic", Type: "server_tool_use", Json: `{"type":"server_tool_use","id":"srvtoolu_0f"}`}
	var chat, tools Accumulator
	for _, ev := range []*llmrelayv1.StreamToolsResponse{
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Looking."}}},
		{Event: &llmrelayv1.StreamToolsResponse_ProviderItem{ProviderItem: item}},
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Found."}}},
	} {
		if err := tools.AddTools(ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, ev := range []*llmrelayv1.StreamChatResponse{
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Looking."}}},
		{Event: &llmrelayv1.StreamChatResponse_ProviderItem{ProviderItem: item}},
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Found."}}},
	} {
		if err := chat.AddChat(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_Text{Text: "Looking."}},
		{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: proto.CloneOf(item)}},
		{Kind: &llmrelayv1.Part_Text{Text: "Found."}},
	}}
	for name, acc := range map[string]*Accumulator{"chat": &chat, "tools": &tools} {
		if got := acc.Message(); !proto.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	item.Json = "changed"
	if got := tools.Message().GetParts()[1].GetProviderItem().GetJson(); got == "changed" {
		t.Error("the accumulator kept the caller's item, not a copy")
	}
	var many Accumulator
	for i := 0; i < MaxProviderItems; i++ {
		if err := many.AddProviderItem(item); err != nil {
			t.Fatal(err)
		}
	}
	if err := many.AddProviderItem(item); err == nil {
		t.Error("no error past MaxProviderItems")
	}
}
