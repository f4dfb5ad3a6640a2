package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 14: Messages API fixtures from microsoft/semantic-kernel's .NET
// Anthropic connector tests (dotnet/src/Connectors/Connectors.Anthropic.
// UnitTests/TestData), written by hand by the SDK's authors (readable ids
// such as msg_01TextBeforeToolCall, round counts): sk_*, see
// testdata/README.md, "Round 14". The expectations are read off the
// fixtures.

// TestRound14SKToolLoop: a tool loop as SK's tests run it. The unary
// answer is a text block then a tool_use (MyPlugin-GetWeather with
// {"location":"Seattle"}, id toolu_01Weather123), stop_reason tool_use,
// 100 in, 50 out. Given back with the result, the assistant turn is the
// two blocks as received and the result names the call's id. The streamed
// answer to that (sk_stream_final_after_tool_call) is text in two pieces
// with a non-ASCII character (U+00B0), end_turn; message_start says 150
// in and 1 out, message_delta corrects the output to 30.
func TestRound14SKToolLoop(t *testing.T) {
	t.Parallel()
	const first, final = "sk_text_before_tool_call", "sk_stream_final_after_tool_call"
	srv := providertest.ReplayFile(t, "testdata/"+first+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-sonnet-4-20250514",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Seattle?"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](1024)},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("Let me check the weather for you."),
			toolCallValid("toolu_01Weather123", "MyPlugin-GetWeather", `{"location":"Seattle"}`)},
		responseID: "msg_01TextBeforeToolCall", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(100, 50, 0, 0, 0),
	})
	if res.Meta.GetToolCallCount() != 1 || res.Meta.GetStopSequence() != "" {
		t.Errorf("meta %v", res.Meta)
	}
	providertest.Golden(t, "testdata/"+first+".golden", renderResult(t, res))

	req.Messages = append(req.Messages, res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Weather123", "sunny, 72°F", false)))
	next := providertest.ReplayFile(t, "testdata/"+final+".http")
	s, err := newTestProvider(t, next.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	var sent struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(next.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	const (
		wantAssistant = `{"role":"assistant","content":[{"type":"text","text":"Let me check the weather for you."},` +
			`{"type":"tool_use","id":"toolu_01Weather123","name":"MyPlugin-GetWeather","input":{"location":"Seattle"}}]}`
		wantResult = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01Weather123","content":"sunny, 72°F"}]}`
	)
	if len(sent.Messages) != 3 || compactJSON(t, sent.Messages[1]) != wantAssistant || compactJSON(t, sent.Messages[2]) != wantResult {
		t.Errorf("follow-up messages %s\nwant the assistant turn %s\nand the result %s", sent.Messages, wantAssistant, wantResult)
	}

	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated %v, folded %v", got, f.message)
	}
	checkLLMWant(t, "stream", f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Based on the weather data, it's currently sunny and 72°F in Seattle.")},
		responseID: "msg_01FinalResponse", model: "claude-sonnet-4-20250514",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(150, 30, 0, 0, 0),
	})
	var pieces []string
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			pieces = append(pieces, ev.Text)
		}
	}
	if len(pieces) != 2 || pieces[0] != "Based on the weather data, " || pieces[1] != "it's currently sunny and 72°F in Seattle." {
		t.Errorf("text pieces %q", pieces)
	}
	providertest.Golden(t, "testdata/"+final+".golden", renderEvents(t, evs, nil))
}
