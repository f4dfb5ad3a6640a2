package openai

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 17 (sources): DataDog/dd-trace-py's VCR cassettes of its OpenAI
// integration tests (testdata/README.md, "Round 17: dd-trace-py's
// cassettes").

// ddUser is a one-message user request on the given format and model.
func ddUser(format, model, prompt string) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Format: format,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(prompt))},
	}
}

// TestRound17DDTraceChatCustomToolCall: gpt-5 (August 2025) calling a
// custom tool (free-form input under a Lark grammar) on Chat Completions,
// unary: the call is {"type": "custom", "custom": {"name", "input"}}, no
// "function" key, content null. It lands as one tool call keyed by the
// provider's call id with the input text as its arguments, as sent ("4 +
// 4", not JSON: arguments_valid false, no warning, no repair), finish
// TOOL_CALLS. Usage: 241 in, 214 out of which 192 reasoning;
// service_tier "default", system_fingerprint null; the rate-limit state
// and request id are the headers'. Our contract has no custom (grammar)
// tool, so the request offers a function of the same name: only the
// answer is replayed.
func TestRound17DDTraceChatCustomToolCall(t *testing.T) {
	t.Parallel()
	req := ddUser("openai-chat", "gpt-5", "Use the math_exp tool to add four plus four.")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "math_exp", Description: "Creates valid mathematical expressions"}}
	res := replayRound13Unary(t, "real_ddtrace_chat_custom_tool_call", req)
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	call := parts[0].GetToolCall()
	if call.GetCallId() != "call_QpgJRI5C9DcjExMNU6lrJPcu" || call.GetName() != "math_exp" || call.GetArguments() != "4 + 4" || call.GetArgumentsValid() {
		t.Errorf("call %v", call)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if want := (&llmrelayv1.Usage{InputTokens: 241, OutputTokens: 214, TotalTokens: 455, ReasoningTokens: 192}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-C6kAsNPg913qfMOD9hFN60JhdZNlz" || m.GetResolvedModel() != "gpt-5-2025-08-07" ||
		m.GetProviderRequestId() != "req_611954e1d30494f191e4680d1c99b6e2" || m.GetServiceTier() != "default" ||
		!m.GetCreateTime().AsTime().Equal(time.Unix(1755723498, 0)) {
		t.Errorf("meta %v", m)
	}
	rl := m.GetRateLimit()
	if rl.GetRequestsLimit() != 15000 || rl.GetRequestsRemaining() != 14999 || rl.GetTokensLimit() != 40000000 || rl.GetTokensRemaining() != 39999987 {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound17DDTraceGPT56Cache: gpt-5.6-sol (July 2026), 100 output
// tokens allowed, with a 1.2k-token system prompt written to the cache,
// then read from it.
//
// Chat Completions: both answers spent all 100 tokens on reasoning and
// came back with content "" and finish "length": no text part, finish
// LENGTH. The first wrote 1217 prompt tokens to the cache
// (prompt_tokens_details.cache_write_tokens), the second read 1216
// (cached_tokens) and wrote none (cache_write_tokens 0).
//
// Responses API (the write): status "incomplete", incomplete_details
// max_output_tokens; an empty reasoning item (summary [], no
// encrypted_content), kept as a reasoning part holding only the item id
// (what store: true lets a next turn refer to), then a message item, status incomplete, phase
// "final_answer", with the text written before the cut; 54 of the 100
// output tokens reasoning, 1217 input tokens written to the cache; the
// response echoes instructions, prompt_cache_retention "24h", tool_usage
// and billing, none of which is ours to relay.
func TestRound17DDTraceGPT56Cache(t *testing.T) {
	t.Parallel()
	rl := func(t *testing.T, m *llmrelayv1.ResponseMeta, remaining int64) {
		t.Helper()
		r := m.GetRateLimit()
		if r.GetRequestsLimit() != 15000 || r.GetRequestsRemaining() != 14999 || r.GetTokensLimit() != 40000000 || r.GetTokensRemaining() != remaining {
			t.Errorf("rate limit %v", r)
		}
	}
	t.Run("chat_write", func(t *testing.T) {
		t.Parallel()
		res := replayRound13Unary(t, "real_ddtrace_chat_gpt56_cache_write", ddUser("openai-chat", "gpt-5.6-sol", "What are the best practices for API design?"))
		if parts := res.Message.GetParts(); len(parts) != 0 {
			t.Errorf("parts %v, want none (content \"\")", parts)
		}
		m := res.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
		if want := (&llmrelayv1.Usage{InputTokens: 1220, OutputTokens: 100, TotalTokens: 1320, ReasoningTokens: 100, CacheCreationInputTokens: 1217}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if m.GetResponseId() != "chatcmpl-E0AeOu004E5onbvs8LtrVv7w8NYn2" || m.GetResolvedModel() != "gpt-5.6-sol" ||
			m.GetProviderRequestId() != "req_ed1692f28b27414ebc298d2b377f052d" || m.GetServiceTier() != "default" ||
			!m.GetCreateTime().AsTime().Equal(time.Unix(1783709648, 0)) {
			t.Errorf("meta %v", m)
		}
		rl(t, m, 39998186)
	})
	t.Run("chat_read", func(t *testing.T) {
		t.Parallel()
		res := replayRound13Unary(t, "real_ddtrace_chat_gpt56_cache_read", ddUser("openai-chat", "gpt-5.6-sol", "How should I structure my database schema?"))
		if parts := res.Message.GetParts(); len(parts) != 0 {
			t.Errorf("parts %v, want none (content \"\")", parts)
		}
		m := res.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
		if want := (&llmrelayv1.Usage{InputTokens: 1219, OutputTokens: 100, TotalTokens: 1319, ReasoningTokens: 100, CachedInputTokens: 1216}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if m.GetResponseId() != "chatcmpl-E0AgaLApKtQTZEFO63IEjpTo5ESg3" || m.GetResolvedModel() != "gpt-5.6-sol" ||
			m.GetProviderRequestId() != "req_c6a45cf58ac0403da4a053aaad18dba5" || m.GetServiceTier() != "default" ||
			!m.GetCreateTime().AsTime().Equal(time.Unix(1783709784, 0)) {
			t.Errorf("meta %v", m)
		}
		rl(t, m, 39998186)
	})
	t.Run("responses_write", func(t *testing.T) {
		t.Parallel()
		res := replayRound13Unary(t, "real_ddtrace_responses_gpt56_cache_write", ddUser(formatResponses, "gpt-5.6-sol", "What are the best practices for API design?"))
		const want = "Good API design makes an API **predictable, consistent, secure, evolvable, and easy to operate**.\n\n## 1. Design around consumer use cases\n\n- Identify core workflows before defining endpoints"
		var texts []string
		reasoning := 0
		for _, p := range res.Message.GetParts() {
			switch {
			case p.GetText() != "":
				texts = append(texts, p.GetText())
				if p.GetPhase() != "final_answer" {
					t.Errorf("phase %q, want final_answer", p.GetPhase())
				}
			case p.GetReasoning() != nil:
				r := p.GetReasoning()
				if r.GetId() != "rs_0e43f2340229131f016a513fd8e8408192ac4f65b55010a798" || r.GetText() != "" || len(r.GetSignature()) != 0 || len(texts) != 0 {
					t.Errorf("reasoning part %v", p)
				}
				reasoning++
			default:
				t.Errorf("part %v", p)
			}
		}
		if len(texts) != 1 || texts[0] != want || reasoning != 1 {
			t.Errorf("text %q, %d reasoning parts", texts, reasoning)
		}
		m := res.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens")
		if want := (&llmrelayv1.Usage{InputTokens: 1220, OutputTokens: 100, TotalTokens: 1320, ReasoningTokens: 54, CacheCreationInputTokens: 1217}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if m.GetResponseId() != "resp_0e43f2340229131f016a513fd83808819280e0015a42a56ba2" || m.GetResolvedModel() != "gpt-5.6-sol" ||
			m.GetProviderRequestId() != "req_52ba3534e6e0406abd04d9bb92a1ab54" || m.GetServiceTier() != "default" ||
			!m.GetCreateTime().AsTime().Equal(time.Unix(1783709656, 0)) {
			t.Errorf("meta %v", m)
		}
		if m.GetRateLimit() != nil {
			t.Errorf("rate limit %v from a response without x-ratelimit headers", m.GetRateLimit())
		}
	})
}

// TestRound17DDTraceDeepSeekV4ProReasoningStream: DeepSeek's
// deepseek-v4-pro (May 2026, thinking enabled, reasoning_effort high)
// streamed on api.deepseek.com: the first chunk opens with role, content
// null and reasoning_content ""; 34 reasoning_content deltas (content
// null beside each) then 12 content deltas (reasoning_content null beside
// each); the finish "stop" and the usage on one last chunk whose content
// is "" (no separate choices: [] chunk), then [DONE]. The answer is one
// reasoning part and one text part, the usage 17 in, 47 out of which 34
// reasoning, no cached tokens (prompt_cache_hit_tokens 0); the provider
// request id is x-ds-trace-id (DeepSeek sends no x-request-id), the
// response id the chunks' UUID, no rate-limit state.
func TestRound17DDTraceDeepSeekV4ProReasoningStream(t *testing.T) {
	t.Parallel()
	req := ddUser("openai-chat", "deepseek-v4-pro", "What is 17 * 23?")
	f, evs := replayRound13Stream(t, "real_ddtrace_deepseek_v4_pro_reasoning_stream", req)
	var reasoningDeltas, textDeltas int
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventReasoning:
			reasoningDeltas++
		case provider.EventText:
			textDeltas++
		}
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != `We are asked: "What is 17 * 23?" This is a simple multiplication. 17 * 23 = 391. I'll provide the answer.` ||
		parts[1].GetText() != "The product of 17 and 23 is 391." {
		t.Fatalf("parts %v", parts)
	}
	if reasoningDeltas != 34 || textDeltas != 12 {
		t.Errorf("%d reasoning and %d text events, want one a delta: 34 and 12 (the opening \"\" and the closing \"\" are none)", reasoningDeltas, textDeltas)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 17, OutputTokens: 47, TotalTokens: 64, ReasoningTokens: 34}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "66e83c57-5cb1-4eb9-b727-28651c2220c7" || m.GetResolvedModel() != "deepseek-v4-pro" ||
		m.GetProviderRequestId() != "941fd38e84fd48b9698bc3ec2305d395" || m.GetRateLimit() != nil || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound17DDTraceResponsesStreamIncomplete: gpt-4o (July 2025) on the
// Responses API, streamed, cut by max_output_tokens 16: sixteen text
// deltas, the message item done with status "incomplete", then
// response.incomplete (incomplete_details max_output_tokens) whose usage
// is all zeros although sixteen tokens were streamed: the answer is the
// text as streamed, finish LENGTH, and no usage (a count of nothing is
// not the answer's usage) with a warning that says so; service_tier "auto" in response.created, "default" (the tier
// that served it) at the end.
func TestRound17DDTraceResponsesStreamIncomplete(t *testing.T) {
	t.Parallel()
	req := ddUser(formatResponses, "gpt-4o", "Give me a multi paragraph narrative on the life of a car")
	req.Options = &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(16), Temperature: proto.Float64(0.1)}
	f, evs := replayRound13Stream(t, "real_ddtrace_responses_stream_incomplete", req)
	n := 0
	for _, ev := range evs {
		if ev.Kind == provider.EventText {
			n++
		}
	}
	parts := f.Message.GetParts()
	if len(parts) != 1 || parts[0].GetText() != "In the bustling city of Detroit, a sleek, metallic blue sedan rolled off the" || n != 16 {
		t.Fatalf("parts %v, %d text events", parts, n)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens")
	if m.GetUsage() != nil || len(m.GetWarnings()) != 1 || !strings.Contains(m.GetWarnings()[0], "usage counts no tokens at all") {
		t.Errorf("usage %v, warnings %q: want no usage and the warning that says why", m.GetUsage(), m.GetWarnings())
	}
	if m.GetResponseId() != "resp_6866d2dec420819c92534dcf75e475120847a84b87aad89c" || m.GetResolvedModel() != "gpt-4o-2024-08-06" ||
		m.GetProviderRequestId() != "req_e5f20714325d29dc7b7e40b8a587ff3d" || m.GetServiceTier() != "default" || m.GetRateLimit() != nil {
		t.Errorf("meta %v", m)
	}
}
