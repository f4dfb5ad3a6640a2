package server

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestDoneCallCut: a call the answer stopped inside (provider.EventToolCallCut)
// is invalid in the done event the client gets and in the server's own
// folded message, which structured-output validation and the agent loop
// read, even when its arguments parse (Anthropic buffers whole parameters,
// Gemini sends parsed arguments).
func TestDoneCallCut(t *testing.T) {
	t.Parallel()
	var f foldState
	for _, d := range []*llmrelayv1.ToolCallDelta{
		{CallId: "toolu_01Ux8bqM3vYc2WfRk7hNn5Ta", Index: 0, Name: "read_file", ArgumentsDelta: `{"path":"scan.py"}`},
		{CallId: "toolu_01GmZ4eQp9sLd1JwVx6yTbKr", Index: 1, Name: "write_file", ArgumentsDelta: `{"path":"out.txt"}`},
	} {
		if err := f.toolDelta(d); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := f.doneCall("toolu_01Ux8bqM3vYc2WfRk7hNn5Ta", false)
	if err != nil || !whole.GetToolCall().GetArgumentsValid() {
		t.Fatalf("whole call: %v %v", whole, err)
	}
	cut, err := f.doneCall("toolu_01GmZ4eQp9sLd1JwVx6yTbKr", true)
	if err != nil || cut.GetToolCall().GetArgumentsValid() {
		t.Fatalf("cut call: %v %v", cut, err)
	}
	var valid []bool
	for _, p := range f.acc.Message().GetParts() {
		valid = append(valid, p.GetToolCall().GetArgumentsValid())
	}
	if len(valid) != 2 || !valid[0] || valid[1] {
		t.Errorf("the server's message says arguments_valid %v, want [true false]", valid)
	}
	if again, err := f.doneCall("toolu_01GmZ4eQp9sLd1JwVx6yTbKr", true); again != nil || err != nil {
		t.Errorf("a second done: %v %v", again, err)
	}
}
