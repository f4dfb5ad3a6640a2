package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17: Mirascope/mirascope's e2e cassettes (see testdata/README.md,
// "Round 17").

func mirascopeRequest(prompt string, maxTokens int32) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    "claude-sonnet-4-0",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(prompt))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr(maxTokens)},
	}
}

// TestRound17MirascopeAuthenticationError: the API refusing the key
// (December 2025), unary and streamed, each with its own request id: 401
// authentication_error "invalid x-api-key", the request id in the header and
// the body, x-should-retry: false, no rate-limit header. The gateway's own
// key was refused: KindUnauthenticated (the server's kind table: gRPC
// Unauthenticated, ErrorInfo reason UPSTREAM_UNAUTHENTICATED, upstreamCode
// authentication_error, upstreamStatus 401), not retried, no field blamed;
// the message is the API's. A stream gets the error before any event.
func TestRound17MirascopeAuthenticationError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, requestID string
		streaming       bool
	}{
		{"real_mirascope_authentication_error", "req_011CWdMEehrhsdujMyQ9pChP", false},
		{"real_mirascope_authentication_error_stream", "req_011CWdMFGmmtqDd5uETFt98k", true},
	} {
		srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
		p := newTestProvider(t, srv.URL)
		req := mirascopeRequest("This should fail with AuthenticationError", 16000)
		var err error
		if tc.streaming {
			var s provider.Stream
			s, err = p.Stream(context.Background(), req)
			if s != nil {
				t.Fatalf("%s: Stream returned a stream with an error status", tc.file)
			}
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %T %v is not a *provider.Error", tc.file, err, err)
		}
		if pe.Provider != "anthropic" || pe.Kind != provider.KindUnauthenticated || pe.HTTPStatus != 401 ||
			pe.Code != "authentication_error" || pe.Message != "invalid x-api-key" || pe.Param != "" ||
			pe.RetryAfter != 0 || pe.ShouldRetry != provider.RetryDiscouraged || pe.RequestID != tc.requestID {
			t.Errorf("%s: got kind=%v status=%d code=%q msg=%q param=%q retry=%v advice=%v rid=%q", tc.file,
				pe.Kind, pe.HTTPStatus, pe.Code, pe.Message, pe.Param, pe.RetryAfter, pe.ShouldRetry, pe.RequestID)
		}
		if pe.Meta.GetProviderRequestId() != tc.requestID || pe.Meta.GetRateLimit() != nil || len(pe.Meta.GetExtended().GetFields()) != 0 {
			t.Errorf("%s: meta %v, want the request id only", tc.file, pe.Meta)
		}
		lcgSameFields(t, srv.Last(t).Body, `{"max_tokens":16000,"messages":[{"role":"user","content":[{"type":"text","text":"This should fail with AuthenticationError"}]}],"model":"claude-sonnet-4-0"}`)
	}
}

// TestRound17MirascopeMaxTokensStream: claude-sonnet-4-0 (answering as
// claude-sonnet-4-20250514, model before id) cut by max_tokens 50 in the
// middle of a numbered list ("…8. Delaware\n9"): FINISH_REASON_LENGTH, the
// text written so far kept whole, a ping between two deltas, message_delta
// repeating input_tokens and the zero cache counts (50 out, up from 4). No
// tool call, so nothing is flagged cut. service_tier standard, no
// inference_geo (October 2025); the four rate-limit header families.
func TestRound17MirascopeMaxTokensStream(t *testing.T) {
	t.Parallel()
	const name = "real_mirascope_max_tokens_stream"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), mirascopeRequest("List all U.S. states.", 50))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated %v, folded %v", got, f.message)
	}
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{text("Here are all 50 U.S. states in alphabetical order:\n\n1. Alabama\n2. Alaska\n3. Arizona\n4. Arkansas\n" +
			"5. California\n6. Colorado\n7. Connecticut\n8. Delaware\n9")},
		responseID: "msg_01UuVuexmaaZ5vovacduShYr", model: "claude-sonnet-4-20250514", requestID: "req_011CUDKoyeYWX5Ty97GBAEpX",
		finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
		usage:         usageOf(15, 50, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2025, 10, 17, 19, 30, 9, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	if _, ok := f.meta.GetExtended().GetFields()[provider.ExtUsageDetails]; ok {
		t.Errorf("usage_details %v, want none (every detail is zero)", f.meta.GetExtended().GetFields()[provider.ExtUsageDetails])
	}
	if n := countKind(evs, provider.EventText); n != 7 {
		t.Errorf("%d text deltas, want the recording's 7", n)
	}
	lcgSameFields(t, srv.Last(t).Body, `{"max_tokens":50,"messages":[{"role":"user","content":[{"type":"text","text":"List all U.S. states."}]}],"model":"claude-sonnet-4-0","stream":true}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
}

// TestRound17MirascopeParallelToolLoop: claude-sonnet-4-0 (September
// 2025), unary: text then two parallel calls of the same tool (passwords
// "mellon" and "radiance"), 410 in, 109 out, cache_creation zeros; after
// both results, a markdown answer quoting them (596 in, 42 out). The live
// API accepted mirascope's second request, which is the first answer whole
// in one assistant turn and both tool_result blocks in one user turn: ours
// from the first answer and the two results is the same messages (the
// first turn as one text block where mirascope sent a string), tools and
// max_tokens.
func TestRound17MirascopeParallelToolLoop(t *testing.T) {
	t.Parallel()
	const first, second = "real_mirascope_call_with_tools_1", "real_mirascope_call_with_tools_2"
	const prompt = "Please retrieve the secrets associated with each of these passwords: mellon,radiance"
	const tools = `"tools":[{"name":"secret_retrieval_tool","description":"A tool that requires a password to retrieve a secret.",` +
		`"input_schema":{"properties":{"password":{"title":"Password","type":"string"}},"required":["password"],"additionalProperties":false,"type":"object"}}]`
	req := mirascopeRequest(prompt, 1024)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "secret_retrieval_tool", Description: "A tool that requires a password to retrieve a secret.",
		Parameters: `{"properties":{"password":{"title":"Password","type":"string"}},"required":["password"],"additionalProperties":false,"type":"object"}`}}
	srv := providertest.ReplayFile(t, "testdata/"+first+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, first, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text("I'll retrieve the secrets for both passwords you provided."),
			toolCallPart("toolu_01CeTQJNTjiT4HL9tmJDNmzz", "secret_retrieval_tool", `{"password":"mellon"}`),
			toolCallPart("toolu_012VGQd2jGxW2itWj5Th7UUg", "secret_retrieval_tool", `{"password":"radiance"}`),
		},
		responseID: "msg_016NAKqhgkqGqdGg87KZ5YWP", model: "claude-sonnet-4-20250514", requestID: "req_011CTBKxpJz637u7HxvnxEKW",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(410, 109, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2025, 9, 16, 2, 56, 31, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	if n := res.Meta.GetToolCallCount(); n != 2 {
		t.Errorf("tool_call_count %d, want 2", n)
	}
	lcgSameFields(t, srv.Last(t).Body, `{"max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"`+prompt+`"}]}],"model":"claude-sonnet-4-0",`+tools+`}`)
	providertest.Golden(t, "testdata/"+first+".golden", renderResult(t, res))

	next := providertest.ReplayFile(t, "testdata/"+second+".http")
	req.Messages = append(req.Messages, res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01CeTQJNTjiT4HL9tmJDNmzz", "Welcome to Moria!", false)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_012VGQd2jGxW2itWj5Th7UUg", "Life before Death", false)))
	res2, err := newTestProvider(t, next.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	body := next.Last(t).Body
	lcgSameMessages(t, "follow-up", body, `[{"role":"user","content":[{"type":"text","text":"`+prompt+`"}]},`+
		`{"role":"assistant","content":[{"type":"text","text":"I'll retrieve the secrets for both passwords you provided."},`+
		`{"type":"tool_use","id":"toolu_01CeTQJNTjiT4HL9tmJDNmzz","name":"secret_retrieval_tool","input":{"password":"mellon"}},`+
		`{"type":"tool_use","id":"toolu_012VGQd2jGxW2itWj5Th7UUg","name":"secret_retrieval_tool","input":{"password":"radiance"}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01CeTQJNTjiT4HL9tmJDNmzz","content":"Welcome to Moria!"},`+
		`{"type":"tool_result","tool_use_id":"toolu_012VGQd2jGxW2itWj5Th7UUg","content":"Life before Death"}]}]`)
	lcgSameFields(t, body, `{"max_tokens":1024,"model":"claude-sonnet-4-0",`+tools+`}`)
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Here are the secrets retrieved for each password:\n\n- **Password \"mellon\"**: \"Welcome to Moria!\"\n- **Password \"radiance\"**: \"Life before Death\"")},
		responseID: "msg_01Qe4htHoFDoaJV6X1CC4cTR", model: "claude-sonnet-4-20250514", requestID: "req_011CTBKxzJW4EQRPBKSJTtUQ",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(596, 42, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2025, 9, 16, 2, 56, 35, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/"+second+".golden", renderResult(t, res2))
	providertest.Golden(t, "testdata/"+second+".request.golden", providertest.RequestGolden(next.Last(t), requestHeaders...))
}

const mirascopePrimesPrompt = "How many primes below 400 contain 79 as a substring? Answer ONLY with the number, not sharing which primes they are."

// mirascopeThinking is a recording's thinking block, read from its body
// independently of the adapter.
func mirascopeThinking(t *testing.T, file string) *llmrelayv1.Reasoning {
	t.Helper()
	var m struct {
		Content []struct{ Type, Thinking, Signature string } `json:"content"`
	}
	if err := json.Unmarshal(rec13Body(t, file), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Content) == 0 || m.Content[0].Type != "thinking" || m.Content[0].Signature == "" {
		t.Fatalf("%s: no signed thinking block first", file)
	}
	return &llmrelayv1.Reasoning{Text: m.Content[0].Thinking, Signature: m.Content[0].Signature}
}

// TestRound17MirascopeThinkingRoundTrip: mirascope's thinking cassette,
// claude-sonnet-4-0 (January 2026), unary. Turn 1, thinking budget 6400: a
// signed thinking block (quotes, ≥, √, ≈, ÷, an em dash, a blank line) and
// the text "3", 67 in, 964 out (no thinking-token detail); the output and
// total token remainders 1000 below their limits. Turn 2 sends the answer
// back with thinking budget 1024 and a cache breakpoint on the new user
// block; the live API accepted it (its body is
// real_mirascope_call_with_thinking_2.recorded_request.json, 5562 bytes,
// the recorded content-length, its thinking and signature equal to turn 1's
// answer). Ours from the first answer is the recorded request: the thinking
// block first with its text and signature unchanged, then the text (without
// mirascope's citations null), the new question; the breakpoint is the
// automatic one (top-level cache_control through extra_body), which the API
// puts on that same last block, since the contract has no per-block mark.
// Turn 2's answer: thinking and "The primes were: 79, 179, and 379.", 97 in,
// 391 out, nothing written to the cache (the prompt is below the minimum).
func TestRound17MirascopeThinkingRoundTrip(t *testing.T) {
	t.Parallel()
	const first, second = "real_mirascope_call_with_thinking_1", "real_mirascope_call_with_thinking_2"
	thinking := func(budget int32, extraBody string) *llmrelayv1.ProviderOptions {
		return &llmrelayv1.ProviderOptions{ExtraBody: extraBody, Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			ThinkingBudgetTokens: ptr(budget)}}}
	}
	req := mirascopeRequest(mirascopePrimesPrompt, 16000)
	req.ProviderOptions = thinking(6400, "")
	srv := providertest.ReplayFile(t, "testdata/"+first+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r1 := mirascopeThinking(t, first)
	if !strings.HasPrefix(r1.GetText(), `I need to find all primes below 400 that contain "79" as a substring.`) ||
		!strings.HasSuffix(r1.GetText(), "379—three primes total.") || !strings.HasPrefix(r1.GetSignature(), "EuURCkYICxgCKkALKYkU00hEuGrQR") {
		t.Fatalf("recorded thinking %q", r1)
	}
	checkLLMWant(t, first, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(r1), text("3")},
		responseID: "msg_01HrjdvbLntMUdxX5XHQunMA", model: "claude-sonnet-4-20250514", requestID: "req_011CWvtcdF5yMQNQWgDa9dhV",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(67, 964, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 9, 0, 53, 37, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`, "ratelimit_output_tokens_remaining": "399000"},
	})
	if rl := res.Meta.GetRateLimit(); rl.GetTokensRemaining() != 2399000 {
		t.Errorf("tokens remaining %d, want 2399000", rl.GetTokensRemaining())
	}
	rec13SameRequest(t, srv.Last(t).Body, `{"max_tokens":16000,"messages":[{"role":"user","content":"`+mirascopePrimesPrompt+`"}],"model":"claude-sonnet-4-0","thinking":{"type":"enabled","budget_tokens":6400}}`, nil)
	providertest.Golden(t, "testdata/"+first+".golden", renderResult(t, res))

	const again = "If you remember what the primes were, then share them, or say 'I don't remember.'"
	next := providertest.ReplayFile(t, "testdata/"+second+".http")
	req.Messages = append(req.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(again)))
	req.ProviderOptions = thinking(1024, `{"cache_control":{"type":"ephemeral"}}`)
	res2, err := newTestProvider(t, next.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	recorded, err := os.ReadFile("testdata/" + second + ".recorded_request.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 5562 {
		t.Fatalf("recorded request is %d bytes, want the recorded content-length 5562", len(recorded))
	}
	var rec map[string]any
	if err := json.Unmarshal(recorded, &rec); err != nil {
		t.Fatal(err)
	}
	// mirascope sends back the text block's citations: null (none), which
	// we leave out.
	for _, m := range rec["messages"].([]any) {
		if c, ok := m.(map[string]any)["content"].([]any); ok {
			for _, b := range c {
				if v, ok := b.(map[string]any)["citations"]; ok && v == nil {
					delete(b.(map[string]any), "citations")
				}
			}
		}
	}
	recJSON, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	got := rec13SameRequest(t, next.Last(t).Body, string(recJSON), []string{"cache_control"}, "cache_control")
	if cc, _ := json.Marshal(got["cache_control"]); string(cc) != `{"type":"ephemeral"}` {
		t.Errorf("top-level cache_control %s, want the automatic ephemeral breakpoint", cc)
	}
	r2 := mirascopeThinking(t, second)
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(r2), text("The primes were: 79, 179, and 379.")},
		responseID: "msg_01DyuMuwbF99Q1iiPXqpF6wj", model: "claude-sonnet-4-20250514", requestID: "req_011CWvtdcjrgoKpHMRSaHJCN",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(97, 391, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 9, 0, 53, 51, 0, time.UTC),
		extended: map[string]string{"service_tier": `"standard"`},
	})
	providertest.Golden(t, "testdata/"+second+".golden", renderResult(t, res2))
	providertest.Golden(t, "testdata/"+second+".request.golden", providertest.RequestGolden(next.Last(t), requestHeaders...))
}
