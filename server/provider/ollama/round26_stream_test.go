package ollama

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// TestRound26MaruelThinkingNoArgsStream: maruel/genai's streamed
// get_hostname turn with gemma4:e2b (October 2026, thinking by default, a
// tool of no parameters; GenStream-Tools-NoArgs-1.yaml, not the unary
// run's answer): 96 thinking lines one token each, then the call alone on
// a line of its own with Ollama's id call_s6g3r4wm and arguments {}, then
// the done line (done_reason stop, 69 in of which 64 read from the cache,
// 118 out). The reasoning is the lines' thinking joined, before the call;
// the call is whole; stop with calls is TOOL_CALLS; the cached count is
// the cached input tokens; no warning. The request is the recorded one
// (rmgOurs).
func TestRound26MaruelThinkingNoArgsStream(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_gemma4_e2b_thinking_noargs_1_stream"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemma4:e2b",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Use the get_hostname tool to get the machine's hostname and reply with only the hostname. Do not give an explanation."))},
		Tools: []*llmrelayv1.Tool{{Name: "get_hostname", Description: "Returns the machine's hostname",
			Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"additionalProperties":false,"type":"object"}`}}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	st, err := newTestProvider(t, srv).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(st)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td(name+".golden"), renderEvents(t, evs, err))
	f := foldEvents(t, evs)
	_, thinking, _ := r22Recorded(t, name, true)
	parts := f.msg.GetParts()
	want := &llmrelayv1.ToolCall{CallId: "call_s6g3r4wm", Name: "get_hostname", Arguments: "{}", ArgumentsValid: true}
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != thinking ||
		!strings.HasPrefix(thinking, "The user wants to get the machine's hostname using the `get_hostname` tool") || !strings.HasSuffix(thinking, "\n\nI need to generate a tool call.") ||
		!proto.Equal(parts[1].GetToolCall(), want) {
		t.Fatalf("parts %v", parts)
	}
	m := f.meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("finish %v / %q calls %d warnings %q", m.GetFinishReason(), m.GetProviderFinishReason(), m.GetToolCallCount(), m.GetWarnings())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 69 || u.GetCachedInputTokens() != 64 || u.GetOutputTokens() != 118 || u.GetTotalTokens() != 187 {
		t.Errorf("usage %v, want 69 in (64 cached), 118 out", u)
	}
	c := rmgLocal(10908748888, 5932447833, 69, 64726000, 118, 2293372000)
	c[extPromptEvalCachedCount] = 64
	checkCounters(t, m, c)
	checkCreateTime(t, m, rmgTime(t, "2026-10-03T14:30:06.886589248Z")) // the done line's, as every stream here
	rmgSameRequest(t, srv, name, rmgOurs)
}
