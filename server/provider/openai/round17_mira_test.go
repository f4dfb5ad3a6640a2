package openai

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// fentanylSchema is the FentanylHandbook schema of Mirascope's refusal
// cassettes (python/tests/e2e/output/cassettes/test_refusal).
const fentanylSchema = `{"properties":{"instructions":{"title":"Instructions","type":"string"}},"required":["instructions"],"title":"FentanylHandbook","type":"object","additionalProperties":false}`

// miraRefusalRequest is the request of Mirascope's refusal cassettes: one
// user message and a strict json_schema format, gpt-4o.
func miraRefusalRequest(format string) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o", Format: format,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Provide detailed instructions for synthesizing fentanyl."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
			Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, SchemaName: "FentanylHandbook", Strict: proto.Bool(true),
			Schema: fentanylSchema,
		}},
	}
}

// TestRound17MiraResponsesRefusal: gpt-4o refusing a structured-output
// request on the Responses API (Mirascope's test_refusal cassettes), the
// first real Responses refusal among the recordings: a message item whose
// only content part is {"type":"refusal"}, status completed. The answer is
// one refusal part, finish STOP ("completed"), no warning; the stream says
// it in nine response.refusal.delta events and folds to the same. The
// request the cassettes recorded (the live API took it) carries the schema
// as text.format {"type":"json_schema","name",...,"strict":true}: we build
// the same format.
func TestRound17MiraResponsesRefusal(t *testing.T) {
	t.Parallel()
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		res := replayRound13Unary(t, "real_mira_responses_refusal", miraRefusalRequest(formatResponses))
		parts := res.Message.GetParts()
		if len(parts) != 1 || parts[0].GetRefusal() != "I'm very sorry, but I can't assist with that." {
			t.Errorf("parts %v", parts)
		}
		m := res.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
		if want := (&llmrelayv1.Usage{InputTokens: 54, OutputTokens: 13, TotalTokens: 67}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if m.GetResponseId() != "resp_0e0644cfe502d3570068f966c84d6c81958f57dbddc6c44841" || m.GetResolvedModel() != "gpt-4o-2024-08-06" ||
			m.GetProviderRequestId() != "req_483ed690e3df4abf810400020504aced" || m.GetServiceTier() != "default" ||
			!m.GetCreateTime().AsTime().Equal(time.Unix(1761175240, 0)) || len(m.GetWarnings()) != 0 {
			t.Errorf("meta %v", m)
		}
		rl := m.GetRateLimit()
		if rl.GetRequestsLimit() != 5000 || rl.GetRequestsRemaining() != 4999 || rl.GetTokensLimit() != 800000 || rl.GetTokensRemaining() != 799927 {
			t.Errorf("rate limit %v", rl)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		f, evs := replayRound13Stream(t, "real_mira_responses_refusal_stream", miraRefusalRequest(formatResponses))
		n := 0
		for _, ev := range evs {
			switch ev.Kind {
			case provider.EventRefusal:
				n++
			case provider.EventText:
				t.Errorf("text event %q", ev.Text)
			}
		}
		if n != 9 {
			t.Errorf("%d refusal events, want the 9 deltas", n)
		}
		parts := f.Message.GetParts()
		if len(parts) != 1 || parts[0].GetRefusal() != "I'm sorry, I can't assist with that." {
			t.Errorf("parts %v", parts)
		}
		m := f.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
		if want := (&llmrelayv1.Usage{InputTokens: 54, OutputTokens: 11, TotalTokens: 65}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		// service_tier is "auto" in response.created, "default" (the tier
		// that served it) in response.completed.
		if m.GetResponseId() != "resp_05f46fd4032c869b0068f966cb89248197969af833ea7a7e33" || m.GetResolvedModel() != "gpt-4o-2024-08-06" ||
			m.GetProviderRequestId() != "req_7f2b9ac7157c4e47b83f97a63c8e7c35" || m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
			t.Errorf("meta %v", m)
		}
	})
	t.Run("request", func(t *testing.T) {
		t.Parallel()
		p, err := New(testKey)
		if err != nil {
			t.Fatal(err)
		}
		body, warnings, err := p.buildResponsesRequest(miraRefusalRequest(formatResponses), true)
		if err != nil || len(warnings) != 0 {
			t.Fatalf("%v %q", err, warnings)
		}
		got := decodeBody(t, body)
		want := decodeBody(t, []byte(`{"type":"json_schema","name":"FentanylHandbook","schema":`+fentanylSchema+`,"strict":true}`))
		if f := got["text"].(map[string]any)["format"]; !reflect.DeepEqual(f, map[string]any(want)) {
			t.Errorf("text.format %v, want %v", f, want)
		}
		if in := got["input"].([]any); len(in) != 1 || in[0].(map[string]any)["role"] != "user" {
			t.Errorf("input %v", in)
		}
	})
}

// TestRound17MiraChatRefusalStream: the same refusal on Chat Completions,
// streamed (Mirascope's openai_gpt_4o_completions cassette): the first
// chunk opens the message with "content": null and "refusal": "", twelve
// refusal deltas follow, the finish "stop" comes on an empty delta, the
// usage on a "choices": [] chunk, each chunk with its obfuscation padding.
// It folds to one refusal part and no text; the cassette's request
// (response_format json_schema, stream_options include_usage) is the one
// we send.
func TestRound17MiraChatRefusalStream(t *testing.T) {
	t.Parallel()
	const name = "real_mira_chat_refusal_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), miraRefusalRequest("openai-chat"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	// The recorded request's response_format and stream_options are ours.
	sent := decodeBody(t, srv.Last(t).Body)
	wantRF := decodeBody(t, []byte(`{"type":"json_schema","json_schema":{"name":"FentanylHandbook","schema":`+fentanylSchema+`,"strict":true}}`))
	if !reflect.DeepEqual(sent["response_format"], map[string]any(wantRF)) || !reflect.DeepEqual(sent["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("response_format %v, stream_options %v", sent["response_format"], sent["stream_options"])
	}
	f := accFold(t, evs)
	parts := f.Message.GetParts()
	if len(parts) != 1 || parts[0].GetRefusal() != "I'm very sorry, but I can't assist with that request." {
		t.Errorf("parts %v", parts)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 64, OutputTokens: 13, TotalTokens: 77}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-CoDWxLsl1kVbpr74j0IN577ELqIIt" || m.GetResolvedModel() != "gpt-4o-2024-08-06" ||
		m.GetProviderRequestId() != "req_398e22f6842b4ac6b8bad5dcdde0c1db" || m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// logfireErrorCases are the real 400s of pydantic/logfire's agent_control
// live cassettes: what OpenAI answered when a reasoning model was sent a
// setting it refuses. None kept an x-request-id (logfire's cassettes drop
// it), so none has a request id; the Chat ones kept the x-ratelimit-*
// headers, which the error's meta reports.
var logfireErrorCases = []struct {
	name, format, code, param, msg string
	rateLimited                    bool
}{
	{"real_logfire_chat_stop_unsupported", "openai-chat", "unsupported_parameter", "stop",
		"Unsupported parameter: 'stop' is not supported with this model.", true},
	{"real_logfire_chat_tools_reasoning_effort", "openai-chat", "invalid_request_error", "reasoning_effort",
		"Function tools with reasoning_effort are not supported for gpt-5.4-nano in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.", true},
	{"real_logfire_responses_temperature_unsupported", formatResponses, "invalid_request_error", "temperature",
		"Unsupported parameter: 'temperature' is not supported with this model.", false},
}

// TestRound17LogfireProviderErrors: each 400 is an invalid request
// (InvalidArgument, reason INVALID_REQUEST, upstreamStatus 400 in the
// server's ErrorInfo), its code OpenAI's own (unsupported_parameter) or,
// when "code" is null, the type; the param the API blamed kept as the
// error's Param (the BadRequest field violation the server adds) and the
// message as said; not retried.
func TestRound17LogfireProviderErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range logfireErrorCases {
		for _, streaming := range []bool{false, true} {
			name := tc.name
			if streaming {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				srv := providertest.ReplayFile(t, td(tc.name+".http"))
				req := simpleRequest("gpt-5.4-nano")
				req.Format = tc.format
				p := newTestProvider(t, kOpenAI, srv.URL)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), req)
					if s != nil {
						t.Fatal("stream returned with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), req)
					providertest.Golden(t, td(tc.name+".golden"), []byte(renderErr(err)+"\n"))
				}
				if err == nil {
					t.Fatal("no error")
				}
				e := providerError(t, err)
				if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != http.StatusBadRequest || e.Code != tc.code ||
					e.Param != tc.param || e.Message != tc.msg || e.RequestID != "" || e.RetryAfter != 0 {
					t.Errorf("error %+v", e)
				}
				rl := e.Meta.GetRateLimit()
				if tc.rateLimited != (rl != nil) {
					t.Fatalf("rate limit %v", rl)
				}
				if tc.rateLimited && (rl.GetRequestsLimit() != 30000 || rl.GetRequestsRemaining() != 29999 || rl.GetTokensLimit() != 180000000) {
					t.Errorf("rate limit %v", rl)
				}
			})
		}
	}
}

// miraThinkingQuestion is the question of Mirascope's
// test_call_with_thinking cassettes.
const miraThinkingQuestion = "How many primes below 400 contain 79 as a substring? Answer ONLY with the number, not sharing which primes they are."

// miraThinkingRequest is the first request of the cassette: gpt-5,
// effort medium, summary auto, stored (the cassette's request left store
// to the API's default, true: its reasoning items carry no
// encrypted_content and go back by their ids).
func miraThinkingRequest(msgs ...*llmrelayv1.Message) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5", Format: formatResponses, Reasoning: true,
		Messages: append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(miraThinkingQuestion))}, msgs...),
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{
			Openai: &llmrelayv1.OpenAIOptions{ReasoningSummary: "auto", Store: proto.Bool(true)}}},
	}
}

// TestRound17MiraResponsesThinking: gpt-5 with a detailed reasoning
// summary, unary (Mirascope's test_call_with_thinking sync cassette): a
// reasoning item (no encrypted_content: the request was stored) whose
// summary has five summary_text parts, then the message "3"; 1088 of 1095
// output tokens reasoning. The five parts are one Reasoning part, their
// texts joined by a blank line, with the item's id, and kept in
// summary_parts (round 26). The cassette's second request, which the live
// API took, sends the reasoning item back by its id with the five summary
// parts, the message, and a new user turn; ours sends the same (before
// round 26: the five parts as one joined entry).
func TestRound17MiraResponsesThinking(t *testing.T) {
	t.Parallel()
	res := replayRound13Unary(t, "real_mira_responses_thinking_1", miraThinkingRequest())
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning()
	if r.GetId() != "rs_0c6fe76bfb6817d700696afa0fdfb48197aa1316339d7ef345" || r.GetSignature() != "" {
		t.Errorf("reasoning %v", r)
	}
	for _, s := range []string{
		"**Counting prime numbers with \"79\"**\n\nI need to find all prime numbers below 400",
		"isn\u2019t contiguous there.\n\n**Checking candidates for primality**\n\n",
		"doesn\u2019t qualify either.\n\n**Confirming the count of primes with \"79\"**\n\n",
		"Final answer: 3.\n\n**Delivering the final answer**\n\n",
	} {
		if !strings.Contains(r.GetText(), s) {
			t.Errorf("reasoning text lacks %q", s)
		}
	}
	// The five parts, as listed (Reasoning.summary_parts), each its
	// heading and body: joined, they are the text.
	sp := r.GetSummaryParts()
	if len(sp) != 5 || strings.Join(sp, "\n\n") != r.GetText() || !strings.HasPrefix(sp[1], "**Checking candidates for primality**\n\nI need") ||
		!strings.HasSuffix(sp[1], "with no remainders.") || !strings.HasPrefix(sp[4], "**Delivering the final answer**\n\n") {
		t.Errorf("summary parts %q", sp)
	}
	if !strings.HasSuffix(r.GetText(), "Alright, here it goes: 3.") {
		t.Errorf("reasoning text ends %q", r.GetText()[len(r.GetText())-40:])
	}
	if parts[1].GetText() != "3" {
		t.Errorf("text %v", parts[1])
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 32, OutputTokens: 1095, TotalTokens: 1127, ReasoningTokens: 1088}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_0c6fe76bfb6817d700696afa0f756081978271df9eccc5602a" || m.GetResolvedModel() != "gpt-5-2025-08-07" ||
		m.GetProviderRequestId() != "req_2496128e48fd4ef7b93518b15a2f4bf3" || m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	// The second request: the answer sent back, then the new question
	// (effort minimal, no summary asked, as the cassette's).
	const again = "If you remember what the primes were, then share them, or say 'I don't remember.'"
	req2 := miraThinkingRequest(res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text(again)))
	req2.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL
	req2.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, warnings, err := p.buildResponsesRequest(req2, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	got := decodeBody(t, body)
	items, _ := got["input"].([]any)
	if len(items) != 4 {
		t.Fatalf("input %v", items)
	}
	// The recorded request sends the five summary parts as received; so
	// does ours, from Reasoning.summary_parts (before round 26 it sent the
	// joined text as one summary_text entry).
	var entries []any
	for _, t := range r.GetSummaryParts() {
		entries = append(entries, map[string]any{"type": "summary_text", "text": t})
	}
	wantRS := map[string]any{"type": "reasoning", "id": "rs_0c6fe76bfb6817d700696afa0fdfb48197aa1316339d7ef345", "summary": entries}
	if !reflect.DeepEqual(items[1], wantRS) {
		t.Errorf("input[1] %v, want %v", items[1], wantRS)
	}
	wantMsg := map[string]any{"type": "message", "id": "msg_0c6fe76bfb6817d700696afa218dd88197962b4ac041b6ef86", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": "3", "annotations": []any{}}}}
	if !reflect.DeepEqual(items[2], wantMsg) {
		t.Errorf("input[2] %v, want %v", items[2], wantMsg)
	}
	if it := items[3].(map[string]any); it["role"] != "user" {
		t.Errorf("input[3] %v", it)
	}
	if got["reasoning"].(map[string]any)["effort"] != "minimal" {
		t.Errorf("reasoning %v", got["reasoning"])
	}

	// The answer to it: an empty-summary reasoning item, then the text.
	res2 := replayRound13Unary(t, "real_mira_responses_thinking_2", req2)
	p2 := res2.Message.GetParts()
	if len(p2) != 2 || p2[0].GetReasoning().GetId() != "rs_0c6fe76bfb6817d700696afa2274948197b94d9f86f30a6422" || p2[0].GetReasoning().GetText() != "" ||
		p2[1].GetText() != "I don\u2019t remember." {
		t.Errorf("parts %v", p2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 62, OutputTokens: 11, TotalTokens: 73}); !proto.Equal(res2.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res2.Meta.GetUsage(), want)
	}
}

// miraSecretTool is the secret_retrieval_tool of Mirascope's
// test_call_with_tools cassettes (strict false).
func miraSecretTool() *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: "secret_retrieval_tool", Description: "A tool that requires a password to retrieve a secret.",
		Parameters: `{"properties":{"password":{"title":"Password","type":"string"}},"required":["password"],"additionalProperties":false,"type":"object"}`,
		Strict:     proto.Bool(false)}
}

// miraToolsRequest is the cassette's request: a developer instruction, the
// question, the tool; stored (the cassette left store to the API's
// default).
func miraToolsRequest(msgs ...*llmrelayv1.Message) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5-mini", Format: formatResponses, Reasoning: true,
		Messages: append([]*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Use parallel tool calling.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Please retrieve the secrets associated with each of these passwords: mellon,radiance")),
		}, msgs...),
		Tools: []*llmrelayv1.Tool{miraSecretTool()},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{
			Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}},
	}
}

// TestRound17MiraResponsesParallelTools: gpt-5-mini calling one tool twice
// in one answer (Mirascope's test_call_with_tools sync cassette): a
// reasoning item with summary [] and no encrypted_content (stored), then
// two function_call items, each with its fc_ item id and call_ id; 128 of
// 187 output tokens reasoning. The answer is a reasoning part holding only
// the item's id, then the two calls in order, finish TOOL_CALLS. The
// cassette's second request (accepted by the live API) sends back the
// reasoning item by its id with summary [], the two calls (with their fc_
// ids and status), then the two outputs; ours sends the same items in the
// same order, the calls without their fc_ ids (the contract keeps no item
// id for a call). The second answer calls the tool twice again.
func TestRound17MiraResponsesParallelTools(t *testing.T) {
	t.Parallel()
	res := replayRound13Unary(t, "real_mira_responses_parallel_tools_1", miraToolsRequest())
	parts := res.Message.GetParts()
	if len(parts) != 3 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetId() != "rs_081d9dfc404f353f0069492df7dbc081908cde95733c427937" || r.GetText() != "" || r.GetSignature() != "" {
		t.Errorf("reasoning %v", r)
	}
	calls := []struct{ id, args string }{{"call_wYuoRZQG6MbpVXEVpUzBPCqj", `{"password":"mellon"}`}, {"call_7z8b3CsYGHXyiMH5fekHUt4o", `{"password":"radiance"}`}}
	for i, c := range calls {
		tc := parts[i+1].GetToolCall()
		if tc.GetCallId() != c.id || tc.GetName() != "secret_retrieval_tool" || tc.GetArguments() != c.args || !tc.GetArgumentsValid() {
			t.Errorf("call %d: %v", i, tc)
		}
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 39, OutputTokens: 187, TotalTokens: 226, ReasoningTokens: 128}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_081d9dfc404f353f0069492df77ed081908ad47f13e1d10880" || m.GetResolvedModel() != "gpt-5-mini-2025-08-07" ||
		m.GetProviderRequestId() != "req_d5b23339ab2b453180e92b491ec232a5" || m.GetToolCallCount() != 2 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	req2 := miraToolsRequest(res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_wYuoRZQG6MbpVXEVpUzBPCqj", "Welcome to Moria!")),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_7z8b3CsYGHXyiMH5fekHUt4o", "Life before Death")))
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, warnings, err := p.buildResponsesRequest(req2, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	items, _ := decodeBody(t, body)["input"].([]any)
	want := []map[string]any{
		{"type": "reasoning", "id": "rs_081d9dfc404f353f0069492df7dbc081908cde95733c427937", "summary": []any{}},
		{"type": "function_call", "call_id": "call_wYuoRZQG6MbpVXEVpUzBPCqj", "name": "secret_retrieval_tool", "arguments": `{"password":"mellon"}`},
		{"type": "function_call", "call_id": "call_7z8b3CsYGHXyiMH5fekHUt4o", "name": "secret_retrieval_tool", "arguments": `{"password":"radiance"}`},
		{"type": "function_call_output", "call_id": "call_wYuoRZQG6MbpVXEVpUzBPCqj", "output": "Welcome to Moria!"},
		{"type": "function_call_output", "call_id": "call_7z8b3CsYGHXyiMH5fekHUt4o", "output": "Life before Death"},
	}
	if len(items) != 2+len(want) {
		t.Fatalf("input %v", items)
	}
	for i, w := range want {
		if !reflect.DeepEqual(items[i+2], w) {
			t.Errorf("input[%d] %v, want %v", i+2, items[i+2], w)
		}
	}

	res2 := replayRound13Unary(t, "real_mira_responses_parallel_tools_2", req2)
	p2 := res2.Message.GetParts()
	if len(p2) != 3 || p2[1].GetToolCall().GetCallId() != "call_lEYCK7jSglxwn3Hdy99UdGXj" || p2[2].GetToolCall().GetCallId() != "call_Jm1h5fS4zDS2zRDMNNnPgDN4" {
		t.Errorf("parts %v", p2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 152, OutputTokens: 378, TotalTokens: 530, ReasoningTokens: 320}); !proto.Equal(res2.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res2.Meta.GetUsage(), want)
	}
}

// TestRound17MiraAzureResponsesContentFilter: Azure OpenAI's Responses API
// (the api-version route) answering the refusal prompt for gpt-4o-mini,
// streamed (Mirascope's azure-openai_responses cassette): the message
// item is "incomplete" from output_item.added on, its text (not a refusal
// part) comes in one delta, and the stream ends with response.incomplete,
// incomplete_details.reason "content_filter", "content_filters": null and
// a usage of zeros. The text relayed stays; the finish is CONTENT_FILTER.
// The usage of zeros was relayed as a usage event counting 0 tokens; it
// counts nothing and is now left out with a warning.
//
// The recording was answered at {endpoint}/openai/responses?api-version=
// 2025-03-01-preview, a classic (not v1) route: the adapter refused
// every Responses request on a classic-route Azure provider, saying Azure
// serves the API on its v1 routes only. It now sends it there, the
// deployment in the body, when the provider's api-version serves it
// (2025-03-01 or later); the request golden is what we send, the
// cassette's request (input, model, stream, text.format) with our
// stateless defaults (store false).
func TestRound17MiraAzureResponsesContentFilter(t *testing.T) {
	t.Parallel()
	const name = "real_mira_azure_responses_content_filter_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := miraRefusalRequest(formatResponses)
	req.Model = "gpt-4o-mini"
	s, err := newTestProvider(t, kAzure, srv.URL, WithAzureAPIVersion("2025-03-01-preview")).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Last(t)
	providertest.Golden(t, td(name+".request.golden"), providertest.RequestGolden(c, authHeaders...))
	if c.Path != "/openai/responses" || c.Query != "api-version=2025-03-01-preview" {
		t.Errorf("sent to %s?%s", c.Path, c.Query)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkRespStreamInvariants(t, evs)
	f := accFold(t, evs)
	parts := f.Message.GetParts()
	if len(parts) != 1 || parts[0].GetText() != "I'm sorry, but I cannot assist with that request." {
		t.Errorf("parts %v", parts)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "incomplete/content_filter")
	// Azure's usage of zeros (beside the text it sent) counts nothing: no
	// usage, a warning (it was a usage event of zeros).
	if m.GetUsage() != nil || len(m.GetWarnings()) != 1 || m.GetWarnings()[0] != warnZeroUsage {
		t.Errorf("usage %v, warnings %q", m.GetUsage(), m.GetWarnings())
	}
	if m.GetResponseId() != "resp_08b66ad004bbed2200690c21b4f418819695f911fe4ece6e7f" || m.GetResolvedModel() != "gpt-4o-mini" ||
		m.GetProviderRequestId() != "3ea3233b-1b2c-4015-8041-67a68c24acf6" {
		t.Errorf("meta %v", m)
	}
}

// TestRound17AzureClassicResponsesVersion: a classic-route Azure provider
// refuses a Responses request, before sending it, when its api-version
// does not serve the API (none set: the default 2024-10-21; a dated one
// before 2025-03-01; an undated one, which names a v1-route version) and
// sends it with a later dated one.
func TestRound17AzureClassicResponsesVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		sent    bool
	}{{"", false}, {"2024-10-21", false}, {"2025-02-01-preview", false}, {"2025-03-01-preview", true}, {"2025-04-01-preview", true}, {"preview", false}, {"latest", false}} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td("real_mira_azure_responses_content_filter_stream.http"))
			var opts []Option
			if tc.version != "" {
				opts = append(opts, WithAzureAPIVersion(tc.version))
			}
			req := miraRefusalRequest(formatResponses)
			_, err := newTestProvider(t, kAzure, srv.URL, opts...).Generate(context.Background(), req)
			if sent := len(srv.Requests()) > 0; sent != tc.sent {
				t.Fatalf("sent %v, want %v (%v)", sent, tc.sent, err)
			}
			if !tc.sent {
				if e := providerError(t, err); e.Kind != provider.KindInvalidRequest || !strings.Contains(e.Message, "2025-03-01-preview or later") {
					t.Errorf("error %+v", e)
				}
			}
		})
	}
}

// TestRound17MiraAzureResponsesPromptFiltered: the same prompt unary on
// the classic Responses route (Mirascope's azure-openai_responses sync
// cassette): Azure's 400 with code content_filter, param prompt and no
// innererror (the Responses route sends no filter verdicts with it): a
// content_filter error (InvalidArgument, reason CONTENT_FILTERED), the
// message as said (its U+2019 kept), the apim-request-id as the request
// id, the deployment in the error's extended details.
func TestRound17MiraAzureResponsesPromptFiltered(t *testing.T) {
	t.Parallel()
	const name = "real_mira_azure_responses_content_filter"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := miraRefusalRequest(formatResponses)
	req.Model = "gpt-4o-mini"
	_, err := newTestProvider(t, kAzure, srv.URL, WithAzureAPIVersion("2025-03-01-preview")).Generate(context.Background(), req)
	providertest.Golden(t, td(name+".golden"), []byte(renderErr(err)+"\n"))
	if err == nil {
		t.Fatal("no error")
	}
	if c := srv.Last(t); c.Path != "/openai/responses" || c.Query != "api-version=2025-03-01-preview" {
		t.Errorf("sent to %s?%s", c.Path, c.Query)
	}
	e := providerError(t, err)
	const msg = "The response was filtered due to the prompt triggering Azure OpenAI\u2019s content management policy. Please modify your prompt and retry. " +
		"To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766"
	if e.Kind != provider.KindContentFilter || e.HTTPStatus != http.StatusBadRequest || e.Code != "content_filter" || e.Param != "prompt" ||
		e.Message != msg || e.RequestID != "1aa46a6c-e87a-415d-9775-aed14d5b5bdf" {
		t.Errorf("error %+v", e)
	}
	if e.Extended[extAzureDeployment] != "gpt-4o-mini" {
		t.Errorf("extended %v", e.Extended)
	}
	if rl := e.Meta.GetRateLimit(); rl.GetRequestsLimit() != 300 || rl.GetRequestsRemaining() != 284 {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound17MiraResponsesMaxTokensReasoningOnly: gpt-5-mini given 50
// output tokens (Mirascope's test_max_tokens stream cassette): the answer
// is a reasoning item with summary [] and nothing else, the stream ends
// with response.incomplete (max_output_tokens), and the usage counts 13
// input and 0 output tokens (0 reasoning) as sent. The answer is one
// reasoning part with the item's id, no text; finish LENGTH; the usage as
// counted.
func TestRound17MiraResponsesMaxTokensReasoningOnly(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5-mini", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("List all U.S. states."))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(50)}}
	f, _ := replayRound13Stream(t, "real_mira_responses_max_tokens_reasoning_only_stream", req)
	parts := f.Message.GetParts()
	if len(parts) != 1 || parts[0].GetReasoning().GetId() != "rs_073882a3776b82a40069492e1ebde08197a98e6d0647a1af01" ||
		parts[0].GetReasoning().GetText() != "" || parts[0].GetReasoning().GetSignature() != "" {
		t.Errorf("parts %v", parts)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete/max_output_tokens")
	if want := (&llmrelayv1.Usage{InputTokens: 13, TotalTokens: 13}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_073882a3776b82a40069492e1e714c8197bc5b10bd03b25157" || m.GetResolvedModel() != "gpt-5-mini-2025-08-07" ||
		m.GetProviderRequestId() != "req_9e8c67a68bd747959de5c83c4480b311" || m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound17LogfireOpenRouterGeminiReasoning: OpenRouter relaying
// google/gemini-2.5-flash with reasoning effort low, streamed (Logfire's
// test_openrouter_streaming_reasoning cassette): 22 ": OPENROUTER
// PROCESSING" comments, four chunks carrying a whole reasoning paragraph
// both in "reasoning" and in a reasoning_details reasoning.text block with
// no index, no signature and "provider": "google-vertex", then the text in
// three chunks, the finish "stop" (native "STOP"), and the usage on a last
// chunk whose finish is null (no reasoning_tokens: the 1003 completion
// tokens include the reasoning). The four paragraphs are one reasoning
// block, in order; the upstream is Google.
func TestRound17LogfireOpenRouterGeminiReasoning(t *testing.T) {
	t.Parallel()
	// The cassette's request: the question, reasoning effort low.
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "google/gemini-2.5-flash", Format: "openai-chat", Reasoning: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Hello, how are you? (This is a trick question)"))},
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW}}
	const name = "real_logfire_openrouter_gemini_reasoning_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	func(t *testing.T, f folded) {
		parts := f.Message.GetParts()
		if len(parts) != 2 {
			t.Fatalf("parts %v", parts)
		}
		r := parts[0].GetReasoning()
		heads := []string{"**Interpreting User Intent**", "**Deconstructing the \"Trick\"**", "**Formulating the Perfect Response**", "**Optimizing Response Structure**"}
		last := -1
		for _, h := range heads {
			i := strings.Index(r.GetText(), h)
			if i <= last {
				t.Errorf("reasoning paragraph %q at %d (after %d)", h, i, last)
			}
			last = i
		}
		if !strings.HasPrefix(r.GetText(), heads[0]) || !strings.HasSuffix(r.GetText(), "aiming for maximum clarity and user satisfaction.\n\n\n") || r.GetSignature() != "" {
			t.Errorf("reasoning %q", r.GetText())
		}
		if !strings.HasPrefix(parts[1].GetText(), "That's a clever way to put it!") || !strings.HasSuffix(parts[1].GetText(), "how are *you* doing today, and what can I help you with?") {
			t.Errorf("text %q", parts[1].GetText())
		}
		m := f.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
		if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 1003, TotalTokens: 1016}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if m.GetResponseId() != "gen-1751918758-SZqPQwzFgmd8JdDUxRuL" || m.GetResolvedModel() != "google/gemini-2.5-flash" || upstreamOf(m) != "Google" || len(m.GetWarnings()) != 0 {
			t.Errorf("meta %v", m)
		}
	}(t, accFold(t, evs))
}

// logfireWeatherTool is the get_weather tool of Logfire's
// test_responses_api cassette (not strict: the cassette's request names
// no strict, and the answer reports none).
func logfireWeatherTool() *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: "get_weather", Description: "Get current temperature for a given location.",
		Parameters: `{"type":"object","properties":{"location":{"type":"string","description":"City and country e.g. Bogotá, Colombia"}},"required":["location"],"additionalProperties":false}`}
}

// TestRound17LogfireResponsesToolLoop: gpt-4.1 on the Responses API,
// unary, instructions "Be nice" (Logfire's test_responses_api cassette, of
// May 2025: no completed_at, billing or verbosity yet): the first answer
// is one function_call (an fc_ item id, a call_ id, arguments
// {"location":"Paris, France"}) and no message; the cassette's second
// request, which the live API took, sends the question, the call (with
// its fc_ id and status) and its output "Rainy", with neither the
// instructions nor the tools; ours, built from the first answer with the
// same messages, sends the same three items (the call without its item
// id). The second answer is the text.
func TestRound17LogfireResponsesToolLoop(t *testing.T) {
	t.Parallel()
	const question = "What is the weather like in Paris today?"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4.1", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be nice")), msgOf(llmrelayv1.Role_ROLE_USER, text(question))},
		Tools:    []*llmrelayv1.Tool{logfireWeatherTool()}}
	res := replayRound13Unary(t, "real_logfire_responses_tool_call_1", req)
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	tc := parts[0].GetToolCall()
	if tc.GetCallId() != "call_92k1J8QkHaqVZFGoZU1aLvR7" || tc.GetName() != "get_weather" || tc.GetArguments() != `{"location":"Paris, France"}` {
		t.Errorf("call %v", tc)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 65, OutputTokens: 17, TotalTokens: 82}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_68371fce35fc8191b76f39de017b36d300f07a8eccfc39ca" || m.GetResolvedModel() != "gpt-4.1-2025-04-14" ||
		m.GetProviderRequestId() != "req_82a8e571d6bacbdca1f76e0acf26f1bf" || m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4.1", Format: formatResponses,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(question)), res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_92k1J8QkHaqVZFGoZU1aLvR7", "Rainy"))}}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, warnings, err := p.buildResponsesRequest(req2, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	items, _ := decodeBody(t, body)["input"].([]any)
	want := []map[string]any{
		{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": question}}},
		{"type": "function_call", "call_id": "call_92k1J8QkHaqVZFGoZU1aLvR7", "name": "get_weather", "arguments": `{"location":"Paris, France"}`},
		{"type": "function_call_output", "call_id": "call_92k1J8QkHaqVZFGoZU1aLvR7", "output": "Rainy"},
	}
	if len(items) != len(want) {
		t.Fatalf("input %v", items)
	}
	for i, w := range want {
		if !reflect.DeepEqual(items[i], w) {
			t.Errorf("input[%d] %v, want %v", i, items[i], w)
		}
	}

	res2 := replayRound13Unary(t, "real_logfire_responses_tool_call_2", req2)
	const answer = "The weather in Paris today is rainy. If you\u2019re planning to go out, don\u2019t forget your umbrella! Let me know if you need more details or the forecast for the next few days."
	if p2 := res2.Message.GetParts(); len(p2) != 1 || p2[0].GetText() != answer {
		t.Errorf("parts %v", p2)
	}
	wantFinish(t, res2.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 43, OutputTokens: 40, TotalTokens: 83}); !proto.Equal(res2.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res2.Meta.GetUsage(), want)
	}
}

// TestRound17ReasoningChatDropsStop: Logfire's recording of OpenAI
// refusing "stop" for gpt-5.4-nano on Chat Completions (a 400
// unsupported_parameter, as o3, o4-mini and the gpt-5 family answer it):
// the request the cassette recorded (a system message, the question,
// max_completion_tokens 2048, stop ["NEVERMIND"], one tool) is, built by
// us for a reasoning model on OpenAI's API, sent without stop and
// with a warning; temperature and top_p, which were already left out, now
// say so too. On another server (DeepSeek's reasoner takes stop) stop is
// sent; on Azure too (no recording of Azure's answer to it).
func TestRound17ReasoningChatDropsStop(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.4-nano", Format: "openai-chat", Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a weather assistant. Always use your tools to answer.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Say OK.")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a city.",
			Parameters: `{"properties":{"city":{"description":"The city to look up.","type":"string"}},"required":["city"],"type":"object"}`}},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(2048), Stop: []string{"NEVERMIND"}, Temperature: proto.Float64(0.4)},
	}
	for _, tc := range []struct {
		name     string
		p        func() (*Provider, error)
		stop     bool
		warnings []string
	}{
		{"openai", func() (*Provider, error) { return New(testKey) }, false, []string{warnReasoningSampling, warnReasoningStop}},
		{"azure", func() (*Provider, error) { return NewAzure(testKey, WithBaseURL("https://example.openai.azure.com")) }, true, []string{warnReasoningSampling}},
		{"deepseek", func() (*Provider, error) { return New(testKey, WithBaseURL("https://api.deepseek.com/v1")) }, true, []string{warnReasoningSampling}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := tc.p()
			if err != nil {
				t.Fatal(err)
			}
			body, warnings, err := p.buildChatRequest(req, false)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(warnings, tc.warnings) {
				t.Errorf("warnings %q, want %q", warnings, tc.warnings)
			}
			got := decodeBody(t, body)
			if _, ok := got["stop"]; ok != tc.stop {
				t.Errorf("stop sent %v, want %v: %s", ok, tc.stop, body)
			}
			if _, ok := got["temperature"]; ok || got["max_completion_tokens"] != 2048.0 {
				t.Errorf("body %s", body)
			}
		})
	}
}

// TestRound17LogfireEffortNoneSampling: Logfire's openai_agents
// settings cassette: gpt-5.4-nano on the Responses API with reasoning
// effort none, temperature 0.4 and top_p 0.9 (and max_output_tokens 2048,
// parallel_tool_calls, a strict tool, instructions), which the live API
// took and echoed, answering "Paris" (a message item with phase
// final_answer; reasoning.context and reasoning.mode, tool_usage,
// moderation and prompt_cache_retention "24h" in the response object).
// The adapter left temperature and top_p out of every reasoning model's
// request; with effort none it now sends them, as the recorded request
// did. With effort low the same model refused temperature
// (real_logfire_responses_temperature_unsupported): they stay out then.
func TestRound17LogfireEffortNoneSampling(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.4-nano", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Answer in one word.")), msgOf(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?"))},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a city.", Strict: proto.Bool(true),
			Parameters: `{"properties":{"city":{"description":"City to look up.","title":"City","type":"string"}},"required":["city"],"title":"get_weather_args","type":"object","additionalProperties":false}`}},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(2048), ParallelToolCalls: proto.Bool(true), Temperature: proto.Float64(0.4), TopP: proto.Float64(0.9),
			ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE},
	}
	srv := providertest.ReplayFile(t, td("real_logfire_responses_effort_none_sampling.http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td("real_logfire_responses_effort_none_sampling.golden"), renderResult(t, res))
	sent := decodeBody(t, srv.Last(t).Body)
	for k, v := range map[string]any{"temperature": 0.4, "top_p": 0.9, "max_output_tokens": 2048.0, "parallel_tool_calls": true} {
		if sent[k] != v {
			t.Errorf("%s sent as %v, want %v", k, sent[k], v)
		}
	}
	if r, _ := sent["reasoning"].(map[string]any); r["effort"] != "none" {
		t.Errorf("reasoning %v", sent["reasoning"])
	}
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Paris" || p[0].GetPhase() != "final_answer" {
		t.Errorf("parts %v", p)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 74, OutputTokens: 5, TotalTokens: 79}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_07537ae0096064bc006aa1e94c0bc087d1b83339d4bd4ca448" || m.GetResolvedModel() != "gpt-5.4-nano-2026-03-17" ||
		m.GetProviderRequestId() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	// Effort low: left out, with the warning.
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, warnings, err := p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if b := decodeBody(t, body); b["temperature"] != nil || b["top_p"] != nil || len(warnings) != 1 || warnings[0] != warnReasoningSampling {
		t.Errorf("effort low: %s %q", body, warnings)
	}

	// Chat Completions follows the same rule.
	req.Format = "openai-chat"
	for effort, sent := range map[llmrelayv1.ReasoningEffort]bool{llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE: true, llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW: false} {
		req.Options.ReasoningEffort = effort
		body, _, err := p.buildChatRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		b := decodeBody(t, body)
		if (b["temperature"] == 0.4 && b["top_p"] == 0.9) != sent || b["max_completion_tokens"] != 2048.0 {
			t.Errorf("chat, effort %v: %s", effort, body)
		}
	}
}

// TestRound17LogfireChatSamplingToolLoop: gpt-5.4-nano on Chat
// Completions with temperature, top_p, both penalties, a seed,
// max_completion_tokens 256 and parallel_tool_calls false, which the live
// API took (Logfire's langchain settings cassette; the request named no
// reasoning_effort, the model's default being none): a call with content
// null, then, after the tool's answer, "OK.". We build the same settings
// for a reasoning model asked for effort none (without an effort they
// would be left out: the adapter cannot know a model's default effort),
// and, from the first answer, the same follow-up messages (the recorded
// assistant message carries LangChain's "name": "checkout" and arguments
// re-serialized with a space; ours the arguments as the model wrote
// them).
func TestRound17LogfireChatSamplingToolLoop(t *testing.T) {
	t.Parallel()
	msgs := []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a weather assistant. Always use your tools to answer.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Say OK.")),
	}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.4-nano", Format: "openai-chat", Reasoning: true, Messages: msgs,
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a city.",
			Parameters: `{"properties":{"city":{"description":"The city to look up.","type":"string"}},"required":["city"],"type":"object"}`}},
		Options: &llmrelayv1.GenerationOptions{FrequencyPenalty: proto.Float64(0.2), MaxTokens: proto.Int32(256), ParallelToolCalls: proto.Bool(false),
			PresencePenalty: proto.Float64(0.1), Seed: proto.Int64(7), Temperature: proto.Float64(0.4), TopP: proto.Float64(0.9),
			ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE}}
	srv := providertest.ReplayFile(t, td("real_logfire_chat_sampling_tool_call_1.http"))
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td("real_logfire_chat_sampling_tool_call_1.golden"), renderResult(t, res))
	sent := decodeBody(t, srv.Last(t).Body)
	for k, v := range map[string]any{"frequency_penalty": 0.2, "max_completion_tokens": 256.0, "parallel_tool_calls": false, "presence_penalty": 0.1,
		"seed": 7.0, "temperature": 0.4, "top_p": 0.9, "reasoning_effort": "none"} {
		if sent[k] != v {
			t.Errorf("%s sent as %v, want %v", k, sent[k], v)
		}
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 || parts[0].GetToolCall().GetCallId() != "call_G5b7J5bIOZGPtrzoz721J4w2" || parts[0].GetToolCall().GetArguments() != `{"city":"London"}` {
		t.Fatalf("parts %v", parts)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if want := (&llmrelayv1.Usage{InputTokens: 152, OutputTokens: 17, TotalTokens: 169}); !proto.Equal(res.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
	}
	if m := res.Meta; m.GetResponseId() != "chatcmpl-EMMPSzIFNynimC2L44bI1mpnPj8ud" || m.GetResolvedModel() != "gpt-5.4-nano-2026-03-17" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	next := *req
	next.Messages = append(append([]*llmrelayv1.Message(nil), msgs...), res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_G5b7J5bIOZGPtrzoz721J4w2", "sunny in London")))
	srv2 := providertest.ReplayFile(t, td("real_logfire_chat_sampling_tool_call_2.http"))
	res2, err := newTestProvider(t, kOpenAI, srv2.URL).Generate(context.Background(), &next)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("real_logfire_chat_sampling_tool_call_2.golden"), renderResult(t, res2))
	sentMsgs, _ := decodeBody(t, srv2.Last(t).Body)["messages"].([]any)
	if len(sentMsgs) != 4 {
		t.Fatalf("messages %v", sentMsgs)
	}
	wantAssistant := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_G5b7J5bIOZGPtrzoz721J4w2", "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": `{"city":"London"}`}}}}
	wantTool := map[string]any{"role": "tool", "tool_call_id": "call_G5b7J5bIOZGPtrzoz721J4w2", "content": "sunny in London"}
	if !reflect.DeepEqual(sentMsgs[2], wantAssistant) || !reflect.DeepEqual(sentMsgs[3], wantTool) {
		t.Errorf("messages[2:] %v, want %v, %v", sentMsgs[2:], wantAssistant, wantTool)
	}
	if p := res2.Message.GetParts(); len(p) != 1 || p[0].GetText() != "OK." {
		t.Errorf("parts %v", p)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 186, OutputTokens: 5, TotalTokens: 191}); !proto.Equal(res2.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res2.Meta.GetUsage(), want)
	}
}

// TestRound17MiraAzureV1AudioRejected: Azure OpenAI's v1 Chat Completions
// route refusing an input_audio part for gpt-5-mini (Mirascope's
// test_call_with_audio input cassette): a 400 invalid_value on param
// "messages[0]" ("Content blocks are expected to be either text or
// image_url type."), with apim-request-id, a UUID x-request-id,
// x-ms-rai-invoked and request and token rate limits (limits, remaining,
// no resets). An invalid request naming the field, the apim-request-id
// as the request id, the limits in the error's meta.
func TestRound17MiraAzureV1AudioRejected(t *testing.T) {
	t.Parallel()
	const name = "real_mira_azure_v1_chat_audio_rejected"
	srv := providertest.ReplayFile(t, td(name+".http"))
	_, err := newTestProvider(t, kAzureV1Entra, srv.URL).Generate(context.Background(), simpleRequest("gpt-5-mini"))
	providertest.Golden(t, td(name+".golden"), []byte(renderErr(err)+"\n"))
	if err == nil {
		t.Fatal("no error")
	}
	e := providerError(t, err)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != http.StatusBadRequest || e.Code != "invalid_value" || e.Param != "messages[0]" ||
		e.Message != "Invalid 'messages[0]'. Content blocks are expected to be either text or image_url type." ||
		e.RequestID != "f303e7c3-81d9-46eb-96f2-5553bc33b2b9" || e.RetryAfter != 0 {
		t.Errorf("error %+v", e)
	}
	if rl := e.Meta.GetRateLimit(); rl.GetRequestsLimit() != 100 || rl.GetRequestsRemaining() != 99 || rl.GetTokensLimit() != 100000 || rl.GetTokensRemaining() != 99992 {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound17MiraChatMaxTokensAllReasoning: gpt-5-mini on Chat
// Completions with max_completion_tokens 50 (Mirascope's test_max_tokens
// cassette): the role chunk with content "" and refusal null, the finish
// "length" on an empty delta, then the usage: all 50 completion tokens
// reasoning. No text (the empty content is not a part), finish LENGTH,
// the reasoning tokens counted.
func TestRound17MiraChatMaxTokensAllReasoning(t *testing.T) {
	t.Parallel()
	const name = "real_mira_chat_max_tokens_all_reasoning_stream"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5-mini", Format: "openai-chat", Reasoning: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("List all U.S. states."))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(50)}}
	srv := providertest.ReplayFile(t, td(name+".http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	if b := decodeBody(t, srv.Last(t).Body); b["max_completion_tokens"] != 50.0 || b["max_tokens"] != nil {
		t.Errorf("sent %v", b)
	}
	f := accFold(t, evs)
	if p := f.Message.GetParts(); len(p) != 0 {
		t.Errorf("parts %v", p)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 50, TotalTokens: 63, ReasoningTokens: 50}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "chatcmpl-CpaLKsZmiiFPwrb0Ocw5FOVrMV89U" || m.GetResolvedModel() != "gpt-5-mini-2025-08-07" ||
		m.GetProviderRequestId() != "req_32f2cc1b653e448486542c5f267cf80c" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound17MiraInvalidAPIKey: OpenAI's 401 for a wrong key
// (Mirascope's test_authentication_error cassettes, whose key was the fake
// "invalid-…2345", masked by OpenAI in the message): on Chat Completions
// the body indented by four spaces with a trailing newline, on the
// Responses API (streamed: the 401 comes before any event) by two,
// with www-authenticate. Unauthenticated (gRPC Unauthenticated, reason
// UPSTREAM_UNAUTHENTICATED), code invalid_api_key, no param ("param":
// null), the message as said, the x-request-id kept; not retried.
func TestRound17MiraInvalidAPIKey(t *testing.T) {
	t.Parallel()
	const msg = "Incorrect API key provided: invalid-*****2345. You can find your API key at https://platform.openai.com/account/api-keys."
	for _, tc := range []struct {
		name, format, reqID string
		stream              bool
	}{
		{"real_mira_chat_invalid_api_key", "openai-chat", "req_1963efc19b3b4865af98403581d580af", false},
		{"real_mira_responses_invalid_api_key_stream", formatResponses, "req_31f5616fbb0d4dd888a6980225b0dd68", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			req := simpleRequest("gpt-4o")
			req.Format = tc.format
			p := newTestProvider(t, kOpenAI, srv.URL)
			var err error
			if tc.stream {
				var s provider.Stream
				if s, err = p.Stream(context.Background(), req); s != nil {
					t.Fatal("stream returned with an error status")
				}
			} else {
				_, err = p.Generate(context.Background(), req)
			}
			providertest.Golden(t, td(tc.name+".golden"), []byte(renderErr(err)+"\n"))
			if err == nil {
				t.Fatal("no error")
			}
			e := providerError(t, err)
			if e.Kind != provider.KindUnauthenticated || e.HTTPStatus != http.StatusUnauthorized || e.Code != "invalid_api_key" || e.Param != "" ||
				e.Message != msg || e.RequestID != tc.reqID {
				t.Errorf("error %+v", e)
			}
			if pipeline.Retryable(err) {
				t.Error("a wrong key is retried")
			}
		})
	}
}

// TestRound17LimitOnlyNamesLoseToOpenAIs: x-ratelimit-requests and
// x-ratelimit-tokens fill only a limit OpenAI's x-ratelimit-limit-* left
// empty (a limit alone: round17dialect_test.go).
func TestRound17LimitOnlyNamesLoseToOpenAIs(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "10")
	h.Set("x-ratelimit-remaining-requests", "9")
	h.Set("x-ratelimit-requests", "4000")
	h.Set("x-ratelimit-remaining-tokens", "70")
	h.Set("x-ratelimit-tokens", "80")
	rl := unprefixedLimits(provider.OpenAIRateLimit(h), h)
	if rl.GetRequestsLimit() != 10 || rl.GetTokensLimit() != 80 || rl.GetTokensRemaining() != 70 {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound17MiraAzureResponsesParallelTools: Azure OpenAI's classic
// Responses route (api-version 2025-03-01-preview), gpt-4o-mini, unary,
// asked for parallel calls (Mirascope's azure-openai_responses
// test_call_with_tools cassette): an indented body with "content_filters":
// null, two function_call items, no reasoning. The cassette's second
// request, which Azure took, sends the calls back without their fc_ item
// ids (no reasoning item is there to pair them with) and tool_choice
// "none"; ours, to the same route, sends the same items.
func TestRound17MiraAzureResponsesParallelTools(t *testing.T) {
	t.Parallel()
	req := miraToolsRequest()
	req.Model, req.Reasoning, req.ProviderOptions = "gpt-4o-mini", false, nil
	srv := providertest.ReplayFile(t, td("real_mira_azure_responses_parallel_tools_1.http"))
	p := newTestProvider(t, kAzure, srv.URL, WithAzureAPIVersion("2025-03-01-preview"))
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td("real_mira_azure_responses_parallel_tools_1.golden"), renderResult(t, res))
	if c := srv.Last(t); c.Path != "/openai/responses" || c.Query != "api-version=2025-03-01-preview" {
		t.Errorf("sent to %s?%s", c.Path, c.Query)
	}
	parts := res.Message.GetParts()
	calls := []struct{ id, args string }{{"call_ItUb0ok6QKqLmF3waT7Wi7Du", `{"password":"mellon"}`}, {"call_kOPG7p73gWiOqGWGRpEAaVqP", `{"password":"radiance"}`}}
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	for i, c := range calls {
		if tc := parts[i].GetToolCall(); tc.GetCallId() != c.id || tc.GetArguments() != c.args {
			t.Errorf("call %d: %v", i, tc)
		}
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 36, OutputTokens: 54, TotalTokens: 90}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_09bcedb16f2020fb00690c218179688196ad2e0497400ef68d" || m.GetProviderRequestId() != "753c96a0-152c-47ee-9f22-0279e3bbff07" ||
		m.GetRateLimit().GetTokensRemaining() != 26164 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	next := *req
	next.Messages = append(append([]*llmrelayv1.Message(nil), req.Messages...), res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(calls[0].id, "Welcome to Moria!")),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(calls[1].id, "Life before Death")))
	next.Options = &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}}
	srv2 := providertest.ReplayFile(t, td("real_mira_azure_responses_parallel_tools_2.http"))
	res2, err := newTestProvider(t, kAzure, srv2.URL, WithAzureAPIVersion("2025-03-01-preview")).Generate(context.Background(), &next)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("real_mira_azure_responses_parallel_tools_2.golden"), renderResult(t, res2))
	sent := decodeBody(t, srv2.Last(t).Body)
	items, _ := sent["input"].([]any)
	want := []map[string]any{
		{"type": "function_call", "call_id": calls[0].id, "name": "secret_retrieval_tool", "arguments": calls[0].args},
		{"type": "function_call", "call_id": calls[1].id, "name": "secret_retrieval_tool", "arguments": calls[1].args},
		{"type": "function_call_output", "call_id": calls[0].id, "output": "Welcome to Moria!"},
		{"type": "function_call_output", "call_id": calls[1].id, "output": "Life before Death"},
	}
	if len(items) != 6 || sent["tool_choice"] != "none" {
		t.Fatalf("input %v, tool_choice %v", items, sent["tool_choice"])
	}
	for i, w := range want {
		if !reflect.DeepEqual(items[i+2], w) {
			t.Errorf("input[%d] %v, want %v", i+2, items[i+2], w)
		}
	}
	const answer = "Here are the secrets associated with the provided passwords:\n\n- For **mellon**: \"Welcome to Moria!\"\n- For **radiance**: \"Life before Death.\""
	if p := res2.Message.GetParts(); len(p) != 1 || p[0].GetText() != answer {
		t.Errorf("parts %v", p)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 137, OutputTokens: 37, TotalTokens: 174}); !proto.Equal(res2.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", res2.Meta.GetUsage(), want)
	}
}

// TestRound17ZeroUsageUnary: a unary Response whose usage counts nothing
// (Azure's content-filtered answer, as its stream shows in
// real_mira_azure_responses_content_filter_stream) has no usage and the
// warning; one usage counter above zero keeps the usage, zeros included.
func TestRound17ZeroUsageUnary(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body := func(usage string) []byte {
		return []byte(`{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"content_filter"},"model":"gpt-4o-mini",` +
			`"output":[{"id":"msg_1","type":"message","status":"incomplete","role":"assistant","content":[{"type":"output_text","text":"I'm sorry."}]}],"usage":` + usage + `}`)
	}
	res, err := p.parseResponsesResponse(body(`{"input_tokens":0,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}`), "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.GetUsage() != nil || len(res.Meta.GetWarnings()) != 1 || res.Meta.GetWarnings()[0] != warnZeroUsage {
		t.Errorf("zeros: usage %v, warnings %q", res.Meta.GetUsage(), res.Meta.GetWarnings())
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, "incomplete/content_filter")
	res, err = p.parseResponsesResponse(body(`{"input_tokens":12,"output_tokens":0,"total_tokens":12}`), "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Meta.GetUsage(); u.GetInputTokens() != 12 || u.GetTotalTokens() != 12 || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("counted: usage %v, warnings %q", u, res.Meta.GetWarnings())
	}
}

// TestRound17LogfireChatAudioInput: gpt-4o-audio-preview answering about
// a wav input_audio part (Logfire's test_chat_completions_with_audio_input
// cassette; the contract has no audio part, so the request is not ours
// to build): "Hello", 2 audio and 19 text prompt tokens, 0 image tokens,
// 1 text completion token. The audio and text counts go to
// meta.extended.usage_details (zeros are left out), beside the usage.
func TestRound17LogfireChatAudioInput(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-audio-preview", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(`Respond with just the word "hello".`))}}
	res := replayRound13Unary(t, "real_logfire_chat_audio_input", req)
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Hello" {
		t.Errorf("parts %v", p)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if want := (&llmrelayv1.Usage{InputTokens: 21, OutputTokens: 1, TotalTokens: 22}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	d := m.GetExtended().GetFields()[provider.ExtUsageDetails].GetStructValue().AsMap()
	want := map[string]any{"prompt_tokens_details.audio_tokens": 2.0, "prompt_tokens_details.text_tokens": 19.0, "completion_tokens_details.text_tokens": 1.0}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("usage_details %v, want %v", d, want)
	}
	if m.GetResponseId() != "chatcmpl-D5caSDR31gOd1Qpyucf0b5VvVy9zY" || m.GetResolvedModel() != "gpt-4o-audio-preview-2025-06-03" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestRound17MiraResponsesParallelToolsStream: the parallel calls of
// real_mira_responses_parallel_tools_1 streamed (Mirascope's
// test_call_with_tools stream cassette, its first interaction): a
// reasoning item with summary [] added and done with nothing streamed,
// then two function_call items one after the other, each added with
// empty arguments and streamed in seven and six deltas, done with the whole
// arguments. The folded answer is the unary one's shape (the reasoning
// item's id, two calls keyed by their call_ ids in order), finish
// TOOL_CALLS, 128 of 186 output tokens reasoning.
func TestRound17MiraResponsesParallelToolsStream(t *testing.T) {
	t.Parallel()
	f, evs := replayRound13Stream(t, "real_mira_responses_parallel_tools_stream", miraToolsRequest())
	deltas := 0
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCall && ev.ToolCall.Arguments != "" {
			deltas++
		}
	}
	if deltas != 13 {
		t.Errorf("%d argument deltas, want the 13 sent", deltas)
	}
	parts := f.Message.GetParts()
	if len(parts) != 3 || parts[0].GetReasoning().GetId() != "rs_0de9de8974c181a00069492e0975bc8197bba6e6a7cee785ac" {
		t.Fatalf("parts %v", parts)
	}
	for i, c := range []struct{ id, args string }{{"call_yNjBMcK6OeERutRkOCjACGnB", `{"password":"mellon"}`}, {"call_mKDN3h0IACjeWNhSjiHtAQSz", `{"password":"radiance"}`}} {
		if tc := parts[i+1].GetToolCall(); tc.GetCallId() != c.id || tc.GetName() != "secret_retrieval_tool" || tc.GetArguments() != c.args {
			t.Errorf("call %d: %v", i, tc)
		}
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 39, OutputTokens: 186, TotalTokens: 225, ReasoningTokens: 128}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_0de9de8974c181a00069492e08b3708197a9bbb6e56f4244ee" || m.GetProviderRequestId() != "req_7f4fa33cd599483da9cee118f6879874" ||
		m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}
