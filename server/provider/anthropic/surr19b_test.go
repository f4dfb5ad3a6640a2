package anthropic

import (
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// partial_json pieces cut between the halves of a surrogate pair
// (testdata/surr19b_partial_json_stream.http, hand-written). Two ways to
// cut: a UTF-16 proxy cutting the input text inside 😀 sends each half
// as an escape of the piece's own JSON string ("\ud83d"), which decodes
// to U+FFFD alone, and is joined; an escape inside the input's strings
// (the outer encoding's "\\ud83d", text) was never broken: the pieces
// are relayed as text, and the concatenation is a valid pair. A lone
// half is U+FFFD at the next piece that does not continue it and at
// content_block_stop, never later.
func TestPartialJSONSurrogateSurr19b(t *testing.T) {
	t.Parallel()
	evs, err := r14Stream(t, "surr19b_partial_json_stream", plainRequest())
	providertest.Golden(t, "testdata/surr19b_partial_json_stream.golden", renderEvents(t, evs, err))
	if err != nil {
		t.Fatal(err)
	}
	// Each piece's arguments as relayed: the held half goes with the
	// piece that continues it, a lone one with the next piece.
	var frags []string
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCall && ev.ToolCall.Arguments != "" {
			frags = append(frags, ev.ToolCall.Arguments)
		}
	}
	wantFrags := []string{
		`{"note": "smile `,
		`😀 ok", "escaped": "\ud83d`,
		`\ude01", "lone": "x`,
		"\uFFFD\"}",
		`{"note": "end `,
		"\uFFFD",
	}
	if len(frags) != len(wantFrags) {
		t.Fatalf("fragments %q, want %q", frags, wantFrags)
	}
	for i := range frags {
		if frags[i] != wantFrags[i] {
			t.Errorf("fragment %d %q, want %q", i, frags[i], wantFrags[i])
		}
	}
	f := foldEvents(t, evs)
	var calls []*llmrelayv1.ToolCall
	for _, p := range f.message.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			calls = append(calls, tc)
		}
	}
	if len(calls) != 2 || calls[0].GetCallId() != "toolu_s19bNote01" || calls[1].GetCallId() != "toolu_s19bNote02" {
		t.Fatalf("calls %v", calls)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(calls[0].GetArguments()), &in); err != nil {
		t.Fatalf("arguments %q: %v", calls[0].GetArguments(), err)
	}
	if in["note"] != "smile 😀 ok" || in["escaped"] != "😁" || in["lone"] != "x\uFFFD" {
		t.Errorf("input %q", in)
	}
	if got := calls[1].GetArguments(); got != "{\"note\": \"end \uFFFD" {
		t.Errorf("cut call's arguments %q", got)
	}
	if f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f.meta.GetResponseId() != "msg_s19bAnthPartial01" ||
		f.meta.GetProviderRequestId() != "req_s19bAnthPartial01" {
		t.Errorf("meta %v", f.meta)
	}
}
