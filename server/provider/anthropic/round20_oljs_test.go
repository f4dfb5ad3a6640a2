package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 20: traceloop/openllmetry-js's Polly.js HAR recordings
// (testdata/README.md, "Round 20"). The expectations are read off the
// recordings by hand; where the HAR kept the request, the request we build
// for the same call is compared with the one the live API accepted.

// r20SameFields is lcgSameFields after writing the recorded messages'
// string contents as the one text block they stand for (the Messages API's
// shorthand; we always send blocks).
func r20SameFields(t *testing.T, body []byte, recorded string) {
	t.Helper()
	m := r19bJSON(t, []byte(recorded))
	msgs, _ := m["messages"].([]any)
	for _, raw := range msgs {
		msg, _ := raw.(map[string]any)
		if s, ok := msg["content"].(string); ok {
			msg["content"] = []any{map[string]any{"type": "text", "text": s}}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	lcgSameFields(t, body, string(b))
}

// TestRound20OljsThinking: claude-opus-4-1-20250805 (August 2025) through
// the beta Messages endpoint with thinking (budget 1024, max_tokens 2048)
// and the interleaved-thinking beta: a signed thinking block, then the
// text; end_turn; 49 in, 186 out, the cache_creation split all zeros;
// service_tier standard. The request id is the request-id header; the
// limits the anthropic-ratelimit-* headers (4000 requests, 2400000 tokens,
// the tokens reset 11:41:58Z).
func TestRound20OljsThinking(t *testing.T) {
	t.Parallel()
	const name = "real_oljs_opus41_thinking"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-opus-4-1-20250805",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is 2+2? Think through this step by step."))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](2048)},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			ThinkingBudgetTokens: ptr[int32](1024),
			Betas:                []string{"interleaved-thinking-2025-05-14"},
		}}},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	const thinking = "This is a very simple arithmetic question. The user is asking for 2+2, which equals 4. They've asked me to think through it step by step, so I should show the basic addition process even though it's elementary."
	const signature = "EvsCCkYIBhgCKkDcMyQ9Uh8CsGT5WmyeuwbI5yYSB1cbUyx5DC/zqmUMb0n5Zyi+Oz/fXpxGLJUmfnKp3zXuuOhybxupMRhBmK+3EgxVj1F8BGfmpqpOxjcaDIbIp9dBQHkej5KsTyIwJDTMjuH/q/vu4Pk/Zf4w9htqsZOPLfYdg/EbXIdeBNV4sJ6Jtiu+KzBg4O5fTgjPKuIBuD8ob8cR9xna6cV8JHxfUT9IeX3huQ2oF/vJC/99vqn4F//OEjiN8kCKPlJo28+S72odghUyF8TUITL/UIBWZ3kcQtwCdmytlB1+2Bld5osVVmOi4KApBkl9cRTOemDzkJHBFmhJ1AuUyZ2Fl2hVGmE2ACE8CPYU+iCZpZX2l4tWCT2M1wCaNTwNSqHcQtC/C0H9geP6Vyc2K2P6TcUIuUv8CFVIdqwcYDnbREhlY2Jv7nmaVDSraCvCXWj3Y/sQulDsBOqp6drQAITcWPJI8wbDmw8fIEhcCyujlcpanKzBhhgB"
	const answer = "I'll work through this simple addition step by step.\n\n**Step 1:** Identify what we're adding\n- We have two numbers: 2 and 2\n- We need to add them together\n\n" +
		"**Step 2:** Perform the addition\n- Start with the first number: 2\n- Add the second number: + 2\n- When we combine 2 items with 2 more items, we get 4 items total\n\n" +
		"**Step 3:** State the result\n- 2 + 2 = 4\n\nThe answer is **4**."
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: thinking, Signature: signature}), text(answer)},
		responseID: "msg_018V3xGyrq6nc25GVuWiaKHx", model: "claude-opus-4-1-20250805", requestID: "req_011CSLo11ceKMKF1kTBWoKxZ",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(49, 186, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2025, 8, 21, 11, 41, 58, 0, time.UTC),
	})
	if res.Meta.GetServiceTier() != "standard" {
		t.Errorf("service tier %q", res.Meta.GetServiceTier())
	}
	sent := srv.Last(t)
	// The whole recorded request: every field the SDK sent is ours too.
	r20SameFields(t, sent.Body, `{"max_tokens":2048,"messages":[{"role":"user","content":"What is 2+2? Think through this step by step."}],"model":"claude-opus-4-1-20250805","thinking":{"type":"enabled","budget_tokens":1024}}`)
	if got := sent.Header.Get("anthropic-beta"); got != "interleaved-thinking-2025-05-14" {
		t.Errorf("anthropic-beta %q, recorded interleaved-thinking-2025-05-14", got)
	}
	if got := sent.Header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("anthropic-version %q", got)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound20OljsSystemPrefill: claude-3-opus-20240229 (July 2025), asked
// with a system prompt and a conversation ending with the assistant's
// "Hello" (a prefill) and max_tokens 10. The model continues the prefill:
// "! How can I assist you today?", cut by max_tokens (10 out, 14 in). The
// recorded request is the one we build: system as a string, the two turns
// with string content, the assistant's last.
func TestRound20OljsSystemPrefill(t *testing.T) {
	t.Parallel()
	const name = "real_oljs_opus3_system_prefill"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-3-opus-20240229",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Hi")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Hello")),
		},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](10)},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("! How can I assist you today?")},
		responseID: "msg_01U3xjyNSAcrYd1yog1ADg24", model: "claude-3-opus-20240229", requestID: "req_011CRBAquydCMPrCJEUky2Sx",
		finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
		usage:         usageOf(14, 10, 0, 0, 0),
		requestsLimit: 1000, tokensLimit: 48000, tokensReset: time.Date(2025, 7, 16, 18, 27, 59, 0, time.UTC),
	})
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":10,"model":"claude-3-opus-20240229","system":"You are a helpful assistant","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound20OljsModelFirst: claude-3-haiku-20240307 (November 2025) with
// the Vercel AI SDK: the body names the model before the id (the API's
// field order had changed), "Hello! How can I assist you today?",
// end_turn, 8 in, 12 out; a retry-after: 58 on the 200, which is no
// error's and not a limit we report. The recorded request (content as a
// text block list) carries the same fields as ours.
func TestRound20OljsModelFirst(t *testing.T) {
	t.Parallel()
	const name = "real_oljs_haiku3_model_first"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-3-haiku-20240307",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Hello"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096)},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Hello! How can I assist you today?")},
		responseID: "msg_01RRXVLq5fWEF2uvo2Xt93GA", model: "claude-3-haiku-20240307", requestID: "req_011CVHdCwqFtFbhVbj71hyMf",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(8, 12, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 11, 19, 17, 15, 7, 0, time.UTC),
	})
	if res.Meta.GetServiceTier() != "standard" {
		t.Errorf("service tier %q", res.Meta.GetServiceTier())
	}
	sent := r19bJSON(t, srv.Last(t).Body)
	if sent["model"] != "claude-3-haiku-20240307" || sent["max_tokens"] != float64(4096) {
		t.Errorf("sent model %v max_tokens %v", sent["model"], sent["max_tokens"])
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}

// TestRound20OljsStream: claude-3-opus-20240229 (June 2025), streamed: every
// event's JSON but the ping's padded with spaces before its last brace (up
// to 15), a ping after the block starts, a delta that is the emoji 😄 on
// its own, escaped quotes across deltas (`d \"trace`, `\" as`); end_turn;
// 17 in, 158 out (message_start's output_tokens 1 is replaced by
// message_delta's, not added). The recorded request is ours.
func TestRound20OljsStream(t *testing.T) {
	t.Parallel()
	const name = "real_oljs_opus3_stream"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-3-opus-20240229",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Tell me a joke about OpenTelemetry"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](1024)},
	}
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
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
	pieces := []string{"Sure", ", here's a", " joke about OpenT", "elemetry:", "\n\nWhy did the", " developer choose OpenTel", "emetry for",
		" their distribute", "d system", "?", "\n\nBecause they", " wanted to trace", " their", " way", " to", " the root of all", " evil!", " ", "😄",
		"\n\nExplanation", ": OpenTel", "emetry is an", " open-source observ", "ability framework that provides", " a", " set", " of APIs", ",",
		" libraries, and tools", " to instrument", ", generate, collect", ", and export", " tel", "emetry data (", "metrics, logs", ", and traces) for",
		" distributed systems. It", " helps developers trace", " and monitor the behavior", " and performance of their applications", " across multiple services",
		" an", "d components", ". The", " joke plays", " on the wor", "d \"trace", "\" as", " a reference", " to both", " distribute", "d tr", "acing in",
		" Open", "Telemetry", " and the idi", "om \"trace", " something", " to its", " source or", " origin.\""}
	var got []string
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			got = append(got, ev.Text)
		}
	}
	if strings.Join(got, "\x00") != strings.Join(pieces, "\x00") {
		t.Errorf("text pieces\n got %q\nwant %q", got, pieces)
	}
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text(strings.Join(pieces, ""))},
		responseID: "msg_0178nRhNdfNKxFcZRFqApVgL", model: "claude-3-opus-20240229", requestID: "req_011CPyP4mVdYqDUHxqdFDszC",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(17, 158, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 6, 9, 21, 46, 40, 0, time.UTC),
	})
	if f.meta.GetServiceTier() != "standard" {
		t.Errorf("service tier %q", f.meta.GetServiceTier())
	}
	r20SameFields(t, srv.Last(t).Body, `{"max_tokens":1024,"messages":[{"role":"user","content":"Tell me a joke about OpenTelemetry"}],"model":"claude-3-opus-20240229","stream":true}`)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
}

// TestRound20OljsApril2024: claude-3-opus-20240229 (April 2024, the
// Anthropic JS SDK 0.20.1), unary: the body as the API wrote it then
// (model after the content, usage with input and output counts only: no
// cache counts, no service_tier), end_turn, 17 in, 180 out. The response
// has a request-id but no anthropic-ratelimit-* headers (the API did not
// send them yet), so there is no rate limit and no service tier. The
// recorded request (pretty-printed by that SDK) carries the fields we send.
func TestRound20OljsApril2024(t *testing.T) {
	t.Parallel()
	const name = "real_oljs_opus3_apr2024"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-3-opus-20240229",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Tell me a joke about OpenTelemetry"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](1024)},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	const answer = "Sure, here's a joke about OpenTelemetry:\n\nWhy did the developer start using OpenTelemetry?\n" +
		"Because they wanted to trace their steps and get span-tastic insights into their application's performance!\n\nExplanation:\n" +
		"OpenTelemetry is an open-source framework that provides a standardized way to generate, collect, and export telemetry data (traces, metrics, and logs) for distributed systems. " +
		"The joke plays on the concept of tracing, which involves tracking the flow of requests through an application, and spans, which represent individual units of work within a trace.\n\n" +
		"The term \"span-tastic\" is a pun combining the words \"span\" and \"fantastic,\" emphasizing the developer's excitement about the insights they can gain from using OpenTelemetry to monitor and analyze their application's performance."
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer)},
		responseID: "msg_013cxz8qnXNcSj1T8zYtvTz5", model: "claude-3-opus-20240229", requestID: "req_01KVi9KJu77aGUxCqVF99yqS",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage: usageOf(17, 180, 0, 0, 0),
	})
	if res.Meta.GetServiceTier() != "" {
		t.Errorf("service tier %q, the body has none", res.Meta.GetServiceTier())
	}
	r20SameFields(t, srv.Last(t).Body, "{\n  \"max_tokens\": 1024,\n  \"messages\": [\n    {\n      \"role\": \"user\",\n      \"content\": \"Tell me a joke about OpenTelemetry\"\n    }\n  ],\n  \"model\": \"claude-3-opus-20240229\"\n}")
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
}
