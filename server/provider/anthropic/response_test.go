package anthropic

import (
	"errors"
	"net/http"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestParseResponseDefensive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		body      string
		wantParts int
		check     func(t *testing.T, res *provider.Result)
	}{
		{"null content", `{"id":"msg_1","type":"message","content":null,"stop_reason":null,"usage":null}`, 0, func(t *testing.T, res *provider.Result) {
			if res.Meta.GetUsage() != nil || res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
				t.Errorf("meta = %v", res.Meta)
			}
			// Round 25: no stop_reason in a whole answer is not the API's
			// (it always sends one): the finish is unknown, and said so.
			if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != noStopReasonWarning {
				t.Errorf("warnings = %q", w)
			}
		}},
		{"string content", `{"id":"msg_1","content":"plain text"}`, 1, func(t *testing.T, res *provider.Result) {
			if res.Message.GetParts()[0].GetText() != "plain text" {
				t.Errorf("parts = %v", res.Message.GetParts())
			}
		}},
		{"empty text block skipped", `{"content":[{"type":"text","text":""},{"type":"text"}]}`, 0, nil},
		{"tool input string", `{"content":[{"type":"tool_use","id":"toolu_1","name":"f","input":"{\"a\": 1"}],"stop_reason":"end_turn"}`, 1, func(t *testing.T, res *provider.Result) {
			tc := res.Message.GetParts()[0].GetToolCall()
			if tc.GetArguments() != `{"a": 1` || tc.GetArgumentsValid() {
				t.Errorf("tool call = %v", tc)
			}
			if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || res.Meta.GetProviderFinishReason() != "end_turn" {
				t.Errorf("finish = %v %q", res.Meta.GetFinishReason(), res.Meta.GetProviderFinishReason())
			}
		}},
		{"tool input key order kept", `{"content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{ "z": 1, "a": [ 2 , 3 ] }}]}`, 1, func(t *testing.T, res *provider.Result) {
			if got := res.Message.GetParts()[0].GetToolCall().GetArguments(); got != `{"z":1,"a":[2,3]}` {
				t.Errorf("arguments = %s", got)
			}
		}},
		{"tool input missing", `{"content":[{"type":"tool_use","id":"toolu_1","name":"f"}]}`, 1, func(t *testing.T, res *provider.Result) {
			tc := res.Message.GetParts()[0].GetToolCall()
			if tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("tool call = %v", tc)
			}
		}},
		{"tool input array", `{"content":[{"type":"tool_use","id":"toolu_1","name":"f","input":[1]}]}`, 1, func(t *testing.T, res *provider.Result) {
			tc := res.Message.GetParts()[0].GetToolCall()
			if tc.GetArguments() != "[1]" || tc.GetArgumentsValid() {
				t.Errorf("tool call = %v", tc)
			}
		}},
		{"tool without id keyed by a made id", `{"content":[{"type":"tool_use","name":"f","input":{}}],"stop_reason":"tool_use"}`, 1, func(t *testing.T, res *provider.Result) {
			// An empty call id could not be answered with a tool result:
			// the call is keyed as the stream keys it.
			if tc := res.Message.GetParts()[0].GetToolCall(); tc.GetCallId() != "call_idx0" || tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("tool call = %v", tc)
			}
			if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != "content[0]: tool_use block without an id; keyed as call_idx0" {
				t.Errorf("warnings = %q", w)
			}
		}},
		{"thinking fields null", `{"content":[{"type":"thinking","thinking":null,"signature":null},{"type":"redacted_thinking","data":null}]}`, 2, func(t *testing.T, res *provider.Result) {
			p := res.Message.GetParts()
			if r := p[0].GetReasoning(); r == nil || r.GetText() != "" || r.GetSignature() != "" || r.GetRedacted() {
				t.Errorf("thinking = %v", p[0])
			}
			if r := p[1].GetReasoning(); r == nil || !r.GetRedacted() || r.GetSignature() != "" {
				t.Errorf("redacted = %v", p[1])
			}
		}},
		{"interleaved thinking keeps model order", `{"content":[{"type":"thinking","thinking":"a","signature":"S1"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}},{"type":"thinking","thinking":"b","signature":"S2"},{"type":"text","text":"t"}],"stop_reason":"end_turn"}`, 4, func(t *testing.T, res *provider.Result) {
			p := res.Message.GetParts()
			if p[0].GetReasoning().GetSignature() != "S1" || p[1].GetToolCall() == nil || p[2].GetReasoning().GetText() != "b" || p[3].GetText() != "t" {
				t.Errorf("parts = %v", p)
			}
			if _, ok := res.Meta.GetExtended().GetFields()["thinking_blocks"]; ok || len(res.Meta.GetWarnings()) != 0 {
				t.Errorf("meta = %v", res.Meta)
			}
		}},
		{"unknown stop reason", `{"content":[],"stop_reason":"pause_turn"}`, 0, func(t *testing.T, res *provider.Result) {
			if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER {
				t.Errorf("finish = %v", res.Meta.GetFinishReason())
			}
		}},
		{"huge usage clamps", `{"content":[],"usage":{"input_tokens":9999999999,"output_tokens":-3,"cache_read_input_tokens":5}}`, 0, func(t *testing.T, res *provider.Result) {
			u := res.Meta.GetUsage()
			if u.GetInputTokens() != 1<<31-1 || u.GetOutputTokens() != 0 || u.GetCachedInputTokens() != 5 {
				t.Errorf("usage = %v", u)
			}
		}},
	}
	for _, tc := range cases {
		res, err := parseResponse([]byte(tc.body), http.Header{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := len(res.Message.GetParts()); got != tc.wantParts {
			t.Errorf("%s: %d parts, want %d", tc.name, got, tc.wantParts)
		}
		if res.Message.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
			t.Errorf("%s: role %v", tc.name, res.Message.GetRole())
		}
		if tc.check != nil {
			tc.check(t, res)
		}
	}
}

func TestParseResponseErrorIn200(t *testing.T) {
	t.Parallel()
	_, err := parseResponse([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_x"}`), http.Header{})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindUnavailable || pe.RequestID != "req_x" || pe.Code != "overloaded_error" {
		t.Fatalf("err = %#v", err)
	}
}

func TestFinishReason(t *testing.T) {
	t.Parallel()
	for stop, want := range map[string]llmrelayv1.FinishReason{
		"end_turn": llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop_sequence": llmrelayv1.FinishReason_FINISH_REASON_STOP,
		"max_tokens": llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "tool_use": llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		"refusal": llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "pause_turn": llmrelayv1.FinishReason_FINISH_REASON_OTHER,
		"model_context_window_exceeded": llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "": llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED,
	} {
		if got := finishReason(stop); got != want {
			t.Errorf("%q: %v, want %v", stop, got, want)
		}
	}
}

func TestHeaderMetaIgnoresBadValues(t *testing.T) {
	t.Parallel()
	m := headerMeta(http.Header{
		"Anthropic-Ratelimit-Requests-Limit": {"lots"},
		"Anthropic-Ratelimit-Requests-Reset": {"tomorrow"},
		"Anthropic-Ratelimit-Tokens-Reset":   {"2025-10-14T09:12:31.5Z"},
	})
	if m.GetRateLimit().RequestsLimit != nil || m.GetRateLimit().GetRequestsResetTime() != nil {
		t.Errorf("bad values parsed: %v", m.GetRateLimit())
	}
	if got := m.GetRateLimit().GetTokensResetTime().AsTime().Nanosecond(); got != 5e8 {
		t.Errorf("fractional reset = %d ns", got)
	}
	if headerMeta(http.Header{}).RateLimit != nil {
		t.Error("rate limit set without headers")
	}
}

// FuzzParseResponse checks that any body parses to a result or a
// *provider.Error, without panics, with consistent tool-call bookkeeping.
func FuzzParseResponse(f *testing.F) {
	for _, name := range []string{"plain", "tools", "vision", "multiturn", "stop_sequence", "refusal", "thinking", "thinking_multiturn", "error_529"} {
		f.Add(providertest.Load(f, "testdata/"+name+".http").Body)
	}
	f.Add([]byte(`{"content":"x","usage":{"input_tokens":null}}`))
	f.Add([]byte(`{"content":[{"type":"tool_use","input":"{"}]}`))
	f.Add([]byte(`{"content":[{"type":"redacted_thinking","data":5},{"type":"thinking","signature":""}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := parseResponse(body, http.Header{})
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *provider.Error", err)
			}
			return
		}
		calls := 0
		for _, p := range res.Message.GetParts() {
			if p.GetKind() == nil {
				t.Fatal("empty part")
			}
			if r := p.GetReasoning(); r != nil && r.GetRedacted() && r.GetText() != "" {
				t.Fatal("redacted reasoning with text")
			}
			if tc := p.GetToolCall(); tc != nil {
				calls++
				if tc.GetArgumentsValid() != providertest.IsJSONObject(tc.GetArguments()) {
					t.Fatalf("arguments_valid wrong for %q", tc.GetArguments())
				}
			}
		}
		if int(res.Meta.GetToolCallCount()) != calls {
			t.Fatalf("tool_call_count %d, %d calls", res.Meta.GetToolCallCount(), calls)
		}
		if fr := res.Meta.GetFinishReason(); calls > 0 && (fr == llmrelayv1.FinishReason_FINISH_REASON_STOP || fr == llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED) {
			t.Fatal("tool calls with a plain stop finish reason")
		}
		if u := res.Meta.GetUsage(); u != nil && (u.InputTokens < u.CachedInputTokens || u.InputTokens < 0 || u.OutputTokens < 0) {
			t.Fatalf("bad usage %v", u)
		}
	})
}

// TestCutToolCallFlagged: the tool_use block an answer ends with when
// max_tokens cut it keeps its (parsed, partial) input but is flagged
// invalid, and the answer is LENGTH, so no client runs it.
func TestCutToolCallFlagged(t *testing.T) {
	t.Parallel()
	res, err := parseResponse([]byte(`{"id":"msg_01CutToolCallUnaryZr4","type":"message","role":"assistant","model":"m",`+
		`"content":[{"type":"text","text":"Writing it."},{"type":"tool_use","id":"toolu_01CutCallUnaryHq8Wm2","name":"write_file","input":{"path":"notes.txt"}}],`+
		`"stop_reason":"max_tokens","usage":{"input_tokens":40,"output_tokens":16}}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	tc := res.Message.GetParts()[1].GetToolCall()
	if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || tc.GetArgumentsValid() || tc.GetArguments() != `{"path":"notes.txt"}` ||
		len(res.Meta.GetWarnings()) != 1 {
		t.Errorf("finish %v, call %v, warnings %q", res.Meta.GetFinishReason(), tc, res.Meta.GetWarnings())
	}
	// A call followed by text was not the one cut.
	res, err = parseResponse([]byte(`{"id":"msg_01CutAfterCallUnaryKd2","type":"message","role":"assistant","model":"m",`+
		`"content":[{"type":"tool_use","id":"toolu_01WholeCallUnaryVb5Tn1","name":"f","input":{}},{"type":"text","text":"and then"}],`+
		`"stop_reason":"max_tokens","usage":{"input_tokens":40,"output_tokens":16}}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Message.GetParts()[0].GetToolCall().GetArgumentsValid() || res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH {
		t.Errorf("got %v %v", res.Message, res.Meta.GetFinishReason())
	}
}
