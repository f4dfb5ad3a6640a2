package anthropic

import (
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestToolUseStreamsTools19: tool_use blocks, checked against what the
// fixture says, call by call; how each call ended (end or cut) is what the
// gateway makes of arguments_valid (server/fold.go).
func TestToolUseStreamsTools19(t *testing.T) {
	t.Parallel()
	type call struct{ id, name, args, end string }
	cases := []struct {
		name   string
		calls  []call
		finish string
	}{
		// input_json_delta with partial_json "" (a no-argument tool's
		// only delta; a call's first delta): the first call's arguments
		// are the {} its block started with, the second's its fragments.
		{"tools19_empty_partial_json_stream", []call{
			{"toolu_t19now01", "now", "{}", "end"},
			{"toolu_t19weather01", "get_weather", `{"city": "Lima"}`, "end"},
		}, "tool_use"},
		// max_tokens while the tool_use block is open (no
		// content_block_stop): the call is cut, never ended as whole.
		{"tools19_max_tokens_open_block_stream", []call{
			{"toolu_t19opencut01", "write_file", `{"path": "a.md"`, "cut"},
		}, "max_tokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, err := r14Stream(t, tc.name, toolsRequest(t))
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, err))
			if err != nil {
				t.Fatal(err)
			}
			f := foldEvents(t, evs)
			ended := map[string]string{}
			for _, ev := range evs {
				switch ev.Kind {
				case provider.EventToolCallEnd:
					ended[ev.ToolCall.CallID] += "end"
				case provider.EventToolCallCut:
					ended[ev.ToolCall.CallID] += "cut"
				}
			}
			var got []call
			for _, p := range f.message.GetParts() {
				if c := p.GetToolCall(); c != nil {
					got = append(got, call{c.GetCallId(), c.GetName(), c.GetArguments(), ended[c.GetCallId()]})
				}
			}
			if len(got) != len(tc.calls) {
				t.Fatalf("calls %v, want %v", got, tc.calls)
			}
			for i := range got {
				if got[i] != tc.calls[i] {
					t.Errorf("call %d: %+v, want %+v", i, got[i], tc.calls[i])
				}
			}
			if f.meta.GetProviderFinishReason() != tc.finish {
				t.Errorf("finish %q, want %q", f.meta.GetProviderFinishReason(), tc.finish)
			}
		})
	}
}
