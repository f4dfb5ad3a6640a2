package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestUsageDetails: the usage fields no counter holds (cache_creation's
// 5m/1h split, server_tool_use, fields added later) reach meta.extended,
// unary and streamed; in a stream, message_delta's cumulative counts
// replace message_start's.
func TestUsageDetails(t *testing.T) {
	t.Parallel()
	const usage = `{"input_tokens":12,"cache_creation_input_tokens":2048,"cache_read_input_tokens":0,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2048},"output_tokens":40,` +
		`"server_tool_use":{"web_search_requests":2,"web_fetch_requests":0},"service_tier":"standard","thinking_tokens":31}`
	want := `{"cache_creation.ephemeral_1h_input_tokens":2048,"server_tool_use.web_search_requests":2,"thinking_tokens":31}`
	res, err := parseResponse([]byte(`{"id":"msg_01UsageDetailsUnaryQw7","type":"message","role":"assistant","model":"m",`+
		`"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":`+usage+`}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if got := valueJSON(t, res.Meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != want {
		t.Errorf("unary usage_details %s, want %s", got, want)
	}
	if u := res.Meta.GetUsage(); u.GetCacheCreationInputTokens() != 2048 || u.GetInputTokens() != 2060 {
		t.Errorf("usage %v", u)
	}

	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01UsageDetailsStreamPx3\",\"model\":\"m\",\"usage\":" +
		`{"input_tokens":12,"cache_creation_input_tokens":2048,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2048},"output_tokens":1,"server_tool_use":{"web_search_requests":1}}` + "}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":" + usage + "}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	evs, err := collect(streamFromBody([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	if got := valueJSON(t, f.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != want {
		t.Errorf("streamed usage_details %s, want %s", got, want)
	}
}

func valueJSON(t *testing.T, v *structpb.Value) string {
	t.Helper()
	b, err := protojson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatal(err)
	}
	return c.String()
}

// TestThinkingTokens: output_tokens_details.thinking_tokens (sent by newer
// models, testdata/real_thinking_tool_noargs.http) is the reasoning part of
// output_tokens, unary and streamed; it never exceeds output_tokens.
func TestThinkingTokens(t *testing.T) {
	t.Parallel()
	const usage = `{"input_tokens":599,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":59,` +
		`"output_tokens_details":{"thinking_tokens":18},"service_tier":"standard"}`
	res, err := parseResponse([]byte(`{"id":"msg_01ThinkingTokensUnaryR4","type":"message","role":"assistant","model":"m",`+
		`"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":`+usage+`}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Meta.GetUsage(); u.GetReasoningTokens() != 18 || u.GetOutputTokens() != 59 || u.GetTotalTokens() != 658 {
		t.Errorf("unary usage %v", u)
	}
	if d := res.Meta.GetExtended().GetFields()[provider.ExtUsageDetails]; d != nil {
		t.Errorf("thinking_tokens also in usage_details: %v", d)
	}

	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01ThinkingTokensStreamK8\",\"model\":\"m\",\"usage\":" +
		`{"input_tokens":599,"output_tokens":1}` + "}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":" +
		`{"output_tokens":10,"output_tokens_details":{"thinking_tokens":25}}` + "}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	evs, err := collect(streamFromBody([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	var last *llmrelayv1.Usage
	for _, ev := range evs {
		if ev.Kind == provider.EventUsage {
			last = ev.Usage
		}
	}
	if last.GetReasoningTokens() != 10 || last.GetOutputTokens() != 10 {
		t.Errorf("streamed usage %v (thinking_tokens above output_tokens is capped)", last)
	}
}

// TestUsageIterations: when the API sampled more than once, the top-level
// counts leave the compaction iterations out; they are added back (as
// pydantic-ai does), unary and streamed, and persist through later counts.
// The stream is pydantic-ai's recording
// (testdata/real_pyd_anthropic_compaction_usage_with_cache_streaming.http):
// message_delta's top level says 181 in / 8 out with no cache read, the
// compaction iteration read 55096 cached tokens, 100 uncached, and wrote 83.
// Other iterations are not added: "message" ones are in the top level
// already, an advisor_message is another model's
// (testdata/real_pyd_anthropic_advisor_tool_stream.http).
func TestUsageIterations(t *testing.T) {
	t.Parallel()
	streamed := func(t *testing.T, name string) *llmrelayv1.Usage {
		t.Helper()
		rec := providertest.Load(t, "testdata/"+name+".http")
		evs, err := collect(streamFromBody(rec.Body))
		if err != nil {
			t.Fatal(err)
		}
		return foldEvents(t, evs).meta.GetUsage()
	}
	want := &llmrelayv1.Usage{InputTokens: 181 + 100 + 55096, OutputTokens: 8 + 83, TotalTokens: 181 + 100 + 55096 + 8 + 83, CachedInputTokens: 55096}
	if got := streamed(t, "real_pyd_anthropic_compaction_usage_with_cache_streaming"); !proto.Equal(got, want) {
		t.Errorf("compaction stream usage %v, want %v", got, want)
	}
	advisor := &llmrelayv1.Usage{InputTokens: 2411, OutputTokens: 145, TotalTokens: 2411 + 145, ReasoningTokens: 47}
	if got := streamed(t, "real_pyd_anthropic_advisor_tool_stream"); !proto.Equal(got, advisor) {
		t.Errorf("advisor stream usage %v, want %v", got, advisor)
	}

	const usage = `{"input_tokens":181,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":8,"iterations":[` +
		`{"input_tokens":100,"output_tokens":83,"cache_read_input_tokens":55096,"cache_creation_input_tokens":0,"type":"compaction"},` +
		`{"input_tokens":181,"output_tokens":8,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"type":"message"}]}`
	res, err := parseResponse([]byte(`{"id":"msg_01UsageIterationsUnaryK8","type":"message","role":"assistant","model":"m",`+
		`"content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","usage":`+usage+`}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Meta.GetUsage(); !proto.Equal(got, want) {
		t.Errorf("unary usage %v, want %v", got, want)
	}

	// Only "message" iterations (pydantic-ai's compaction_round_trip
	// cassette): the top level is their sum, nothing is added.
	res, err = parseResponse(providertest.Load(t, "testdata/real_pyd_anthropic_compaction_round_trip.http").Body, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Meta.GetUsage(), (&llmrelayv1.Usage{InputTokens: 136, OutputTokens: 16, TotalTokens: 152}); !proto.Equal(got, want) {
		t.Errorf("round trip usage %v, want %v", got, want)
	}

	// A later report without iterations keeps the compaction counts.
	var s usageState
	s.update(&wireUsage{InputTokens: ptr[int64](5), Iterations: []wireIteration{{Type: "compaction", InputTokens: ptr[int64](7), OutputTokens: ptr[int64](3), CacheCreationInputTokens: ptr[int64](11)}}})
	s.update(&wireUsage{OutputTokens: ptr[int64](2)})
	if got := s.normalized(); got.GetInputTokens() != 5+7+11 || got.GetOutputTokens() != 2+3 || got.GetCacheCreationInputTokens() != 11 {
		t.Errorf("usage after a report without iterations %v", got)
	}
}

// TestCacheCreationBreakdown: a real stream that wrote the prompt to the
// 1-hour cache (testdata/real_pyd_anthropic_cache_earlier_breakpoint_raised_to_later_longer_ttl.http:
// cache_creation_input_tokens 3913, cache_creation {5m: 0, 1h: 3913}).
// The typed cache-write total is 3913 and part of the input (13 + 3913);
// the 5m/1h split is in meta.extended.usage_details (a zero part is left
// out, as every zero there), and message_delta, which repeats the totals
// without the split, does not erase it.
func TestCacheCreationBreakdown(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_cache_earlier_breakpoint_raised_to_later_longer_ttl.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	f := foldEvents(t, evs)
	want := &llmrelayv1.Usage{InputTokens: 13 + 3913, OutputTokens: 4, TotalTokens: 13 + 3913 + 4, CacheCreationInputTokens: 3913}
	if !proto.Equal(f.meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", f.meta.GetUsage(), want)
	}
	const details = `{"cache_creation.ephemeral_1h_input_tokens":3913,"inference_geo":"global"}`
	if got := valueJSON(t, f.meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != details {
		t.Errorf("usage_details %s, want %s", got, details)
	}
	if got := f.message.GetParts(); len(got) != 1 || got[0].GetText() != "Django" {
		t.Errorf("parts %v", got)
	}
}
