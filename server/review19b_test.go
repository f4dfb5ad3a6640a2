package server_test

import (
	"context"
	"errors"
	"io"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// streamToolsDone streams a tools call through the gateway and returns
// each tool_call_done's call id and arguments_valid, and the end event.
func streamToolsDone(t *testing.T, c llmrelayv1.GatewayServiceClient) (map[string]bool, *llmrelayv1.StreamEnd) {
	t.Helper()
	s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m",
		Messages: []*llmrelayv1.Message{user("What's the weather in Oslo?")}, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string]bool{}
	var end *llmrelayv1.StreamEnd
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return valid, end
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := ev.GetToolCallDone(); d != nil {
			if _, twice := valid[d.GetToolCall().GetCallId()]; twice {
				t.Errorf("tool_call_done of %s twice", d.GetToolCall().GetCallId())
			}
			valid[d.GetToolCall().GetCallId()] = d.GetToolCall().GetArgumentsValid()
		}
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
}

// TestChatStreamCallCutByLengthThroughGateway: an OpenAI chat stream whose
// finish_reason length stops a call right after a value that parses
// (openai/testdata/tools19_length_parsing_args_stream.http). The adapter
// ends the call as cut; the client must get arguments_valid false, not the
// call completed as whole by the relay when the finish reason arrives.
func TestChatStreamCallCutByLengthThroughGateway(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, providertest.Load(t, "provider/openai/testdata/tools19_length_parsing_args_stream.http"))
	c, _ := startWith(t, providerCases[0].yaml, up.URL)
	valid, end := streamToolsDone(t, c)
	if v, ok := valid["call_t19_len_c"]; !ok || v {
		t.Errorf("tool_call_done arguments_valid %v (seen %v), want false", v, ok)
	}
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || !cutWarning(end.GetMeta().GetWarnings()) {
		t.Errorf("stream end %v", end)
	}
}
