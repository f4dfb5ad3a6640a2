package openai

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// nativeFinish is meta.extended native_finish_reason, "" when unset.
func nativeFinish(m *llmrelayv1.ResponseMeta) string {
	return m.GetExtended().GetFields()[extNativeFinishReason].GetStringValue()
}

// TestOpenRouterNativeFinishReasonLeftovers20: OpenRouter's
// native_finish_reason (the upstream model's own finish reason beside the
// normalized finish_reason) lands in meta.extended native_finish_reason,
// in the unary answer and in the stream, as the recording gives it;
// provider_finish_reason keeps OpenRouter's finish_reason.
func TestOpenRouterNativeFinishReasonLeftovers20(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, req, raw, native string
		finish                 llmrelayv1.FinishReason
	}{
		// Gemini 3 Pro's STOP behind "tool_calls".
		{"real_fantasy_openrouter_gemini_3_pro_thinking", "tools_parallel", "tool_calls", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS},
		// The Responses API's "completed" behind o4-mini-high's "tool_calls".
		{"real_lcg_function_call_synchronous_openrouter_o4_mini_high", "tools_parallel", "tool_calls", "completed", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS},
		// Anthropic's end_turn behind "stop".
		{"openrouter_reasoning", "chat_plain", "stop", "end_turn", llmrelayv1.FinishReason_FINISH_REASON_STOP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			wantFinish(t, res.Meta, tc.finish, tc.raw)
			if got := nativeFinish(res.Meta); got != tc.native {
				t.Errorf("native_finish_reason %q, want %q", got, tc.native)
			}
		})
	}
	for _, tc := range []struct {
		name, req, raw, native string
		finish                 llmrelayv1.FinishReason
	}{
		{"openrouter_reasoning_stream", "chat_plain", "stop", "end_turn", llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"real_fantasy_openrouter_gemini_3_pro_multi_tool_stream", "tools_parallel", "tool_calls", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS},
		// The finish (and its native twin) repeated on the usage chunk:
		// reported once.
		{"real_oi_agno_openrouter_cost_stream", "chat_plain", "stop", "stop", llmrelayv1.FinishReason_FINISH_REASON_STOP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, _, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ev := range evs {
				if ev.Kind != provider.EventMeta || nativeFinish(ev.Meta) == "" {
					continue
				}
				n++
				// With the finish reason it came with.
				if ev.Meta.GetProviderFinishReason() != tc.raw {
					t.Errorf("native finish reason in meta %v, not with the finish", ev.Meta)
				}
			}
			if n != 1 {
				t.Errorf("native_finish_reason reported %d times, want once", n)
			}
			f := foldEvents(t, evs)
			wantFinish(t, f.Meta, tc.finish, tc.raw)
			if got := nativeFinish(f.Meta); got != tc.native {
				t.Errorf("native_finish_reason %q, want %q", got, tc.native)
			}
		})
	}
}

// TestOpenRouterNativeFinishWithErrorLeftovers20: an answer OpenRouter
// ends with finish_reason "error" carries no finish event; the upstream's
// own reason goes with the error's meta (unary) and in the meta before
// the error (stream).
func TestOpenRouterNativeFinishWithErrorLeftovers20(t *testing.T) {
	t.Parallel()
	const chunk = `{"id":"gen-l20","object":"chat.completion.chunk","created":1762000000,"model":"m","provider":"P","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":%s,"native_finish_reason":%s}]}`
	h := http.Header{"Content-Type": {"text/event-stream"}}
	body := "data: " + fmt.Sprintf(chunk, "Hel", "null", "null") + "\n\n" +
		"data: " + fmt.Sprintf(chunk, "", `"error"`, `"MALFORMED_FUNCTION_CALL"`) + "\n\n" + "data: [DONE]\n\n"
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: h, Body: []byte(body)})
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["chat_plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err == nil {
		t.Fatal("no error")
	}
	if got := nativeFinish(foldEvents(t, evs).Meta); got != "MALFORMED_FUNCTION_CALL" {
		t.Errorf("stream: native_finish_reason %q", got)
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.parseChatResponse([]byte(`{"id":"gen-l20","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hel"},` +
		`"finish_reason":"error","native_finish_reason":"MALFORMED_FUNCTION_CALL"}]}`))
	if err == nil {
		t.Fatal("unary: no error")
	}
	if got := nativeFinish(providerError(t, err).Meta); got != "MALFORMED_FUNCTION_CALL" {
		t.Errorf("unary: native_finish_reason %q", got)
	}
}

// TestLengthCutStreamUnaryTwinsLeftovers20: a Chat Completions answer
// that the token limit stops after text that followed a call says the
// same in its stream and in its unary twin: the call was whole when its
// arguments parse (the text is what the limit stopped), cut when they do
// not. The unary answer read its last part, the call (its content comes
// first), as the one being written: it flagged a whole call cut while the
// stream ended it whole.
func TestLengthCutStreamUnaryTwinsLeftovers20(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stream, unary, text string
		call                wantCall
		warn                string
	}{
		{"tools19_length_after_text_stream", "leftovers20_length_after_text", "While that runs, here is",
			wantCall{"call_t19_len_d", "get_weather", `{"city": "Oslo"}`, true, "end"}, ""},
		{"leftovers20_length_open_args_text_stream", "leftovers20_length_open_args_text", " and",
			wantCall{"call_l20_len_e", "get_weather", `{"city": "Ber`, false, "cut"},
			"tool call call_l20_len_e was cut by the token limit; its arguments are partial"},
	} {
		t.Run(tc.stream, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.stream+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.stream+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			msg, f, ended := gatewayFold(t, evs)
			checkCalls(t, msg, ended, []wantCall{tc.call})
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")

			usrv := providertest.ReplayFile(t, td(tc.unary+".http"))
			res, err := newTestProvider(t, kOpenAI, usrv.URL).Generate(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.unary+".golden"), renderResult(t, res))
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
			uended := map[string]string{tc.call.id: tc.call.end} // a unary call has no end event
			checkCalls(t, res.Message, uended, []wantCall{tc.call})
			if got := res.Message.GetParts()[0].GetText(); got != tc.text {
				t.Errorf("unary text %q, want %q", got, tc.text)
			}
			for _, m := range []*llmrelayv1.ResponseMeta{f.Meta, res.Meta} {
				if tc.warn != "" && !hasWarning(m, tc.warn) {
					t.Errorf("no warning %q in %q", tc.warn, m.GetWarnings())
				}
				for _, w := range m.GetWarnings() {
					if tc.warn == "" && strings.Contains(w, "was cut by") {
						t.Errorf("warning %q for a whole call", w)
					}
				}
			}
		})
	}
}

// TestRepeatedCallIDLeftovers20: a call sent again with its id after its
// arguments are whole. The same name and the same whole arguments (the
// same JSON, white space aside) is the call again, as proxies send a
// streamed call whole at its end (BerriAI/litellm#20480): dropped, with a
// warning. Other arguments are a second call that reused the id: re-keyed
// with a made id, as the unary answer keys it. The id and name again with
// no arguments add nothing. Both were joined into one call
// (`{"city": "Paris"}{"city":"Paris"}`). Each stream has its unary twin.
func TestRepeatedCallIDLeftovers20(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		stream, unar []wantCall
		sWarn, uWarn string
	}{
		{"leftovers20_repeat_whole_call",
			[]wantCall{{"call_l20_rep_a", "get_weather", `{"city": "Paris"}`, true, "end"}},
			[]wantCall{{"call_l20_rep_b", "get_weather", `{"city": "Paris"}`, true, "end"}},
			"tool call call_l20_rep_a was sent again whole; the repeat was dropped",
			"tool call call_l20_rep_b was sent again whole; the repeat was dropped"},
		{"leftovers20_reused_id_same_index",
			[]wantCall{{"call_l20_reuse_a", "get_weather", `{"city": "Paris"}`, true, "end"}, {"call_idx1", "get_weather", `{"city": "Rome"}`, true, "end"}},
			[]wantCall{{"call_l20_reuse_b", "get_weather", `{"city": "Paris"}`, true, "end"}, {"call_idx1", "get_weather", `{"city": "Rome"}`, true, "end"}},
			"tool call 1 repeats the id call_l20_reuse_a of an earlier call; keyed as call_idx1",
			"tool call 1 repeats the id call_l20_reuse_b of an earlier call; keyed as call_idx1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+"_stream.http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+"_stream.golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			msg, f, ended := gatewayFold(t, evs)
			checkCalls(t, msg, ended, tc.stream)
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if !hasWarning(f.Meta, tc.sWarn) {
				t.Errorf("stream: no warning %q in %q", tc.sWarn, f.Meta.GetWarnings())
			}
			if f.Meta.GetToolCallCount() != int32(len(tc.stream)) {
				t.Errorf("stream: %d calls", f.Meta.GetToolCallCount())
			}

			usrv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, usrv.URL).Generate(context.Background(), chatRequests(t)["tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			uended := map[string]string{}
			for _, c := range tc.unar {
				uended[c.id] = c.end
			}
			checkCalls(t, res.Message, uended, tc.unar)
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if !hasWarning(res.Meta, tc.uWarn) {
				t.Errorf("unary: no warning %q in %q", tc.uWarn, res.Meta.GetWarnings())
			}
			if res.Meta.GetToolCallCount() != int32(len(tc.unar)) {
				t.Errorf("unary: %d calls", res.Meta.GetToolCallCount())
			}
		})
	}
}
