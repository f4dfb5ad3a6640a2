package gemini

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// tools19Recordings are this file's fixtures (TestAllRecordingsUsed).
var tools19Recordings = []string{"tools19_stream_partial_args_max_tokens"}

// TestPartialArgsCutTools19: a whole call with its id, then a call of the
// same name whose arguments stream as partialArgs (willContinue) when
// MAX_TOKENS stops the answer: the first call ends whole, the second,
// keyed by its own id, ends cut (its assembled arguments parse, but are
// partial), with the warning.
func TestPartialArgsCutTools19(t *testing.T) {
	t.Parallel()
	name := tools19Recordings[0]
	p, _ := replay(t, name)
	s, err := p.Stream(context.Background(), generateCases(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	msg := foldMessage(t, evs)
	type call struct{ id, name, args string }
	want := []call{{"t19-call-a", "getWeather", `{"location":"Boston"}`}, {"t19-call-b", "getWeather", `{"location":"San Fr"}`}}
	var got []call
	for _, pt := range msg.GetParts() {
		if c := pt.GetToolCall(); c != nil {
			got = append(got, call{c.GetCallId(), c.GetName(), c.GetArguments()})
		}
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("calls %v, want %v", got, want)
	}
	ended := map[string]provider.EventKind{}
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCallEnd || ev.Kind == provider.EventToolCallCut {
			ended[ev.ToolCall.CallID] = ev.Kind
		}
	}
	if ended["t19-call-a"] != provider.EventToolCallEnd || ended["t19-call-b"] != provider.EventToolCallCut {
		t.Errorf("ends %v", ended)
	}
	f := foldEvents(evs)
	if f.meta.GetProviderFinishReason() != "MAX_TOKENS" {
		t.Errorf("finish %q", f.meta.GetProviderFinishReason())
	}
	found := false
	for _, w := range f.meta.GetWarnings() {
		found = found || w == cutCallWarning("t19-call-b", "the token limit")
	}
	if !found {
		t.Errorf("warnings %q", f.meta.GetWarnings())
	}
}
