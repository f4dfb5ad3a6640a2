package fold

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestItemIDBeginsAPart: a text or refusal delta whose item_id is set and
// differs from the current part's begins a new part, as a new message item
// does in the unary answer; deltas without one continue the part (the
// server sends the id on a message's first delta only), and the folded
// parts carry the ids.
func TestItemIDBeginsAPart(t *testing.T) {
	var a Accumulator
	for _, ev := range []*llmrelayv1.StreamChatResponse{
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "One, ", Phase: "commentary", ItemId: "msg_f1"}}},
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "two.", Phase: "commentary"}}},
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Three.", Phase: "commentary", ItemId: "msg_f2"}}},
		{Event: &llmrelayv1.StreamChatResponse_RefusalDelta{RefusalDelta: &llmrelayv1.RefusalDelta{Text: "No", ItemId: "msg_f2"}}},
		{Event: &llmrelayv1.StreamChatResponse_RefusalDelta{RefusalDelta: &llmrelayv1.RefusalDelta{Text: "pe."}}},
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Four.", ItemId: "msg_f3"}}},
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: " Five.", ItemId: "msg_f3"}}},
	} {
		if err := a.AddChat(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_Text{Text: "One, two."}, Phase: "commentary", ItemId: "msg_f1"},
		{Kind: &llmrelayv1.Part_Text{Text: "Three."}, Phase: "commentary", ItemId: "msg_f2"},
		{Kind: &llmrelayv1.Part_Refusal{Refusal: "Nope."}, ItemId: "msg_f2"},
		{Kind: &llmrelayv1.Part_Text{Text: "Four. Five."}, ItemId: "msg_f3"},
	}}
	if got := a.Message(); !proto.Equal(got, want) {
		t.Errorf("folded\n%v\nwant\n%v", got, want)
	}
}
