package ollama

import (
	"context"
	"net/http"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23TwoCallsOneLine: Ollama's built-in parsers hand the server
// every call they finished in one piece of output, and the server sends
// them in one stream line (api.Message.ToolCalls, each with its own
// toolCallId() and function.index), as the unary answer holds them. Two
// calls in one line are two calls, in order, indices 0 and 1, Ollama's ids
// kept, a tool-call finish counting 2; without ids (older servers) two
// distinct made ids, the same as the unary answer's. Bodies written here in
// the shape of api.ChatResponse.
func TestRound23TwoCallsOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, id1, id2 string
	}{
		{"with ids", `"id":"call_r23aaaa1",`, `"id":"call_r23bbbb2",`},
		{"without ids", "", ""},
	} {
		calls := `[{` + tc.id1 + `"function":{"index":0,"name":"get_weather","arguments":{"city":"Paris"}}},{` + tc.id2 + `"function":{"index":1,"name":"get_time","arguments":{"tz":"Europe/Paris"}}}]`
		stream := `{"model":"qwen3:8b","created_at":"2026-11-20T10:00:00.1Z","message":{"role":"assistant","content":"","tool_calls":` + calls + `},"done":false}` + "\n" +
			`{"model":"qwen3:8b","created_at":"2026-11-20T10:00:00.2Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":900,"load_duration":10,"prompt_eval_count":40,"prompt_eval_duration":100,"eval_count":30,"eval_duration":700}` + "\n"
		unary := `{"model":"qwen3:8b","created_at":"2026-11-20T10:00:00.2Z","message":{"role":"assistant","content":"","tool_calls":` + calls + `},"done":true,"done_reason":"stop","total_duration":900,"load_duration":10,"prompt_eval_count":40,"prompt_eval_duration":100,"eval_count":30,"eval_duration":700}`
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: []byte(stream)})
		st, err := newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := collect(st)
		if err != nil {
			t.Fatal(err)
		}
		var starts []provider.ToolCallDelta
		for _, ev := range evs {
			if ev.Kind == provider.EventToolCall && ev.ToolCall.Name != "" {
				starts = append(starts, ev.ToolCall)
			}
		}
		if len(starts) != 2 || starts[0].Index != 0 || starts[1].Index != 1 || starts[0].Name != "get_weather" || starts[1].Name != "get_time" ||
			starts[0].Arguments != `{"city":"Paris"}` || starts[1].Arguments != `{"tz":"Europe/Paris"}` || starts[0].CallID == starts[1].CallID {
			t.Fatalf("%s: calls %+v", tc.name, starts)
		}
		if tc.id1 != "" && (starts[0].CallID != "call_r23aaaa1" || starts[1].CallID != "call_r23bbbb2") {
			t.Errorf("%s: ids %q %q", tc.name, starts[0].CallID, starts[1].CallID)
		}
		f := foldEvents(t, evs)
		if f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f.meta.GetToolCallCount() != 2 {
			t.Errorf("%s: finish %v calls %d", tc.name, f.meta.GetFinishReason(), f.meta.GetToolCallCount())
		}
		srv = providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(unary)})
		res, err := newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range res.Message.GetParts() {
			if c := p.GetToolCall(); c != nil {
				ids = append(ids, c.GetCallId())
			}
		}
		if len(ids) != 2 || ids[0] != starts[0].CallID || ids[1] != starts[1].CallID || res.Meta.GetToolCallCount() != 2 {
			t.Errorf("%s: unary ids %q, streamed %q %q", tc.name, ids, starts[0].CallID, starts[1].CallID)
		}
	}
}
