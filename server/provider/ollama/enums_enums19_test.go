package ollama

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// The enum and usage audit (enums19): every done_reason Ollama sends
// (server/routes.go and llm/server.go: stop, length, load, unload) and
// every field of api/types.go Metrics (with prompt_eval_cached_count) is
// sent through the adapter, unary and streamed, and its place in the
// contract checked.

type e19Answer struct {
	meta *llmrelayv1.ResponseMeta
	err  error
}

func e19Both(t *testing.T, unary, stream string) (u, s e19Answer) {
	t.Helper()
	srv := providertest.Replay(t,
		providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(unary)},
		providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: []byte(stream)})
	p := newTestProvider(t, srv)
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "llama3.2", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("hi"))}}
	res, err := p.Generate(context.Background(), req)
	u.err = err
	if res != nil {
		u.meta = res.Meta
	}
	st, err := p.Stream(context.Background(), req)
	if err != nil {
		s.err = err
		return u, s
	}
	defer st.Close()
	s.meta = &llmrelayv1.ResponseMeta{}
	for {
		ev, err := st.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			break
		}
		switch ev.Kind {
		case provider.EventMeta:
			proto.Merge(s.meta, ev.Meta)
		case provider.EventUsage:
			s.meta.Usage = ev.Usage
		case provider.EventToolCall:
			if ev.ToolCall.Name != "" {
				s.meta.ToolCallCount++
			}
		}
	}
	return u, s
}

const e19Metrics = `"total_duration":5191566416,"load_duration":2154458,"prompt_eval_count":26,"prompt_eval_cached_count":20,` +
	`"prompt_eval_duration":383809000,"eval_count":298,"eval_duration":4799921000`

func e19Final(reason, message string) string {
	r := ""
	if reason != "" {
		r = `"done_reason":"` + reason + `",`
	}
	return `{"model":"llama3.2","created_at":"2026-11-24T10:00:00.123456789Z","message":{"role":"assistant",` + message + `},"done":true,` + r + e19Metrics + `}`
}

func e19Stream(reason, message string) string {
	return `{"model":"llama3.2","created_at":"2026-11-24T10:00:00.1Z","message":{"role":"assistant",` + message + `},"done":false}` + "\n" +
		e19Final(reason, `"content":""`) + "\n"
}

// TestEnums19DoneReasons: every done_reason, unary and streamed: the raw
// value in provider_finish_reason; stop STOP (TOOL_CALLS with calls),
// length LENGTH, load and unload OTHER with a warning (nothing was
// generated), a future value OTHER, never STOP; none (Ollama before
// done_reason) STOP.
func TestEnums19DoneReasons(t *testing.T) {
	t.Parallel()
	const textMsg = `"content":"hi"`
	const callMsg = `"content":"","tool_calls":[{"id":"call_e19a","function":{"index":0,"name":"get_weather","arguments":{"city":"Paris"}}}]`
	for _, c := range []struct {
		reason, message string
		want            llmrelayv1.FinishReason
		calls           int32
		warning         string
	}{
		{"stop", textMsg, llmrelayv1.FinishReason_FINISH_REASON_STOP, 0, ""},
		{"stop", callMsg, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, 1, ""},
		{"length", textMsg, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, 0, ""},
		{"length", callMsg, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, 1, ""},
		{"load", `"content":""`, llmrelayv1.FinishReason_FINISH_REASON_OTHER, 0, `done_reason "load"`},
		{"unload", `"content":""`, llmrelayv1.FinishReason_FINISH_REASON_OTHER, 0, `done_reason "unload"`},
		{"a_reason_added_later", textMsg, llmrelayv1.FinishReason_FINISH_REASON_OTHER, 0, ""},
		{"", textMsg, llmrelayv1.FinishReason_FINISH_REASON_STOP, 0, ""},
	} {
		unary := e19Final(c.reason, c.message)
		u, s := e19Both(t, unary, e19Stream(c.reason, c.message))
		for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
			name := c.reason + " " + what
			if a.err != nil {
				t.Errorf("%s: %v", name, a.err)
				continue
			}
			if a.meta.GetProviderFinishReason() != c.reason || a.meta.GetFinishReason() != c.want {
				t.Errorf("%s: finish %v (%q), want %v", name, a.meta.GetFinishReason(), a.meta.GetProviderFinishReason(), c.want)
			}
			if a.meta.GetToolCallCount() != c.calls {
				t.Errorf("%s: %d tool calls, want %d", name, a.meta.GetToolCallCount(), c.calls)
			}
			found := c.warning == ""
			for _, w := range a.meta.GetWarnings() {
				found = found || strings.Contains(w, c.warning)
			}
			if !found {
				t.Errorf("%s: warnings %q lack %q", name, a.meta.GetWarnings(), c.warning)
			}
		}
	}
}

// TestEnums19Metrics: every Metrics field lands, unary and streamed: the
// counts in Usage (prompt_eval_cached_count as cached_input_tokens, a part
// of prompt_eval_count), every count and duration (integer nanoseconds)
// under its own name in extended.
func TestEnums19Metrics(t *testing.T) {
	t.Parallel()
	u, s := e19Both(t, e19Final("stop", `"content":"hi"`), e19Stream("stop", `"content":"hi"`))
	want := &llmrelayv1.Usage{InputTokens: 26, OutputTokens: 298, TotalTokens: 324, CachedInputTokens: 20}
	ext := map[string]float64{extTotalDuration: 5191566416, extLoadDuration: 2154458, extPromptEvalCount: 26, extPromptEvalCachedCount: 20,
		extPromptEvalDuration: 383809000, extEvalCount: 298, extEvalDuration: 4799921000}
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if !proto.Equal(a.meta.GetUsage(), want) {
			t.Errorf("%s usage %v, want %v", what, a.meta.GetUsage(), want)
		}
		for k, v := range ext {
			if got := a.meta.GetExtended().GetFields()[k].GetNumberValue(); got != v {
				t.Errorf("%s extended.%s %v, want %v", what, k, got, v)
			}
		}
	}
}

// TestEnums19OddShapes: a done_reason that is no string fails no answer
// (it was a bad_response, unary and streamed): it is kept as its JSON
// text, a finish of OTHER. A metric that holds no number is no longer
// dropped without a word: it is kept in extended as sent, with a warning.
func TestEnums19OddShapes(t *testing.T) {
	t.Parallel()
	odd := func(s string) string {
		s = strings.Replace(s, `"done_reason":"stop"`, `"done_reason":{"why": "stop"}`, 1)
		return strings.Replace(s, `"eval_duration":4799921000`, `"eval_duration":{"ns":4799921000}`, 1)
	}
	u, s := e19Both(t, odd(e19Final("stop", `"content":"hi"`)), odd(e19Stream("stop", `"content":"hi"`)))
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Errorf("%s: %v", what, a.err)
			continue
		}
		if a.meta.GetProviderFinishReason() != `{"why":"stop"}` || a.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER {
			t.Errorf("%s: finish %v (%q)", what, a.meta.GetFinishReason(), a.meta.GetProviderFinishReason())
		}
		if got := a.meta.GetExtended().GetFields()[extEvalDuration].GetStructValue().GetFields()["ns"].GetNumberValue(); got != 4799921000 {
			t.Errorf("%s: extended.%s %v", what, extEvalDuration, a.meta.GetExtended().GetFields()[extEvalDuration])
		}
		found := false
		for _, w := range a.meta.GetWarnings() {
			found = found || strings.Contains(w, "eval_duration holds a value of an unexpected type")
		}
		if !found {
			t.Errorf("%s: warnings %q", what, a.meta.GetWarnings())
		}
		if a.meta.GetUsage().GetOutputTokens() != 298 {
			t.Errorf("%s: usage %v", what, a.meta.GetUsage())
		}
	}
}
