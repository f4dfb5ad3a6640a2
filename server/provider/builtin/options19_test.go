package builtin

import (
	"context"
	"io"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestStopSequence: a stop sequence ends the reply before it, the earliest
// one wins, and the meta names it (unary, and in a stream's last meta);
// before, stop was accepted and ignored.
func TestStopSequence(t *testing.T) {
	t.Parallel()
	p := New()
	req := &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("hello there friend, bye")},
		Options: &llmrelayv1.GenerationOptions{Stop: []string{"bye", "there"}}}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Message.GetParts()[0].GetText(); got != "You said: hello " {
		t.Errorf("text %q, want %q", got, "You said: hello ")
	}
	if m := res.Meta; m.GetStopSequence() != "there" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("stop_sequence %q finish %v", m.GetStopSequence(), m.GetFinishReason())
	}
	if n := res.Meta.GetUsage().GetOutputTokens(); n != 3 {
		t.Errorf("output tokens %d, want 3 (the words sent)", n)
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var last *llmrelayv1.ResponseMeta
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ev.Text)
		if ev.Kind == provider.EventMeta && ev.Meta.GetStopSequence() != "" {
			last = ev.Meta
		}
	}
	if text.String() != "You said: hello " || last.GetStopSequence() != "there" {
		t.Errorf("stream: text %q, stop_sequence %q", text.String(), last.GetStopSequence())
	}
}

// TestParallelToolCallsFalse: parallel_tool_calls false makes one call
// (it made two).
func TestParallelToolCallsFalse(t *testing.T) {
	t.Parallel()
	p := New()
	no := false
	req := &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("weather")},
		Tools:   []*llmrelayv1.Tool{tool(t, "a", map[string]any{"type": "object"}), tool(t, "b", map[string]any{"type": "object"})},
		Options: &llmrelayv1.GenerationOptions{ParallelToolCalls: &no}}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Meta.GetToolCallCount(); n != 1 {
		t.Errorf("%d calls with parallel_tool_calls false, want 1", n)
	}
}
