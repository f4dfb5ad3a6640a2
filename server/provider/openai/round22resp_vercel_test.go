package openai

import (
	"context"
	"net/http"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// TestRound22EffortNoneSamplingGPT6: the Vercel AI SDK's live answers of
// gpt-6-luna and gpt-6-sol (and gpt-5.6-sol, with an explicit prompt
// cache of 30 minutes) to a request with reasoning effort none,
// temperature 0 (1 for gpt-5.6-sol), top_p 0.9 and max_output_tokens 32,
// which the API took and echoed: the sampling settings must be sent,
// temperature 0 included (a zero that is set is not "unset"). Each answer
// is one message item with phase final_answer and its id, store false
// (true for gpt-5.6-sol), the usage with cache_write_tokens 0, and no
// warning: access_programs, tool_usage, moderation null, reasoning.context
// and .mode, prompt_cache_options are facts the contract has no place for
// and nothing the caller asked about.
func TestRound22EffortNoneSamplingGPT6(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, model, id, msg, text, created string
		temperature, topP                   float64
		in, out                             int32
	}{
		{"real_responses_gpt6_luna_effort_none", "gpt-6-luna", "resp_02751710c14000bf016ac7730ce71887d29ff86a6ce7acb939",
			"msg_02751710c14000bf016ac7730d5b6087d2a1836fc259624b0e", "ok", "2026-10-08T10:40:12Z", 0, 0.9, 13, 5},
		{"real_responses_gpt6_sol_effort_none", "gpt-6-sol", "resp_0220ac7c2d40a764016ac7730c007487d2b9f2a183273e6453",
			"msg_0220ac7c2d40a764016ac7730ca35087d2b21ca9b5ed070d59", "ok", "2026-10-08T10:40:12Z", 0, 0.9, 13, 5},
		{"real_responses_gpt56_sol_prompt_cache_options", "gpt-5.6-sol", "resp_0673f9b3b0bbc1c2006a91afc6af1087d28bd82134caca9fb6",
			"msg_0673f9b3b0bbc1c2006a91afc73ad087d28b6b47296a394b31", "OK", "2026-08-28T15:56:54Z", 1, 0.98, 41, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: tc.model, Format: formatResponses, Reasoning: true,
				Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Reply with ok."))},
				Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(32), Temperature: proto.Float64(tc.temperature), TopP: proto.Float64(tc.topP),
					ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE}}
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			sent := decodeBody(t, srv.Last(t).Body)
			for k, v := range map[string]any{"temperature": tc.temperature, "top_p": tc.topP, "max_output_tokens": 32.0} {
				if got, ok := sent[k]; !ok || got != v {
					t.Errorf("%s sent as %v (present %v), want %v", k, got, ok, v)
				}
			}
			if r, _ := sent["reasoning"].(map[string]any); r["effort"] != "none" {
				t.Errorf("reasoning %v", sent["reasoning"])
			}
			if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != tc.text || p[0].GetPhase() != "final_answer" || p[0].GetItemId() != tc.msg {
				t.Errorf("parts %v", p)
			}
			m := res.Meta
			wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: tc.in, OutputTokens: tc.out, TotalTokens: tc.in + tc.out}); !proto.Equal(m.GetUsage(), want) {
				t.Errorf("usage %v, want %v", m.GetUsage(), want)
			}
			if m.GetResponseId() != tc.id || m.GetResolvedModel() != tc.model || m.GetServiceTier() != "default" ||
				m.GetCreateTime().AsTime().Format("2006-01-02T15:04:05Z") != tc.created || len(m.GetWarnings()) != 0 {
				t.Errorf("meta %v", m)
			}
		})
	}
}

// TestRound22InputItemErrors: OpenAI's 400s for an input the Responses
// API cannot take, as the Vercel AI SDK's fixtures keep them (the body
// only: the status line is ours, OpenAI's for invalid_request_error; no
// request id): a function_call item without arguments (param
// input[0].arguments, code missing_required_parameter), a
// function_call_output or shell_call_output whose call is not in the
// input, and an item sent twice (a tool_search_call). Each is an invalid
// request with OpenAI's param and message, code as sent or, null, the
// type; never retried.
func TestRound22InputItemErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, code, param, msg string }{
		{"real_responses_err_400_missing_arguments", "missing_required_parameter", "input[0].arguments",
			"Missing required parameter: 'input[0].arguments'."},
		{"real_responses_err_400_no_tool_call", "invalid_request_error", "input",
			"No tool call found for function call output with call_id call_SjdIRQnfceiXp0D5eZCcjlxW."},
		{"real_responses_err_400_no_shell_call", "invalid_request_error", "input",
			"No tool call found for shell call output with call_id call_Mh54tZUuj5gccgizm3BBx288."},
		{"real_responses_err_400_duplicate_item", "invalid_request_error", "input",
			"Duplicate item found with id tsc_077457e674332594006a606a565ac081a090a3f60cd0d63c21. Remove duplicate items from your input and try again."},
	} {
		for _, streaming := range []bool{false, true} {
			name := tc.name
			if streaming {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				srv := providertest.ReplayFile(t, td(tc.name+".http"))
				req := simpleRequest("gpt-5.4")
				req.Format = formatResponses
				p := newTestProvider(t, kOpenAI, srv.URL)
				var err error
				if streaming {
					var s provider.Stream
					if s, err = p.Stream(context.Background(), req); s != nil {
						t.Fatal("stream returned with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), req)
					providertest.Golden(t, td(tc.name+".golden"), []byte(renderErr(err)+"\n"))
				}
				e := providerError(t, err)
				if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != http.StatusBadRequest || e.Code != tc.code ||
					e.Param != tc.param || e.Message != tc.msg || e.RequestID != "" || e.RetryAfter != 0 {
					t.Errorf("error %+v", e)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests, want 1 (not retried)", n)
				}
			})
		}
	}
}

// TestRound22O3NamedToolChoice: the Vercel AI SDK's live answer of o3
// (vercel/ai#7082, July 2026) to a request forcing one strict function,
// semantic_scholar_search, with max_output_tokens 200 and effort medium:
// a reasoning item (the SDK authors replaced its encrypted_content with
// "[redacted]", relayed as it is) and the call with all four arguments,
// the optional ones the model filled with 10, 0 and 0 as strict mode makes
// it. The named choice goes as {"type":"function","name":…}, which the
// API echoed.
func TestRound22O3NamedToolChoice(t *testing.T) {
	t.Parallel()
	const name = "real_responses_o3_named_tool_choice"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "o3", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Find papers about machine learning."))},
		Tools: []*llmrelayv1.Tool{{Name: "semantic_scholar_search", Description: "Search academic papers using Semantic Scholar API.", Strict: proto.Bool(true),
			Parameters: `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"},"offset":{"type":"integer","minimum":0},"year":{"type":"integer"}},"required":["query","limit","offset","year"],"additionalProperties":false}`}},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(200), ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM,
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "semantic_scholar_search"}}}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	sent := decodeBody(t, srv.Last(t).Body)
	if tc, _ := sent["tool_choice"].(map[string]any); len(tc) != 2 || tc["type"] != "function" || tc["name"] != "semantic_scholar_search" || sent["max_output_tokens"] != 200.0 {
		t.Errorf("sent tool_choice %v, max_output_tokens %v", sent["tool_choice"], sent["max_output_tokens"])
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetId() != "rs_08c7eac45286fefb006a5f41bc7b8881a3a8cc432451e96393" || r.GetSignature() != "[redacted]" || r.GetText() != "" {
		t.Errorf("reasoning %v", r)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_2mhz5FtwkZnzXQkTOMtYZpZH" || c.GetName() != "semantic_scholar_search" ||
		c.GetArguments() != `{"query":"machine learning","limit":10,"offset":0,"year":0}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 114, OutputTokens: 88, TotalTokens: 202}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_08c7eac45286fefb006a5f41b9009881a39f24f2b7f3b2f31c" || m.GetResolvedModel() != "o3-2025-04-16" ||
		m.GetToolCallCount() != 1 || m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound22ShellLocalTurn2: the Vercel AI SDK's live second turn of a
// local shell run with gpt-5.2 (effort none, February 2026): after the
// client ran the shell_call and sent its output (items the contract has
// no place for; this request is ours, a plain question), the answer is
// one message without phase; 444 in, 12 out.
func TestRound22ShellLocalTurn2(t *testing.T) {
	t.Parallel()
	res := r21Unary(t, "real_responses_shell_local_turn2", r21Request("gpt-5.2", "Which CPU architecture is this machine?"))
	r21Answer{text: "`arm64` (Apple Silicon).", usage: &llmrelayv1.Usage{InputTokens: 444, OutputTokens: 12, TotalTokens: 456},
		id: "resp_06a97f431a8c75fa006994e8315b948190b6dc8aec4581c6c9", model: "gpt-5.2-2025-12-11"}.check(t, res.Message, res.Meta)
	if p := res.Message.GetParts(); p[0].GetItemId() != "msg_06a97f431a8c75fa006994e832264081908b782fc114dcad69" || p[0].GetPhase() != "" {
		t.Errorf("part %v", p[0])
	}
}
