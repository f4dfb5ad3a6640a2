package openai

import (
	"errors"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// callList renders a message's tool calls as "id name args" lines.
func callList(m *llmrelayv1.Message) string {
	var out []string
	for _, p := range m.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			out = append(out, tc.GetCallId()+" "+tc.GetName()+" "+tc.GetArguments())
		}
	}
	return strings.Join(out, "|")
}

// TestUnaryRepeatedCallIDsCallids19: a unary answer keys its calls as the
// stream does. Two chat calls with one id, each named with whole
// arguments, are two calls: the later is re-keyed with a warning (the
// gateway keys calls by id and would join them). A Responses output with
// two function_call items of one call_id keys the later by its item id,
// else by a made id (responsesStream.callKey). A made id is never one the
// server sent in the same answer.
func TestUnaryRepeatedCallIDsCallids19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	chat := []struct{ name, calls, want, warnings string }{
		{"same id twice",
			`{"id":"call_dup","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},` +
				`{"id":"call_dup","type":"function","function":{"name":"g","arguments":"{\"b\":2}"}}`,
			`call_dup f {"a":1}|call_idx1 g {"b":2}`,
			"tool call 1 repeats the id call_dup of an earlier call; keyed as call_idx1"},
		{"made id the server sent later",
			`{"type":"function","function":{"name":"f","arguments":"{}"}},` +
				`{"id":"call_idx0","type":"function","function":{"name":"g","arguments":"{}"}}`,
			`call_idx0_2 f {}|call_idx0 g {}`,
			"tool call 0 has no id; keyed as call_idx0_2"},
		{"re-keyed onto a sent id",
			`{"id":"call_idx0","type":"function","function":{"name":"f","arguments":"{}"}},` +
				`{"id":"call_idx0","type":"function","function":{"name":"g","arguments":"{}"}},` +
				`{"id":"call_idx1","type":"function","function":{"name":"h","arguments":"{}"}}`,
			`call_idx0 f {}|call_idx1_2 g {}|call_idx1 h {}`,
			"tool call 1 repeats the id call_idx0 of an earlier call; keyed as call_idx1_2"},
	}
	for _, tc := range chat {
		res, err := p.parseChatResponse([]byte(`{"id":"chatcmpl-c19","object":"chat.completion","model":"m","choices":[{"index":0,` +
			`"message":{"role":"assistant","content":null,"tool_calls":[` + tc.calls + `]},"finish_reason":"tool_calls"}]}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := callList(res.Message); got != tc.want {
			t.Errorf("chat %s: calls %s, want %s", tc.name, got, tc.want)
		}
		if got := strings.Join(res.Meta.GetWarnings(), "; "); got != tc.warnings {
			t.Errorf("chat %s: warnings %q, want %q", tc.name, got, tc.warnings)
		}
	}

	resp := []struct{ name, items, want, warnings string }{
		{"same call_id, item ids",
			`{"type":"function_call","id":"fc_1","call_id":"call_dup","name":"f","arguments":"{\"a\":1}","status":"completed"},` +
				`{"type":"function_call","id":"fc_2","call_id":"call_dup","name":"g","arguments":"{\"b\":2}","status":"completed"}`,
			`call_dup f {"a":1}|fc_2 g {"b":2}`,
			"function_call 1 repeats the id call_dup of an earlier call; keyed as fc_2"},
		{"same call_id, no item ids",
			`{"type":"function_call","call_id":"call_dup","name":"f","arguments":"{}","status":"completed"},` +
				`{"type":"function_call","call_id":"call_dup","name":"g","arguments":"{}","status":"completed"}`,
			`call_dup f {}|call_idx1 g {}`,
			"function_call 1 repeats the id call_dup of an earlier call; keyed as call_idx1"},
		{"made id the server sent later",
			`{"type":"function_call","name":"f","arguments":"{}","status":"completed"},` +
				`{"type":"function_call","id":"fc_2","call_id":"call_idx0","name":"g","arguments":"{}","status":"completed"}`,
			`call_idx0_2 f {}|call_idx0 g {}`,
			"function_call 0 has neither call_id nor item id; keyed as call_idx0_2"},
	}
	for _, tc := range resp {
		res, err := p.parseResponsesResponse([]byte(`{"id":"resp_c19","object":"response","status":"completed","model":"m","output":[`+tc.items+`]}`), "m")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := callList(res.Message); got != tc.want {
			t.Errorf("responses %s: calls %s, want %s", tc.name, got, tc.want)
		}
		if got := strings.Join(res.Meta.GetWarnings(), "; "); got != tc.warnings {
			t.Errorf("responses %s: warnings %q, want %q", tc.name, got, tc.warnings)
		}
	}
}

// chatChunk is an SSE chunk of one delta's tool_calls.
func chatChunk(calls string) string {
	return `data: {"id":"chatcmpl-c19","model":"m","choices":[{"index":0,"delta":{"tool_calls":[` + calls + `]}}]}` + "\n\n"
}

// streamCalls runs a stream over body and returns its calls and warnings
// folded, after the event invariants are checked.
func streamCalls(t *testing.T, s provider.Stream) (string, string) {
	t.Helper()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: true, EndEveryCall: true})
	f := foldEvents(t, evs)
	return callList(f.Message), strings.Join(f.Meta.GetWarnings(), "; ")
}

// TestChatStreamRepeatedCallIDsCallids19: two whole calls sent with one
// id at different indexes are two calls (the later re-keyed, with a
// warning, as the unary answer keys them), not one with `{"a":1}{"b":2}`;
// a fragment naming the call by id at another index while its arguments
// are partial still continues it. A made id is never one the server sent
// before it, and a server id equal to an id made earlier is re-keyed.
func TestChatStreamRepeatedCallIDsCallids19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, body, want, warnings string }{
		{"two whole calls, one id, two indexes",
			chatChunk(`{"index":0,"id":"call_dup","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}`) +
				chatChunk(`{"index":1,"id":"call_dup","type":"function","function":{"name":"g","arguments":"{\"b\":2}"}}`),
			`call_dup f {"a":1}|call_idx1 g {"b":2}`,
			"tool call 1 repeats the id call_dup of an earlier call; keyed as call_idx1"},
		{"partial call continued by id at another index",
			chatChunk(`{"index":0,"id":"call_p","type":"function","function":{"name":"f","arguments":"{\"a\":"}}`) +
				chatChunk(`{"index":1,"id":"call_p","type":"function","function":{"name":"f","arguments":"1}"}}`),
			`call_p f {"a":1}`, ""},
		{"made id, then the server sends it",
			chatChunk(`{"index":0,"type":"function","function":{"name":"f","arguments":"{}"}}`) +
				chatChunk(`{"index":1,"id":"call_idx0","type":"function","function":{"name":"g","arguments":"{}"}}`),
			`call_idx0 f {}|call_idx1 g {}`,
			"tool call 0 has no id; keyed as call_idx0; tool call 1 repeats the id call_idx0 of an earlier call; keyed as call_idx1"},
		{"server id, then one made with its value",
			chatChunk(`{"index":0,"id":"call_idx1","type":"function","function":{"name":"f","arguments":"{}"}}`) +
				chatChunk(`{"index":1,"type":"function","function":{"name":"g","arguments":"{}"}}`),
			`call_idx1 f {}|call_idx1_2 g {}`,
			"tool call 1 has no id; keyed as call_idx1_2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := streamFrom(p, tc.body+`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
			calls, warnings := streamCalls(t, s)
			if calls != tc.want || warnings != tc.warnings {
				t.Errorf("calls %s, warnings %q; want %s, %q", calls, warnings, tc.want, tc.warnings)
			}
		})
	}
}

// TestResponsesStreamMadeCallIDCallids19: a call without call_id or item
// id gets a made id none of the earlier calls has (it was call_idx1,
// which the first call's call_id is, joining the two).
func TestResponsesStreamMadeCallIDCallids19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(s string) string { return "data: " + s + "\n\n" }
	body := ev(`{"type":"response.created","response":{"id":"resp_c19","status":"in_progress","model":"m"}}`) +
		ev(`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_a","call_id":"call_idx1","name":"f","arguments":""}}`) +
		ev(`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_a","delta":"{}"}`) +
		ev(`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_a","call_id":"call_idx1","name":"f","arguments":"{}","status":"completed"}}`) +
		ev(`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","name":"g","arguments":""}}`) +
		ev(`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"}`) +
		ev(`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","name":"g","arguments":"{}","status":"completed"}}`) +
		ev(`{"type":"response.completed","response":{"id":"resp_c19","status":"completed","model":"m","output":[]}}`)
	calls, warnings := streamCalls(t, respStreamFrom(p, body))
	if want := `call_idx1 f {}|call_idx1_2 g {}`; calls != want {
		t.Errorf("calls %s, want %s", calls, want)
	}
	if want := "function_call 1 has neither call_id nor item id; keyed as call_idx1_2"; warnings != want {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
}

// TestResponsesStreamPendingOnFailureCallids19: arguments held for a call
// whose call_id has not come (deltas before the item's
// output_item.added) are relayed before the stream's error, keyed by the
// item id, and the call ends as cut by the failure, with warnings: the
// client sees what was generated (they were dropped).
func TestResponsesStreamPendingOnFailureCallids19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(s string) string { return "data: " + s + "\n\n" }
	start := ev(`{"type":"response.created","response":{"id":"resp_c19p","status":"in_progress","model":"m"}}`) +
		ev(`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_p","delta":"{\"city\":\"Par"}`)
	cases := []struct {
		name, end string
		cut       bool
	}{
		{"response.failed", ev(`{"type":"response.failed","response":{"id":"resp_c19p","status":"failed","model":"m","error":{"code":"server_error","message":"boom"}}}`), false},
		{"error event", ev(`{"type":"error","code":"server_error","message":"boom"}`), false},
		{"cut", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, _, err := collect(t, respStreamFrom(p, start+tc.end))
			if err == nil {
				t.Fatal("stream did not fail")
			}
			if pe := providerError(t, err); errors.Is(pe, provider.ErrStreamCut) != tc.cut || (!tc.cut && !strings.Contains(pe.Message, "boom")) {
				t.Errorf("error %v", pe)
			}
			calls := providertest.CheckEvents(t, evs, providertest.EventCheck{})
			f := foldEvents(t, evs)
			if got, want := callList(f.Message), `fc_p  {"city":"Par`; got != want {
				t.Errorf("calls %q, want %q", got, want)
			}
			if len(calls) != 1 || evs[len(evs)-1].Kind != provider.EventToolCallCut {
				t.Errorf("calls %d, last event %v", len(calls), evs[len(evs)-1].Kind)
			}
			want := "function_call item fc_p has no call_id; keyed by its item id; tool call fc_p was cut by the stream's failure; its arguments are partial"
			if got := strings.Join(f.Meta.GetWarnings(), "; "); got != want {
				t.Errorf("warnings %q, want %q", got, want)
			}
		})
	}
}

// TestUnaryObjectCallIDValidUTF8Callids19: a call id sent as an object
// holding invalid UTF-8 is kept as its JSON text made valid (the proto
// string cannot carry the bytes; FuzzStream found it in the stream).
func TestUnaryObjectCallIDValidUTF8Callids19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseChatResponse([]byte("{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"tool_calls\":[" +
		"{\"id\":{\"k\":\"\xd2\"},\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := callList(res.Message), "{\"k\":\"\uFFFD\"} f {}"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
}
