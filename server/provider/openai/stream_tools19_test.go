package openai

import (
	"context"
	"testing"

	foldpkg "github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// gatewayFold folds events as the gateway does (server/fold.go): deltas
// keyed by call_id, and an end or cut event completes its call with a done
// event whose arguments_valid is false for a cut call. It returns the
// message, the merged meta and, per call_id, how the call ended ("end",
// "cut"; absent: never ended by the adapter).
func gatewayFold(t *testing.T, evs []*provider.Event) (*llmrelayv1.Message, folded, map[string]string) {
	t.Helper()
	var acc foldpkg.Accumulator
	ended := map[string]string{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			acc.AddPhasedText(ev.Text, ev.Phase)
		case provider.EventToolCall:
			d := ev.ToolCall
			if ended[d.CallID] != "" {
				t.Fatalf("fragment of call %s after its end", d.CallID)
			}
			if err := acc.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: d.CallID, Index: int32(d.Index), Name: d.Name,
				ArgumentsDelta: d.Arguments, Signature: d.Signature}); err != nil {
				t.Fatalf("fold: %v", err)
			}
		case provider.EventToolCallEnd, provider.EventToolCallCut:
			id := ev.ToolCall.CallID
			if ended[id] != "" {
				t.Fatalf("call %s ended twice", id)
			}
			tc, idx := acc.ToolCall(id)
			if tc == nil {
				t.Fatalf("end of unknown call %s", id)
			}
			ended[id] = "end"
			if ev.Kind == provider.EventToolCallCut {
				ended[id] = "cut"
				tc.ArgumentsValid = false
			}
			if err := acc.AddToolCallDone(&llmrelayv1.ToolCallDone{Index: idx, ToolCall: tc}); err != nil {
				t.Fatalf("fold: %v", err)
			}
		}
	}
	return acc.Message(), foldEvents(t, evs), ended
}

// wantCall is a tool call as the recording says it, field by field.
type wantCall struct {
	id, name, args string
	valid          bool
	end            string // "end" or "cut"
}

func checkCalls(t *testing.T, msg *llmrelayv1.Message, ended map[string]string, want []wantCall) {
	t.Helper()
	var got []*llmrelayv1.ToolCall
	for _, p := range msg.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			got = append(got, tc)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d calls %v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.GetCallId() != w.id || g.GetName() != w.name || g.GetArguments() != w.args || g.GetArgumentsValid() != w.valid {
			t.Errorf("call %d: %s %s %q valid=%v, want %s %s %q valid=%v", i, g.GetCallId(), g.GetName(), g.GetArguments(), g.GetArgumentsValid(),
				w.id, w.name, w.args, w.valid)
		}
		if ended[w.id] != w.end {
			t.Errorf("call %s ended %q, want %q", w.id, ended[w.id], w.end)
		}
	}
}

func hasWarning(m *llmrelayv1.ResponseMeta, w string) bool {
	for _, x := range m.GetWarnings() {
		if x == w {
			return true
		}
	}
	return false
}

// TestToolCallStreamsTools19: tool-call streams of OpenAI and
// OpenAI-compatible servers, each checked against what the recording says.
func TestToolCallStreamsTools19(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		text   string
		calls  []wantCall
		finish llmrelayv1.FinishReason
		raw    string
		usage  *llmrelayv1.Usage
		warns  []string
		check  func(t *testing.T, f folded)
	}{
		// OpenAI's own parallel calls (openai-python's recording): the id
		// and name on each call's first fragment, index on all.
		{name: "real_openaipy_parallel_tools_stream", calls: []wantCall{
			{"call_lQnnsesjFMWMQ5IeWPHzR4th", "GetWeatherArgs", `{"city": "Edinburgh", "country": "UK", "units": "c"}`, true, "end"},
			{"call_2xjOUgaCdiwAcl9ZBL9LyMUU", "get_stock_price", `{"ticker": "AAPL", "exchange": "NASDAQ"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls",
			usage: &llmrelayv1.Usage{InputTokens: 149, OutputTokens: 60, TotalTokens: 209},
			check: func(t *testing.T, f folded) {
				if f.Meta.GetResponseId() != "chatcmpl-9tXjpPLJgivc9nyuBCCWX8HNg9L2J" || f.Meta.GetResolvedModel() != "gpt-4o-2024-08-06" {
					t.Errorf("meta %v", f.Meta)
				}
			}},
		// Ollama's /v1 (qwen2.5-coder, April 2025, ask-openai.nvim's
		// capture): each call whole in its own chunk, ids call_… made by
		// Ollama, index 0 then 1, role and empty content repeated.
		{name: "real_asknvim_ollama_v1_parallel_tools_stream", calls: []wantCall{
			{"call_wteop8bt", "run_command", `{"command":"ls"}`, true, "end"},
			{"call_rk2xye1l", "run_command", `{"command":"ls -l"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls",
			check: func(t *testing.T, f folded) {
				if f.Meta.GetResponseId() != "chatcmpl-18" || f.Meta.GetResolvedModel() != "qwen2.5-coder:7b-instruct-q8_0" {
					t.Errorf("meta %v", f.Meta)
				}
			}},
		// The id (and type) on every fragment, arguments split inside a
		// \u escape, a \" escape and a surrogate pair's escapes: joined
		// as sent, one call.
		{name: "tools19_vllm_id_every_chunk_stream", calls: []wantCall{
			{"chatcmpl-tool-t19a8c41e2f", "search", `{"q": "caf\u00e9 \"noir\"", "emoji": "\ud83d\ude00", "city": "Zürich"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls",
			usage: &llmrelayv1.Usage{InputTokens: 210, OutputTokens: 41, TotalTokens: 251}},
		// Index 0 for two calls with different ids, each whole in one
		// chunk, and finish "stop": two calls, TOOL_CALLS.
		{name: "tools19_reused_index_stream", calls: []wantCall{
			{"call_t19_weather_paris", "get_weather", `{"city":"Paris"}`, true, "end"},
			{"call_t19_weather_rome", "get_weather", `{"city":"Rome"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "stop",
			usage: &llmrelayv1.Usage{InputTokens: 40, OutputTokens: 22, TotalTokens: 62}},
		// Mistral's shape: two whole calls in the delta that finishes,
		// both at index 0, told apart by their ids.
		{name: "tools19_mistral_same_index_one_delta_stream", calls: []wantCall{
			{"T19aB3cD5", "get_weather", `{"city": "Paris"}`, true, "end"},
			{"T19eF7gH9", "get_weather", `{"city": "Rome"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls",
			usage: &llmrelayv1.Usage{InputTokens: 90, OutputTokens: 40, TotalTokens: 130}},
		// Text, then two calls whose fragments interleave (two in one
		// delta at the end).
		{name: "tools19_interleaved_after_text_stream", text: "Checking both.", calls: []wantCall{
			{"call_t19_a", "get_weather", `{"city":"Oslo"}`, true, "end"},
			{"call_t19_b", "get_time", `{"tz":"Europe/Oslo"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls"},
		// The token limit stops the second call mid-string: the first is
		// whole, the second cut and not valid.
		{name: "tools19_length_mid_args_stream", calls: []wantCall{
			{"call_t19_len_a", "get_weather", `{"city": "Oslo"}`, true, "end"},
			{"call_t19_len_b", "get_weather", `{"city": "Ber`, false, "cut"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, raw: "length",
			usage: &llmrelayv1.Usage{InputTokens: 80, OutputTokens: 20, TotalTokens: 100},
			warns: []string{"tool call call_t19_len_b was cut by the token limit; its arguments are partial"}},
		// The token limit right after a value that parses: the call may
		// have had more to say, so it is cut all the same.
		{name: "tools19_length_parsing_args_stream", calls: []wantCall{
			{"call_t19_len_c", "get_weather", `{"city": "Oslo"}`, false, "cut"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, raw: "length",
			warns: []string{"tool call call_t19_len_c was cut by the token limit; its arguments are partial"}},
		// A whole call, then text that the token limit stops: the call
		// was not being written when the limit hit, it stays whole (its
		// unary twin too: TestLengthCutStreamUnaryTwinsLeftovers20).
		{name: "tools19_length_after_text_stream", text: "While that runs, here is", calls: []wantCall{
			{"call_t19_len_d", "get_weather", `{"city": "Oslo"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, raw: "length"},
		// Two calls in one delta without index or type, the first's
		// arguments an object (kept as compact JSON text, key order
		// kept), the second a no-argument tool's "" (kept verbatim, not
		// valid: docs/decisions.md "Tool calls are message parts").
		{name: "tools19_object_args_noindex_stream", calls: []wantCall{
			{"call_t19_obj", "get_weather", `{"city":"Lima","days":3}`, true, "end"},
			{"call_t19_noarg", "now", ``, false, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls"},
		// A UTF-16 server cuts between the halves of a surrogate pair,
		// each JSON-escaped on its own: the pair is one character; an
		// escaped backslash before "ud83d" is text; a high half followed
		// by no low half (in the next fragment, or at the call's end) is
		// U+FFFD, as it decodes alone.
		{name: "tools19_js_surrogate_split_stream", calls: []wantCall{
			{"call_t19_sur_a", "react", `{"emoji":"😀","path":"C:\\ud83d"}`, true, "end"},
			{"call_t19_sur_b", "react", "{\"emoji\":\"x\uFFFD\"}", true, "end"},
			{"call_t19_sur_c", "react", "{\"emoji\":\"\uFFFD", false, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls"},
		// Calls with neither id nor index: two whole calls in one delta,
		// a third whole in the next (same name as the first), then a call
		// whose name comes with each fragment. A named fragment after a
		// whole call is another call; one after partial arguments
		// continues it. Ids made from the position, with warnings.
		{name: "tools19_idless_whole_calls_stream", calls: []wantCall{
			{"call_idx0", "get_weather", `{"city":"Oslo"}`, true, "end"},
			{"call_idx1", "get_time", `{"tz":"CET"}`, true, "end"},
			{"call_idx2", "get_weather", `{"city":"Bergen"}`, true, "end"},
			{"call_idx3", "get_weather", `{"city":"Tromsø"}`, true, "end"},
		}, finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, raw: "tool_calls",
			warns: []string{"tool call 0 has no id; keyed as call_idx0", "tool call 3 has no id; keyed as call_idx3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			msg, f, ended := gatewayFold(t, evs)
			checkCalls(t, msg, ended, tc.calls)
			var got string
			for _, pt := range msg.GetParts() {
				got += pt.GetText()
			}
			if got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			wantFinish(t, f.Meta, tc.finish, tc.raw)
			if tc.usage != nil && (f.Meta.GetUsage().GetInputTokens() != tc.usage.InputTokens ||
				f.Meta.GetUsage().GetOutputTokens() != tc.usage.OutputTokens || f.Meta.GetUsage().GetTotalTokens() != tc.usage.TotalTokens) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), tc.usage)
			}
			for _, w := range tc.warns {
				if !hasWarning(f.Meta, w) {
					t.Errorf("no warning %q in %q", w, f.Meta.GetWarnings())
				}
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

// TestResponsesToolCallStreamsTools19: Responses API function calls whose
// deltas name only the item id, checked against what the recording says.
func TestResponsesToolCallStreamsTools19(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		calls  []wantCall
		finish llmrelayv1.FinishReason
		raw    string
		warns  []string
	}{
		// output_item.done's arguments are a reformatting of the streamed
		// ones: the streamed text (already relayed) is the call's, with a
		// warning; nothing is spliced onto it.
		{"tools19_responses_done_differs_stream", []wantCall{
			{"call_t19differs01", "get_weather", `{"city":"Paris"}`, true, "end"},
		}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed",
			[]string{"tool call call_t19differs01: complete arguments do not continue the streamed ones; kept the streamed ones"}},
		// Deltas cut between the halves of a surrogate pair: one
		// character, the done events' text equal to the deltas'.
		{"tools19_responses_surrogate_split_stream", []wantCall{
			{"call_t19sur01", "react", `{"emoji":"😀","note":"ok"}`, true, "end"},
		}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", nil},
		// Arguments before the item's output_item.added, and a call whose
		// only item is in the final response: both keyed by their
		// call_id, never by the fc_ item id.
		{"tools19_responses_args_before_item_stream", []wantCall{
			{"call_t19first_a", "get_weather", `{"city":"Oslo"}`, true, "end"},
			{"call_t19first_b", "get_weather", `{"city":"Rome"}`, true, "end"},
		}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", nil},
		// output_item.done carries the rest of what the deltas began.
		{"tools19_responses_done_rest_stream", []wantCall{
			{"call_t19rest01", "get_weather", `{"city":"Rome"}`, true, "end"},
		}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed", nil},
		// The token limit in a call: its item ends with status
		// incomplete.
		{"tools19_responses_incomplete_item_stream", []wantCall{
			{"call_t19inc01", "get_weather", `{"city":"Os`, false, "cut"},
		}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens",
			[]string{"tool call call_t19inc01 was cut by an incomplete response; its arguments are partial"}},
		// The token limit in the second call, which no done event ended:
		// the first stays whole, the second is cut.
		{"tools19_responses_incomplete_open_stream", []wantCall{
			{"call_t19inc02a", "get_weather", `{"city":"Oslo"}`, true, "end"},
			{"call_t19inc02b", "get_weather", `{"city":"Ber`, false, "cut"},
		}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens",
			[]string{"tool call call_t19inc02b was cut by the token limit; its arguments are partial"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			msg, f, ended := gatewayFold(t, evs)
			checkCalls(t, msg, ended, tc.calls)
			wantFinish(t, f.Meta, tc.finish, tc.raw)
			if tc.warns == nil && len(f.Meta.GetWarnings()) > 0 {
				t.Errorf("warnings %q, want none", f.Meta.GetWarnings())
			}
			for _, w := range tc.warns {
				if !hasWarning(f.Meta, w) {
					t.Errorf("no warning %q in %q", w, f.Meta.GetWarnings())
				}
			}
		})
	}
}

// TestUnaryCutCallsTools19: the unary answers flag the call the token
// limit stopped in as the streams do: the last call, not valid even when
// its arguments parse, with the warning; the calls before it stay valid.
func TestUnaryCutCallsTools19(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		id, args string
		valid    bool
	}
	cases := []struct {
		name, body string
		responses  bool
		want       []call
		warning    string
	}{
		{"chat length after arguments that parse",
			`{"id":"chatcmpl-t19u1","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[` +
				`{"id":"call_t19u_a","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},` +
				`{"id":"call_t19u_b","type":"function","function":{"name":"f","arguments":"{\"a\":2}"}}]},"finish_reason":"length"}]}`,
			false, []call{{"call_t19u_a", `{"a":1}`, true}, {"call_t19u_b", `{"a":2}`, false}},
			"tool call call_t19u_b was cut by the token limit; its arguments are partial"},
		{"chat tool_calls finish: whole",
			`{"id":"chatcmpl-t19u2","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[` +
				`{"id":"call_t19u_c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`,
			false, []call{{"call_t19u_c", `{"a":1}`, true}}, ""},
		{"responses incomplete with the last call in progress",
			`{"id":"resp_t19u3","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[` +
				`{"type":"function_call","id":"fc_1","call_id":"call_t19u_d","name":"f","arguments":"{\"a\":1}","status":"completed"},` +
				`{"type":"function_call","id":"fc_2","call_id":"call_t19u_e","name":"f","arguments":"{\"a\":2}","status":"in_progress"}]}`,
			true, []call{{"call_t19u_d", `{"a":1}`, true}, {"call_t19u_e", `{"a":2}`, false}},
			"tool call call_t19u_e was cut by the token limit; its arguments are partial"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var res *provider.Result
			var err error
			if tc.responses {
				res, err = p.parseResponsesResponse([]byte(tc.body), "m")
			} else {
				res, err = p.parseChatResponse([]byte(tc.body))
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []call
			for _, pt := range res.Message.GetParts() {
				if c := pt.GetToolCall(); c != nil {
					got = append(got, call{c.GetCallId(), c.GetArguments(), c.GetArgumentsValid()})
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("calls %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("call %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if tc.warning != "" && !hasWarning(res.Meta, tc.warning) {
				t.Errorf("warnings %q, want %q", res.Meta.GetWarnings(), tc.warning)
			}
			if tc.warning == "" && len(res.Meta.GetWarnings()) > 0 {
				t.Errorf("warnings %q", res.Meta.GetWarnings())
			}
		})
	}
}
