package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestArgsText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw, want string
		valid     bool
	}{
		{``, `{}`, true},
		{`null`, `{}`, true},
		{`{ "b" : 1, "a" : [1, 2] }`, `{"b":1,"a":[1,2]}`, true},
		{`"{\"city\": \"Par"`, `{"city": "Par`, false},
		{`"{\"a\":1}"`, `{"a":1}`, true},
		{`[1,2]`, `[1,2]`, false},
		{`42`, `42`, false},
	}
	for _, tc := range cases {
		got := provider.ArgumentsText(json.RawMessage(tc.raw), "{}")
		valid := fold.ValidArguments(got)
		if got != tc.want || valid != tc.valid {
			t.Errorf("argsText(%s) = %q, %v; want %q, %v", tc.raw, got, valid, tc.want, tc.valid)
		}
	}
}

func TestToUsage(t *testing.T) {
	t.Parallel()
	got := toUsage(&usageMetadata{PromptTokenCount: 100, CandidatesTokenCount: 10, ThoughtsTokenCount: 5, CachedContentTokenCount: 40})
	want := &llmrelayv1.Usage{InputTokens: 100, OutputTokens: 15, TotalTokens: 115, CachedInputTokens: 40, ReasoningTokens: 5}
	if got.String() != want.String() {
		t.Errorf("got %v want %v", got, want)
	}
	if toUsage(nil) != nil {
		t.Error("nil usage")
	}
	// Google Search grounding (testdata/real_stream_search_usage.http):
	// the tool-use prompt is input, so total = input + output holds.
	got = toUsage(&usageMetadata{PromptTokenCount: 17, CandidatesTokenCount: 37, ThoughtsTokenCount: 333, ToolUsePromptTokenCount: 308, TotalTokenCount: 695})
	want = &llmrelayv1.Usage{InputTokens: 17 + 308, OutputTokens: 37 + 333, TotalTokens: 695, ReasoningTokens: 333}
	if got.String() != want.String() {
		t.Errorf("with tool-use prompt: got %v want %v", got, want)
	}
	if u := toUsage(&usageMetadata{PromptTokenCount: -3, CandidatesTokenCount: 1 << 40}); u.InputTokens != 0 || u.OutputTokens <= 0 {
		t.Errorf("clamping: %v", u)
	}
}

func TestFinishReason(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]llmrelayv1.FinishReason{
		"STOP": llmrelayv1.FinishReason_FINISH_REASON_STOP, "MAX_TOKENS": llmrelayv1.FinishReason_FINISH_REASON_LENGTH,
		"SAFETY": llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "RECITATION": llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER,
		"BLOCKLIST": llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "PROHIBITED_CONTENT": llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER,
		"SPII": llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "MALFORMED_FUNCTION_CALL": llmrelayv1.FinishReason_FINISH_REASON_OTHER,
		"OTHER": llmrelayv1.FinishReason_FINISH_REASON_OTHER, "SOMETHING_NEW": llmrelayv1.FinishReason_FINISH_REASON_OTHER,
		// testdata/real_pyd_google_model_armor_response_template_real_block.http
		"MODEL_ARMOR": llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER,
		"":            llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED,
	} {
		if got := finishReason(raw); got != want {
			t.Errorf("finishReason(%q) = %v, want %v", raw, got, want)
		}
	}
}

func TestToResultDefensive(t *testing.T) {
	t.Parallel()
	p := &Provider{apiKey: testKey}
	cases := []struct {
		name, body string
		check      func(t *testing.T, r *provider.Result, err error)
	}{
		{"safety stop without content", `{"candidates":[{"finishReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"HIGH","blocked":true}]}],"responseId":"r"}`,
			func(t *testing.T, r *provider.Result, err error) {
				if err != nil || r.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER ||
					r.Meta.GetExtended().GetFields()[extSafetyRatings] == nil || len(r.Message.GetParts()) != 0 {
					t.Errorf("%v %v", r, err)
				}
			}},
		{"call cut by MAX_TOKENS stays LENGTH", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"x":1}}}]},"finishReason":"MAX_TOKENS"}],"responseId":"r-gem-len-7c1"}`,
			func(t *testing.T, r *provider.Result, err error) {
				if err != nil || r.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || r.Meta.GetToolCallCount() != 1 {
					t.Errorf("%v %v", r, err)
				}
			}},
		{"call stopped by SAFETY stays CONTENT_FILTER", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"x":1}}}]},"finishReason":"SAFETY"}],"responseId":"r-gem-saf-9d4"}`,
			func(t *testing.T, r *provider.Result, err error) {
				if err != nil || r.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER {
					t.Errorf("%v %v", r, err)
				}
			}},
		{"text around a call, thoughts kept in order", `{"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"a"},{"text":"b"},{"functionCall":{"name":"f","args":{"x":1}}},{"text":"c"},{"text":"","thoughtSignature":"sig"}]},"finishReason":"STOP"}],"responseId":"r"}`,
			func(t *testing.T, r *provider.Result, err error) {
				if err != nil {
					t.Fatal(err)
				}
				want := `reasoning{"thinking" sig=""} | text{"ab"} | call{f sig=""} | text{"c"} | reasoning{"" sig="sig"}`
				if got := partsString(r.Message); got != want {
					t.Fatalf("parts\n got %s\nwant %s", got, want)
				}
				if r.Meta.GetExtended().GetFields()["gemini.thought_parts"] != nil || r.Meta.GetToolCallCount() != 1 {
					t.Errorf("meta %v", r.Meta)
				}
			}},
		{"malformed args string kept", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"{\"a\":"}}]},"finishReason":"STOP"}],"responseId":"r"}`,
			func(t *testing.T, r *provider.Result, err error) {
				tc := r.Message.GetParts()[0].GetToolCall()
				if err != nil || tc.GetArguments() != `{"a":` || tc.GetArgumentsValid() {
					t.Errorf("%v %v", tc, err)
				}
			}},
		{"error object in 200", `{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`,
			func(t *testing.T, r *provider.Result, err error) {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.Kind != provider.KindUnavailable || pe.Message != "boom" {
					t.Errorf("%v", err)
				}
			}},
		{"vertex createTime", `{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP"}],"createTime":"2025-10-14T09:12:31.123456Z","responseId":"r"}`,
			func(t *testing.T, r *provider.Result, err error) {
				if err != nil || r.Meta.GetCreateTime().AsTime().Unix() != 1760433151 {
					t.Errorf("%v %v", r.Meta, err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w generateContentResponse
			if err := json.Unmarshal([]byte(tc.body), &w); err != nil {
				t.Fatal(err)
			}
			r, err := p.toResult(&w)
			tc.check(t, r, err)
		})
	}
}

// partsString renders a message's parts in one line for comparisons.
func partsString(m *llmrelayv1.Message) string {
	var out []string
	for _, pt := range m.GetParts() {
		switch k := pt.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			out = append(out, fmt.Sprintf("text{%q}", k.Text))
		case *llmrelayv1.Part_Reasoning:
			out = append(out, fmt.Sprintf("reasoning{%q sig=%q}", k.Reasoning.GetText(), k.Reasoning.GetSignature()))
		case *llmrelayv1.Part_ToolCall:
			out = append(out, fmt.Sprintf("call{%s sig=%q}", k.ToolCall.GetName(), k.ToolCall.GetSignature()))
		case *llmrelayv1.Part_ProviderItem:
			out = append(out, fmt.Sprintf("item{%s %s}", k.ProviderItem.GetType(), k.ProviderItem.GetJson()))
		default:
			out = append(out, fmt.Sprintf("%T", k))
		}
	}
	return strings.Join(out, " | ")
}

// TestReasoningParts covers where thought parts and signatures land.
func TestReasoningParts(t *testing.T) {
	t.Parallel()
	p := &Provider{apiKey: testKey}
	cases := []struct{ name, parts, want string }{
		{"thought summary then signed answer",
			`{"text":"**Plan**\n\nthink","thought":true},{"text":"answer","thoughtSignature":"S1"}`,
			`reasoning{"**Plan**\n\nthink" sig=""} | text{"answer"} | reasoning{"" sig="S1"}`},
		{"consecutive thoughts form one block",
			`{"text":"a","thought":true},{"text":"b","thought":true},{"text":"x"}`,
			`reasoning{"ab" sig=""} | text{"x"}`},
		{"signed thought closes its block",
			`{"text":"a","thought":true},{"text":"","thought":true,"thoughtSignature":"S"},{"text":"b","thought":true}`,
			`reasoning{"a" sig="S"} | reasoning{"b" sig=""}`},
		{"signature on a call stays on the call",
			`{"text":"t","thought":true},{"functionCall":{"name":"f","args":{}},"thoughtSignature":"C1"},{"functionCall":{"name":"g"}}`,
			`reasoning{"t" sig=""} | call{f sig="C1"} | call{g sig=""}`},
		{"signature on a generated image: in its item",
			`{"inlineData":{"mimeType":"image/png","data":"AA=="},"thoughtSignature":"I"}`,
			`item{inlineData {"inlineData":{"mimeType":"image/png","data":"AA=="},"thoughtSignature":"I"}}`},
		{"signature on a non-text part that is no item",
			`{"inlineData":"AA==","thoughtSignature":"I"}`,
			`reasoning{"" sig="I"}`},
		{"media and built-in tool parts in their places",
			`{"text":"a"},{"fileData":{"mimeType":"video/mp4","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/v1"}},` +
				`{"toolCall":{"toolType":"URL_CONTEXT","id":"u1"},"thought":true},{"toolResponse":{"toolType":"URL_CONTEXT","id":"u1"}},{"text":"b"}`,
			`text{"a"} | item{fileData {"fileData":{"mimeType":"video/mp4","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/v1"}}} | ` +
				`item{toolCall {"thought":true,"toolCall":{"toolType":"URL_CONTEXT","id":"u1"}}} | item{toolResponse {"toolResponse":{"toolType":"URL_CONTEXT","id":"u1"}}} | text{"b"}`},
		{"empty thought without signature ignored",
			`{"text":"","thought":true},{"thought":true},{"text":"x"}`,
			`text{"x"}`},
		{"text after a signed text part",
			`{"text":"a","thoughtSignature":"S"},{"text":"b"}`,
			`text{"a"} | reasoning{"" sig="S"} | text{"b"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w generateContentResponse
			body := `{"candidates":[{"content":{"parts":[` + tc.parts + `]},"finishReason":"STOP"}],"responseId":"r"}`
			if err := json.Unmarshal([]byte(body), &w); err != nil {
				t.Fatal(err)
			}
			r, err := p.toResult(&w)
			if err != nil {
				t.Fatal(err)
			}
			if got := partsString(r.Message); got != tc.want {
				t.Errorf("parts\n got %s\nwant %s", got, tc.want)
			}
			// The same parts streamed one per chunk fold to the same message.
			var sse strings.Builder
			var parts []json.RawMessage
			if err := json.Unmarshal([]byte("["+tc.parts+"]"), &parts); err != nil {
				t.Fatal(err)
			}
			for i, pt := range parts {
				finish := ""
				if i == len(parts)-1 {
					finish = `,"finishReason":"STOP"`
				}
				fmt.Fprintf(&sse, "data: {\"candidates\":[{\"content\":{\"parts\":[%s]}%s}],\"responseId\":\"r\"}\n\n", pt, finish)
			}
			evs, end := drain(t, streamBody(t, sse.String()))
			if end != io.EOF {
				t.Fatalf("stream end %v", end)
			}
			if got := foldMessage(t, evs); !proto.Equal(got, r.Message) {
				t.Errorf("streamed %s\nunary    %s", partsString(got), partsString(r.Message))
			}
		})
	}
}

// FuzzResponse feeds arbitrary generateContent bodies to the unary parser:
// no panic; a result is an assistant message whose tool calls have ids,
// a finish reason of TOOL_CALLS when there are calls, and a tool call count
// that matches; a failure is a *provider.Error.
func FuzzResponse(f *testing.F) {
	for _, name := range []string{"plain", "tools_parallel", "malformed_call", "vision", "multiturn", "blocked",
		"thinking_text", "thinking_tools", "multiturn_reasoning", "max_tokens_call",
		// Round 19's recordings: parallel calls with API ids, a tool
		// validation retry, text signatures.
		"real_adkgo_coordinator_parallel_calls_1", "real_adkgo_solver_validation_retry_1", "real_adkgo_translator_es",
		"real_langsmith_adk_weather_tool_1", "real_reasoning19_gemini3_text_signature"} {
		f.Add(providertest.Load(f, filepath.Join("testdata", name+".http")).Body)
	}
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}},{"text":null}]}}]}`))
	f.Add([]byte(`{"candidates":[null,{}],"usageMetadata":null}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"id":"a","name":"f","args":{}}},{"functionCall":{"id":"a","name":"f","args":{}}}]},"finishReason":{"x":1}}],"usageMetadata":{"promptTokenCount":"7","candidatesTokenCount":true}}`))
	p := &Provider{apiKey: testKey}
	f.Fuzz(func(t *testing.T, body []byte) {
		var w generateContentResponse
		if json.Unmarshal(body, &w) != nil {
			return
		}
		r, err := p.toResult(&w)
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err %T", err)
			}
			return
		}
		if r.Message.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
			t.Fatal("role")
		}
		calls := 0
		ids := map[string]bool{}
		parts := r.Message.GetParts()
		for i, pt := range parts {
			if tc := pt.GetToolCall(); tc != nil {
				calls++
				ids[tc.GetCallId()] = true
				if tc.GetCallId() == "" {
					t.Fatal("call without id")
				}
				// A call last in an answer cut by the token limit is partial.
				cut := i == len(parts)-1 && r.Meta.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_LENGTH
				if tc.GetArgumentsValid() != (providertest.IsJSONObject(tc.GetArguments()) && !cut) {
					t.Fatalf("arguments_valid wrong for %q", tc.GetArguments())
				}
			}
		}
		if int(r.Meta.GetToolCallCount()) != calls {
			t.Fatalf("tool_call_count %d, calls %d", r.Meta.GetToolCallCount(), calls)
		}
		if fr := r.Meta.GetFinishReason(); calls > 0 && (fr == llmrelayv1.FinishReason_FINISH_REASON_STOP || fr == llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED) {
			t.Fatal("tool calls with a plain stop finish reason")
		}
		for _, pt := range r.Message.GetParts() {
			if rs := pt.GetReasoning(); rs != nil && rs.GetText() == "" && rs.GetSignature() == "" {
				t.Fatal("empty reasoning part")
			}
		}
		// Call ids are unique (an id Gemini repeats is made anew: the
		// accumulator keys calls by id, and two calls with one id would
		// fold into one).
		if len(ids) != calls {
			t.Fatalf("%d calls, %d ids", calls, len(ids))
		}
		// The same body streamed as one chunk folds to the same message.
		var compact bytes.Buffer
		if err := json.Compact(&compact, body); err != nil {
			t.Fatal(err)
		}
		s := p.newStream(&http.Response{Body: io.NopCloser(strings.NewReader("data: " + compact.String() + "\n\n"))})
		defer s.Close()
		var evs []*provider.Event
		for {
			ev, err := s.Recv()
			if err != nil {
				if err == io.EOF {
					if got := foldMessage(t, evs); !proto.Equal(got, r.Message) {
						t.Fatalf("streamed %s\nunary    %s", partsString(got), partsString(r.Message))
					}
				}
				return
			}
			evs = append(evs, ev)
		}
	})
}

// FuzzErrorBody: any error body gives a *provider.Error without the key.
func FuzzErrorBody(f *testing.F) {
	for _, name := range []string{"error_400", "error_401", "error_403", "error_429", "error_503"} {
		f.Add(providertest.Load(f, filepath.Join("testdata", name+".http")).Body)
	}
	f.Add([]byte(`[{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-5s"}]}}]`))
	p := &Provider{apiKey: testKey}
	f.Fuzz(func(t *testing.T, body []byte) {
		st := parseStatusBody(body)
		e := &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, HTTPStatus: 400}
		if st != nil {
			p.applyStatus(e, st)
		}
		if e.RetryAfter < 0 {
			t.Fatal("negative retry")
		}
		if containsKey(e.Error(), testKey) {
			t.Fatalf("key in %q", e.Error())
		}
	})
}

func containsKey(s, key string) bool {
	for i := 0; i+len(key) <= len(s); i++ {
		if s[i:i+len(key)] == key {
			return true
		}
	}
	return false
}

// TestUsageDetails: usageMetadata fields no counter holds reach
// meta.extended, the per-modality lists keyed by modality.
func TestUsageDetails(t *testing.T) {
	t.Parallel()
	var u usageMetadata
	if err := json.Unmarshal([]byte(`{"promptTokenCount":1300,"candidatesTokenCount":20,"thoughtsTokenCount":90,"cachedContentTokenCount":1024,`+
		`"toolUsePromptTokenCount":12,"totalTokenCount":1422,`+
		`"promptTokensDetails":[{"modality":"TEXT","tokenCount":42},{"modality":"IMAGE","tokenCount":1258}],`+
		`"cacheTokensDetails":[{"modality":"IMAGE","tokenCount":1024},{"modality":"AUDIO"}],`+
		`"candidatesTokensDetails":[{"modality":"TEXT","tokenCount":20,"extra":true}],`+
		`"toolUsePromptTokensDetails":"odd","trafficType":"ON_DEMAND"}`), &u); err != nil {
		t.Fatal(err)
	}
	got := usageDetails(&u)
	want := provider.UsageDetails{
		"promptTokensDetails.TEXT": 42.0, "promptTokensDetails.IMAGE": 1258.0, "cacheTokensDetails.IMAGE": 1024.0,
		"candidatesTokensDetails":    []any{map[string]any{"modality": "TEXT", "tokenCount": 20.0, "extra": true}},
		"toolUsePromptTokensDetails": "odd", "trafficType": "ON_DEMAND",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if us := toUsage(&u); us.GetReasoningTokens() != 90 || us.GetCachedInputTokens() != 1024 || us.GetOutputTokens() != 110 {
		t.Errorf("usage %v", us)
	}
}
