package gemini

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19b: posit-dev/chatlas's VCR cassettes (testdata/README.md,
// "Round 19b"). The expectations are read off the recordings by hand.

func init() {
	round17Recordings = append(round17Recordings, "real_chatlas_google_tools_stream_1", "real_chatlas_google_tools_stream_2")
}

// r19bChatlasSig is the thoughtSignature of the call in
// real_chatlas_google_tools_stream_1.
const r19bChatlasSig = "CiQBcsjafGO8Vki8czTsW+3rHWzD3QmjMZHM2XZgIyUD/v0bX3cKcAFyyNp87W6OFVaofQs3m8ToIRmOFgEAI4+3NKugRKmrshHhjw0pqRULJ6drwxv3r+99cmrSp5M/13okFO5OAtAQkVH+p64TdUSwj2vlrcSzF/OuK4STE4MEI5O+UP1D5mivyqQ201c1aZd22I/ae4MKlQEBcsjafNDEYEm5Qw7BdmO1vxeDQ3i7J4VJNKv5/FSQYhQDW3Z9XHeDWsMRncHYQD724nI2g27rTOoIxw7+L2wI6FQDx4zH7vio5ioaw9NPgYgGhMyFOqZ4j332yxTSK2kkaZMUTr7YybnMI+I/Fpsa8l6WtbHSmyFNR8xHT0PPmeGEMk6L3FBPBqpUTiKwrNeCUqwkgg=="

// TestRound19bChatlasToolStream: gemini-2.5-flash (December 2025),
// streamed through google-genai (chatlas's test_tools_simple_stream_content):
// one event holds the whole answer, a parameterless call get_date (args {})
// with its thoughtSignature, finishReason STOP and finishMessage "Model
// generated function call(s).": a tool-call finish; 51 in, 10 + 43 thought
// tokens out, 104 total; responseId and modelVersion in the body, no
// request id header. The API gave the call no id, so ours is derived.
//
// chatlas sent the call back without its signature (gemini-2.5 does not
// require it) and the result as {"result": "2024-01-01"}; the API answered
// (_2) "2024" and "-01-01" in two events, STOP, 85 in, 10 out, 95 total.
// Ours sends the same contents, plus the signature on the call, as Google
// asks callers to do.
func TestRound19bChatlasToolStream(t *testing.T) {
	t.Parallel()
	const first, second = "real_chatlas_google_tools_stream_1", "real_chatlas_google_tools_stream_2"
	zero := 0.0
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("Be very terse, not even punctuation.")),
			msg(llmrelayv1.Role_ROLE_USER, text("What's the current date in YYYY-MM-DD format?")),
		},
		Tools:   []*llmrelayv1.Tool{{Name: "get_date", Description: "Gets the current date"}},
		Options: &llmrelayv1.GenerationOptions{Temperature: &zero},
	}
	p, srv := replay(t, first)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderStream(t, evs, end))
	sent := r17JSON(t, srv.Last(t).Body)
	for k, want := range map[string]string{
		"contents": `[{"parts":[{"text":"What's the current date in YYYY-MM-DD format?"}],"role":"user"}]`,
		// chatlas's systemInstruction also said "role": "user", which
		// the API does not read there; we send none.
		"systemInstruction": `{"parts":[{"text":"Be very terse, not even punctuation."}]}`,
		"tools":             `[{"functionDeclarations":[{"description":"Gets the current date","name":"get_date"}]}]`,
	} {
		if !jsonEqual(sent[k], r19Decode(t, want)) {
			t.Errorf("%s %v, want %s", k, sent[k], want)
		}
	}
	if gc, _ := sent["generationConfig"].(map[string]any); gc["temperature"] != 0.0 {
		t.Errorf("generationConfig %v", sent["generationConfig"])
	}
	f := foldEvents(evs)
	if len(f.calls) != 1 {
		t.Fatalf("calls %v", f.calls)
	}
	c := f.calls[0]
	if c.Name != "get_date" || c.Arguments != "{}" || !c.ArgumentsValid || c.Signature != r19bChatlasSig || c.CallId == "" {
		t.Errorf("call %v", c)
	}
	if f.text != "" {
		t.Errorf("text %q", f.text)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 51, OutputTokens: 10 + 43, TotalTokens: 104, ReasoningTokens: 43}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "brBVaYO3JfuN_uMP6v24QA" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetProviderRequestId() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got := r17Ext(m)["gemini.finish_message"]; got != "Model generated function call(s)." {
		t.Errorf("finish message %v (extended %v)", got, r17Ext(m))
	}

	// The follow-up.
	req.Messages = append(req.Messages, foldMessage(t, evs),
		msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(c.CallId, "2024-01-01")))
	next, srv2 := replay(t, second)
	s2, err := next.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs2, end2 := drain(t, s2)
	if !errors.Is(end2, io.EOF) {
		t.Fatalf("stream ended with %v", end2)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderStream(t, evs2, end2))
	// chatlas's contents, with the signature on the call.
	want := `[{"parts":[{"text":"What's the current date in YYYY-MM-DD format?"}],"role":"user"},` +
		`{"parts":[{"functionCall":{"args":{},"name":"get_date"},"thoughtSignature":"` + r19bChatlasSig + `"}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"get_date","response":{"result":"2024-01-01"}}}],"role":"user"}]`
	if got := r17JSON(t, srv2.Last(t).Body)["contents"]; !jsonEqual(got, r19Decode(t, want)) {
		t.Errorf("contents\n got %v\nwant %s", got, want)
	}
	var texts []string
	for _, ev := range evs2 {
		if ev.Kind == provider.EventText {
			texts = append(texts, ev.Text)
		}
	}
	if jsonOf(t, texts) != `["2024","-01-01"]` {
		t.Errorf("text pieces %q", texts)
	}
	f2 := foldEvents(evs2)
	if want := (&llmrelayv1.Usage{InputTokens: 85, OutputTokens: 10, TotalTokens: 95}); !proto.Equal(f2.usage, want) {
		t.Errorf("usage %v, want %v", f2.usage, want)
	}
	m2 := f2.meta
	if m2.GetResponseId() != "b7BVaZP1GvuN_uMP6v24QA" || m2.GetResolvedModel() != "gemini-2.5-flash" ||
		m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m2.GetProviderFinishReason() != "STOP" ||
		len(f2.calls) != 0 || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v, calls %v", m2, f2.calls)
	}
}
