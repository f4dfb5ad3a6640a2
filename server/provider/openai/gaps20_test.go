package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
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
// RateLimit's typed tokens budget holds the binding window
// (ratelimitbysize-*) only. The windows are RateLimit.windows, the cost
// meta.extended["rate_limit_by_size"].
func TestGaps20MistralSizeLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want string
		windows    []string
	}{
		{"real_oi_mistral_tool_call_stream", `{"query_cost":32010}`, []string{
			"tokens ratelimitbysize 500000/342032 - +1m0s",
			"tokens x-ratelimitbysize-minute 500000/342032 1m0s -",
			"tokens x-ratelimitbysize-month 1000000000/997342940 - -"}},
		{"real_mag_mistral_parallel_function_call_stream", `{"query_cost":32036}`, []string{
			"tokens ratelimitbysize 2000000/1775939 - +47s",
			"tokens x-ratelimitbysize-minute 2000000/1775939 1m0s -",
			"tokens x-ratelimitbysize-month 10000000000/9998591575 - -"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := gaps20Meta(t, tc.name, true)
			if got := extendedJSON(t, m, extSizeLimit); got != tc.want {
				t.Errorf("rate_limit_by_size %s, want %s", got, tc.want)
			}
			date, _ := http.ParseTime(providertest.Load(t, td(tc.name+".http")).Header.Get("Date"))
			checkWindows(t, tc.name, m.GetRateLimit(), date, tc.windows...)
			if m.GetRateLimit().GetTokensLimit() == 0 {
				t.Errorf("rate limit %v", m.GetRateLimit())
			}
		})
	}
}

// gaps20LogprobsFull and gaps20LogprobsRounded are the token logprobs of
// the gaps20_responses_logprobs recordings: the stream's
// response.output_text.delta carries them at full precision, the items
// (output_item.done, the final response, the unary answer) rounded to six
// decimals, as OpenAI sends them.
const (
	gaps20LogprobsFull    = `[[{"bytes":[78],"logprob":-2.9266366958618164,"token":"N","top_logprobs":[{"bytes":[80,108,101,97,115,101],"logprob":-0.5516367554664612,"token":"Please"},{"bytes":[89],"logprob":-1.0516366958618164,"token":"Y"},{"bytes":[78],"logprob":-2.9266366958618164,"token":"N"},{"bytes":[83,117,114,101],"logprob":-4.551636695861816,"token":"Sure"},{"bytes":[67,111,117,108,100],"logprob":-5.176636695861816,"token":"Could"}]}]]`
	gaps20LogprobsRounded = `[[{"bytes":[78],"logprob":-2.926637,"token":"N","top_logprobs":[{"bytes":[80,108,101,97,115,101],"logprob":-0.551637,"token":"Please"},{"bytes":[89],"logprob":-1.051637,"token":"Y"},{"bytes":[78],"logprob":-2.926637,"token":"N"},{"bytes":[83,117,114,101],"logprob":-4.551637,"token":"Sure"},{"bytes":[67,111,117,108,100],"logprob":-5.176637,"token":"Could"}]}]]`
)

// TestGaps20ResponsesLogprobs: the Responses API's token logprobs
// (asked with include "message.output_text.logprobs") were never
// relayed; they are kept in meta.extended["logprobs"], a list with one
// entry per output_text part (the part's list as sent), unary and
// streamed alike.
func TestGaps20ResponsesLogprobs(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4.1-nano", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Hello"))}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{
		Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(5)}}}
	for _, tc := range []struct {
		name   string
		stream bool
		want   string
		id     string
	}{
		{"gaps20_responses_logprobs", false, gaps20LogprobsRounded, "resp_661edec95108e13815d50866e71790e64344c3a6c5cbfb50"},
		{"gaps20_responses_logprobs_stream", true, gaps20LogprobsFull, "resp_689cec4cf608819583c56813ccb0f5040f92af1765dd5aad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			p := newTestProvider(t, kOpenAI, srv.URL)
			var m *llmrelayv1.ResponseMeta
			if tc.stream {
				s, err := p.Stream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				evs, _, err := collect(t, s)
				if err != nil {
					t.Fatal(err)
				}
				checkRespStreamInvariants(t, evs)
				f := accFold(t, evs)
				if want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, textIn("N", "msg_689cec4d46448195905a27fb9e12ff670f92af1765dd5aad")); !proto.Equal(f.Message, want) {
					t.Errorf("message %v", f.Message)
				}
				m = f.Meta
			} else {
				res, err := p.Generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				m = res.Meta
			}
			if got := extendedJSON(t, m, extLogprobs); got != tc.want {
				t.Errorf("logprobs\n%s\nwant\n%s", got, tc.want)
			}
			if len(m.GetWarnings()) != 0 || m.GetResponseId() != tc.id {
				t.Errorf("meta %v", m)
			}
			var body struct {
				Include     []string `json:"include"`
				TopLogprobs int      `json:"top_logprobs"`
			}
			if err := json.Unmarshal(srv.Last(t).Body, &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Include) != 1 || body.Include[0] != includeLogprobs || body.TopLogprobs != 5 {
				t.Errorf("sent include %v, top_logprobs %d", body.Include, body.TopLogprobs)
			}
		})
	}
}

// TestGaps20ResponsesLogprobsPlaces: with several output_text parts,
// each has its place in the list (output index, then content index; []
// for a part without logprobs), whichever event of the stream carried
// them: deltas (joined), else the done event, else output_item.done,
// else the final response; the unary answer of the same final response
// has the same shape. Without any logprobs nothing is set, and logprobs
// that are not an array are dropped with one warning.
func TestGaps20ResponsesLogprobsPlaces(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	lp := func(tok string) string { return `{"token":"` + tok + `","logprob":-1,"bytes":[],"top_logprobs":[]}` }
	part := func(txt, lps string) string {
		return `{"type":"output_text","annotations":[],"logprobs":[` + lps + `],"text":"` + txt + `"}`
	}
	msg := func(id string, parts ...string) string {
		return `{"id":"` + id + `","type":"message","status":"completed","role":"assistant","content":[` + strings.Join(parts, ",") + `]}`
	}
	final := `{"id":"resp_1","status":"completed","output":[` +
		msg("msg_a", part("ab", lp("a")+","+lp("b")), part("c", lp("c")), part("d", "")) + "," +
		`{"id":"rs_1","type":"reasoning","summary":[]},` +
		msg("msg_b", `{"type":"refusal","refusal":"no"}`, part("e", lp("e"))) + `]}`
	body := `data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":0,"delta":"a","logprobs":[` + lp("a") + `]}` + "\n\n" +
		`data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":0,"delta":"b","logprobs":[` + lp("b") + `]}` + "\n\n" +
		`data: {"type":"response.output_text.done","item_id":"msg_a","output_index":0,"content_index":0,"text":"ab","logprobs":[` + lp("x") + `]}` + "\n\n" +
		`data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":1,"delta":"c","logprobs":[]}` + "\n\n" +
		`data: {"type":"response.output_text.done","item_id":"msg_a","output_index":0,"content_index":1,"text":"c","logprobs":[` + lp("c") + `]}` + "\n\n" +
		`data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":2,"delta":"d","logprobs":[]}` + "\n\n" +
		`data: {"type":"response.output_item.done","output_index":0,"item":` + msg("msg_a", part("ab", ""), part("c", ""), part("d", "")) + `}` + "\n\n" +
		`data: {"type":"response.completed","response":` + final + `}` + "\n\n"
	want := `[[` + lp("a") + `,` + lp("b") + `],[` + lp("c") + `],[],[` + lp("e") + `]]`
	var wantV any
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(wantV)

	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	if got := extendedJSON(t, accFold(t, evs).Meta, extLogprobs); got != string(wantJSON) {
		t.Errorf("stream logprobs\n%s\nwant\n%s", got, wantJSON)
	}
	res, err := p.parseResponsesResponse([]byte(final), "m")
	if err != nil {
		t.Fatal(err)
	}
	if got := extendedJSON(t, res.Meta, extLogprobs); got != string(wantJSON) {
		t.Errorf("unary logprobs\n%s\nwant\n%s", got, wantJSON)
	}

	none := strings.ReplaceAll(final, lp("a")+","+lp("b"), "")
	none = strings.ReplaceAll(strings.ReplaceAll(none, lp("c"), ""), lp("e"), "")
	res, err = p.parseResponsesResponse([]byte(none), "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Meta.GetExtended().GetFields()[extLogprobs]; ok {
		t.Errorf("logprobs set without any: %v", res.Meta.GetExtended())
	}

	odd := `data: {"type":"response.output_text.delta","item_id":"msg_a","output_index":0,"content_index":0,"delta":"a","logprobs":{"x":1}}` + "\n\n" +
		`data: {"type":"response.output_text.done","item_id":"msg_a","output_index":0,"content_index":0,"text":"a","logprobs":7}` + "\n\n" +
		`data: ` + respCompleted + "\n\n"
	evs, _, err = collect(t, respStreamFrom(p, odd))
	if err != nil {
		t.Fatal(err)
	}
	m := accFold(t, evs).Meta
	if len(m.GetWarnings()) != 1 || !strings.Contains(m.GetWarnings()[0], "not an array") {
		t.Errorf("warnings %q", m.GetWarnings())
	}
	if _, ok := m.GetExtended().GetFields()[extLogprobs]; ok {
		t.Errorf("logprobs set: %v", m.GetExtended())
	}
}

// TestGaps20Moderation: OpenAI's moderation results (asked with the
// request's moderation option), in a last chunk without choices, were
// dropped; they are kept as sent in meta.extended["moderation"].
func TestGaps20Moderation(t *testing.T) {
	t.Parallel()
	m := gaps20Meta(t, "real_pyd_openai_moderation_stream", true)
	mod, _ := m.GetExtended().AsMap()[extModeration].(map[string]any)
	in, _ := mod["input"].(map[string]any)
	out, _ := mod["output"].(map[string]any)
	if in["model"] != "omni-moderation-latest" || in["type"] != "moderation_results" || out == nil {
		t.Errorf("moderation %v", mod)
	}
}

// TestGaps20ResponsesExtras: a Response object's moderation (when not
// null) and its hosted tools' usage (when it counts anything) are kept in
// meta.extended, unary and streamed alike; the all-zero tool_usage OpenAI
// sends on every answer (testdata/real_chatlas_responses_tool_call_stream.http)
// is not.
func TestGaps20ResponsesExtras(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	zero := `{"image_gen":{"input_tokens":0,"input_tokens_details":{"image_tokens":0,"text_tokens":0},"output_tokens":0,"total_tokens":0},"web_search":{"num_requests":0}}`
	used := `{"image_gen":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"web_search":{"num_requests":2}}`
	mod := `{"input":{"type":"moderation_results","flagged":false}}`
	for _, tc := range []struct {
		name, extra, wantTools, wantMod string
	}{
		{"zero tool usage, null moderation", `"tool_usage":` + zero + `,"moderation":null`, "", ""},
		{"tool usage and moderation", `"tool_usage":` + used + `,"moderation":` + mod, used, mod},
	} {
		final := `{"id":"resp_1","status":"completed","output":[{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}]}],` + tc.extra + `}`
		res, err := p.parseResponsesResponse([]byte(final), "m")
		if err != nil {
			t.Fatal(err)
		}
		evs, _, err := collect(t, respStreamFrom(p, `data: {"type":"response.completed","response":`+final+`}`+"\n\n"))
		if err != nil {
			t.Fatal(err)
		}
		for how, m := range map[string]*llmrelayv1.ResponseMeta{"unary": res.Meta, "stream": accFold(t, evs).Meta} {
			for key, want := range map[string]string{extToolUsage: tc.wantTools, extModeration: tc.wantMod} {
				if want != "" {
					var v any
					if err := json.Unmarshal([]byte(want), &v); err != nil {
						t.Fatal(err)
					}
					b, _ := json.Marshal(v)
					want = string(b)
				}
				if got := extendedJSON(t, m, key); got != want {
					t.Errorf("%s, %s: %s %s, want %s", tc.name, how, key, got, want)
				}
			}
		}
	}
}
