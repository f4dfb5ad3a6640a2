package client

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// fakeTools replays events, then err.
type fakeTools struct {
	grpc.ClientStream
	evs []*llmrelayv1.StreamToolsResponse
	err error
}

func (f *fakeTools) Recv() (*llmrelayv1.StreamToolsResponse, error) {
	if len(f.evs) == 0 {
		return nil, f.err
	}
	ev := f.evs[0]
	f.evs = f.evs[1:]
	return ev, nil
}

func (f *fakeTools) Context() context.Context { return context.Background() }

func toolDelta(id, name, args string) *llmrelayv1.StreamToolsResponse {
	return &llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{
		ToolCallDelta: &llmrelayv1.ToolCallDelta{CallId: id, Name: name, ArgumentsDelta: args}}}
}

// TestToolsStreamFailMarksOpenCalls: a stream that Recv ends with an error
// leaves its open calls invalid (Accumulator.Fail), whatever the error:
// one the fold refused (a broken event: the rest is not read) as much as
// the transport's, and an end of stream without the end event.
func TestToolsStreamFailMarksOpenCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		evs  []*llmrelayv1.StreamToolsResponse
		err  error
	}{
		// A delta for a call already done: the fold refuses it.
		{"fold error", []*llmrelayv1.StreamToolsResponse{
			toolDelta("c1", "weather", `{"city": "Paris"}`),
			{Event: &llmrelayv1.StreamToolsResponse_ToolCallDone{ToolCallDone: &llmrelayv1.ToolCallDone{ToolCall: &llmrelayv1.ToolCall{CallId: "c1", Name: "weather", Arguments: `{"city": "Paris"}`, ArgumentsValid: true}}}},
			toolDelta("c2", "weather", `{"city": "Oslo"}`),
			toolDelta("c1", "weather", `x`),
		}, io.EOF},
		{"eof without end", []*llmrelayv1.StreamToolsResponse{toolDelta("c2", "weather", `{"city": "Oslo"}`)}, io.EOF},
	} {
		s := &ToolsStream{s: &fakeTools{evs: tc.evs, err: tc.err}}
		var err error
		for err == nil {
			_, err = s.Recv()
		}
		if tc.name == "fold error" && err == io.EOF {
			t.Fatalf("%s: the fold took every event; the test needs one it refuses", tc.name)
		}
		for _, c := range s.Acc.ToolCalls() {
			if c.CallId == "c2" && c.ArgumentsValid {
				t.Errorf("%s: open call c2 is valid after Recv's error %v", tc.name, err)
			}
		}
	}
}
