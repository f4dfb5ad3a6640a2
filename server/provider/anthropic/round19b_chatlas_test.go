package anthropic

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19b: posit-dev/chatlas's VCR cassettes (testdata/README.md,
// "Round 19b"). The expectations are read off the recordings by hand.

// TestRound19bChatlasToolStream: claude-haiku-4-5-20251001 (December
// 2025), streamed through the Python SDK, one parameterless tool. _1: a
// tool_use block that starts with input {} and gets one input_json_delta
// whose partial_json is "" (the arguments stay "{}"), tool_use; 574 in, 37
// out (message_delta repeats the input count, not to be added twice);
// every event's JSON padded with spaces before its last brace. chatlas's
// cassettes keep no request-id header; the eight rate-limit headers give
// 4000 requests and 4800000 tokens.
//
// chatlas sent the call back with its result and the API answered (_2):
// "It", " is 2024-01-01", a ping, "."; end_turn; 629 in, 13 out. The
// follow-up we build carries chatlas's messages (its system prompt as a
// block list and its cache_control marks aside, which we do not set).
func TestRound19bChatlasToolStream(t *testing.T) {
	t.Parallel()
	const sys = "Always use a tool to help you answer. Reply with 'It is ____.'."
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-haiku-4-5-20251001",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(sys)),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What's the current date in YYYY-MM-DD format?")),
		},
		Tools:   []*llmrelayv1.Tool{{Name: "get_date", Description: "Gets the current date", Parameters: `{"type": "object", "properties": {}}`}},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096)},
	}
	const tools = `[{"name": "get_date", "input_schema": {"type": "object", "properties": {}}, "description": "Gets the current date"}]`
	turns := []struct {
		name, msgID string
		reset       time.Time
		in, out     int32
		parts       []*llmrelayv1.Part
		sent        string
	}{
		{"real_chatlas_haiku_tool_stream_1", "msg_01BUNqV7CBiFHcZ93HZVUNaP", time.Date(2025, 12, 31, 20, 35, 12, 0, time.UTC), 574, 37,
			[]*llmrelayv1.Part{toolCallPart("toolu_015huZJpvnEWtFcnczKyKPvJ", "get_date", "{}")},
			`[{"role": "user", "content": [{"text": "What's the current date in YYYY-MM-DD format?", "type": "text"}]}]`},
		{"real_chatlas_haiku_tool_stream_2", "msg_01TM9iJ8qqcXenqDkdCYmUYg", time.Date(2025, 12, 31, 20, 35, 13, 0, time.UTC), 629, 13,
			[]*llmrelayv1.Part{text("It is 2024-01-01.")},
			`[{"role": "user", "content": [{"text": "What's the current date in YYYY-MM-DD format?", "type": "text"}]}, ` +
				`{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_015huZJpvnEWtFcnczKyKPvJ", "name": "get_date", "input": {}}]}, ` +
				`{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_015huZJpvnEWtFcnczKyKPvJ", "content": "2024-01-01"}]}]`},
	}
	for i, tc := range turns {
		srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
		s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		evs, err := collect(s)
		if err != nil {
			t.Fatalf("%s: stream error: %v", tc.name, err)
		}
		f := foldEvents(t, evs)
		if got := accumulate(t, evs); !proto.Equal(got, f.message) {
			t.Errorf("%s: accumulated %v, folded %v", tc.name, got, f.message)
		}
		finish, stop := llmrelayv1.FinishReason_FINISH_REASON_STOP, "end_turn"
		if i == 0 {
			finish, stop = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_use"
		}
		checkLLMWant(t, tc.name, f.message, f.meta, llmWant{
			parts: tc.parts, responseID: tc.msgID, model: "claude-haiku-4-5-20251001",
			finish: finish, providerStop: stop, usage: usageOf(tc.in, tc.out, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 4800000, tokensReset: tc.reset,
		})
		if f.meta.GetServiceTier() != "standard" {
			t.Errorf("%s: service tier %q", tc.name, f.meta.GetServiceTier())
		}
		if i == 1 {
			var texts []string
			for _, ev := range evs {
				if ev.Kind == provider.EventText {
					texts = append(texts, ev.Text)
				}
			}
			if len(texts) != 3 || texts[0] != "It" || texts[1] != " is 2024-01-01" || texts[2] != "." {
				t.Errorf("%s: text pieces %q", tc.name, texts)
			}
		}
		lcgSameFields(t, srv.Last(t).Body, `{"max_tokens": 4096, "messages": `+tc.sent+`, "model": "claude-haiku-4-5-20251001", "stream": true, "tools": `+tools+`}`)
		if got := r19bJSON(t, srv.Last(t).Body)["system"]; got != sys {
			t.Errorf("%s: system %v", tc.name, got)
		}
		providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, nil))
		req.Messages = append(req.Messages, f.message)
		if i == 0 {
			req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_015huZJpvnEWtFcnczKyKPvJ", "2024-01-01", false)))
		}
	}
}
