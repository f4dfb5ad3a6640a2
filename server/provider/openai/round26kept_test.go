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

// TestRound26ChunkObjectsKept: Venice's cost object (beside the usage, on
// a stream's usage chunk) and Azure's latency_checkpoint (on its last
// chunk) are kept in meta.extended as sent; both were dropped (the kept
// property, providertest.Properties).
func TestRound26ChunkObjectsKept(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, key, want string }{
		{"real_venice_claude_tool_stream_1.http", "cost", `{"diem":0,"usd":0.0044028}`},
		{"real_venice_kimi_k26_tool_stream_2.http", "cost", `{"diem":0,"usd":0.00043099999999999996}`},
		{"real_svir_azure_async_flagged_stream.http", "latency_checkpoint",
			`{"engine_tbt_ms":5,"engine_ttft_ms":96,"engine_ttlt_ms":617,"pre_inference_ms":110,"service_tbt_ms":5,"service_ttft_ms":672,"service_ttlt_ms":1192,"user_visible_ttft_ms":561}`},
	} {
		t.Run(c.file, func(t *testing.T) {
			srv := providertest.ReplayFile(t, td(c.file))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), simpleRequest("gpt-4o-mini"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := provider.FoldStream(s)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := res.Meta.GetExtended().GetFields()[c.key]
			if !ok {
				t.Fatalf("meta.extended has no %q: %v", c.key, res.Meta.GetExtended())
			}
			if got := providertest.MustJSON(v.AsInterface()); got != c.want {
				t.Errorf("meta.extended[%q] = %s, want %s", c.key, got, c.want)
			}
		})
	}
}

// TestRound26ChatDeltaPhase: the Vercel AI Gateway's chat delta phase
// ("commentary" on the text before a tool call) is the text's phase
// (TextDelta.phase, Part.phase), as on the Responses API; a later delta
// without one has none. It was dropped (the kept property).
func TestRound26ChatDeltaPhase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, text, phase string }{
		{"real_vercelgw_chat_muse_tool_stream_1.http", "I'll look up the weather in Paris for you.", "commentary"},
		{"real_vercelgw_chat_muse_tool_stream_2.http", "Paris is sunny.", ""},
	} {
		srv := providertest.ReplayFile(t, td(c.file))
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), simpleRequest("gpt-4o-mini"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := provider.FoldStream(s)
		if err != nil {
			t.Fatal(err)
		}
		var texts int
		for _, p := range res.Message.GetParts() {
			if p.GetText() == "" {
				continue
			}
			texts++
			if p.GetText() != c.text || p.GetPhase() != c.phase {
				t.Errorf("%s: text part %q phase %q, want %q phase %q", c.file, p.GetText(), p.GetPhase(), c.text, c.phase)
			}
		}
		if texts != 1 {
			t.Errorf("%s: %d text parts, want 1: %v", c.file, texts, res.Message)
		}
	}
}

// TestRound26ChatMessagePhase: a unary chat message's phase (the same
// gateway's key, on the message) is its text part's phase, as the
// stream's delta.phase is; a think block's reasoning gets none.
// Hand-built body with ids of its own, after
// testdata/real_vercelgw_chat_muse_tool_stream_1.http's delta.
func TestRound26ChatMessagePhase(t *testing.T) {
	t.Parallel()
	rec := providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"id":"gen_r26phaseunary01","object":"chat.completion","created":1791000000,"model":"meta/muse-spark-1.3",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"<think>plan</think>Checking the weather.","phase":"commentary"},"finish_reason":"stop"}]}`)}
	res, err := newTestProvider(t, kOpenAI, providertest.Replay(t, rec).URL).Generate(context.Background(), simpleRequest("gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Message.GetParts() {
		got = append(got, providertest.Answer(&llmrelayv1.Message{Parts: []*llmrelayv1.Part{p}})+" phase="+p.GetPhase())
	}
	want := []string{`reasoning "plan" phase=`, `text "Checking the weather." phase=commentary`}
	if len(got) != len(want) || got[0][:len("reasoning")] != "reasoning" || got[1] != want[1] || !strings.HasSuffix(got[0], "phase=") {
		t.Errorf("parts %q, want %q", got, want)
	}
}
