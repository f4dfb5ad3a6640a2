package fold

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// newerEvent is the wire form of a stream event this version does not
// know: a oneof case with field number 99 that a newer server might send.
func newerEvent() []byte {
	var b []byte
	b = protowire.AppendTag(b, 99, protowire.BytesType)
	inner := protowire.AppendTag(nil, 1, protowire.BytesType)
	inner = protowire.AppendString(inner, "citation from the future")
	return protowire.AppendBytes(b, inner)
}

// TestUnknownEventsSkipped: an event from a newer server is skipped by
// both fold methods, and the events around it fold as before.
func TestUnknownEventsSkipped(t *testing.T) {
	t.Parallel()
	var chat llmrelayv1.StreamChatResponse
	if err := proto.Unmarshal(newerEvent(), &chat); err != nil {
		t.Fatal(err)
	}
	if chat.GetEvent() != nil || len(chat.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("test event is not unknown: %v", &chat)
	}
	var a Accumulator
	for _, ev := range []*llmrelayv1.StreamChatResponse{
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "a"}}},
		&chat,
		{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "b"}}},
		{},
	} {
		if err := a.AddChat(ev); err != nil {
			t.Fatalf("AddChat(%v): %v", ev, err)
		}
	}
	if a.Text() != "ab" {
		t.Errorf("text %q", a.Text())
	}

	var tools llmrelayv1.StreamToolsResponse
	if err := proto.Unmarshal(newerEvent(), &tools); err != nil {
		t.Fatal(err)
	}
	var b Accumulator
	for _, ev := range []*llmrelayv1.StreamToolsResponse{
		{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{ToolCallDelta: &llmrelayv1.ToolCallDelta{CallId: "call_fold_unknown_1", Name: "f", ArgumentsDelta: "{}"}}},
		&tools,
		{Event: &llmrelayv1.StreamToolsResponse_End{End: &llmrelayv1.StreamEnd{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS}}},
	} {
		if err := b.AddTools(ev); err != nil {
			t.Fatalf("AddTools(%v): %v", ev, err)
		}
	}
	if calls := b.ToolCalls(); len(calls) != 1 || calls[0].GetArguments() != "{}" || b.FinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("folded %v, finish %v", calls, b.FinishReason())
	}
}
