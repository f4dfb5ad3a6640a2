package anthropic

import (
	"context"
	"encoding/json"
	"reflect"
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

// The search tool of chatlas's RAG cassette.
const r19bRAGToolDesc = "Search the registered document store for passages relevant to a query.\nUse this whenever the user's question could be answered from the store's\n" +
	"documents. Ground your answer in the returned results.\n\nSearch the document store.\n\nParameters\n----------\nquery\n    What to look for, phrased as a focused search query."

// TestRound19bChatlasRAGStream: claude-sonnet-4-6 (July 2026), streamed,
// one search tool whose results chatlas sends back as search_result
// blocks with citations enabled. _1: a tool_use block (with the new
// "caller": {"type": "direct"}, which says the model called it itself)
// whose input {"query": "Flurbo stream responses"} comes in seven
// input_json_delta pieces, the first empty, a ping after the block
// starts; stop_details null in message_start and message_delta; usage
// with inference_geo "global"; 643 in, 59 out. _2, after the results: a
// second search, {"query": "FlurboChunk streaming generator"}, 1 + 1429
// cached in, 59 out. _3, after the second results: three text blocks, the
// middle one opening with "citations": [] and getting a citations_delta
// (search_result_location: cited_text, source kb://flurbo/streaming,
// title, search_result_index 0, block indexes 0 and 1) before its text;
// the answer's text is the three blocks' in order; 1 + 1753 cached in,
// 119 out. The rate-limit headers (20000 requests, 12000000 tokens) and
// no request-id (chatlas's cassettes drop it).
//
// The follow-ups: the assistant turns go back as chatlas sent them, each
// tool_use with its id and its input as the stream built it. chatlas's
// tool results were search_result blocks, which our tool result (text
// content) cannot carry: ours sends the same passages as text.
func TestRound19bChatlasRAGStream(t *testing.T) {
	t.Parallel()
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "claude-sonnet-4-6",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("How does Flurbo stream responses?"))},
		Tools: []*llmrelayv1.Tool{{Name: "search_documents", Description: r19bRAGToolDesc,
			Parameters: `{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"], "additionalProperties": false}`}},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096)},
	}
	const passages = "Flurbo streams responses via the flb.stream() generator, which yields FlurboChunk objects.\n\nThe Flurbo framework was created in 2019 by Ada Quist. Its default port is 7113."
	const answer = "Based on the available documentation, Flurbo streams responses via the `flb.stream()` generator, which yields `FlurboChunk` objects." +
		"\n\nBeyond this, the available documentation doesn't provide further details on streaming. For more in-depth information \u2014 such as how to" +
		" handle `FlurboChunk` objects, available options for `flb.stream()`, or example code \u2014 I'd recommend consulting the full Flurbo documentation or source code directly."
	turns := []struct {
		name, msgID   string
		reset         time.Time
		in, out, read int32
		parts         []*llmrelayv1.Part
		tokensLeft    int64
		cited         []citedWant
		assistant     []string // the tool_use blocks of the assistant turns sent
	}{
		{"real_chatlas_sonnet46_rag_stream_1", "msg_011CdYncu8pfxDgjoxELYpSN", time.Date(2026, 7, 30, 19, 23, 9, 0, time.UTC), 643, 59, 0,
			[]*llmrelayv1.Part{toolCallPart("toolu_01MvCUT8oTFjVJg1qTVSfpbN", "search_documents", `{"query": "Flurbo stream responses"}`)}, 12000000, nil, nil},
		{"real_chatlas_sonnet46_rag_stream_2", "msg_011CdYnd1VJvqaZumFhSNdai", time.Date(2026, 7, 30, 19, 23, 10, 0, time.UTC), 1, 59, 1429,
			[]*llmrelayv1.Part{toolCallPart("toolu_01P67ZGroxh9tS4MkGUDjcGX", "search_documents", `{"query": "FlurboChunk streaming generator"}`)}, 11999000, nil,
			[]string{`{"type": "tool_use", "id": "toolu_01MvCUT8oTFjVJg1qTVSfpbN", "name": "search_documents", "input": {"query": "Flurbo stream responses"}}`}},
		{"real_chatlas_sonnet46_rag_stream_3", "msg_011CdYnd7QWF5sfLhAe9NEJ1", time.Date(2026, 7, 30, 19, 23, 12, 0, time.UTC), 1, 119, 1753,
			[]*llmrelayv1.Part{text(answer)}, 11999000,
			[]citedWant{{text: "Flurbo streams responses via the `flb.stream()` generator, which yields `FlurboChunk` objects.",
				cites: []citeWant{{"search_result_location", "Flurbo streams responses via the flb.stream() generator, which yields FlurboChunk objects.", "kb://flurbo/streaming"}}}},
			[]string{`{"type": "tool_use", "id": "toolu_01MvCUT8oTFjVJg1qTVSfpbN", "name": "search_documents", "input": {"query": "Flurbo stream responses"}}`,
				`{"type": "tool_use", "id": "toolu_01P67ZGroxh9tS4MkGUDjcGX", "name": "search_documents", "input": {"query": "FlurboChunk streaming generator"}}`}},
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
		finish, stop := llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_use"
		if i == 2 {
			finish, stop = llmrelayv1.FinishReason_FINISH_REASON_STOP, "end_turn"
		}
		checkLLMWant(t, tc.name, f.message, f.meta, llmWant{
			parts: tc.parts, responseID: tc.msgID, model: "claude-sonnet-4-6",
			finish: finish, providerStop: stop, usage: usageOf(tc.in, tc.out, tc.read, 0, 0),
			requestsLimit: 20000, tokensLimit: 12000000, tokensReset: tc.reset,
			extended: map[string]string{"usage_details": `{"inference_geo":"global"}`}, cited: tc.cited,
		})
		if rl := f.meta.GetRateLimit(); rl.GetTokensRemaining() != tc.tokensLeft {
			t.Errorf("%s: rate limit %v", tc.name, rl)
		}
		// The assistant turns we sent: chatlas's tool_use blocks.
		sent := r19bJSON(t, srv.Last(t).Body)
		msgs, _ := sent["messages"].([]any)
		var uses []any
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			if mm["role"] != "assistant" {
				continue
			}
			blocks, _ := mm["content"].([]any)
			uses = append(uses, blocks...)
		}
		var want []any
		for _, a := range tc.assistant {
			var v any
			if err := json.Unmarshal([]byte(a), &v); err != nil {
				t.Fatal(err)
			}
			want = append(want, v)
		}
		if !reflect.DeepEqual(uses, want) {
			t.Errorf("%s: assistant blocks sent %v, want %v", tc.name, uses, want)
		}
		if len(msgs) != 1+2*i {
			t.Errorf("%s: %d messages sent", tc.name, len(msgs))
		}
		lcgSameFields(t, srv.Last(t).Body, `{"max_tokens": 4096, "model": "claude-sonnet-4-6", "stream": true, "tools": [{"name": "search_documents", `+
			`"input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"], "additionalProperties": false}, "description": `+
			jsonQuote(t, r19bRAGToolDesc)+`}]}`)
		providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, nil))
		req.Messages = append(req.Messages, f.message)
		if call := tc.parts[0].GetToolCall(); call != nil {
			req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call.GetCallId(), passages, false)))
		}
	}
}
