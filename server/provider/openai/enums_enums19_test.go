package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// The enum and usage audit (enums19): every finish reason, response status
// and usage field of the official SDKs' types (openai-python
// types/chat/chat_completion*.py, types/completion_usage.py,
// types/responses/response.py, response_usage.py) is sent through the
// adapter, unary and streamed, and its place in the contract checked.

// e19Answer is what one body produced: the message and meta (the stream's
// metas merged as the gateway merges them, its last usage kept) or the
// error.
type e19Answer struct {
	msg  *llmrelayv1.Message
	meta *llmrelayv1.ResponseMeta
	err  error
}

// e19Both runs unary through Generate and stream through Stream with the
// given request format.
func e19Both(t *testing.T, format, unary, stream string) (u, s e19Answer) {
	t.Helper()
	var recs []providertest.Recording
	if unary != "" {
		recs = append(recs, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(unary)})
	}
	if stream != "" {
		recs = append(recs, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(stream)})
	}
	srv := providertest.Replay(t, recs...)
	p := newTestProvider(t, kOpenAI, srv.URL)
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o", Format: format,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}},
		Options:  &llmrelayv1.GenerationOptions{}}
	if unary != "" {
		res, err := p.Generate(context.Background(), req)
		u.err = err
		if res != nil {
			u.msg, u.meta = res.Message, res.Meta
		}
	}
	if stream != "" {
		st, err := p.Stream(context.Background(), req)
		if err != nil {
			s.err = err
			return u, s
		}
		evs, _, err := collect(t, st)
		f := foldEvents(t, evs)
		s.msg, s.meta, s.err = f.Message, f.Meta, err
	}
	return u, s
}

func e19Check(t *testing.T, what string, a e19Answer, raw string, want llmrelayv1.FinishReason) {
	t.Helper()
	if a.err != nil {
		t.Errorf("%s: %v", what, a.err)
		return
	}
	if got := a.meta.GetProviderFinishReason(); got != raw {
		t.Errorf("%s: provider_finish_reason %q, want %q", what, got, raw)
	}
	if got := a.meta.GetFinishReason(); got != want {
		t.Errorf("%s: finish_reason %v, want %v", what, got, want)
	}
}

const e19ChatUsage = `{"prompt_tokens":1200,"completion_tokens":300,"total_tokens":1500,` +
	`"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":16},` +
	`"completion_tokens_details":{"reasoning_tokens":128,"audio_tokens":32,"accepted_prediction_tokens":40,"rejected_prediction_tokens":8}}`

func e19ChatUnary(id, finish, message string) string {
	return `{"id":"chatcmpl-e19` + id + `","object":"chat.completion","created":1763900000,"model":"gpt-4o-2024-08-06",` +
		`"choices":[{"index":0,"message":{"role":"assistant"` + message + `},"finish_reason":` + finish + `}],` +
		`"usage":` + e19ChatUsage + `,"service_tier":"default","system_fingerprint":"fp_e19"}`
}

func e19ChatStream(id, finish, delta string) string {
	head := `{"id":"chatcmpl-e19s` + id + `","object":"chat.completion.chunk","created":1763900000,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_e19",`
	return "data: " + head + `"choices":[{"index":0,"delta":{"role":"assistant"` + delta + `},"finish_reason":null}]}` + "\n\n" +
		"data: " + head + `"choices":[{"index":0,"delta":{},"finish_reason":` + finish + `}]}` + "\n\n" +
		"data: " + head + `"choices":[],"usage":` + e19ChatUsage + "}\n\n" +
		"data: [DONE]\n\n"
}

// TestEnums19ChatFinishReasons: every chat.completion finish_reason of
// openai-python's ChatCompletion.Choice (stop, length, tool_calls,
// content_filter, function_call), a future one and none, unary and
// streamed: the raw value kept in provider_finish_reason, the normalized one
// in finish_reason; a value the contract does not know is OTHER, never
// STOP.
func TestEnums19ChatFinishReasons(t *testing.T) {
	t.Parallel()
	const text = `,"content":"hi"`
	const call = `,"content":null,"tool_calls":[{"id":"call_e19a","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]`
	const callDelta = `,"content":null,"tool_calls":[{"index":0,"id":"call_e19a","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]`
	const legacy = `,"content":null,"function_call":{"name":"f","arguments":"{\"a\":1}"}`
	for _, c := range []struct {
		raw, message, delta string
		want                llmrelayv1.FinishReason
		calls               int32
	}{
		{"stop", text, text, llmrelayv1.FinishReason_FINISH_REASON_STOP, 0},
		{"length", text, text, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, 0},
		{"tool_calls", call, callDelta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, 1},
		{"content_filter", text, text, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, 0},
		{"function_call", legacy, legacy, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, 1},
		// A call cut by the token limit stays LENGTH.
		{"length", call, callDelta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, 1},
		// "stop" after calls (vLLM, Ollama's bridge) is TOOL_CALLS.
		{"stop", call, callDelta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, 1},
		{"a_reason_added_later", text, text, llmrelayv1.FinishReason_FINISH_REASON_OTHER, 0},
	} {
		id := strings.ReplaceAll(c.raw, "_", "")
		u, s := e19Both(t, "openai-chat", e19ChatUnary(id, `"`+c.raw+`"`, c.message), e19ChatStream(id, `"`+c.raw+`"`, c.delta))
		e19Check(t, c.raw+" unary", u, c.raw, c.want)
		e19Check(t, c.raw+" stream", s, c.raw, c.want)
		if u.meta.GetToolCallCount() != c.calls || s.meta.GetToolCallCount() != c.calls {
			t.Errorf("%s: tool calls %d/%d, want %d", c.raw, u.meta.GetToolCallCount(), s.meta.GetToolCallCount(), c.calls)
		}
	}
	// No finish_reason (null) in a unary answer: UNSPECIFIED, not STOP.
	u, _ := e19Both(t, "openai-chat", e19ChatUnary("null", "null", text), "")
	e19Check(t, "null unary", u, "", llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED)
}

// TestEnums19ChatUsage: every CompletionUsage field lands: the counters in
// Usage (cached_tokens in cached_input_tokens, reasoning_tokens in
// reasoning_tokens), audio and prediction tokens in
// extended.usage_details by their path, unary and streamed alike.
func TestEnums19ChatUsage(t *testing.T) {
	t.Parallel()
	u, s := e19Both(t, "openai-chat", e19ChatUnary("usage", `"stop"`, `,"content":"hi"`), e19ChatStream("usage", `"stop"`, `,"content":"hi"`))
	want := &llmrelayv1.Usage{InputTokens: 1200, OutputTokens: 300, TotalTokens: 1500, CachedInputTokens: 1024, ReasoningTokens: 128}
	const details = `{"completion_tokens_details.accepted_prediction_tokens":40,"completion_tokens_details.audio_tokens":32,` +
		`"completion_tokens_details.rejected_prediction_tokens":8,"prompt_tokens_details.audio_tokens":16}`
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if got, w := protoCompact(t, a.meta.GetUsage()), protoCompact(t, want); got != w {
			t.Errorf("%s usage %s, want %s", what, got, w)
		}
		if got := protoCompact(t, a.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != details {
			t.Errorf("%s usage_details %s, want %s", what, got, details)
		}
		if a.meta.GetServiceTier() != "default" {
			t.Errorf("%s service_tier %q", what, a.meta.GetServiceTier())
		}
	}
}

const e19RespUsage = `{"input_tokens":2000,"input_tokens_details":{"cached_tokens":1536},` +
	`"output_tokens":500,"output_tokens_details":{"reasoning_tokens":320},"total_tokens":2500}`

func e19Resp(id, status, incomplete string) string {
	return `{"id":"resp_e19` + id + `","object":"response","created_at":1763900000,"status":"` + status + `",` +
		`"incomplete_details":` + incomplete + `,"error":null,"model":"gpt-5-2025-08-07","service_tier":"default",` +
		`"output":[{"type":"message","id":"msg_e19` + id + `","status":"completed","role":"assistant",` +
		`"content":[{"type":"output_text","text":"hi","annotations":[]}]}],"usage":` + e19RespUsage + `}`
}

func e19RespStream(id, status, incomplete string) string {
	created := `{"id":"resp_e19s` + id + `","object":"response","created_at":1763900000,"status":"in_progress","model":"gpt-5-2025-08-07","output":[],"usage":null}`
	item := `{"type":"message","id":"msg_e19s` + id + `","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}]}`
	final := strings.Replace(e19Resp("s"+id, status, incomplete), `"id":"msg_e19s`+id+`"`, `"id":"msg_e19s`+id+`"`, 1)
	event := "response.completed"
	if status == "incomplete" {
		event = "response.incomplete"
	}
	return "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":" + created + "}\n\n" +
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":" +
		`{"type":"message","id":"msg_e19s` + id + `","status":"in_progress","role":"assistant","content":[]}}` + "\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"output_index\":0,\"content_index\":0,\"item_id\":\"msg_e19s" + id + "\",\"delta\":\"hi\"}\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":3,\"output_index\":0,\"item\":" + item + "}\n\n" +
		"event: " + event + "\ndata: {\"type\":\"" + event + "\",\"sequence_number\":4,\"response\":" + final + "}\n\n"
}

// TestEnums19ResponsesStatus: every Response.status of openai-python's
// types/responses/response.py (completed, incomplete with each
// incomplete_details.reason, cancelled, queued, in_progress; failed is an
// error) and a future one, unary and (where a stream can end with it)
// streamed. The raw value is "status" or "incomplete/<reason>"; queued and
// in_progress (a background response, not finished) come with a warning.
func TestEnums19ResponsesStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, incomplete, raw string
		want                    llmrelayv1.FinishReason
		stream                  bool
	}{
		{"completed", "null", "completed", llmrelayv1.FinishReason_FINISH_REASON_STOP, true},
		{"incomplete", `{"reason":"max_output_tokens"}`, "incomplete/max_output_tokens", llmrelayv1.FinishReason_FINISH_REASON_LENGTH, true},
		{"incomplete", `{"reason":"content_filter"}`, "incomplete/content_filter", llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, true},
		{"incomplete", `{"reason":"a_reason_added_later"}`, "incomplete/a_reason_added_later", llmrelayv1.FinishReason_FINISH_REASON_OTHER, true},
		{"incomplete", "null", "incomplete", llmrelayv1.FinishReason_FINISH_REASON_OTHER, true},
		{"cancelled", "null", "cancelled", llmrelayv1.FinishReason_FINISH_REASON_OTHER, false},
		{"queued", "null", "queued", llmrelayv1.FinishReason_FINISH_REASON_OTHER, false},
		{"in_progress", "null", "in_progress", llmrelayv1.FinishReason_FINISH_REASON_OTHER, false},
		{"a_status_added_later", "null", "a_status_added_later", llmrelayv1.FinishReason_FINISH_REASON_OTHER, false},
	} {
		id := strings.NewReplacer("_", "", "/", "").Replace(c.raw)
		stream := ""
		if c.stream {
			stream = e19RespStream(id, c.status, c.incomplete)
		}
		u, s := e19Both(t, formatResponses, e19Resp(id, c.status, c.incomplete), stream)
		e19Check(t, c.raw+" unary", u, c.raw, c.want)
		// A background response not finished yet says so.
		unfinished := c.status == "queued" || c.status == "in_progress"
		said := false
		for _, w := range u.meta.GetWarnings() {
			said = said || strings.Contains(w, "the response is not finished")
		}
		if said != unfinished {
			t.Errorf("%s unary: warnings %q", c.raw, u.meta.GetWarnings())
		}
		if c.stream {
			e19Check(t, c.raw+" stream", s, c.raw, c.want)
		}
	}
}

// TestEnums19ResponsesFailed: status failed (response.failed in a stream)
// is an error in both forms, whose meta keeps the response id and the
// usage of what was processed.
func TestEnums19ResponsesFailed(t *testing.T) {
	t.Parallel()
	failed := strings.Replace(e19Resp("failed", "failed", "null"), `"error":null`, `"error":{"code":"server_error","message":"The model failed."}`, 1)
	stream := strings.Replace(e19RespStream("failed", "completed", "null"), "event: response.completed\ndata: {\"type\":\"response.completed\"",
		"event: response.failed\ndata: {\"type\":\"response.failed\"", 1)
	stream = strings.Replace(stream, `"status":"completed","incomplete_details":null,"error":null`,
		`"status":"failed","incomplete_details":null,"error":{"code":"server_error","message":"The model failed."}`, 1)
	u, s := e19Both(t, formatResponses, failed, stream)
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		e := providerError(t, a.err)
		if e.Code != "server_error" || e.Meta.GetUsage().GetInputTokens() != 2000 || !strings.HasPrefix(e.Meta.GetResponseId(), "resp_e19") {
			t.Errorf("%s: failed code %q meta %v", what, e.Code, e.Meta)
		}
	}
}

// TestEnums19ResponsesUsage: every ResponseUsage field lands, unary and
// streamed.
func TestEnums19ResponsesUsage(t *testing.T) {
	t.Parallel()
	u, s := e19Both(t, formatResponses, e19Resp("usage", "completed", "null"), e19RespStream("usage", "completed", "null"))
	want := &llmrelayv1.Usage{InputTokens: 2000, OutputTokens: 500, TotalTokens: 2500, CachedInputTokens: 1536, ReasoningTokens: 320}
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if got, w := protoCompact(t, a.meta.GetUsage()), protoCompact(t, want); got != w {
			t.Errorf("%s usage %s, want %s", what, got, w)
		}
		if d := a.meta.GetExtended().GetFields()[provider.ExtUsageDetails]; d != nil {
			t.Errorf("%s usage_details %s: every field has a counter", what, protoCompact(t, d))
		}
		if a.meta.GetServiceTier() != "default" {
			t.Errorf("%s service_tier %q", what, a.meta.GetServiceTier())
		}
	}
}

// TestEnums19OddCounts: a counter's field that holds no count (an
// object, a bool, a word) was read as 0 and, being a counter's, left out
// of usage_details: lost without a word. It is now kept in usage_details
// as sent, with a warning (once per stream), chat and Responses, unary and
// streamed; a count a proxy re-encoded ("1200", 300.0) is still read.
func TestEnums19OddCounts(t *testing.T) {
	t.Parallel()
	const chatUsage = `{"prompt_tokens":"1200","completion_tokens":300.0,"total_tokens":1500,` +
		`"prompt_tokens_details":{"cached_tokens":{"n":1024}},"completion_tokens_details":{"reasoning_tokens":"many"}}`
	chat := func(s string) string { return strings.ReplaceAll(s, e19ChatUsage, chatUsage) }
	u, s := e19Both(t, "openai-chat", chat(e19ChatUnary("odd", `"stop"`, `,"content":"hi"`)), chat(e19ChatStream("odd", `"stop"`, `,"content":"hi"`)))
	const respUsage = `{"input_tokens":2000,"input_tokens_details":{"cached_tokens":true},"output_tokens":"500","output_tokens_details":{"reasoning_tokens":320},"total_tokens":2500}`
	resp := func(s string) string { return strings.ReplaceAll(s, e19RespUsage, respUsage) }
	ru, rs := e19Both(t, formatResponses, resp(e19Resp("odd", "completed", "null")), resp(e19RespStream("odd", "completed", "null")))
	for _, c := range []struct {
		what    string
		a       e19Answer
		usage   *llmrelayv1.Usage
		details string
		paths   []string
	}{
		{"chat unary", u, &llmrelayv1.Usage{InputTokens: 1200, OutputTokens: 300, TotalTokens: 1500}, `{"completion_tokens_details.reasoning_tokens":"many","prompt_tokens_details.cached_tokens.n":1024}`,
			[]string{"prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens"}},
		{"chat stream", s, &llmrelayv1.Usage{InputTokens: 1200, OutputTokens: 300, TotalTokens: 1500}, `{"completion_tokens_details.reasoning_tokens":"many","prompt_tokens_details.cached_tokens.n":1024}`,
			[]string{"prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens"}},
		{"responses unary", ru, &llmrelayv1.Usage{InputTokens: 2000, OutputTokens: 500, TotalTokens: 2500, ReasoningTokens: 320}, `{"input_tokens_details.cached_tokens":true}`,
			[]string{"input_tokens_details.cached_tokens"}},
		{"responses stream", rs, &llmrelayv1.Usage{InputTokens: 2000, OutputTokens: 500, TotalTokens: 2500, ReasoningTokens: 320}, `{"input_tokens_details.cached_tokens":true}`,
			[]string{"input_tokens_details.cached_tokens"}},
	} {
		if c.a.err != nil {
			t.Errorf("%s: %v", c.what, c.a.err)
			continue
		}
		if got, w := protoCompact(t, c.a.meta.GetUsage()), protoCompact(t, c.usage); got != w {
			t.Errorf("%s usage %s, want %s", c.what, got, w)
		}
		if got := protoCompact(t, c.a.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != c.details {
			t.Errorf("%s usage_details %s, want %s", c.what, got, c.details)
		}
		var want []string
		for _, p := range c.paths {
			want = append(want, provider.OddUsageWarning(p))
		}
		if got := c.a.meta.GetWarnings(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s warnings %q, want %q", c.what, got, want)
		}
	}
}
