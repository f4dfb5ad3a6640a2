package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound24VeniceGemini38ToolLoop: gemini-3-8-flash through Venice
// (opencode's recording; gcp- ids): the call whole in the first chunk with
// Gemini's signature as its thought_signature key, no reasoning; turn 2
// the text, then a message-level thought_signature. The follow-up Venice
// took sends the call with its signature and no reasoning_content (ours
// sent "" before the GLM fix).
func TestRound24VeniceGemini38ToolLoop(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_gemini38_tool_stream_", "gemini-3-8-flash"
	req := veniceLoopRequest(model)
	evs1, f1, sent1 := mgbStream(t, name+"1", veniceBaseURL, "", req)
	if got, want := sent1["messages"], veniceRecordedMessages(t, name+"1"); !reflect.DeepEqual(got, want) {
		t.Errorf("turn 1 messages %v", got)
	}
	ends := 0
	for _, ev := range evs1 {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("turn 1 warnings %v", ev.Meta.GetWarnings())
		}
		if ev.Kind == provider.EventToolCallEnd {
			ends++
		}
	}
	if ends != 1 {
		t.Errorf("%d tool call ends for one call", ends)
	}
	call, follow, f2 := veniceSecondTurn(t, name, model, req, f1)
	if call == nil || call.GetCallId() != "call_0" || call.GetSignature() == "" || call.GetArguments() != `{"code":"ZEBRA"}` {
		t.Fatalf("call %v", call)
	}
	if f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f1.Meta.GetUsage().GetOutputTokens() != 108 {
		t.Errorf("meta %v", f1.Meta)
	}

	// Round 25: the text's signature, a message-level thought_signature
	// in a delta of its own, is read as a reasoning block's signature
	// that remembers the form (formatThoughtSignature), and the third
	// request (its answer not replayed) sends it back as the assistant
	// message's thought_signature, as the recorded request Venice took.
	var sig *llmrelayv1.Reasoning
	for _, p := range f2.Message.GetParts() {
		if r := p.GetReasoning(); r != nil {
			if sig != nil {
				t.Errorf("second reasoning part %v", r)
			}
			sig = r
		}
	}
	if sig == nil || sig.GetText() != "" || sig.GetFormat() != formatThoughtSignature || !strings.HasPrefix(sig.GetSignature(), "AY89a19FM0Rk") || !strings.HasSuffix(sig.GetSignature(), "TOfUM=") || sig.GetRedacted() {
		t.Fatalf("text signature %v", sig)
	}
	third := veniceThirdRequest(model, follow, f2)
	p, err := New(testKey, WithBaseURL(veniceBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err := p.buildChatRequest(third, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("third request warnings %v", warns)
	}
	if got, want := r20Request(t, body)["messages"], veniceRecordedMessages(t, name+"3"); !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("third request's messages\n got %s\nwant %s", g, w)
	}

	// Elsewhere (a server that did not give it so) the signature is not
	// sent, and the warning says a reasoning part was dropped.
	other, err := New(testKey, WithBaseURL("https://api.example.com/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body, warns, err = other.buildChatRequest(third, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "thought_signature") || !strings.Contains(strings.Join(warns, "\n"), "1 reasoning part") {
		t.Errorf("to another server: warnings %v, body %s", warns, body)
	}
}
