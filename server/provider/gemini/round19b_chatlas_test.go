package gemini

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19b: posit-dev/chatlas's VCR cassettes (testdata/README.md,
// "Round 19b"). The expectations are read off the recordings by hand.

func init() {
	round17Recordings = append(round17Recordings, "real_chatlas_google_tools_stream_1", "real_chatlas_google_tools_stream_2",
		"real_chatlas_google_parallel_tools_stream_1", "real_chatlas_google_parallel_tools_stream_2", "real_crush_vertex_title_stream")
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

// r19bStream replays a streamed recording, checks its golden, and returns
// the events and the request sent.
func r19bStream(t *testing.T, name string, req *provider.Request) ([]*provider.Event, []byte) {
	t.Helper()
	p, srv := replay(t, name)
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: Stream: %v", name, err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("%s: stream ended with %v", name, end)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	return evs, srv.Last(t).Body
}

// TestRound19bChatlasParallelToolsStream: gemini-2.5-flash (December
// 2025), streamed (chatlas's test_tools_parallel): one event with two
// calls of the same function, favorite_color({"_person":"Joe"}) with the
// thoughtSignature and favorite_color({"_person":"Hadley"}) without one,
// STOP with finishMessage (a tool-call finish), 80 in, 31 + 59 thought
// tokens out, 170 total. The API gave the calls no ids: ours are derived
// and distinct.
//
// chatlas sent both calls back and both results, in the calls' order and
// by name only ({"result": "sage green"}, {"result": "red"}); the API
// answered (_2) "Joe: sage green, Hadley: red" in one text part that
// carries a thoughtSignature of its own (kept as a text-less reasoning
// part after the text), STOP, 140 in, 8 + 106 out, 254 total. Ours sends
// chatlas's contents with the signature on the first call: each result
// goes back under its call's name, in the calls' order.
func TestRound19bChatlasParallelToolsStream(t *testing.T) {
	t.Parallel()
	const first, second = "real_chatlas_google_parallel_tools_stream_1", "real_chatlas_google_parallel_tools_stream_2"
	const question = `\n        What are Joe and Hadley's favourite colours?\n        Answer like name1: colour1, name2: colour2\n    ` // as JSON escapes
	const sig1 = "CiQBcsjafEcxf/2DYJh2KLN0ZyvZXL8qb4eVwpfO1vMCbc+FiI4KdQFyyNp83WPKtw1VCcGDQEHMo5P3ZwwuQVnRgXLHuVpY6pIuISKWq2ahOuhS+R5bmNhTgWLnQZVizSzuoHQvYB+UKBpzHivSACk+/3ev+DdTh/yX3bDryuehMGmfRobrHcHgF14KX9WuMstDN2U8jDu667vWxwrLAQFyyNp8DHJkkPOE6BNUMI5kKtPnOrgc2WbCgjNj4NtwnieDVCXEWRhs8UvvI4bs6T20AHzhyvbVM/iZVcJ3pOWUxTy4vQlrVWQXXpkhMPdHUGNheP3AGhdqQWa7vF8AeR48TUhztTYntyMOwI4ZIkB0C5iqukbIOjGFwM820OpQoy/jfIgGpN0lWzEAek4i/mRiU2xyks5hnaq8OZ1Hb81rIPMFMrkhNp+ubM5H1ba6vpRv7TH3Lt53HsNJDLIqqvFvLxq+JtnjUGLT"
	const sig2 = "CikBcsjafCFKwPhN+Wb7TRnVQm+ElR/oCeo2mzKEHS8+Td1xBPeskYdN9wp4AXLI2nxAYZCYcFksv72VZHK353YTaGKoZfPlEVRaIl7KUdIqjX5Fqp+roMh19jtTWOB9d3xXMjUas0i/gsWY2ViciwJa7btqli/mgp+Zq3Ew71pE9rJTjbI8R0lmZUhlVdNmh/c0WHOZ4Y6iJD1Zh3vJUq18D8M/CsoBAXLI2nwURNZLgw9xpPFG1JpY3HguQ6cf3vxQl+iwZ9bfJi7uCeXwIDUqRx3w7IDyl+Aa/arTIXU92vjedDK+ZstyokFtJ7pmVFaxPdq1LWTR9+/zFRB3sAUuthVUIal2LqILasEavLiWAS7cTKEHhccQ6kbqAi+L+RncuxWROgu2WHiE4ztR8PRIot8L/QWihzpVVrlV1W9iNKvx7hbT+533O8QvGQLYKQw1gpx/iGR6ZFquBIoivI74TROvLjv8PYfNoIcjeSbDZAqWAQFyyNp83amdQAwXMpsoAZYNgIdKqQTPe+mfG9h5uO0r37dTdcP1ThRHiX2Y1zjOHMm+Bmp24DuR07bzqVDjEaA7odnSQ1M8w3tkI3kvdzIMLNlFBZS52eeXiMzX43Z3CyY25K1UE+oYa4/dliVLvE7onCloSzNCN1Tqwvxueh9GiAhNb6H8dP/vKo4uLR7iEItQmFOxOw=="
	zero := 0.0
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("Be very terse, not even punctuation.")),
			msg(llmrelayv1.Role_ROLE_USER, text(r19bUnquote(t, question))),
		},
		Tools: []*llmrelayv1.Tool{{Name: "favorite_color", Description: "Returns a person's favourite colour",
			Parameters: `{"properties": {"_person": {"type": "string"}}, "required": ["_person"], "type": "object"}`}},
		Options: &llmrelayv1.GenerationOptions{Temperature: &zero},
	}
	evs, sent := r19bStream(t, first, req)
	if got := r17JSON(t, sent)["contents"]; !jsonEqual(got, r19Decode(t, `[{"parts":[{"text":"`+question+`"}],"role":"user"}]`)) {
		t.Errorf("contents %v", got)
	}
	f := foldEvents(evs)
	if len(f.calls) != 2 {
		t.Fatalf("calls %v", f.calls)
	}
	joe, hadley := f.calls[0], f.calls[1]
	if joe.Name != "favorite_color" || joe.Arguments != `{"_person":"Joe"}` || joe.Signature != sig1 || !joe.ArgumentsValid ||
		hadley.Name != "favorite_color" || hadley.Arguments != `{"_person":"Hadley"}` || hadley.Signature != "" || !hadley.ArgumentsValid ||
		joe.CallId == "" || joe.CallId == hadley.CallId {
		t.Errorf("calls %v", f.calls)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 80, OutputTokens: 31 + 59, TotalTokens: 170, ReasoningTokens: 59}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	if m := f.meta; m.GetResponseId() != "cLBVabe2A8vO_uMP5cWO6As" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS ||
		m.GetProviderFinishReason() != "STOP" || m.GetToolCallCount() != 2 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	// The follow-up: the results in the calls' order.
	req.Messages = append(req.Messages, foldMessage(t, evs), msg(llmrelayv1.Role_ROLE_TOOL,
		toolResultPart(joe.CallId, "sage green"), toolResultPart(hadley.CallId, "red")))
	evs2, sent2 := r19bStream(t, second, req)
	want := `[{"parts":[{"text":"` + question + `"}],"role":"user"},` +
		`{"parts":[{"functionCall":{"args":{"_person":"Joe"},"name":"favorite_color"},"thoughtSignature":"` + sig1 + `"},` +
		`{"functionCall":{"args":{"_person":"Hadley"},"name":"favorite_color"}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"favorite_color","response":{"result":"sage green"}}},` +
		`{"functionResponse":{"name":"favorite_color","response":{"result":"red"}}}],"role":"user"}]`
	if got := r17JSON(t, sent2)["contents"]; !jsonEqual(got, r19Decode(t, want)) {
		t.Errorf("contents\n got %v\nwant %s", got, want)
	}
	sigPart := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: sig2}}}
	if got, want := foldMessage(t, evs2), msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Joe: sage green, Hadley: red"), sigPart); !proto.Equal(got, want) {
		t.Errorf("message\n got %v\nwant %v", got, want)
	}
	f2 := foldEvents(evs2)
	if want := (&llmrelayv1.Usage{InputTokens: 140, OutputTokens: 8 + 106, TotalTokens: 254, ReasoningTokens: 106}); !proto.Equal(f2.usage, want) {
		t.Errorf("usage %v, want %v", f2.usage, want)
	}
	if m := f2.meta; m.GetResponseId() != "cbBVafhco-H-4w_Uvp2JDA" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// r19bUnquote decodes the body of a JSON string literal.
func r19bUnquote(t *testing.T, s string) string {
	t.Helper()
	v, ok := r19Decode(t, `"`+s+`"`).(string)
	if !ok {
		t.Fatalf("%q is not a string", s)
	}
	return v
}

// TestRound19bCrushVertexTitle: charmbracelet/crush's title request to
// gemini-2.0-flash-exp on Vertex AI (January 2026, go-vcr): "Hello" in a
// first chunk whose usageMetadata holds only trafficType ON_DEMAND (no
// counts: no usage event for it), then "\n" with STOP and the counts (122
// in, 2 out, 124 total); createTime and responseId on both chunks. The
// cassette kept only the Content-Type header.
func TestRound19bCrushVertexTitle(t *testing.T) {
	t.Parallel()
	const name = "real_crush_vertex_title_stream"
	maxTok := int32(40)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.0-flash-exp",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Generate a concise title for the following content:\n\nHello\n <think>\n\n</think>"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: &maxTok},
	}
	evs, sent := r19bStream(t, name, req)
	if gc, _ := r17JSON(t, sent)["generationConfig"].(map[string]any); gc["maxOutputTokens"] != 40.0 {
		t.Errorf("generationConfig %v", gc)
	}
	var usages []*llmrelayv1.Usage
	for _, ev := range evs {
		if ev.Kind == provider.EventUsage {
			usages = append(usages, ev.Usage)
		}
	}
	if len(usages) != 1 || !proto.Equal(usages[0], &llmrelayv1.Usage{InputTokens: 122, OutputTokens: 2, TotalTokens: 124}) {
		t.Errorf("usage events %v", usages)
	}
	f := foldEvents(evs)
	m := f.meta
	if f.text != "Hello\n" || m.GetResponseId() != "QqBmadvFO86OvNkP6qCDsQ8" || m.GetResolvedModel() != "gemini-2.0-flash-exp" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("text %q, meta %v", f.text, m)
	}
	if got := m.GetCreateTime().AsTime(); !got.Equal(time.Date(2026, 1, 13, 19, 42, 58, 975579000, time.UTC)) {
		t.Errorf("create time %v", got)
	}
}
