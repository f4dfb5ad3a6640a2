package ollama

import (
	"context"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestSameNameCallsTools19: Ollama sends calls without ids, with
// function.index, the same function with the same arguments twice; each
// line of the stream one whole call. Each call gets its own made id
// (callID: the conversation, the model, the position, the name), the same
// in the stream and the unary answer to the same request, and each
// streamed call ends whole at once.
func TestSameNameCallsTools19(t *testing.T) {
	t.Parallel()
	usrv := providertest.ReplayFile(t, td("tools19_chat_same_name_calls.http"))
	res, err := newTestProvider(t, usrv).Generate(context.Background(), toolsRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	ssrv := providertest.ReplayFile(t, td("tools19_stream_same_name_calls.http"))
	st, err := newTestProvider(t, ssrv).Stream(context.Background(), toolsRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	const args = `{"location":"Paris, FR","format":"celsius"}`
	var unaryIDs, streamIDs []string
	for _, p := range res.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			if c.GetName() != "get_current_weather" || c.GetArguments() != args || !c.GetArgumentsValid() {
				t.Errorf("unary call %v", c)
			}
			unaryIDs = append(unaryIDs, c.GetCallId())
		}
	}
	for _, p := range f.msg.GetParts() {
		if c := p.GetToolCall(); c != nil {
			if c.GetName() != "get_current_weather" || c.GetArguments() != args {
				t.Errorf("stream call %v", c)
			}
			streamIDs = append(streamIDs, c.GetCallId())
		}
	}
	if len(unaryIDs) != 2 || len(streamIDs) != 2 || unaryIDs[0] == unaryIDs[1] {
		t.Fatalf("ids unary %v stream %v: want two distinct calls", unaryIDs, streamIDs)
	}
	for i := range unaryIDs {
		if unaryIDs[i] != streamIDs[i] {
			t.Errorf("call %d: stream id %s, unary id %s", i, streamIDs[i], unaryIDs[i])
		}
	}
	ends := 0
	for i, ev := range evs {
		if ev.Kind == provider.EventToolCallEnd {
			ends++
			if prev := evs[i-1]; prev.Kind != provider.EventToolCall || prev.ToolCall.CallID != ev.ToolCall.CallID {
				t.Errorf("end of %s does not follow its call", ev.ToolCall.CallID)
			}
		}
	}
	if ends != 2 {
		t.Errorf("%d ends, want 2", ends)
	}
	if f.meta.GetProviderFinishReason() != "stop" || f.meta.GetToolCallCount() != 2 {
		t.Errorf("meta %v", f.meta)
	}
}
