package server

import (
	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// foldState is the relay's view of the one accumulator (package fold) that
// also serves clients: the server folds exactly what it sends.
type foldState struct {
	acc  fold.Accumulator
	done map[string]bool
}

func (f *foldState) text(s, phase, item string, begins bool) {
	f.acc.AddItemText(s, phase, item, begins)
}
func (f *foldState) refusal(s, item string) { f.acc.AddItemRefusal(s, item) }

func (f *foldState) toolDelta(d *llmrelayv1.ToolCallDelta) error { return f.acc.AddToolCallDelta(d) }

// doneCall completes the call; nil when it is unknown or already complete.
// cut: the answer stopped inside the call (the token limit, the context
// window, a refusal), so its arguments are not valid even when they parse;
// the server's own message (structured-output validation reads it) says so
// as the client's does.
func (f *foldState) doneCall(id string, cut bool) (*llmrelayv1.ToolCallDone, error) {
	tc, idx := f.acc.ToolCall(id)
	if tc == nil || f.done[id] {
		return nil, nil
	}
	if cut {
		tc.ArgumentsValid = false
	}
	d := &llmrelayv1.ToolCallDone{Index: idx, ToolCall: tc}
	if err := f.acc.AddToolCallDone(d); err != nil {
		return nil, err
	}
	if f.done == nil {
		f.done = map[string]bool{}
	}
	f.done[id] = true
	return d, nil
}

func (f *foldState) open() []string { return f.acc.Open() }
