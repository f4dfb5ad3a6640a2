package anthropic

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// The enum and usage audit (enums19): every stop_reason of
// anthropic-sdk-python's types/stop_reason.py (and beta_stop_reason.py) and
// every field of types/usage.py, beta/beta_usage.py and
// message_delta_usage.py is sent through the adapter, unary and streamed,
// and its place in the contract checked.

type e19Answer struct {
	msg  *llmrelayv1.Message
	meta *llmrelayv1.ResponseMeta
	err  error
}

// e19Both answers the unary body through Generate and the SSE body through
// Stream; the stream's metas are merged as the gateway merges them.
func e19Both(t *testing.T, unary, stream string) (u, s e19Answer) {
	t.Helper()
	srv := providertest.Replay(t,
		providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_e19unary"}}, Body: []byte(unary)},
		providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}, "Request-Id": {"req_e19stream"}}, Body: []byte(stream)})
	p := newTestProvider(t, srv.URL)
	res, err := p.Generate(context.Background(), plainRequest())
	u.err = err
	if res != nil {
		u.msg, u.meta = res.Message, res.Meta
	}
	st, err := p.Stream(context.Background(), plainRequest())
	if err != nil {
		s.err = err
		return u, s
	}
	evs, err := collect(st)
	f := foldEvents(t, evs)
	s.msg, s.meta, s.err = f.message, f.meta, err
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

const (
	e19Text     = `{"type":"text","text":"hi"}`
	e19ToolUse  = `{"type":"tool_use","id":"toolu_e19a","name":"get_weather","input":{"city":"Paris"}}`
	e19FullUse  = `{"input_tokens":12,"cache_creation_input_tokens":2048,"cache_read_input_tokens":4096,"cache_creation":{"ephemeral_5m_input_tokens":1024,"ephemeral_1h_input_tokens":1024},"output_tokens":40,"output_tokens_details":{"thinking_tokens":25},"server_tool_use":{"web_search_requests":2,"web_fetch_requests":1},"service_tier":"priority","inference_geo":"us","speed":"fast"}`
	e19StartUse = `{"input_tokens":12,"cache_creation_input_tokens":2048,"cache_read_input_tokens":4096,"cache_creation":{"ephemeral_5m_input_tokens":1024,"ephemeral_1h_input_tokens":1024},"output_tokens":1,"service_tier":"priority","inference_geo":"us"}`
)

func e19Unary(id, stop, stopSeq, block, usage string) string {
	return `{"id":"msg_01E19` + id + `","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[` + block +
		`],"stop_reason":` + stop + `,"stop_sequence":` + stopSeq + `,"usage":` + usage + `}`
}

func e19Stream(id, stop, stopSeq string, tool bool, startUsage, deltaUsage string) string {
	var b strings.Builder
	b.WriteString(sseEv(`{"type":"message_start","message":{"id":"msg_01E19S` + id + `","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":` + startUsage + `}}`))
	if tool {
		b.WriteString(sseEv(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_e19a","name":"get_weather","input":{}}}`))
		b.WriteString(sseEv(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}}`))
	} else {
		b.WriteString(textStart(0, ""))
		b.WriteString(textDelta(0, "hi"))
	}
	b.WriteString(blockStop(0))
	b.WriteString(sseEv(`{"type":"message_delta","delta":{"stop_reason":` + stop + `,"stop_sequence":` + stopSeq + `},"usage":` + deltaUsage + `}`))
	b.WriteString(sseEv(`{"type":"message_stop"}`))
	return b.String()
}

// TestEnums19StopReasons: every stop_reason, a future one, unary and
// streamed: the raw value in provider_finish_reason, the normalized one in
// finish_reason (pause_turn is OTHER: the turn is not over, the client
// sends the answer back to continue; refusal is CONTENT_FILTER;
// model_context_window_exceeded is LENGTH), stop_sequence in its typed
// field.
func TestEnums19StopReasons(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		stop, stopSeq string
		tool          bool
		want          llmrelayv1.FinishReason
	}{
		{"end_turn", "null", false, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"stop_sequence", `"###"`, false, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"max_tokens", "null", false, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
		{"model_context_window_exceeded", "null", false, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
		{"tool_use", "null", true, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS},
		{"pause_turn", "null", false, llmrelayv1.FinishReason_FINISH_REASON_OTHER},
		{"refusal", "null", false, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER},
		{"a_reason_added_later", "null", false, llmrelayv1.FinishReason_FINISH_REASON_OTHER},
		// A call cut by the token limit stays LENGTH (and is marked cut).
		{"max_tokens", "null", true, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
	} {
		block := e19Text
		if c.tool {
			block = e19ToolUse
		}
		id := strings.ReplaceAll(c.stop, "_", "")
		u, s := e19Both(t, e19Unary(id, `"`+c.stop+`"`, c.stopSeq, block, `{"input_tokens":3,"output_tokens":5}`),
			e19Stream(id, `"`+c.stop+`"`, c.stopSeq, c.tool, `{"input_tokens":3,"output_tokens":1}`, `{"output_tokens":5}`))
		for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
			e19Check(t, c.stop+" "+what, a, c.stop, c.want)
			wantSeq := strings.Trim(c.stopSeq, `"`)
			if wantSeq == "null" {
				wantSeq = ""
			}
			if got := a.meta.GetStopSequence(); got != wantSeq {
				t.Errorf("%s %s: stop_sequence %q, want %q", c.stop, what, got, wantSeq)
			}
		}
	}
}

// TestEnums19Usage: every Usage field lands, unary and streamed: the
// counters in Usage (input includes cache reads and writes; the 5m/1h
// split of cache_creation, server_tool_use, inference_geo and speed in
// extended.usage_details; service_tier in its typed field), and a
// message_delta's cumulative counts replace message_start's.
func TestEnums19Usage(t *testing.T) {
	t.Parallel()
	u, s := e19Both(t, e19Unary("Usage", `"end_turn"`, "null", e19Text, e19FullUse),
		e19Stream("Usage", `"end_turn"`, "null", false, e19StartUse, e19FullUse))
	want := &llmrelayv1.Usage{InputTokens: 12 + 2048 + 4096, OutputTokens: 40, TotalTokens: 12 + 2048 + 4096 + 40,
		CachedInputTokens: 4096, CacheCreationInputTokens: 2048, ReasoningTokens: 25}
	const details = `{"cache_creation.ephemeral_1h_input_tokens":1024,"cache_creation.ephemeral_5m_input_tokens":1024,` +
		`"inference_geo":"us","server_tool_use.web_fetch_requests":1,"server_tool_use.web_search_requests":2,"speed":"fast"}`
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if !proto.Equal(a.meta.GetUsage(), want) {
			t.Errorf("%s usage %v, want %v", what, a.meta.GetUsage(), want)
		}
		if got := valueJSON(t, a.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != details {
			t.Errorf("%s usage_details %s, want %s", what, got, details)
		}
		if a.meta.GetServiceTier() != "priority" {
			t.Errorf("%s service_tier %q", what, a.meta.GetServiceTier())
		}
	}
}

// TestEnums19DeltaUsageInputCounts: message_delta_usage.py's
// input_tokens and cache counts (sent on message_delta by server-tool
// answers, cumulative) replace message_start's.
func TestEnums19DeltaUsageInputCounts(t *testing.T) {
	t.Parallel()
	_, s := e19Both(t, e19Unary("Delta", `"end_turn"`, "null", e19Text, `{"input_tokens":3,"output_tokens":5}`),
		e19Stream("Delta", `"end_turn"`, "null", false, `{"input_tokens":10,"cache_read_input_tokens":0,"output_tokens":1}`,
			`{"input_tokens":2500,"cache_creation_input_tokens":100,"cache_read_input_tokens":300,"output_tokens":60,"server_tool_use":{"web_search_requests":1}}`))
	want := &llmrelayv1.Usage{InputTokens: 2900, OutputTokens: 60, TotalTokens: 2960, CachedInputTokens: 300, CacheCreationInputTokens: 100}
	if s.err != nil {
		t.Fatal(s.err)
	}
	if !proto.Equal(s.meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", s.meta.GetUsage(), want)
	}
}

// TestEnums19ServiceTierInDelta: the stream reads service_tier from every
// usage object as the unary answer reads it from its one; it was read
// from message_start's only, so a tier that a message_delta's usage
// carries (or changes) was lost.
func TestEnums19ServiceTierInDelta(t *testing.T) {
	t.Parallel()
	for _, start := range []string{`{"input_tokens":3,"output_tokens":1}`, `{"input_tokens":3,"output_tokens":1,"service_tier":"standard"}`} {
		u, s := e19Both(t, e19Unary("Tier", `"end_turn"`, "null", e19Text, `{"input_tokens":3,"output_tokens":5,"service_tier":"priority"}`),
			e19Stream("Tier", `"end_turn"`, "null", false, start, `{"output_tokens":5,"service_tier":"priority"}`))
		for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
			if a.err != nil {
				t.Fatalf("%s: %v", what, a.err)
			}
			if a.meta.GetServiceTier() != "priority" || a.meta.GetExtended().GetFields()["service_tier"].GetStringValue() != "priority" {
				t.Errorf("start %s, %s: service_tier %q, extended %v", start, what, a.meta.GetServiceTier(), a.meta.GetExtended().GetFields()["service_tier"])
			}
		}
	}
}

// TestEnums19OddShapes: a stop_reason or a usage field of another JSON
// type fails no answer, unary or streamed (both were a bad_response for
// the whole answer). The stop reason is kept as its JSON text, a finish
// of OTHER; a count a proxy re-encoded ("12", 40.0) is read; a field that
// holds no value of its own (thinking_tokens "many", service_tier 7) is
// left out, kept in usage_details as sent and said in a warning.
func TestEnums19OddShapes(t *testing.T) {
	t.Parallel()
	const usage = `{"input_tokens":"12","output_tokens":40.0,"cache_read_input_tokens":"4096","output_tokens_details":{"thinking_tokens":"many"},"service_tier":7}`
	const stop = `{"type": "end_turn"}`
	u, s := e19Both(t, e19Unary("Odd", stop, "null", e19Text, usage),
		e19Stream("Odd", stop, "null", false, `{"input_tokens":"12","output_tokens":1}`, usage))
	want := &llmrelayv1.Usage{InputTokens: 12 + 4096, OutputTokens: 40, TotalTokens: 12 + 4096 + 40, CachedInputTokens: 4096}
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		e19Check(t, what, a, `{"type":"end_turn"}`, llmrelayv1.FinishReason_FINISH_REASON_OTHER)
		if a.err != nil {
			continue
		}
		if !proto.Equal(a.meta.GetUsage(), want) {
			t.Errorf("%s usage %v, want %v", what, a.meta.GetUsage(), want)
		}
		if got := valueJSON(t, a.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != `{"output_tokens_details.thinking_tokens":"many","service_tier":7}` {
			t.Errorf("%s usage_details %s", what, got)
		}
		var odd []string
		for _, w := range a.meta.GetWarnings() {
			if strings.Contains(w, "holds a value of an unexpected type") {
				odd = append(odd, w)
			}
		}
		if len(odd) != 2 || !strings.Contains(odd[0], `"output_tokens_details.thinking_tokens"`) || !strings.Contains(odd[1], `"service_tier"`) {
			t.Errorf("%s warnings %q", what, a.meta.GetWarnings())
		}
		if a.meta.GetServiceTier() != "" {
			t.Errorf("%s service_tier %q", what, a.meta.GetServiceTier())
		}
	}
}
