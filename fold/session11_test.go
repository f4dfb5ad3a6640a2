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

// TestLateReasoningSignature: a reasoning block's signature (or id) can
// arrive after later parts began (Azure OpenAI's encrypted content only in
// response.completed; OpenRouter's reasoning_details signature after the
// text). Folding it into the block once the segments had grown used to
// write to a copied strings.Builder, which panics; it joins its block.
func TestLateReasoningSignature(t *testing.T) {
	var a Accumulator
	steps := []*llmrelayv1.StreamToolsResponse{
		{Event: &llmrelayv1.StreamToolsResponse_ReasoningDelta{ReasoningDelta: &llmrelayv1.ReasoningDelta{Index: 0, Text: "Thinking.", Id: "rs_late1"}}},
		{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Four."}}},
		{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{ToolCallDelta: &llmrelayv1.ToolCallDelta{CallId: "call_late1", Name: "f", ArgumentsDelta: "{}"}}},
		{Event: &llmrelayv1.StreamToolsResponse_ReasoningDelta{ReasoningDelta: &llmrelayv1.ReasoningDelta{Index: 1, Text: "More."}}},
		{Event: &llmrelayv1.StreamToolsResponse_ReasoningDelta{ReasoningDelta: &llmrelayv1.ReasoningDelta{Index: 0, Signature: "sig-late-0"}}},
		{Event: &llmrelayv1.StreamToolsResponse_ReasoningDelta{ReasoningDelta: &llmrelayv1.ReasoningDelta{Index: 1, Signature: "sig-late-1"}}},
	}
	for _, ev := range steps {
		if err := a.AddTools(ev); err != nil {
			t.Fatal(err)
		}
	}
	parts := a.Message().GetParts()
	if len(parts) != 4 || parts[0].GetReasoning().GetSignature() != "sig-late-0" || parts[0].GetReasoning().GetText() != "Thinking." ||
		parts[3].GetReasoning().GetSignature() != "sig-late-1" || parts[1].GetText() != "Four." || parts[2].GetToolCall().GetCallId() != "call_late1" {
		t.Errorf("folded %v", parts)
	}
}
