package openai

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestGenerate(t *testing.T) {
	t.Parallel()
	reqs := chatRequests(t)
	cases := []struct {
		name, recording, request string
		kind                     kind
		opts                     []Option
		check                    func(t *testing.T, res *provider.Result)
		checkReq                 func(t *testing.T, body []byte)
	}{
		{name: "chat_plain", kind: kOpenAI, opts: []Option{WithOrganization("org-llmrelaytest"), WithProject("proj_Qz8kR2mV4nL6pT1wX9yB3cD5"),
			WithHeaders(map[string][]string{"X-Custom": {"yes"}})},
			check: func(t *testing.T, res *provider.Result) {
				wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
				if res.Meta.GetRateLimit().GetRequestsRemaining() != 9999 || res.Meta.GetRateLimit().GetRequestsResetTime() == nil {
					t.Errorf("rate limit not read: %v", res.Meta.GetRateLimit())
				}
			}},
		{name: "tools_parallel", kind: kOpenAI, check: func(t *testing.T, res *provider.Result) {
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if res.Meta.ToolCallCount != 2 || len(res.Message.Parts) != 2 {
				t.Fatalf("want 2 tool calls, got %d (%d parts)", res.Meta.ToolCallCount, len(res.Message.Parts))
			}
			for _, p := range res.Message.Parts {
				if !p.GetToolCall().GetArgumentsValid() || !strings.HasPrefix(p.GetToolCall().GetCallId(), "call_") {
					t.Errorf("bad call %v", p)
				}
			}
			if len(res.Meta.Warnings) != 1 || !strings.Contains(res.Meta.Warnings[0], "top_k") {
				t.Errorf("want a top_k warning, got %v", res.Meta.Warnings)
			}
		}},
		{name: "tools_malformed", kind: kOpenAI, check: func(t *testing.T, res *provider.Result) {
			// Cut by max_tokens: the call is truncated, so LENGTH, never
			// TOOL_CALLS (a client runs every call of a TOOL_CALLS answer).
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
			tc := res.Message.GetParts()[0].GetToolCall()
			if tc.GetArgumentsValid() || tc.GetArguments() != `{"from":"CDG","to":"HND","date":"2025-11-` {
				t.Errorf("malformed arguments must be kept verbatim and flagged: %v", tc)
			}
		}},
		{name: "vision", kind: kOpenAI},
		{name: "multiturn_tools", kind: kOpenAI, check: func(t *testing.T, res *provider.Result) {
			u := res.Meta.GetUsage()
			if u.GetInputTokens() != 1536 || u.GetCachedInputTokens() != 1024 || u.GetTotalTokens() != 1557 {
				t.Errorf("usage %v", u)
			}
		}, checkReq: func(t *testing.T, body []byte) {
			var w struct {
				Messages []struct {
					Role       string `json:"role"`
					ToolCallID string `json:"tool_call_id"`
					Content    string `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &w); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, m := range w.Messages {
				if m.Role == "tool" {
					got[m.ToolCallID] = m.Content
				}
			}
			want := map[string]string{"call_Vt6pRk2NsWq9LbX4cHm7ZyJd": `{"temp_c":18,"sky":"cloudy"}`, "call_Jq3mZt8Xw2VbN6pL0sRdYh4K": `{"temp_c":22,"sky":"sunny"}`}
			if len(got) != 2 || got["call_Vt6pRk2NsWq9LbX4cHm7ZyJd"] != want["call_Vt6pRk2NsWq9LbX4cHm7ZyJd"] || got["call_Jq3mZt8Xw2VbN6pL0sRdYh4K"] != want["call_Jq3mZt8Xw2VbN6pL0sRdYh4K"] {
				t.Errorf("tool results by id: %v, want %v", got, want)
			}
		}},
		{name: "chat_reasoning", kind: kOpenAI, check: func(t *testing.T, res *provider.Result) {
			u := res.Meta.GetUsage()
			if u.GetOutputTokens() != 212 || u.GetReasoningTokens() != 192 || u.GetTotalTokens() != 243 {
				t.Errorf("usage %v", u)
			}
		}},
		{name: "refusal", kind: kOpenAI, check: func(t *testing.T, res *provider.Result) {
			if len(res.Message.Parts) != 1 || res.Message.Parts[0].GetRefusal() == "" {
				t.Errorf("want one refusal part, got %v", res.Message.Parts)
			}
		}},
		{name: "azure_chat", kind: kAzure, check: func(t *testing.T, res *provider.Result) {
			ext := res.Meta.GetExtended().GetFields()
			if ext[extAzureDeployment].GetStringValue() != "gpt-4o-prod" || ext[extPromptFilterResults] == nil || ext[extContentFilterResults] == nil {
				t.Errorf("extended %v", ext)
			}
		}},
		{name: "azure_chat_v1_entra", recording: "azure_chat", request: "azure_chat", kind: kAzureV1Entra},
		{name: "azure_content_filter_finish", kind: kAzure, check: func(t *testing.T, res *provider.Result) {
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "content_filter")
			v := res.Meta.GetExtended().GetFields()[extContentFilterResults].GetStructValue().GetFields()["violence"].GetStructValue().GetFields()
			if !v["filtered"].GetBoolValue() || v["severity"].GetStringValue() != "medium" {
				t.Errorf("violence verdict %v", v)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, reqName := tc.recording, tc.request
			if rec == "" {
				rec = tc.name
			}
			if reqName == "" {
				reqName = tc.name
			}
			srv := providertest.ReplayFile(t, td(rec+".http"))
			p := newTestProvider(t, tc.kind, srv.URL, tc.opts...)
			req := reqs[reqName]
			before := proto.Clone(&llmrelayv1.Message{Parts: req.Messages[0].Parts}).(*llmrelayv1.Message)
			res, err := p.Generate(context.Background(), req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if !proto.Equal(before, &llmrelayv1.Message{Parts: req.Messages[0].Parts}) {
				t.Error("Generate modified the request")
			}
			checkResultInvariants(t, res)
			if got, want := res.Meta.ProviderRequestId, providertest.Load(t, td(rec+".http")).Header.Get(p.requestIDHeader()); got != want || got == "" {
				t.Errorf("provider_request_id %q, want %q", got, want)
			}
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			providertest.Golden(t, td(tc.name+".request.golden"), providertest.RequestGolden(srv.Last(t), authHeaders...))
			if tc.check != nil {
				tc.check(t, res)
			}
			if tc.checkReq != nil {
				tc.checkReq(t, srv.Last(t).Body)
			}
		})
	}
}

func wantFinish(t *testing.T, m *llmrelayv1.ResponseMeta, want llmrelayv1.FinishReason, raw string) {
	t.Helper()
	if m.GetFinishReason() != want || m.GetProviderFinishReason() != raw {
		t.Errorf("finish %v/%q, want %v/%q", m.GetFinishReason(), m.GetProviderFinishReason(), want, raw)
	}
}

// checkResultInvariants holds for every successful chat result.
func checkResultInvariants(t testing.TB, res *provider.Result) {
	t.Helper()
	if res.Message == nil || res.Meta == nil {
		t.Fatal("nil message or meta")
	}
	if res.Message.Role != llmrelayv1.Role_ROLE_ASSISTANT {
		t.Errorf("role %v", res.Message.Role)
	}
	calls := 0
	for _, p := range res.Message.Parts {
		if tc := p.GetToolCall(); tc != nil {
			calls++
			if tc.CallId == "" {
				t.Errorf("tool call without id: %v", tc)
			}
		}
	}
	if int(res.Meta.ToolCallCount) != calls {
		t.Errorf("tool_call_count %d, %d tool call parts", res.Meta.ToolCallCount, calls)
	}
	if fr := res.Meta.FinishReason; calls > 0 && (fr == llmrelayv1.FinishReason_FINISH_REASON_STOP || fr == llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED) {
		t.Errorf("finish reason %v with tool calls", fr)
	}
	if u := res.Meta.Usage; u != nil && int64(u.TotalTokens) < min(int64(u.InputTokens)+int64(u.OutputTokens), 1<<31-1) {
		t.Errorf("usage total %d < input %d + output %d", u.TotalTokens, u.InputTokens, u.OutputTokens)
	}
	if _, err := proto.Marshal(res.Message); err != nil {
		t.Errorf("message does not marshal: %v", err)
	}
	if _, err := proto.Marshal(res.Meta); err != nil {
		t.Errorf("meta does not marshal: %v", err)
	}
}

func TestEmbed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		kind kind
	}{
		{"embeddings", kOpenAI},
		{"azure_embeddings", kAzure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td("embeddings.http"))
			p := newTestProvider(t, tc.kind, srv.URL)
			res, err := p.Embed(context.Background(), &provider.EmbedRequest{
				Model: "text-embedding-3-small", Inputs: []string{"The food was delicious.", "The waiter was rude."}, Dimensions: proto.Int32(4),
				ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{User: "user-1234"}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Embeddings) != 2 || res.Embeddings[0].Index != 0 || res.Embeddings[0].Values[0] != 0.0232 || res.Meta.EmbeddingsCount != 2 {
				t.Errorf("embeddings not in index order: %v", res.Embeddings)
			}
			if res.Meta.GetUsage().GetInputTokens() != 9 || res.Meta.GetUsage().GetTotalTokens() != 9 {
				t.Errorf("usage %v", res.Meta.GetUsage())
			}
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			providertest.Golden(t, td(tc.name+".request.golden"), providertest.RequestGolden(srv.Last(t), authHeaders...))
		})
	}
}

func TestParseChatResponseShapes(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body string
		want       *llmrelayv1.Message
		finish     llmrelayv1.FinishReason
		warnings   int
	}{
		{"content array", `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"refusal","refusal":"no"}]},"finish_reason":"stop"}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{text("ab"), {Kind: &llmrelayv1.Part_Refusal{Refusal: "no"}}}}, llmrelayv1.FinishReason_FINISH_REASON_STOP, 0},
		{"null content, no usage", `{"choices":[{"message":{"content":null},"finish_reason":"length"}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, 0},
		{"arguments as object, no id", `{"choices":[{"message":{"tool_calls":[{"type":"function","function":{"name":"f","arguments":{"b":1,"a":[true]}}}]},"finish_reason":"stop"}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_idx0", Name: "f", Arguments: `{"b":1,"a":[true]}`, ArgumentsValid: true}}}}},
			llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, 1},
		{"legacy function_call", `{"choices":[{"message":{"function_call":{"name":"f","arguments":"{}"}},"finish_reason":"function_call"}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_idx0", Name: "f", Arguments: `{}`, ArgumentsValid: true}}}}},
			llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, 1},
		{"arguments not an object", `{"choices":[{"message":{"tool_calls":[{"id":"call_1","function":{"name":"f","arguments":"[1,2]"}}]}}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_1", Name: "f", Arguments: `[1,2]`}}}}},
			llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, 0},
		// The filter stopped the generation in the call (round 26: a
		// content_filter finish cuts the open call as length does).
		{"filtered call is cut", `{"choices":[{"message":{"tool_calls":[{"id":"call_flt_4Qm2","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"content_filter"}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_flt_4Qm2", Name: "f", Arguments: `{}`}}}}},
			llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, 1},
		{"unknown content shape kept", `{"choices":[{"message":{"content":{"x":1}},"finish_reason":"eos"}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{text(`{"x":1}`)}}, llmrelayv1.FinishReason_FINISH_REASON_STOP, 1},
		{"no choices", `{"id":"x","choices":[]}`, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}, llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED, 1},
		{"wrong type field kept going", `{"id":5,"choices":[{"message":{"content":"hi"},"finish_reason":"weird"}]}`,
			&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{text("hi")}}, llmrelayv1.FinishReason_FINISH_REASON_OTHER, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := p.parseChatResponse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			if !proto.Equal(res.Message, tc.want) {
				t.Errorf("message %v, want %v", res.Message, tc.want)
			}
			if res.Meta.FinishReason != tc.finish {
				t.Errorf("finish %v, want %v", res.Meta.FinishReason, tc.finish)
			}
			if len(res.Meta.Warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", res.Meta.Warnings, tc.warnings)
			}
		})
	}
	for _, body := range []string{``, `nope`, `[1]`, `{"choices":`} {
		_, err := p.parseChatResponse([]byte(body))
		if pe := providerError(t, err); pe.Kind != provider.KindBadResponse {
			t.Errorf("%q: kind %v, want bad_response", body, pe.Kind)
		}
	}
	// An error object in a 2xx body is an error, classified by its code.
	_, err = p.parseChatResponse([]byte(`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`))
	if pe := providerError(t, err); pe.Kind != provider.KindContextLength || pe.Message != "too long" {
		t.Errorf("got %v", err)
	}
}

func TestParseEmbedResponse(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	// base64: float32 1.0 and -2.0 little-endian.
	res, err := p.parseEmbedResponse([]byte(`{"data":[{"index":0,"embedding":"AACAPwAAAMA="}],"model":"m","usage":{"prompt_tokens":3,"total_tokens":3}}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Embeddings[0].Values; len(v) != 2 || v[0] != 1 || v[1] != -2 {
		t.Errorf("values %v", v)
	}
	if len(res.Meta.Warnings) != 0 {
		t.Errorf("warnings %q", res.Meta.Warnings)
	}
	for _, body := range []string{`{"data":[{"index":0,"embedding":"!!"}]}`, `{"data":[{"index":0,"embedding":{"a":1}}]}`, `{`} {
		_, err := p.parseEmbedResponse([]byte(body), 1)
		if pe := providerError(t, err); pe.Kind != provider.KindBadResponse {
			t.Errorf("%s: kind %v", body, pe.Kind)
		}
	}
}

// FuzzParseChatResponse: no panic on any body; successful results hold
// the invariants and marshal.
func FuzzParseChatResponse(f *testing.F) {
	for _, name := range []string{"chat_plain", "tools_parallel", "tools_malformed", "vision", "multiturn_tools", "chat_reasoning", "refusal", "azure_chat", "azure_content_filter_finish", "embeddings"} {
		f.Add(providertest.Load(f, td(name+".http")).Body)
	}
	f.Add([]byte(`{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"tool_calls":[{"function":{"arguments":{"a":1}}}]}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":"x"},"finish_reason":null}],"usage":{"prompt_tokens":"7","total_tokens":1e3}}`))
	f.Add([]byte(`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":82,"total_tokens":13}}`))
	p, err := New(testKey)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := p.parseChatResponse(body)
		if err != nil {
			providerError(t, err)
			return
		}
		checkResultInvariants(t, res)
		if _, err := p.parseEmbedResponse(body, 1); err != nil {
			providerError(t, err)
		}
	})
}

func TestRecordingsHaveNoRealKeys(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() { // testdata/fuzz: the fuzzers' seeds
			continue
		}
		b, err := os.ReadFile(td(e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"sk-proj-", "sk-svcacct-"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s contains what looks like a real key (%s)", e.Name(), bad)
			}
		}
	}
}

// usageSeeds are usage objects with and without details.
var usageSeeds = []string{
	`{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`,
	`{"prompt_tokens":12,"completion_tokens_details":{"audio_tokens":3}}`,
	`{"prompt_tokens":1,"cost":0.0012,"is_byok":false}`,
	`{"a":{"b":{"c":{"d":{"e":{}}}}},"x":-0,"y":"","z":null,"w":[],"v":{}}`,
	`{"a":{"b":{"c":{"d":{"e":{"f":0}}}}}}`,
	`{"a":0,"a":1}`, `{"a":1,"a":0}`, `{"a":01}`, `{"a":0.0}`, `{"a":0e1}`, `{"\u0061":1}`, `{"a":"x"}`, `{"a":[0]}`,
	`{"prompt_tokens":{"x":1},"prompt_tokens_details":{"cached_tokens":"7"}}`, `null`, `{}`, `{"a":0} x`,
}

// FuzzNoUsageDetails: whenever noUsageDetails says a usage object has no
// details, provider.ReadUsageDetails finds none.
func FuzzNoUsageDetails(f *testing.F) {
	for _, s := range usageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !noUsageDetails(raw) {
			return
		}
		if d := provider.ReadUsageDetails(raw, chatUsagePaths...); d != nil {
			t.Fatalf("%q: noUsageDetails, but ReadUsageDetails found %v", raw, d)
		}
	})
}

// TestNoUsageDetails: OpenAI's usage with zero audio and prediction counts
// skips the full reading; any detail, or a shape the check does not read,
// goes to it.
func TestNoUsageDetails(t *testing.T) {
	t.Parallel()
	// A counter's field that is no plain integer (13: an object, a
	// string) goes to the full reading too, which keeps a value that is
	// no count (enums19).
	for i, want := range []bool{true, false, false, true, false, false, false, false, false, false, false, false, false, false, false, true, false} {
		raw := []byte(usageSeeds[i])
		if got := noUsageDetails(raw); got != want {
			t.Errorf("%s: noUsageDetails %v, want %v", raw, got, want)
		}
		if want && provider.ReadUsageDetails(raw, chatUsagePaths...) != nil {
			t.Errorf("%s: has details", raw)
		}
	}
	u := &wireUsage{Raw: []byte(usageSeeds[1])}
	if d := usageDetails(u); d["completion_tokens_details.audio_tokens"] != float64(3) {
		t.Errorf("details %v", d)
	}
}
