package ollama

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestParseChatResponseDefensive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		body  string
		kind  provider.Kind // non-zero: an error of this kind
		check func(t *testing.T, res *provider.Result)
	}{
		{"not json", `<html>`, provider.KindBadResponse, nil},
		{"array", `[]`, provider.KindBadResponse, nil},
		{"null", `null`, provider.KindBadResponse, nil},
		{"in-band error", `{"error":"llama runner process no longer running: -1"}`, provider.KindUnavailable, nil},
		// /api/generate's answer (a proxy rewriting the path): not an
		// empty chat answer, even when its response is empty.
		{"generate-shaped", `{"model":"llama3.2","created_at":"2024-09-12T21:20:03.41Z","response":"The sky is blue because of Rayleigh scattering.","done":true,"done_reason":"stop","context":[128006,882],"eval_count":11}`, provider.KindBadResponse, nil},
		{"generate-shaped, empty response", `{"model":"llama3.2","created_at":"2024-09-12T21:20:03.41Z","response":"","done":true,"done_reason":"load"}`, provider.KindBadResponse, nil},
		{"load: done without message", `{"model":"llama3.2","created_at":"2024-09-12T21:17:29.110811Z","done_reason":"load","done":true}`, 0,
			func(t *testing.T, res *provider.Result) {
				if len(res.Message.Parts) != 0 || res.Meta.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_OTHER || res.Meta.Usage != nil {
					t.Errorf("got %v", res)
				}
			}},
		{"answer and error", `{"model":"m","message":{"role":"assistant","content":"partial"},"error":"runner crashed","done":true}`, 0,
			func(t *testing.T, res *provider.Result) {
				if res.Message.Parts[0].GetText() != "partial" || len(res.Meta.Warnings) != 1 || !strings.Contains(res.Meta.Warnings[0], "runner crashed") {
					t.Errorf("got %v %v", res.Message, res.Meta.Warnings)
				}
			}},
		{"tool call cut by num_predict stays LENGTH", `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]},"done_reason":"length","done":true}`, 0,
			func(t *testing.T, res *provider.Result) {
				if res.Meta.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || res.Meta.ToolCallCount != 1 {
					t.Errorf("got %v", res.Meta)
				}
			}},
		{"length", `{"model":"m","message":{"role":"assistant","content":"cut"},"done_reason":"length","done":true,"eval_count":1.0}`, 0,
			func(t *testing.T, res *provider.Result) {
				if res.Meta.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || res.Meta.Usage.GetOutputTokens() != 1 {
					t.Errorf("got %v", res.Meta)
				}
			}},
		{"old ollama: no done_reason", `{"model":"m","message":{"role":"assistant","content":"hi"},"done":true}`, 0,
			func(t *testing.T, res *provider.Result) {
				if res.Meta.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_STOP {
					t.Errorf("got %v", res.Meta)
				}
			}},
		{"not done", `{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}`, 0,
			func(t *testing.T, res *provider.Result) {
				if len(res.Meta.Warnings) != 1 || !strings.Contains(res.Meta.Warnings[0], "not marked done") {
					t.Errorf("warnings %v", res.Meta.Warnings)
				}
				// Round 23: not labelled a finished answer (it was STOP).
				if res.Meta.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_OTHER || res.Message.Parts[0].GetText() != "hi" {
					t.Errorf("finish %v message %v", res.Meta.FinishReason, res.Message)
				}
			}},
		{"arguments variants", `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[
			{"function":{"name":"a","arguments":null}},
			{"function":{"name":"b"}},
			{"function":{"name":"c","arguments":[1, 2]}},
			{"function":{"name":"d","arguments":"not json"}},
			{"function":{"name":"e","arguments":{ "z" : 1, "a" : {"y":[true, null]} }}},
			{"id":"call_abc","function":{"name":"f","arguments":{}}},
			{"id":"call_abc","function":{"name":"g","arguments":{}}}
			]},"done":true,"done_reason":"stop"}`, 0,
			func(t *testing.T, res *provider.Result) {
				want := []struct {
					args  string
					valid bool
				}{{"{}", true}, {"{}", true}, {"[1,2]", false}, {"not json", false}, {`{"z":1,"a":{"y":[true,null]}}`, true}, {"{}", true}, {"{}", true}}
				if len(res.Message.Parts) != len(want) || res.Meta.ToolCallCount != int32(len(want)) {
					t.Fatalf("parts %v", res.Message.Parts)
				}
				ids := map[string]bool{}
				for i, p := range res.Message.Parts {
					tc := p.GetToolCall()
					if tc.Arguments != want[i].args || tc.ArgumentsValid != want[i].valid {
						t.Errorf("call %d: %q %v, want %q %v", i, tc.Arguments, tc.ArgumentsValid, want[i].args, want[i].valid)
					}
					if ids[tc.CallId] {
						t.Errorf("duplicate id %s", tc.CallId)
					}
					ids[tc.CallId] = true
				}
				if res.Message.Parts[5].GetToolCall().CallId != "call_abc" {
					t.Errorf("provider id not kept")
				}
				if len(res.Meta.Warnings) != 1 || !strings.Contains(res.Meta.Warnings[0], "repeats id") {
					t.Errorf("warnings %v", res.Meta.Warnings)
				}
			}},
		{"content array and odd fields", `{"model":"m","created_at":"yesterday","message":{"role":"assistant","content":[{"type":"text","text":"a"},"b",{"x":1}],"thinking":7},
			"done":true,"prompt_eval_count":"12","eval_count":-3,"total_duration":1e3}`, 0,
			func(t *testing.T, res *provider.Result) {
				if got := res.Message.Parts[0].GetReasoning().GetText(); got != "7" {
					t.Errorf("reasoning %q", got)
				}
				if got := res.Message.Parts[1].GetText(); got != `ab{"x":1}` {
					t.Errorf("text %q", got)
				}
				if res.Meta.CreateTime != nil || len(res.Meta.Warnings) != 3 {
					t.Errorf("meta %v", res.Meta)
				}
				if u := res.Meta.Usage; u.InputTokens != 12 || u.OutputTokens != 0 || u.TotalTokens != 12 {
					t.Errorf("usage %v", u)
				}
				if _, ok := res.Meta.Extended.Fields["thinking"]; ok || res.Meta.Extended.Fields["total_duration"].GetNumberValue() != 1000 {
					t.Errorf("extended %v", res.Meta.Extended)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := parseChatResponse([]byte(tc.body), "salt", window{})
			if tc.kind != 0 {
				var pe *provider.Error
				if !errors.As(err, &pe) || pe.Kind != tc.kind {
					t.Fatalf("err = %v, want kind %v", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			tc.check(t, res)
		})
	}
}

// checkResultInvariants are what every parsed chat result must satisfy.
func checkResultInvariants(t *testing.T, res *provider.Result) {
	t.Helper()
	if res.Message == nil || res.Message.Role != llmrelayv1.Role_ROLE_ASSISTANT || res.Meta == nil {
		t.Fatalf("bad result %v", res)
	}
	calls, texts := 0, 0
	seen := map[string]bool{}
	for i, p := range res.Message.Parts {
		switch k := p.Kind.(type) {
		case *llmrelayv1.Part_Reasoning:
			// One unsigned thinking text, before the answer.
			r := k.Reasoning
			if i != 0 || r.Text == "" || r.Signature != "" || r.Redacted || r.Id != "" {
				t.Fatalf("bad reasoning part %d: %v", i, r)
			}
		case *llmrelayv1.Part_Text:
			texts++
			if calls > 0 || texts > 1 || k.Text == "" {
				t.Fatalf("bad text part %d", i)
			}
		case *llmrelayv1.Part_ToolCall:
			calls++
			tc := k.ToolCall
			if tc.CallId == "" || seen[tc.CallId] {
				t.Fatalf("bad call id %q", tc.CallId)
			}
			seen[tc.CallId] = true
			if tc.ArgumentsValid != providertest.IsJSONObject(tc.Arguments) {
				t.Fatalf("arguments_valid %v for %q", tc.ArgumentsValid, tc.Arguments)
			}
		default:
			t.Fatalf("unexpected part %v", p)
		}
	}
	if int(res.Meta.ToolCallCount) != calls {
		t.Fatalf("tool_call_count %d, %d calls", res.Meta.ToolCallCount, calls)
	}
	if fr := res.Meta.FinishReason; (calls > 0 && (fr == llmrelayv1.FinishReason_FINISH_REASON_STOP || fr == llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED)) ||
		(calls == 0 && fr == llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS) {
		t.Fatalf("finish reason %v with %d calls", res.Meta.FinishReason, calls)
	}
	if u := res.Meta.Usage; u != nil && (u.TotalTokens != u.InputTokens+u.OutputTokens || u.InputTokens < 0 || u.OutputTokens < 0) {
		t.Fatalf("bad usage %v", u)
	}
}

func FuzzParseChatResponse(f *testing.F) {
	for _, name := range []string{"chat_text", "chat_tools_parallel", "chat_tools_malformed", "chat_vision", "chat_tool_results", "chat_thinking",
		"chat_thinking_tools", "chat_thinking_followup", "error_404", "tools19_chat_same_name_calls"} {
		f.Add(providertest.Load(f, td(name+".http")).Body)
	}
	f.Add([]byte(`{"message":{"content":[1,{"text":null}],"tool_calls":[{"id":"x","function":{"arguments":"{}"}},{"id":"x"}]},"done":true}`))
	f.Add([]byte(`{"message":{"content":"a"},"done":true,"done_reason":["length"],"prompt_eval_count":true,"eval_count":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := parseChatResponse(body, "salt", window{})
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Provider != "ollama" {
				t.Fatalf("error is not an ollama *provider.Error: %v", err)
			}
			return
		}
		checkResultInvariants(t, res)
		// The gateway sends both as protobuf: their strings must be UTF-8.
		for _, m := range []proto.Message{res.Message, res.Meta} {
			if _, err := proto.Marshal(m); err != nil {
				t.Fatalf("does not marshal: %v", err)
			}
		}
	})
}

func FuzzParseEmbedResponse(f *testing.F) {
	f.Add(providertest.Load(f, td("embed.http")).Body, 2)
	f.Add([]byte(`{"embeddings":[[1e39],[]]}`), 2)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		if n < 0 || n > 1000 {
			return
		}
		res, err := parseEmbedResponse(body, n)
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not *provider.Error: %v", err)
			}
			return
		}
		if len(res.Embeddings) != n || int(res.Meta.EmbeddingsCount) != n {
			t.Fatalf("%d embeddings for %d inputs", len(res.Embeddings), n)
		}
		for i, e := range res.Embeddings {
			if int(e.Index) != i || len(e.Values) == 0 {
				t.Fatalf("embedding %d: %v", i, e)
			}
		}
	})
}
