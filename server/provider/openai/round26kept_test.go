package openai

import (
	"context"
	"testing"

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
