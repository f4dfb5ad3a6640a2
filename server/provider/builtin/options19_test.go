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

// TestMaxTokensCutsToolCalls: max_tokens cuts a tool call as a model's
// limit would: the call that does not fit is cut (arguments_valid false,
// finish LENGTH), ended as cut in a stream, and later calls are not made.
func TestMaxTokensCutsToolCalls(t *testing.T) {
	t.Parallel()
	p := New()
	one := int32(3)
	req := &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("weather in Paris")},
		Tools: []*llmrelayv1.Tool{
			tool(t, "a", map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}),
			tool(t, "b", map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}),
		},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: &one}}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 || parts[0].GetToolCall().GetArgumentsValid() || res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH {
		t.Fatalf("parts %v, finish %v: want one cut call, LENGTH", parts, res.Meta.GetFinishReason())
	}
	if got := parts[0].GetToolCall().GetArguments(); got != `{"q":"weathe` {
		t.Errorf("cut arguments %q", got)
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []provider.EventKind
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == provider.EventToolCallEnd || ev.Kind == provider.EventToolCallCut {
			kinds = append(kinds, ev.Kind)
		}
	}
	if len(kinds) != 1 || kinds[0] != provider.EventToolCallCut {
		t.Errorf("stream call ends %v, want one cut", kinds)
	}
}
