package server

import (
	"testing"

	"google.golang.org/grpc"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// encodingStream is a stream whose Send encodes the message, as grpc-go's
// does before it returns, and keeps the bytes.
type encodingStream struct {
	grpc.ServerStream
	sent [][]byte
}

func (e *encodingStream) Send(m *llmrelayv1.StreamChatResponse) error {
	b, err := m.MarshalVT()
	e.sent = append(e.sent, b)
	return err
}

// TestSinkTextReusesMessages: a text chunk costs the relay no allocation
// (the three messages are reused), and each chunk still goes out with its
// own text, phase and item id (a reused message keeps none of the chunk
// before's).
func TestSinkTextReusesMessages(t *testing.T) {
	st := &encodingStream{}
	s := &chatSink{ss: st}
	chunks := []struct{ text, phase, item string }{{"Hel", "commentary", "msg_a"}, {"lo", "", ""}, {"", "final_answer", "msg_b"}}
	for _, c := range chunks {
		if err := s.text(c.text, c.phase, c.item, c.item != ""); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range chunks {
		var got llmrelayv1.StreamChatResponse
		if err := got.UnmarshalVT(st.sent[i]); err != nil {
			t.Fatal(err)
		}
		if d := got.GetTextDelta(); d == nil || d.GetText() != want.text || d.GetPhase() != want.phase || d.GetItemId() != want.item || d.GetBeginsPart() != (want.item != "") {
			t.Errorf("chunk %d: %v, want text %q phase %q item %q", i, &got, want.text, want.phase, want.item)
		}
	}
	noop := &chatSink{ss: nopChatStream{}}
	if n := testing.AllocsPerRun(100, func() { _ = noop.text("chunk", "commentary", "", false) }); n != 0 {
		t.Errorf("%v allocations per text chunk", n)
	}
	tools := &toolsSink{ss: nopToolsSender{}}
	if n := testing.AllocsPerRun(100, func() { _ = tools.text("chunk", "commentary", "", false) }); n != 0 {
		t.Errorf("%v allocations per tools text chunk", n)
	}
}

type nopChatStream struct{ grpc.ServerStream }

func (nopChatStream) Send(*llmrelayv1.StreamChatResponse) error { return nil }

type nopToolsSender struct{}

func (nopToolsSender) Send(*llmrelayv1.StreamToolsResponse) error { return nil }
