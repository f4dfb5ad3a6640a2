package ollama

import (
	"context"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24DoneReasonToolCalls: servers that speak Ollama's API in front
// of another backend end an answer with calls with done_reason
// "tool_calls" (tino-kuptz/cf-ollama-wrapper, src/routes/chat.ts: Workers
// AI behind /api/chat, unary and streamed; testdata/README.md, Round 24).
// Ollama itself never sends it (stop, length, load, unload,
// connection_closed), so it read as an unknown reason, OTHER: an answer
// whose calls are whole, which a client that runs the calls of a
// TOOL_CALLS answer did not run. With calls it is TOOL_CALLS now, unary
// and streamed, the value kept as the provider's; without any it stays
// OTHER (nothing to run).
func TestRound24DoneReasonToolCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stream bool
		city   string
	}{
		{"compat_cf_tool_calls", false, "Tokyo"},
		{"compat_cf_stream_tool_calls", true, "Osaka"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			p := newTestProvider(t, srv)
			req := toolsRequest(t)
			req.Model = "llama3.3:70b"
			var meta *llmrelayv1.ResponseMeta
			var calls []*llmrelayv1.ToolCall
			if tc.stream {
				st, err := p.Stream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				evs, err := collect(st)
				providertest.Golden(t, td(tc.name+".golden"), renderEvents(t, evs, err))
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					switch ev.Kind {
					case provider.EventMeta:
						if ev.Meta.GetProviderFinishReason() != "" {
							meta = ev.Meta
						}
					case provider.EventToolCall:
						calls = append(calls, &llmrelayv1.ToolCall{CallId: ev.ToolCall.CallID, Name: ev.ToolCall.Name, Arguments: ev.ToolCall.Arguments})
					}
				}
			} else {
				res, err := p.Generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
				meta = res.Meta
				for _, part := range res.Message.GetParts() {
					if c := part.GetToolCall(); c != nil {
						calls = append(calls, c)
					}
				}
			}
			if meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || meta.GetProviderFinishReason() != "tool_calls" || meta.GetToolCallCount() != 1 {
				t.Errorf("finish %v (%q), %d calls", meta.GetFinishReason(), meta.GetProviderFinishReason(), meta.GetToolCallCount())
			}
			if len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Arguments != `{"city":"`+tc.city+`"}` || calls[0].CallId == "" {
				t.Errorf("calls %v", calls)
			}
		})
	}

	// Without a call there is nothing to run: OTHER, as before.
	u, s := e19Both(t, e19Final("tool_calls", `"content":"hi"`), e19Stream("tool_calls", `"content":"hi"`))
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if a.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || a.meta.GetProviderFinishReason() != "tool_calls" {
			t.Errorf("%s without calls: finish %v (%q)", what, a.meta.GetFinishReason(), a.meta.GetProviderFinishReason())
		}
	}
}
