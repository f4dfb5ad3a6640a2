package openai

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 20: elastic/elastic-otel-node's nock recordings of its OpenAI
// instrumentation tests (testdata/README.md, "Round 20: nock recordings").
// open-telemetry/opentelemetry-js-contrib's Responses hosted-tool
// mock-responses were read and skipped: they are hand-written (see the
// README). The expectations are read off the recording by hand.

// The request body nock kept for streaming-parallel-tool-calls.json.
const eonParallelReq = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant providing weather updates."},{"role":"user","content":"What is the weather in New York and London?"}],"stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"get_weather","strict":true,"parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"],"additionalProperties":false}}}]}`

func TestRound20EONStreamingParallelToolCalls(t *testing.T) {
	t.Parallel()
	const name = "real_eon_streaming_parallel_tool_calls"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4o-mini", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant providing weather updates.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in New York and London?")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Strict: proto.Bool(true),
			Parameters: `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"],"additionalProperties":false}`}},
	}
	evs, f, srv := oljsStream(t, name, kOpenAI, req)

	// Two calls, keyed by their call ids, with the exact argument bytes
	// the fragments concatenate to.
	ids := [2]string{"call_pPFjIPIb7W7HkxCqGdpTIzVy", "call_pORZbhSG8VtXET83iaotru1X"}
	args := [2]string{`{"location": "New York"}`, `{"location": "London"}`}
	parts := f.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	for i, p := range parts {
		if c := p.GetToolCall(); c.GetCallId() != ids[i] || c.GetName() != "get_weather" || c.GetArguments() != args[i] || !c.GetArgumentsValid() {
			t.Errorf("call %d: %v", i, c)
		}
	}
	var ends int
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCallEnd {
			ends++
		}
	}
	if ends != 2 {
		t.Errorf("%d call ends, want 2", ends)
	}

	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if m.GetResponseId() != "chatcmpl-AupaBx10BqaJquUN3Vqj27CH52Sqg" || m.GetResolvedModel() != "gpt-4o-mini-2024-07-18" ||
		m.GetProviderRequestId() != "req_7a23571960c18acedffeb1db2097b902" || m.GetServiceTier() != "default" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1738108015, 0)) || m.GetToolCallCount() != 2 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	// The usage-only chunk (choices: []) after the finish chunk.
	u := m.GetUsage()
	if u.GetInputTokens() != 56 || u.GetOutputTokens() != 46 || u.GetTotalTokens() != 102 || u.GetCachedInputTokens() != 0 || u.GetReasoningTokens() != 0 {
		t.Errorf("usage %v", u)
	}
	// x-ratelimit-reset-requests 1m4.163s, tokens 12ms, from the Date.
	date := time.Date(2025, 1, 28, 23, 46, 56, 0, time.UTC)
	rl := m.GetRateLimit()
	if rl.GetRequestsLimit() != 10000 || rl.GetRequestsRemaining() != 9992 || rl.GetTokensLimit() != 200000 || rl.GetTokensRemaining() != 199957 ||
		!rl.GetRequestsResetTime().AsTime().Equal(date.Add(64163*time.Millisecond)) || !rl.GetTokensResetTime().AsTime().Equal(date.Add(12*time.Millisecond)) {
		t.Errorf("rate limit %v", rl)
	}

	// The request we build for the same call carries what the live API
	// accepted.
	oljsSent(t, srv.Last(t).Body, eonParallelReq, "model", "messages", "stream", "stream_options", "tools")
}
