package openai

import (
	"bytes"
	"context"
	"encoding/json"
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
	if parts[1].GetText() != narration || parts[1].GetPhase() != "commentary" || parts[1].GetItemId() != "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce" {
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
		{"type": "message", "id": "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce", "status": "completed", "role": "assistant", "phase": "commentary",
			"content": []any{map[string]any{"type": "output_text", "text": narration, "annotations": []any{}}}},
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
	out := func(s string) []any {
		return []any{map[string]any{"type": "output_text", "text": s, "annotations": []any{}}}
	}
	wantItems := []map[string]any{
		{"type": "message", "id": "msg_a", "status": "completed", "role": "assistant", "phase": "commentary", "content": out("Looking. Still looking.")},
		{"type": "message", "id": "msg_b", "status": "completed", "role": "assistant", "phase": "final_answer", "content": out("Found it.")},
		{"type": "message", "id": "msg_c", "status": "completed", "role": "assistant", "content": out("Unlabelled.")},
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

// TestRound13OpenllmetryUnary replays unary Responses answers recorded by
// traceloop/openllmetry (testdata/README.md, "Round 13"), checked by hand
// against the recorded bodies.
func TestRound13OpenllmetryUnary(t *testing.T) {
	t.Parallel()
	type meta struct {
		id, model, requestID, tier string
		usage                      *llmrelayv1.Usage
	}
	cases := []struct {
		name string
		meta meta
		// finish is the normalized finish reason ("completed" raw in all).
		finish llmrelayv1.FinishReason
		check  func(t *testing.T, res *provider.Result)
	}{
		// gpt-5-nano, effort low, stored: a reasoning item with only its
		// id and summary [] (no encrypted content was asked for), then
		// "3"; 320 of 327 output tokens reasoning; rate limits with resets
		// of 120ms and 68ms.
		{"real_oll_responses_reasoning", meta{"resp_68a4627a67d08197b48766a2208844fe0da1a7bf2012633f", "gpt-5-nano-2025-08-07", "req_f663a9d641c5ed48cd037da360350648", "default",
			&llmrelayv1.Usage{InputTokens: 11, OutputTokens: 327, TotalTokens: 338, ReasoningTokens: 320}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				parts := res.Message.GetParts()
				if len(parts) != 2 || parts[1].GetText() != "3" || parts[1].GetPhase() != "" {
					t.Fatalf("parts %v", parts)
				}
				if r := parts[0].GetReasoning(); r.GetId() != "rs_68a4627af1bc8197aae387797f277fa20da1a7bf2012633f" || r.GetText() != "" || r.GetSignature() != "" {
					t.Errorf("reasoning %v", r)
				}
				rl := res.Meta.GetRateLimit()
				if rl.GetRequestsLimit() != 500 || rl.GetRequestsRemaining() != 499 || rl.GetTokensLimit() != 200000 || rl.GetTokensRemaining() != 199772 ||
					rl.GetRequestsResetTime() == nil || rl.GetTokensResetTime() == nil {
					t.Errorf("rate limit %v", rl)
				}
			}},
		// gpt-5-nano, effort medium, summary auto: one reasoning item
		// with four summary_text parts (each a bold title, a blank line,
		// a paragraph; U+2019 apostrophes, "∝ 1/λ^4"), joined by a blank
		// line into one Reasoning text; then the answer; 832 of 1014
		// output tokens reasoning.
		{"real_oll_responses_reasoning_summary", meta{"resp_68b1b5d493e881a3bc414b08788a419d05d8b4c5de88d929", "gpt-5-nano-2025-08-07", "req_b7ecb107303db8e856f73c2b708f0cb2", "default",
			&llmrelayv1.Usage{InputTokens: 12, OutputTokens: 1014, TotalTokens: 1026, ReasoningTokens: 832}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				parts := res.Message.GetParts()
				if len(parts) != 2 || !strings.HasPrefix(parts[1].GetText(), "The sky looks blue mainly because of Rayleigh scattering in Earth's atmosphere.\n\n- Sunlight") {
					t.Fatalf("parts %v", parts)
				}
				r := parts[0].GetReasoning()
				titles := []string{"**Explaining the blue sky**\n\nI need to address", "\n\n**Detailing sky color variations**\n\nI’m thinking",
					"\n\n**Explaining why the sky is blue**\n\nI need to explain", "\n\n**Explaining the blue sky**\n\nLet’s break this down"}
				rest := r.GetText()
				for _, ti := range titles {
					i := strings.Index(rest, ti)
					if i < 0 || (ti != titles[0] && i == 0) || (ti == titles[0] && i != 0) {
						t.Fatalf("summary part %q not found in order in %q", ti, rest)
					}
					rest = rest[i+len(ti):]
				}
				if r.GetId() != "rs_68b1b5d57b2c81a3ba59554edf9f87fb05d8b4c5de88d929" || r.GetSignature() != "" || !strings.Contains(r.GetText(), "1/λ^4") {
					t.Errorf("reasoning %v", r)
				}
			}},
		// gpt-4.1-nano asked for London's weather: two function_call
		// items with the same arguments, told apart by their call_id
		// (never the fc_ item id); no message item.
		{"real_oll_responses_tool_calls_1", meta{"resp_685ff8928dc4819aac45e085ba66838101c537ddeff5c2a2", "gpt-4.1-nano-2025-04-14", "req_dbe8a56ea240e56937c38d915c148dfe", "default",
			&llmrelayv1.Usage{InputTokens: 58, OutputTokens: 44, TotalTokens: 102}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
			func(t *testing.T, res *provider.Result) {
				wantCalls(t, res.Message, "call_tYDv1bhtioyX33juEGDY4D6H", "call_lC079UhGnLJngBlPQO0FS6sv")
			}},
		// The same, recorded again nine months later: billing,
		// completed_at, verbosity and the server-added
		// additionalProperties: false in the echoed tool.
		{"real_oll_responses_tool_calls_2", meta{"resp_0f241063cf6416c80069cbcbe19f8c8199b8295e95a345f359", "gpt-4.1-nano-2025-04-14", "req_397abe496a7e4eb9bc82162a22e783c5", "default",
			&llmrelayv1.Usage{InputTokens: 59, OutputTokens: 45, TotalTokens: 104}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
			func(t *testing.T, res *provider.Result) {
				wantCalls(t, res.Message, "call_grggfsR0ccRoMcXy17gsju6I", "call_jQ4vl5MZL0h55SoqPmlfYYyd")
			}},
		// gpt-5 with service_tier priority: the answer says "priority";
		// a reasoning item with only its id though 0 reasoning tokens.
		{"real_oll_responses_service_tier_priority", meta{"resp_047a2204a6021f5700692322b28f5c8196981c8c33b21bce35", "gpt-5-2025-08-07", "req_c7a7a91635ad4051892623b7a91f919f", "priority",
			&llmrelayv1.Usage{InputTokens: 8, OutputTokens: 15, TotalTokens: 23}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				parts := res.Message.GetParts()
				if len(parts) != 2 || parts[0].GetReasoning().GetId() != "rs_047a2204a6021f5700692322b34a2481969fd8e098d7e6a87e" || parts[1].GetText() != "Hello! How can I help you today?" {
					t.Errorf("parts %v", parts)
				}
			}},
		// gpt-4.1-nano with max_output_tokens 100, temperature 0.7,
		// top_p 0.9 (echoed in the answer).
		{"real_oll_responses_request_params", meta{"resp_0577de0baba8022e006925d77e95c081958f98cf64d2be436d", "gpt-4.1-nano-2025-04-14", "req_500c9ae7e13b4845be386000962eb7fd", "default",
			&llmrelayv1.Usage{InputTokens: 14, OutputTokens: 8, TotalTokens: 22}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "The capital of France is Paris." {
					t.Errorf("parts %v", parts)
				}
			}},
		// gpt-4.1-nano with a strict json_schema text format (openai's
		// responses.parse): the JSON as the message's output_text.
		{"real_oll_responses_parse", meta{"resp_02f386d5a19c47c9006a184bde9ae08190ac00681814c21cb4", "gpt-4.1-nano-2025-04-14", "req_7b54d269740449c1a63e79934079420a", "default",
			&llmrelayv1.Usage{InputTokens: 57, OutputTokens: 10, TotalTokens: 67}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != `{"name":"Alice","age":30}` {
					t.Errorf("parts %v", parts)
				}
			}},
		// gpt-4.1-nano: "Luminous", then (input_history_2) the answer to
		// the follow-up that sent it back.
		{"real_oll_responses_input_history_1", meta{"resp_685ff928348881988285ce86ba701a14031fd91f205925a5", "gpt-4.1-nano-2025-04-14", "req_ad4966c5b398af65f129a8951d2252e3", "default",
			&llmrelayv1.Usage{InputTokens: 21, OutputTokens: 3, TotalTokens: 24}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "Luminous" {
					t.Errorf("parts %v", parts)
				}
			}},
		{"real_oll_responses_input_history_2", meta{"resp_685ff928cce4819ba193532f7685c1440797713b0742c3ce", "gpt-4.1-nano-2025-04-14", "req_bb1139d26d5d59c4ab549bdf4c5f2dc8", "default",
			&llmrelayv1.Usage{InputTokens: 40, OutputTokens: 61, TotalTokens: 101}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				if parts := res.Message.GetParts(); len(parts) != 1 || !strings.HasPrefix(parts[0].GetText(), `Certainly! I chose the word "luminous" because`) {
					t.Errorf("parts %v", parts)
				}
			}},
		// The OpenAI Agents SDK (openllmetry's openai-agents cassettes):
		// gpt-4.1 with instructions, max_output_tokens 1024, a
		// prompt_cache_key and prompt_cache_retention "in_memory" (no
		// cached tokens: the prompt is short).
		{"real_oll_responses_agents_cache", meta{"resp_01558f7769c4b07e006a01f742c9808196ac71e6735bde8bfd", "gpt-4.1-2025-04-14", "req_1d5c114db93b4754ac565533fd909836", "default",
			&llmrelayv1.Usage{InputTokens: 27, OutputTokens: 8, TotalTokens: 35}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				if parts := res.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "The capital of France is Paris." {
					t.Errorf("parts %v", parts)
				}
			}},
		// gpt-4o calling get_city_info (call_id call_veL3…, item id
		// fc_0a91…), then (agents_tool_call_2) its answer to the
		// follow-up that sent the call and its output back.
		{"real_oll_responses_agents_tool_call_1", meta{"resp_0a91d4a1b37538fc0068fdd3ab217c819591ff2ae8e7267945", "gpt-4o-2024-08-06", "req_5ed69a437c8b4cbcad032a22cc51a0b7", "default",
			&llmrelayv1.Usage{InputTokens: 72, OutputTokens: 17, TotalTokens: 89}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
			func(t *testing.T, res *provider.Result) {
				parts := res.Message.GetParts()
				if tc := parts[0].GetToolCall(); len(parts) != 1 || tc.GetCallId() != "call_veL3ZXS1QhDqzKYs3kbmi9e2" || tc.GetName() != "get_city_info" || tc.GetArguments() != `{"city_name":"London"}` {
					t.Errorf("parts %v", parts)
				}
			}},
		// o3-mini through the Agents SDK (stored by default): a reasoning
		// item with only its id, 64 of 181 output tokens reasoning.
		{"real_oll_responses_agents_reasoning", meta{"resp_0e45c4c5616820e7006a01f74c10b481a1b18db75c6326045a", "o3-mini-2025-01-31", "req_1255e24fe435410eaf654cb07540c37f", "default",
			&llmrelayv1.Usage{InputTokens: 24, OutputTokens: 181, TotalTokens: 205, ReasoningTokens: 64}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				parts := res.Message.GetParts()
				if len(parts) != 2 || parts[0].GetReasoning().GetId() != "rs_0e45c4c5616820e7006a01f74e09a081a1b6a386c734c36099" || parts[0].GetReasoning().GetSignature() != "" ||
					parts[1].GetText() != "2 + 2 equals 4." {
					t.Errorf("parts %v", parts)
				}
			}},
		{"real_oll_responses_agents_tool_call_2", meta{"resp_0a91d4a1b37538fc0068fdd3adc7bc8195a7f9628abd015ade", "gpt-4o-2024-08-06", "req_c5651fc8646342c5ba4d39728749566d", "default",
			&llmrelayv1.Usage{InputTokens: 121, OutputTokens: 36, TotalTokens: 157}}, llmrelayv1.FinishReason_FINISH_REASON_STOP,
			func(t *testing.T, res *provider.Result) {
				if parts := res.Message.GetParts(); len(parts) != 1 || !strings.HasPrefix(parts[0].GetText(), "London is the capital city of the United Kingdom, with a population of approximately 9 million.") {
					t.Errorf("parts %v", parts)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := replayRound13Unary(t, tc.name, responsesRequests(t)["responses_tools_parallel"])
			wantFinish(t, res.Meta, tc.finish, "completed")
			m := res.Meta
			if !proto.Equal(m.GetUsage(), tc.meta.usage) {
				t.Errorf("usage %v, want %v", m.GetUsage(), tc.meta.usage)
			}
			if m.GetResponseId() != tc.meta.id || m.GetResolvedModel() != tc.meta.model || m.GetProviderRequestId() != tc.meta.requestID ||
				m.GetServiceTier() != tc.meta.tier || len(m.GetWarnings()) != 0 {
				t.Errorf("meta %v", m)
			}
			tc.check(t, res)
		})
	}
}

// wantCalls checks that a message is exactly get_weather calls for
// London with the given call ids, in order.
func wantCalls(t *testing.T, m *llmrelayv1.Message, ids ...string) {
	t.Helper()
	parts := m.GetParts()
	if len(parts) != len(ids) {
		t.Fatalf("parts %v", parts)
	}
	for i, id := range ids {
		if tc := parts[i].GetToolCall(); tc.GetCallId() != id || tc.GetName() != "get_weather" || tc.GetArguments() != `{"location":"London"}` || !tc.GetArgumentsValid() {
			t.Errorf("call %d: %v, want %s", i, tc, id)
		}
	}
}

// TestRound13OpenllmetryRequests: the requests we build match what the
// recorded ones (which the live API accepted) carry: the second turn of
// input_history sends "Luminous" back as an assistant output_text message
// (no phase: the answer had none); parse's strict json_schema text
// format; request_params' max_output_tokens, temperature and top_p.
func TestRound13OpenllmetryRequests(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.ReplayFile(t, td("real_oll_responses_input_history_1.http"))
	first, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4.1-nano", Format: formatResponses, Messages: []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("Come up with an adjective in English. Respond with just one word.")), first.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("Can you explain why you chose that word?"))}}
	body, warnings, err := p.buildResponsesRequest(req, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	items := decodeBody(t, body)["input"].([]any)
	// The cassette's client sent the text alone (it built the history by
	// hand); ours goes back as the output message it was, with its id,
	// status and annotations, the shape pydantic-ai's recorded request
	// sent and the API accepted (TestRound9PhaseCommentary).
	if want := map[string]any{"type": "message", "id": "msg_685ff9287b34819884de53cc64f32189031fd91f205925a5", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": "Luminous", "annotations": []any{}}}}; len(items) != 3 || !reflect.DeepEqual(items[1], want) {
		t.Errorf("input %v", items)
	}

	req = &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4.1-nano", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Extract: Alice is 30 years old."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			SchemaName: "Person", Strict: proto.Bool(true),
			Schema: `{"properties":{"name":{"title":"Name","type":"string"},"age":{"title":"Age","type":"integer"}},"required":["name","age"],"title":"Person","type":"object","additionalProperties":false}`}}}
	body, _, err = p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	const recordedFormat = `{"type":"json_schema","strict":true,"name":"Person","schema":{"properties":{"name":{"title":"Name","type":"string"},"age":{"title":"Age","type":"integer"}},"required":["name","age"],"title":"Person","type":"object","additionalProperties":false}}`
	var want any
	if err := json.Unmarshal([]byte(recordedFormat), &want); err != nil {
		t.Fatal(err)
	}
	if got := decodeBody(t, body)["text"].(map[string]any)["format"]; !reflect.DeepEqual(got, want) {
		t.Errorf("text.format %v, want %v", got, want)
	}

	req = &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4.1-nano", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(100), Temperature: proto.Float64(0.7), TopP: proto.Float64(0.9)}}
	body, _, err = p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeBody(t, body)
	if m["max_output_tokens"] != 100.0 || m["temperature"] != 0.7 || m["top_p"] != 0.9 {
		t.Errorf("body %s", body)
	}
}

// TestRound13AgentsToolFollowUp: the cassette's third request (which the
// live API accepted) sends the call back as a function_call item keyed by
// its call_id (the Agents SDK adds the fc_ item id and status), then its
// output; the request we build from the answer and the tool's result has
// the same call and output (without the item id: the request is not
// stored).
func TestRound13AgentsToolFollowUp(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_oll_responses_agents_tool_call_1.http"))
	first, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const output = "City: London, Population: 9000000, Country: United Kingdom, Description: Capital city with rich history"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o", Format: formatResponses, Messages: []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You help users get information about cities using the get_city_info tool.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Tell me about London")), first.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_veL3ZXS1QhDqzKYs3kbmi9e2", output))}}
	body, warnings, err := p.buildResponsesRequest(req, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	items := decodeBody(t, body)["input"].([]any)
	want := []map[string]any{
		{"type": "function_call", "call_id": "call_veL3ZXS1QhDqzKYs3kbmi9e2", "name": "get_city_info", "arguments": `{"city_name":"London"}`},
		{"type": "function_call_output", "call_id": "call_veL3ZXS1QhDqzKYs3kbmi9e2", "output": output},
	}
	if len(items) != 4 {
		t.Fatalf("input %v", items)
	}
	for i, w := range want {
		if !reflect.DeepEqual(items[i+2], w) {
			t.Errorf("input[%d] %v, want %v", i+2, items[i+2], w)
		}
	}
}

// TestRound13OpenInferenceCache replays Arize-ai/openinference's
// Responses cache cassette (gpt-5.6-luna, the same 8,000-character
// instructions twice): the first answer writes 5402 of its 5405 input
// tokens to the cache, the second reads 5392 and writes 10; the second
// also has an encrypted reasoning item (32 reasoning tokens). Both
// messages are final_answer. The cassette kept no headers: no request
// id, no rate limits.
func TestRound13OpenInferenceCache(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, id string
		usage    *llmrelayv1.Usage
		text     string
		rsID     string
	}{
		{"real_oi_responses_cache_write_then_read_1", "resp_0829a999c343a2ab006a776cd33c3481979718739c915a8ce1",
			&llmrelayv1.Usage{InputTokens: 5405, OutputTokens: 20, TotalTokens: 5425, CacheCreationInputTokens: 5402},
			"Morning mist rises  \nA sparrow greets the new light  \nDay unfolds softly", ""},
		{"real_oi_responses_cache_write_then_read_2", "resp_0dd0436f00ef863f006a776cd494508195878bb8b04b9384ff",
			&llmrelayv1.Usage{InputTokens: 5405, OutputTokens: 179, TotalTokens: 5584, CachedInputTokens: 5392, CacheCreationInputTokens: 10, ReasoningTokens: 32},
			"When dusk unthreads the gold along the sky,", "rs_0dd0436f00ef863f006a776cd51520819586a9ddb8a84a7fa1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := replayRound13Unary(t, tc.name, responsesRequests(t)["responses_tools_parallel"])
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if !proto.Equal(res.Meta.GetUsage(), tc.usage) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), tc.usage)
			}
			m := res.Meta
			if m.GetResponseId() != tc.id || m.GetResolvedModel() != "gpt-5.6-luna" || m.GetProviderRequestId() != "" || m.GetRateLimit() != nil ||
				m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
				t.Errorf("meta %v", m)
			}
			parts := res.Message.GetParts()
			last := parts[len(parts)-1]
			if !strings.HasPrefix(last.GetText(), tc.text) || last.GetPhase() != "final_answer" {
				t.Errorf("text %v", last)
			}
			if tc.rsID == "" {
				if len(parts) != 1 {
					t.Errorf("parts %v", parts)
				}
				return
			}
			r := parts[0].GetReasoning()
			if len(parts) != 2 || r.GetId() != tc.rsID || !strings.HasPrefix(r.GetSignature(), "gAAAAABqd2zXsREBF6SKUM9a") || !strings.HasSuffix(r.GetSignature(), "d6TfFc=") {
				t.Errorf("parts %v", parts)
			}
			if !strings.HasSuffix(last.GetText(), "So let the world grow still, its burdens cease\u2014  \nYour memory turns the midnight into peace.") {
				t.Errorf("text %q", last.GetText())
			}
		})
	}
}

// TestRound13OpenllmetryStream: gpt-4.1-nano streamed (openllmetry's
// streaming_with_content): "2 + 2 equals 4." in eight deltas (two of them a
// lone space) with obfuscation; service_tier auto, then default in
// response.completed; no phase (the model predates it).
func TestRound13OpenllmetryStream(t *testing.T) {
	t.Parallel()
	f, evs := replayRound13Stream(t, "real_oll_responses_streaming_with_content", responsesRequests(t)["responses_tools_parallel"])
	n := 0
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			n++
			if ev.Phase != "" {
				t.Errorf("phase %q", ev.Phase)
			}
		}
	}
	if parts := f.Message.GetParts(); n != 8 || len(parts) != 1 || parts[0].GetText() != "2 + 2 equals 4." || parts[0].GetPhase() != "" {
		t.Errorf("%d deltas, parts %v", n, parts)
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 14, OutputTokens: 9, TotalTokens: 23}); !proto.Equal(f.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
	}
	if f.Meta.GetResponseId() != "resp_087a1bffb8180cc4006912065042e08196a1a6445d62480120" || f.Meta.GetResolvedModel() != "gpt-4.1-nano-2025-04-14" ||
		f.Meta.GetProviderRequestId() != "req_9f7e3f41a2a14704a45eaa9ad864042f" || f.Meta.GetServiceTier() != "default" || len(f.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", f.Meta)
	}
}

// TestRound13StoredReasoningByID: o3-mini's reasoning item came with its id
// only (a stored response, no encrypted content). Sent back in a stored
// request it goes as {type: reasoning, id, summary: []}, which the API
// resolves by id; in an unstored one it cannot be resolved and is left out
// with a warning (the text and the rest of the turn still go).
func TestRound13StoredReasoningByID(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_oll_responses_agents_reasoning.http"))
	first, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []bool{true, false} {
		req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "o3-mini", Format: formatResponses, Reasoning: true,
			Messages:        []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is 2 + 2?")), first.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("And 3 + 3?"))},
			ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(store)}}}}
		body, warnings, err := p.buildResponsesRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		items := decodeBody(t, body)["input"].([]any)
		// The message by its id, as the API pairs it with the reasoning
		// item before it.
		msg := map[string]any{"type": "message", "id": "msg_0e45c4c5616820e7006a01f74f996081a188de7649fc0d83f8", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": "2 + 2 equals 4.", "annotations": []any{}}}}
		if store {
			rs := map[string]any{"type": "reasoning", "id": "rs_0e45c4c5616820e7006a01f74e09a081a1b6a386c734c36099", "summary": []any{}}
			if len(items) != 4 || !reflect.DeepEqual(items[1], rs) || !reflect.DeepEqual(items[2], msg) || len(warnings) != 0 {
				t.Errorf("stored: input %v, warnings %q", items, warnings)
			}
			continue
		}
		if len(items) != 3 || !reflect.DeepEqual(items[1], msg) || len(warnings) != 1 || !strings.Contains(warnings[0], "reasoning without encrypted content") {
			t.Errorf("unstored: input %v, warnings %q", items, warnings)
		}
	}
}
