package gemini

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

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
		got, valid := argsText(json.RawMessage(tc.raw))
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
		"": llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED,
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
		{"text around a call, thoughts skipped", `{"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"a"},{"text":"b"},{"functionCall":{"name":"f","args":{"x":1}}},{"text":"c"},{"text":"","thoughtSignature":"sig"}]},"finishReason":"STOP"}],"responseId":"r"}`,
			func(t *testing.T, r *provider.Result, err error) {
				parts := r.Message.GetParts()
				if err != nil || len(parts) != 3 || parts[0].GetText() != "ab" || parts[1].GetToolCall().GetName() != "f" || parts[2].GetText() != "c" {
					t.Fatalf("%v %v", r, err)
				}
				if r.Meta.GetExtended().GetFields()[extThoughtParts].GetNumberValue() != 1 || r.Meta.GetToolCallCount() != 1 {
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

// FuzzResponse feeds arbitrary generateContent bodies to the unary parser:
// no panic; a result is an assistant message whose tool calls have ids,
// a finish reason of TOOL_CALLS when there are calls, and a tool call count
// that matches; a failure is a *provider.Error.
func FuzzResponse(f *testing.F) {
	for _, name := range []string{"plain", "tools_parallel", "malformed_call", "vision", "multiturn", "blocked"} {
		f.Add(providertest.Load(f, filepath.Join("testdata", name+".http")).Body)
	}
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}},{"text":null}]}}]}`))
	f.Add([]byte(`{"candidates":[null,{}],"usageMetadata":null}`))
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
		for _, pt := range r.Message.GetParts() {
			if tc := pt.GetToolCall(); tc != nil {
				calls++
				if tc.GetCallId() == "" {
					t.Fatal("call without id")
				}
				if tc.GetArgumentsValid() != isJSONObject([]byte(tc.GetArguments())) {
					t.Fatalf("arguments_valid wrong for %q", tc.GetArguments())
				}
			}
		}
		if int(r.Meta.GetToolCallCount()) != calls {
			t.Fatalf("tool_call_count %d, calls %d", r.Meta.GetToolCallCount(), calls)
		}
		if calls > 0 && r.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
			t.Fatal("finish reason")
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
