package openai

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestResponsesLaterCallIDWarned: a function_call item whose added event
// gave no call_id (or another one) goes out keyed by what that event
// gave; the call_id its output_item.done names later is said in a
// warning, not kept silently (FuzzResponsesStream found a call whose
// final arguments named a call the client never saw, without a word).
// The key is not changed mid-call: the client has the call by it.
func TestResponsesLaterCallIDWarned(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	done := sseEvent("response.output_item.done", `{"type":"response.output_item.done","item":{"id":"fc_l22","type":"function_call","call_id":"call_l22","name":"f","arguments":"{}"}}`)
	completed := sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_l22","status":"completed","output":[{"id":"fc_l22","type":"function_call","call_id":"call_l22","name":"f","arguments":"{}"}]}}`)
	for _, tc := range []struct {
		name, added, key, warnings string
	}{
		{"no call_id, no item id", `{"type":"function_call","name":"f"}`, "call_idx0",
			"function_call 0 has neither call_id nor item id; keyed as call_idx0|tool call call_idx0: a later item event names call_id call_l22; kept call_idx0"},
		{"another call_id", `{"type":"function_call","call_id":"call_first22","name":"f"}`, "call_first22",
			"tool call call_first22: a later item event names call_id call_l22; kept call_first22"},
		{"the same call_id", `{"type":"function_call","call_id":"call_l22","name":"f"}`, "call_l22", ""},
	} {
		added := sseEvent("response.output_item.added", `{"type":"response.output_item.added","item":`+tc.added+`}`)
		evs, _, err := collect(t, respStreamFrom(p, added+done+completed))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		calls := providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: true, EndEveryCall: true})
		if len(calls) != 1 || calls[0].ID != tc.key || calls[0].Arguments.String() != "{}" {
			t.Errorf("%s: calls %+v, want one keyed %s with {}", tc.name, calls, tc.key)
		}
		var warnings []string
		for _, ev := range evs {
			if ev.Kind == provider.EventMeta {
				warnings = append(warnings, ev.Meta.GetWarnings()...)
			}
		}
		if got := strings.Join(warnings, "|"); got != tc.warnings {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.warnings)
		}
	}
}

// TestResponsesFinalOutputShifted: a final response that leaves an item
// out (its output holds the second call only, at position 0) is read by
// the item ids the stream used, not by position: the second call's
// arguments its deltas did not carry are caught up on it, and the first
// call is left as it was (CI's FuzzResponsesStream found the second
// call's arguments checked against the first call's and lost).
func TestResponsesFinalOutputShifted(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body := sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_s22a","type":"function_call","call_id":"call_s22a","name":"f","arguments":""}}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_s22a","type":"function_call","status":"completed","call_id":"call_s22a","name":"f","arguments":"{\"a\":1}"}}`) +
		sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_s22b","type":"function_call","call_id":"call_s22b","name":"g","arguments":""}}`) +
		sseEvent("response.incomplete", `{"type":"response.incomplete","response":{"id":"resp_s22","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},`+
			`"output":[{"id":"fc_s22b","type":"function_call","status":"in_progress","call_id":"call_s22b","name":"g","arguments":"{\"b\":"}]}}`)
	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	calls := providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: true, EndEveryCall: true})
	got := map[string]string{}
	for _, c := range calls {
		got[c.ID] = c.Arguments.String()
	}
	if len(got) != 2 || got["call_s22a"] != `{"a":1}` || got["call_s22b"] != `{"b":` {
		t.Errorf("calls %v, want call_s22a {\"a\":1} and call_s22b {\"b\":", got)
	}
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta {
			for _, w := range ev.Meta.GetWarnings() {
				if strings.Contains(w, "call_s22a") {
					t.Errorf("warning about the first call: %q", w)
				}
			}
		}
	}
}
