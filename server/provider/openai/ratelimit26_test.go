package openai

import (
	"net/http"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRateLimitExtras26: the rate-limit headers no window holds are kept
// in meta.extended whatever their form (Perplexity's x-ratelimit-used,
// Azure's x-ratelimit-key and x-ratelimit-abusepenalty-active, Nebius's
// dynamic scale), and a dynamic period usage that is no percentage, or
// the time left with no usage to give it to, is kept as sent; nothing of
// them is dropped. The recordings' values are in the goldens
// (real_rubyllm_perplexity_sonar_citations, real_crew_azure_responses_call_with_tools,
// real_maruel_hf_nebius_qwen3_think); these are the other forms.
func TestRateLimitExtras26(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("Date", "Wed, 09 Sep 2026 12:10:44 GMT")
	h.Set("X-Ratelimit-Used", "1.5")
	h.Set("X-Ratelimit-Key", "gpt-5.2-chat")
	h.Set("X-Ratelimit-Abusepenalty-Active", "TRUE")
	h.Set("X-Ratelimit-Dynamic-Scale-Tokens", "high")
	h.Set("X-Ratelimit-Dynamic-Period-Usage-Requests", "12")
	h.Set("X-Ratelimit-Dynamic-Period-Usage-Tokens", "25%")
	h.Set("X-Ratelimit-Dynamic-Period-Remaining", "soon")
	meta := &llmrelayv1.ResponseMeta{}
	dynamicWindows(meta, h)
	rateLimitExtras(meta, h)
	want, err := structpb.NewStruct(map[string]any{
		"rate_limit_used": "1.5", "rate_limit_key": "gpt-5.2-chat", "rate_limit_abuse_penalty_active": true,
		"rate_limit_dynamic_scale": map[string]any{"tokens": "high"},
		"rate_limit_dynamic":       map[string]any{"period_usage_requests": "12", "period_remaining": "soon"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := meta.GetExtended().AsMap()
	for k, v := range want.AsMap() {
		if g, ok := got[k]; !ok || !equalJSONish(g, v) {
			t.Errorf("extended[%s] = %v, want %v", k, g, v)
		}
	}
	ws := meta.GetRateLimit().GetWindows()
	if len(ws) != 1 || ws[0].GetBudget() != "tokens" || ws[0].GetUtilization() != 0.25 || ws[0].ResetTime != nil {
		t.Errorf("windows %v", ws)
	}
}

// equalJSONish compares two values of structpb's AsMap.
func equalJSONish(a, b any) bool {
	va, err1 := structpb.NewValue(a)
	vb, err2 := structpb.NewValue(b)
	return err1 == nil && err2 == nil && proto.Equal(va, vb)
}
