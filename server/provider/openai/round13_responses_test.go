package openai

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// phaseTools is the get_capital tool of pydantic-ai's phase cassettes.
func phaseTools(t *testing.T) []*llmrelayv1.Tool {
	t.Helper()
	return []*llmrelayv1.Tool{{Name: "get_capital", Parameters: `{"additionalProperties":false,"properties":{"country":{"type":"string"}},"required":["country"],"type":"object"}`, Strict: proto.Bool(true)}}
}

// phaseConversation is pydantic-ai's PotatoLand conversation up to the
// user's question, followed by the given turns.
func phaseConversation(turns ...*llmrelayv1.Message) []*llmrelayv1.Message {
	return append([]*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Briefly narrate what you are about to do before calling each tool.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("What is the capital of PotatoLand?")),
	}, turns...)
}

// TestRound13PhaseStreamed: gpt-5.5 narrating before its call, streamed
// (pydantic-ai's phase_streamed_on_part_start cassette). The first answer:
// an encrypted reasoning item (its encrypted_content differs in
// output_item.added, output_item.done and response.completed), a message
// item whose output_item.added already says phase "commentary", its text in
// thirteen deltas, then the call. Every text delta carries the phase, so
// the folded text part has it. The cassette's second request, which the
// live API accepted, sends the reasoning (output_item.done's encrypted
// content), the message with its phase, the call and its output; the
// request we build from the folded answer has the same items (the
// recorded one has the narration with ASCII ' and " where the stream has
// U+2019, U+201C and U+201D; its content-length, 2283, fits that text: it
// is not what the stream said, and we send what it said). The second
// answer is the final_answer message; a third request built from both
// answers keeps the two messages apart, each with its phase.
func TestRound13PhaseStreamed(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_phase_streamed_on_part_start"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.5", Format: formatResponses, Reasoning: true,
		Messages: phaseConversation(), Tools: phaseTools(t)}
	f1, evs := replayRound13Stream(t, name+"_1", req)
	const narration = "I’ll check the capital lookup tool for “PotatoLand.”"
	for _, ev := range evs {
		if ev.Kind == provider.EventText && ev.Phase != "commentary" {
			t.Errorf("text delta %q with phase %q", ev.Text, ev.Phase)
		}
	}
	const encDone = "gAAAAABqaR3-pGgSyJcPT3y2_26v61vCZmE9M2P6q5LyFcAkcT7vldTwqVUWc757s4uFB6vneHEoMEnkg-fXJlIWoxAM9ZP5ZehA4u0By_HQz7X5TqeAu4UNdryzz"
	parts := f1.Message.GetParts()
	if len(parts) != 3 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetId() != "rs_0fabc13af1ee0049006a691dfe60b081a1baa444d3cf19afba" || r.GetText() != "" || !strings.HasPrefix(r.GetSignature(), encDone) || len(r.GetSignature()) != 1080 {
		t.Errorf("reasoning %v (%d bytes of signature)", r, len(r.GetSignature()))
	}
	if parts[1].GetText() != narration || parts[1].GetPhase() != "commentary" {
		t.Errorf("text %v", parts[1])
	}
	if tc := parts[2].GetToolCall(); tc.GetCallId() != "call_LabG58Uhrq9kZvR52BYKjToD" || tc.GetName() != "get_capital" || tc.GetArguments() != `{"country":"PotatoLand"}` {
		t.Errorf("call %v", tc)
	}
	wantFinish(t, f1.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 63, OutputTokens: 69, TotalTokens: 132, ReasoningTokens: 26}); !proto.Equal(f1.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", f1.Meta.GetUsage(), want)
	}
	if f1.Meta.GetResponseId() != "resp_0fabc13af1ee0049006a691dfdab8881a1a75f2db7ff78cb83" || f1.Meta.GetResolvedModel() != "gpt-5.5-2026-04-23" ||
		f1.Meta.GetServiceTier() != "default" || f1.Meta.GetToolCallCount() != 1 || len(f1.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", f1.Meta)
	}

	// The second request.
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.5", Format: formatResponses, Reasoning: true, Tools: phaseTools(t),
		Messages: phaseConversation(f1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_LabG58Uhrq9kZvR52BYKjToD", "Potato City")))}
	body, warnings, err := p.buildResponsesRequest(req2, true)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	items, _ := decodeBody(t, body)["input"].([]any)
	if len(items) != 6 {
		t.Fatalf("input %v", items)
	}
	want := []map[string]any{
		{"type": "reasoning", "id": "rs_0fabc13af1ee0049006a691dfe60b081a1baa444d3cf19afba", "encrypted_content": parts[0].GetReasoning().GetSignature(), "summary": []any{}},
		{"type": "message", "role": "assistant", "phase": "commentary", "content": []any{map[string]any{"type": "output_text", "text": narration}}},
		{"type": "function_call", "call_id": "call_LabG58Uhrq9kZvR52BYKjToD", "name": "get_capital", "arguments": `{"country":"PotatoLand"}`},
		{"type": "function_call_output", "call_id": "call_LabG58Uhrq9kZvR52BYKjToD", "output": "Potato City"},
	}
	for i, w := range want {
		if !reflect.DeepEqual(items[i+2], w) {
			t.Errorf("input[%d] %v, want %v", i+2, items[i+2], w)
		}
	}

	// The second answer, then a third request from both.
	f2, _ := replayRound13Stream(t, name+"_2", req2)
	if p2 := f2.Message.GetParts(); len(p2) != 1 || p2[0].GetText() != "The capital of PotatoLand is **Potato City**." || p2[0].GetPhase() != "final_answer" {
		t.Errorf("parts %v", p2)
	}
	wantFinish(t, f2.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 147, OutputTokens: 16, TotalTokens: 163}); !proto.Equal(f2.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", f2.Meta.GetUsage(), want)
	}
	if f2.Meta.GetResponseId() != "resp_0fabc13af1ee0049006a691dffc71481a18c5ea1841dec14ce" || f2.Meta.GetServiceTier() != "default" || len(f2.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", f2.Meta)
	}
	req3 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.5", Format: formatResponses, Reasoning: true, Tools: phaseTools(t),
		Messages: append(req2.Messages, f2.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("And of TomatoLand?")))}
	body, _, err = p.buildResponsesRequest(req3, true)
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, it := range decodeBody(t, body)["input"].([]any) {
		m := it.(map[string]any)
		if m["role"] == "assistant" {
			phases = append(phases, m["phase"].(string))
		} else if _, ok := m["phase"]; ok {
			t.Errorf("phase on %v", m)
		}
	}
	if !reflect.DeepEqual(phases, []string{"commentary", "final_answer"}) {
		t.Errorf("assistant phases %q", phases)
	}
}

// replayRound13Stream streams a recording, compares the events with the
// golden file and returns them folded the way the server folds them.
func replayRound13Stream(t *testing.T, name string, req *provider.Request) (folded, []*provider.Event) {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkRespStreamInvariants(t, evs)
	return accFold(t, evs), evs
}

// replayRound13Unary replays a unary recording and compares the result
// with the golden file.
func replayRound13Unary(t *testing.T, name string, req *provider.Request) *provider.Result {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	return res
}

// TestRound13PhasesKeptApart: two message items of different phases in
// one answer are two text parts, each with its phase (unary as streamed),
// and go back as two message items; adjacent text of one phase is one
// part and one item; text without a phase goes back without one.
func TestRound13PhasesKeptApart(t *testing.T) {
	t.Parallel()
	const body = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5.5","output":[` +
		`{"id":"msg_a","type":"message","status":"completed","phase":"commentary","role":"assistant","content":[{"type":"output_text","text":"Looking. "},{"type":"output_text","text":"Still looking."}]},` +
		`{"id":"msg_b","type":"message","status":"completed","phase":"final_answer","role":"assistant","content":[{"type":"output_text","text":"Found it."}]},` +
		`{"id":"msg_c","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Unlabelled."}]}]}`
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseResponsesResponse([]byte(body), "gpt-5.5")
	if err != nil {
		t.Fatal(err)
	}
	wantParts := []struct{ text, phase string }{{"Looking. Still looking.", "commentary"}, {"Found it.", "final_answer"}, {"Unlabelled.", ""}}
	parts := res.Message.GetParts()
	if len(parts) != len(wantParts) {
		t.Fatalf("parts %v", parts)
	}
	for i, w := range wantParts {
		if parts[i].GetText() != w.text || parts[i].GetPhase() != w.phase {
			t.Errorf("part %d: %v, want %q phase %q", i, parts[i], w.text, w.phase)
		}
	}

	// Streamed: the same items as events.
	var sse bytes.Buffer
	for _, ev := range []string{
		`{"type":"response.created","response":{"id":"resp_1","status":"in_progress","model":"gpt-5.5","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_a","type":"message","status":"in_progress","phase":"commentary","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","output_index":0,"content_index":0,"item_id":"msg_a","delta":"Looking. "}`,
		`{"type":"response.output_text.delta","output_index":0,"content_index":1,"item_id":"msg_a","delta":"Still looking."}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_b","type":"message","status":"in_progress","phase":"final_answer","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","output_index":1,"content_index":0,"item_id":"msg_b","delta":"Found it."}`,
		`{"type":"response.output_item.added","output_index":2,"item":{"id":"msg_c","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","output_index":2,"content_index":0,"item_id":"msg_c","delta":"Unlabelled."}`,
		`{"type":"response.completed","response":` + body + `}`,
	} {
		sse.WriteString("data: " + ev + "\n\n")
	}
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: sse.Bytes()})
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := accFold(t, evs).Message; !proto.Equal(got, res.Message) {
		t.Errorf("streamed %v, unary %v", got, res.Message)
	}

	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5.5", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Find it.")), res.Message}}
	b, _, err := p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	items := decodeBody(t, b)["input"].([]any)
	wantItems := []map[string]any{
		{"type": "message", "role": "assistant", "phase": "commentary", "content": []any{map[string]any{"type": "output_text", "text": "Looking. Still looking."}}},
		{"type": "message", "role": "assistant", "phase": "final_answer", "content": []any{map[string]any{"type": "output_text", "text": "Found it."}}},
		{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "Unlabelled."}}},
	}
	if len(items) != 1+len(wantItems) {
		t.Fatalf("input %v", items)
	}
	for i, w := range wantItems {
		if !reflect.DeepEqual(items[i+1], w) {
			t.Errorf("input[%d] %v, want %v", i+1, items[i+1], w)
		}
	}
}

// TestRound13PhaseIgnoredByChat: the Chat Completions format has no place
// for a phase: the assistant's text goes as its content, the phase is
// dropped without a warning (it labels the text, it is not content).
func TestRound13PhaseIgnoredByChat(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	commentary := text("Checking.")
	commentary.Phase = "commentary"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Hi")), msgOf(llmrelayv1.Role_ROLE_ASSISTANT, commentary), msgOf(llmrelayv1.Role_ROLE_USER, text("Go on"))}}
	body, warnings, err := p.buildChatRequest(req, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	if bytes.Contains(body, []byte("phase")) || !bytes.Contains(body, []byte(`"content":"Checking."`)) {
		t.Errorf("body %s", body)
	}
}
