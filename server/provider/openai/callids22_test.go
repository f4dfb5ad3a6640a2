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
