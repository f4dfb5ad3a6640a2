package openai

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
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
