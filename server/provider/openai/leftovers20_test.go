package openai

import (
	"context"
	"fmt"
	"net/http"
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
