package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound9ResponsesStreams replays Responses API streams recorded by
// sources not replayed before (testdata/README.md, "Round 9"), checked by
// hand against the recorded events.
func TestRound9ResponsesStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		check func(t *testing.T, f folded)
	}{
		// gpt-4o, store false (fantasy's multi_tool_streaming): two
		// parallel function calls, each opened with empty arguments, its
		// arguments in one delta with obfuscation, then done; keyed by
		// call_id (never the fc_ item id); service_tier auto, then default
		// in response.completed; no message item.
		{"real_fantasy_openai_gpt_4o_responses_multi_tool_stream", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 2 {
				t.Fatalf("parts %v", parts)
			}
			for i, want := range []struct{ id, name string }{{"call_NnEvpiwdL8XrZ6F3T9VJyVw7", "add"}, {"call_TQ8336oa6YnuT2leYzRDBBLz", "multiply"}} {
				if tc := parts[i].GetToolCall(); tc.GetCallId() != want.id || tc.GetName() != want.name || tc.GetArguments() != `{"a":2,"b":3}` {
					t.Errorf("call %d: %v, want %s %s", i, tc, want.id, want.name)
				}
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 104, OutputTokens: 51, TotalTokens: 155}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "resp_07d2265248f742f6016a3c120577cc819eb21c20dbe6ebd5fa" || f.Meta.GetResolvedModel() != "gpt-4o-2024-08-06" ||
				f.Meta.GetServiceTier() != "default" || f.Meta.GetToolCallCount() != 2 || len(f.Meta.GetWarnings()) != 0 {
				t.Errorf("meta %v", f.Meta)
			}
		}},
		// xAI (grok-4-fast-non-reasoning) with its hosted web_search tool
		// (the AI SDK's issue 13218): two web_search_call items, whose
		// sources grow from output_item.done to response.completed, then
		// "**xAI**" with nine url_citation annotations (all at index 0,
		// sent as annotation.added events, then again in content_part.done,
		// output_item.done and response.completed); created_at 0, a
		// response id that is a bare UUID, xAI's cost and server-side tool
		// counters in the usage. The two searches are the server's: two
		// warnings, no client call, finish STOP.
		{"real_xai_responses_13218_web_search_stream", func(t *testing.T, f folded) {
			parts := r23Parts(t, f.Message, "web_search_call", "web_search_call")
			if len(parts) != 1 || parts[0].GetText() != "**xAI**" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 4144, OutputTokens: 49, TotalTokens: 4193, CachedInputTokens: 1920}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "1d1a0870-4485-9e15-a5f5-87e29c5f8266" || f.Meta.GetResolvedModel() != "grok-4-fast-non-reasoning" ||
				f.Meta.GetCreateTime() != nil || f.Meta.GetServiceTier() != "default" || f.Meta.GetToolCallCount() != 0 {
				t.Errorf("meta %v", f.Meta)
			}
			if w := f.Meta.GetWarnings(); len(w) != 0 {
				t.Errorf("warnings %q", w)
			}
			anns := f.Meta.GetExtended().GetFields()["annotations"].GetListValue().GetValues()
			wantURLs := []string{"https://x.ai/", "https://x.ai/news", "https://play.google.com/store/apps/details?id=ai.x.grok", "https://x.ai/grok", "https://x.com/xai",
				"https://x.ai/api", "https://docs.aimlapi.com/api-references/text-models-llm/xai", "https://en.wikipedia.org/wiki/XAI_(company)", "https://x.ai/legal/terms-of-service"}
			if len(anns) != len(wantURLs) {
				t.Fatalf("annotations %v", anns)
			}
			for i, u := range wantURLs {
				a := anns[i].GetStructValue().GetFields()
				if a["url"].GetStringValue() != u || a["title"].GetStringValue() != u || a["type"].GetStringValue() != "url_citation" {
					t.Errorf("annotation %d: %v, want %s", i, a, u)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := replayRound9Stream(t, tc.name)
			tc.check(t, f)
		})
	}
}

// replayRound9Stream streams a recording, compares the events with the
// golden file and returns them folded the way the server folds them.
func replayRound9Stream(t *testing.T, name string) folded {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
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
	return accFold(t, evs)
}

// TestRound9ParallelCallsFollowUp: the cassette's second request (which the
// live API accepted) sends both calls back as function_call items, then
// the two outputs keyed by their call_id. The request we build from the
// streamed answer and the two results has the same items, in that order
// (without the fc_ item ids fantasy adds: the request is not stored).
func TestRound9ParallelCallsFollowUp(t *testing.T) {
	t.Parallel()
	f := replayRound9Stream(t, "real_fantasy_openai_gpt_4o_responses_multi_tool_stream")
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant. Always use both add and multiply at the same time.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Add and multiply the number 2 and 3")),
			f.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_NnEvpiwdL8XrZ6F3T9VJyVw7", "5"), toolResultPart("call_TQ8336oa6YnuT2leYzRDBBLz", "6")),
		},
	}
	body, _, err := p.buildResponsesRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeBody(t, body)
	items, _ := m["input"].([]any)
	if len(items) != 6 {
		t.Fatalf("input %v", m["input"])
	}
	want := []map[string]any{
		{"type": "function_call", "call_id": "call_NnEvpiwdL8XrZ6F3T9VJyVw7", "name": "add", "arguments": `{"a":2,"b":3}`},
		{"type": "function_call", "call_id": "call_TQ8336oa6YnuT2leYzRDBBLz", "name": "multiply", "arguments": `{"a":2,"b":3}`},
		{"type": "function_call_output", "call_id": "call_NnEvpiwdL8XrZ6F3T9VJyVw7", "output": "5"},
		{"type": "function_call_output", "call_id": "call_TQ8336oa6YnuT2leYzRDBBLz", "output": "6"},
	}
	for i, w := range want {
		if !reflect.DeepEqual(items[i+2], w) {
			t.Errorf("input[%d] %v, want %v", i+2, items[i+2], w)
		}
	}
	if m["stream"] != true {
		t.Errorf("stream %v", m["stream"])
	}
}

// TestRound9HostedItemsWarnedInStreams: a hosted tool's item in a stream
// (here the four web_search_call items of real_responses_web_search_stream,
// gpt-5-nano) is reported the way the unary answer reports it (one warning
// per item, as for real_pyd_openai_responses_model_web_search_tool_with_invalid_region),
// not dropped in silence; it is not a client call and the text is
// untouched.
func TestRound9HostedItemsWarnedInStreams(t *testing.T) {
	t.Parallel()
	f := replayWarnedStream(t, "real_responses_web_search_stream")
	// Round 23: each is a provider item (its JSON as output_item.done
	// sent it), in order, without a warning.
	var want []string
	for _, id := range []string{"ws_68c187d0973881928c78c79e50ae028805ca09a4773fcd25", "ws_68c187d3954881929c1d6d96c46e4fef05ca09a4773fcd25",
		"ws_68c187d4dd548192ab8473f8c95a4d8d05ca09a4773fcd25", "ws_68c187d70ba88192aad48510cff1b4c905ca09a4773fcd25"} {
		want = append(want, `ignored output item of type "web_search_call" (id `+id)
	}
	if _, w := r23Hosted(t, f.Message, f.Meta.GetWarnings(), want); len(w) != 0 || len(f.Meta.GetWarnings()) != 0 || f.Meta.GetToolCallCount() != 0 {
		t.Errorf("warnings %q, %d calls", f.Meta.GetWarnings(), f.Meta.GetToolCallCount())
	}
	for _, p := range f.Message.GetParts() {
		if p.GetToolCall() != nil {
			t.Errorf("hosted item taken for a client call: %v", p)
		}
	}
}

// replayWarnedStream streams a recording whose golden file another test
// keeps and folds it.
func replayWarnedStream(t *testing.T, name string) folded {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	checkRespStreamInvariants(t, evs)
	return accFold(t, evs)
}

// TestRound9PhaseCommentary: gpt-5.5 narrating before its call
// (pydantic-ai's phase_live cassette, unary): an encrypted reasoning item
// without summary, a message with phase "commentary", then the call. The
// narration is text before the call, with the message's phase; the
// reasoning's encrypted_content its signature. The cassette's second
// request, which the live API accepted, sends the three items back before
// the tool's output; the request we build has them in that order with the
// same values, the message's phase included, without its status and item
// ids (the request is not stored).
func TestRound9PhaseCommentary(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_phase_live_1"
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	var recorded struct {
		Output []map[string]any `json:"output"`
	}
	if err := json.Unmarshal(providertest.Load(t, td(name+".http")).Body, &recorded); err != nil {
		t.Fatal(err)
	}
	enc, _ := recorded.Output[0]["encrypted_content"].(string)
	parts := res.Message.GetParts()
	if len(parts) != 3 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetId() != "rs_094ebefab06f6c100069efd58250cc8195b3b443e9b3d9bd84" || r.GetText() != "" || r.GetSignature() != enc || len(enc) != 1100 {
		t.Errorf("reasoning %v", r)
	}
	const narration = `I'll check the capital lookup tool for "PotatoLand."`
	if parts[1].GetText() != narration || parts[1].GetPhase() != "commentary" || parts[1].GetItemId() != "msg_094ebefab06f6c100069efd58302b4819587854b18d82b5690" {
		t.Errorf("text %v", parts[1])
	}
	if tc := parts[2].GetToolCall(); tc.GetCallId() != "call_ALAJMWK9buNN7RXxxXbECcHa" || tc.GetName() != "get_capital" || tc.GetArguments() != `{"country":"PotatoLand"}` || !tc.GetArgumentsValid() {
		t.Errorf("call %v", tc)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 63, OutputTokens: 72, TotalTokens: 135, ReasoningTokens: 29}); !proto.Equal(res.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
	}
	if res.Meta.GetResponseId() != "resp_094ebefab06f6c100069efd5814cd881958cfa10878ca4446d" || res.Meta.GetResolvedModel() != "gpt-5.5-2026-04-23" ||
		res.Meta.GetServiceTier() != "default" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", res.Meta)
	}

	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.5", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Briefly narrate what you are about to do before calling each tool.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the capital of PotatoLand?")),
			res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_ALAJMWK9buNN7RXxxXbECcHa", "Potato City")),
		},
	}
	body, _, err := p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := decodeBody(t, body)["input"].([]any)
	if len(items) != 6 {
		t.Fatalf("input %v", items)
	}
	want := []map[string]any{
		{"type": "reasoning", "id": "rs_094ebefab06f6c100069efd58250cc8195b3b443e9b3d9bd84", "encrypted_content": enc, "summary": []any{}},
		// As the cassette's second request sent it (id, status and empty
		// annotations: the output message), which the API accepted; the
		// function call goes without its fc_ item id (the contract keeps
		// none: it pairs by call_id).
		{"type": "message", "id": "msg_094ebefab06f6c100069efd58302b4819587854b18d82b5690", "status": "completed", "role": "assistant", "phase": "commentary",
			"content": []any{map[string]any{"type": "output_text", "text": narration, "annotations": []any{}}}},
		{"type": "function_call", "call_id": "call_ALAJMWK9buNN7RXxxXbECcHa", "name": "get_capital", "arguments": `{"country":"PotatoLand"}`},
		{"type": "function_call_output", "call_id": "call_ALAJMWK9buNN7RXxxXbECcHa", "output": "Potato City"},
	}
	for i, w := range want {
		if !reflect.DeepEqual(items[i+2], w) {
			t.Errorf("input[%d] %v, want %v", i+2, items[i+2], w)
		}
	}
}
