package fold

import (
	"strings"

	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestItemIDBeginsAPart: a text delta with begins_part begins a new part
// (Anthropic's next text block after a server-tool block). A text or
// refusal delta whose item_id is set and
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
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Six", BeginsPart: true}}},
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "."}}},
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
		{Kind: &llmrelayv1.Part_Text{Text: "Six."}},
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

// FuzzAccumulator folds arbitrary sequences of text, refusal, reasoning
// and tool-call events (the order a broken or unusual upstream could
// produce): folding never panics, the text is the text deltas joined, and
// each reasoning block index is one part.
func FuzzAccumulator(f *testing.F) {
	f.Add([]byte{3, 0, 0, 1, 3, 0, 5, 2})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5})
	f.Add([]byte{4, 1, 4, 1, 5, 1, 3, 2, 0, 0, 3, 2})
	words := []string{"", "a", "é", "{\"x\":", "1}"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		var a Accumulator
		var text strings.Builder
		blocks := map[int32]bool{}
		for i := 0; i+1 < len(ops); i += 2 {
			arg := ops[i+1]
			w := words[int(arg)%len(words)]
			var err error
			switch ops[i] % 6 {
			case 0:
				text.WriteString(w)
				err = a.AddTools(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{
					Text: w, Phase: []string{"", "commentary"}[arg%2], ItemId: []string{"", "msg_z1", "msg_z2"}[arg%3]}}})
			case 1:
				err = a.AddTools(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_RefusalDelta{RefusalDelta: &llmrelayv1.RefusalDelta{Text: w, ItemId: []string{"", "msg_z1"}[arg%2]}}})
			case 2, 3:
				idx := int32(arg % 3)
				blocks[idx] = true
				err = a.AddTools(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ReasoningDelta{ReasoningDelta: &llmrelayv1.ReasoningDelta{
					Index: idx, Text: []string{w, SummarySeparator + w}[arg/3%2], Signature: []string{"", "sig"}[arg%2], SummaryIndex: int32(arg / 6 % 4)}}})
			case 4:
				err = a.AddTools(&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{ToolCallDelta: &llmrelayv1.ToolCallDelta{
					CallId: []string{"call_z1", "call_z2", ""}[arg%3], Name: "f", ArgumentsDelta: w}}})
			case 5:
				tc, idx := a.ToolCall([]string{"call_z1", "call_z2"}[arg%2])
				if tc != nil {
					err = a.AddToolCallDone(&llmrelayv1.ToolCallDone{Index: idx, ToolCall: tc})
				}
			}
			_ = err // refused events (a delta without call_id, one for a completed call) are the accumulator's answer, not a failure
		}
		if a.Text() != text.String() {
			t.Errorf("text %q, want %q", a.Text(), text.String())
		}
		n := 0
		for _, p := range a.Message().GetParts() {
			if r := p.GetReasoning(); r != nil {
				n++
				// Summary parts: two or more, in order in the text.
				sp, rest := r.GetSummaryParts(), r.GetText()
				if len(sp) == 1 {
					t.Errorf("one summary part %q", sp)
				}
				for _, s := range sp {
					i := strings.Index(rest, s)
					if i < 0 {
						t.Errorf("summary parts %q not in text %q", sp, r.GetText())
						break
					}
					rest = rest[i+len(s):]
				}
			}
		}
		if n != len(blocks) {
			t.Errorf("%d reasoning parts for %d blocks", n, len(blocks))
		}
	})
}
