package openai

import (
	"context"
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// gaps20Meta replays a recording, unary or streamed, and returns the
// answer's meta (the stream's folded).
func gaps20Meta(t *testing.T, name string, stream bool) *llmrelayv1.ResponseMeta {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	req := chatRequests(t)["chat_plain"]
	if !stream {
		res, err := p.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Meta
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	return accFold(t, evs).Meta
}

// extendedJSON is meta.extended[key] as compact JSON ("" if absent).
func extendedJSON(t *testing.T, m *llmrelayv1.ResponseMeta, key string) string {
	t.Helper()
	v, ok := m.GetExtended().GetFields()[key]
	if !ok {
		return ""
	}
	b, err := json.Marshal(v.AsInterface())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGaps20CerebrasTimeInfo: Cerebras's time_info (queue, prompt,
// completion and total seconds, and its created time), on the answer and
// on the stream's last chunk, was dropped without a warning; it is kept
// as sent in meta.extended["time_info"].
func TestGaps20CerebrasTimeInfo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stream bool
		want   string
	}{
		{"real_oljs_cerebras", false, `{"completion_time":0.011402503,"created":1745026690,"prompt_time":0.002211045,"queue_time":0.000270831,"total_time":0.015504121780395508}`},
		{"real_oljs_cerebras_stream", true, `{"completion_time":0.018119361,"created":1745027689,"prompt_time":0.002212496,"queue_time":0.000179281,"total_time":0.02881789207458496}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := extendedJSON(t, gaps20Meta(t, tc.name, tc.stream), extTimeInfo); got != tc.want {
				t.Errorf("time_info %s, want %s", got, tc.want)
			}
		})
	}
}

// TestGaps20Seed: the seed a server says it sampled with (Together's, in
// the finishing choice; Groq's x_groq.seed) is kept as the JSON number's
// text: Together's 15092511270073158000 is beyond int64, and as a float64
// it would read 15092511270073157632. A null seed says nothing.
func TestGaps20Seed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stream bool
		want   string
	}{
		{"real_oljs_together_stream", true, `"15092511270073158000"`},
		{"real_groq_tool_call_stream", true, `"689520654"`},
		{"real_mscope_together_llama4", false, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := extendedJSON(t, gaps20Meta(t, tc.name, tc.stream), extSeed); got != tc.want {
				t.Errorf("seed %s, want %s", got, tc.want)
			}
		})
	}
	for raw, want := range map[string]string{`15092511270073158000`: "15092511270073158000", ` -3 `: "-3", `null`: "", `"7"`: "", `1e3`: "1e3", `{}`: "", ``: ""} {
		if got := seedText(json.RawMessage(raw)); got != want {
			t.Errorf("seedText(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestGaps20MistralSizeLimit: Mistral's ratelimitbysize-query-cost (the
// tokens the call was charged) and its per-window budgets
// (x-ratelimitbysize-{limit,remaining}-{minute,month}) were dropped:
// RateLimit holds the binding window (ratelimitbysize-*) only. They are
// kept in meta.extended["rate_limit_by_size"].
func TestGaps20MistralSizeLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, want string }{
		{"real_oi_mistral_tool_call_stream", `{"minute":{"limit":500000,"remaining":342032},"month":{"limit":1000000000,"remaining":997342940},"query_cost":32010}`},
		{"real_mag_mistral_parallel_function_call_stream", `{"minute":{"limit":2000000,"remaining":1775939},"month":{"limit":10000000000,"remaining":9998591575},"query_cost":32036}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := gaps20Meta(t, tc.name, true)
			if got := extendedJSON(t, m, extSizeLimit); got != tc.want {
				t.Errorf("rate_limit_by_size %s, want %s", got, tc.want)
			}
			if m.GetRateLimit().GetTokensLimit() == 0 {
				t.Errorf("rate limit %v", m.GetRateLimit())
			}
		})
	}
}
