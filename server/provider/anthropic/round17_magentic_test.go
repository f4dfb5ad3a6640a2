package anthropic

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17: jackmpcollins/magentic's cassettes (see testdata/README.md,
// "Round 17").

// magenticIntTool is magentic's tool for a function of two integers (a
// pydantic schema with titles, an empty description).
func magenticIntTool(name string) *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: name,
		Parameters: `{"properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}, "required": ["a", "b"], "type": "object"}`}
}

// TestRound17MagenticParallelCalls: claude-3-opus (November 2024) forced to
// call a tool (tool_choice any, parallel calls allowed) answered with two
// tool_use blocks and no text. The first block's arguments come as an
// empty piece then two ("{\"a\": 1", ", \"b\": 2}"), the second's in six
// pieces split inside the key ("{\"a", "\": 2", …, "\": ", "1}"); both are
// kept as sent, keyed by their ids, and each call ends when the next block
// starts or the stop reason comes. message_start padded, a spaced ping,
// message_delta has only output_tokens (104, up from 12) and a line break
// before its closing brace (the cassette's folding: a space). The request
// id is the header's; no rate-limit header was kept. Our request is the
// recorded one: tool_choice {type: any}, parallel calls allowed (magentic
// sent disable_parallel_tool_use false, the default we leave out), the
// tools with their schemas as given and an empty description (sent as ""
// by magentic, left out by us).
func TestRound17MagenticParallelCalls(t *testing.T) {
	t.Parallel()
	const name = "real_magentic_parallel_function_call"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS,
		Model:    "claude-3-opus-20240229",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
			text("Use the plus tool to sum 1 and 2. Use the minus tool to subtract 1 from 2. Use both tools at the same time."))},
		Tools: []*llmrelayv1.Tool{magenticIntTool("plus"), magenticIntTool("minus")},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](1024), ParallelToolCalls: ptr(true),
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}},
	}
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated %v, folded %v", got, f.message)
	}
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			toolCallPart("toolu_01CM7Nqnu3tF2UqzksSCxsqt", "plus", `{"a": 1, "b": 2}`),
			toolCallPart("toolu_01MGZBHepZSnpCrVLDT34yxu", "minus", `{"a": 2, "b": 1}`),
		},
		responseID: "msg_01LZDJCvBkpvzQxKUK1YXzwc", model: "claude-3-opus-20240229", requestID: "req_01JCEB6rs4JGaU8SERKFTiLv",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage: usageOf(469, 104, 0, 0, 0),
	})
	if n := countKind(evs, provider.EventToolCallEnd); n != 2 || countKind(evs, provider.EventToolCallCut) != 0 {
		t.Errorf("%d tool call ends, want 2 and no cut call", n)
	}
	lcgSameFields(t, srv.Last(t).Body, `{"max_tokens": 1024, "messages": [{"role": "user", "content": [{"type": "text", "text": "Use the plus tool to sum 1 and 2. Use the minus tool to subtract 1 from 2. Use both tools at the same time."}]}], "model": "claude-3-opus-20240229",`+
		`"tools": [{"name": "plus", "input_schema": {"properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}, "required": ["a", "b"], "type": "object"}},`+
		`{"name": "minus", "input_schema": {"properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}, "required": ["a", "b"], "type": "object"}}],`+
		`"tool_choice": {"type": "any"}, "stream": true}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	providertest.Golden(t, "testdata/"+name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
}
