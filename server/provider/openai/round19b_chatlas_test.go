package openai

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19b: posit-dev/chatlas's VCR cassettes of the Responses API
// (testdata/README.md, "Round 19b"). The expectations are read off the
// recordings by hand.

// TestRound19bChatlasResponsesText: gpt-5.4 (served as
// gpt-5.4-2026-03-05, May 2026), streamed, with reasoning effort "none":
// no reasoning item; one message item in phase "final_answer" with the
// text "2" in one delta; service_tier "auto" while in progress, "default"
// in response.completed (the tier that served it); 26 in, 5 out, no cached
// or reasoning tokens. No x-request-id header was kept by the cassette;
// the x-ratelimit-* headers give 15000 requests and 40000000 tokens,
// 14999 and 39999811 remaining.
func TestRound19bChatlasResponsesText(t *testing.T) {
	t.Parallel()
	const name = "real_chatlas_responses_simple_stream"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5.4", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be as terse as possible; no punctuation")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is 1 + 1?")),
		}}
	f, srv := r19bStream(t, name, req)
	evs := srv.evs
	for _, ev := range evs {
		if ev.Kind == provider.EventText && ev.Phase != "final_answer" {
			t.Errorf("text delta %q with phase %q", ev.Text, ev.Phase)
		}
	}
	if p := f.Message.GetParts(); len(p) != 1 || p[0].GetText() != "2" || p[0].GetPhase() != "final_answer" {
		t.Errorf("parts %v", p)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 26, OutputTokens: 5, TotalTokens: 31}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_0eed2ae3ca8a65a10169fb7c3ab85481a093542ba9c3973a75" || m.GetResolvedModel() != "gpt-5.4-2026-03-05" ||
		m.GetServiceTier() != "default" || m.GetProviderRequestId() != "" || m.GetToolCallCount() != 0 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r19bRateLimit(t, m, 14999, 39999811, time.Date(2026, 5, 6, 17, 36, 58, 0, time.UTC))
}

// r19bRateLimit checks the x-ratelimit-* headers of chatlas's OpenAI
// recordings: 15000 requests and 40000000 tokens a minute.
// The resets (4ms and 0s) count from the response's Date.
func r19bRateLimit(t *testing.T, m *llmrelayv1.ResponseMeta, reqLeft, tokLeft int64, date time.Time) {
	t.Helper()
	rl := m.GetRateLimit()
	if rl.GetRequestsLimit() != 15000 || rl.GetRequestsRemaining() != reqLeft || rl.GetTokensLimit() != 40000000 || rl.GetTokensRemaining() != tokLeft {
		t.Errorf("rate limit %v", rl)
	}
	if !rl.GetRequestsResetTime().AsTime().Equal(date.Add(4*time.Millisecond)) || !rl.GetTokensResetTime().AsTime().Equal(date) {
		t.Errorf("rate limit resets %v %v (Date %v)", rl.GetRequestsResetTime().AsTime(), rl.GetTokensResetTime().AsTime(), date)
	}
}

// TestRound19bChatlasResponsesToolCall: gpt-5.4 (July 2026), streamed,
// effort "none", one strict parameterless tool: a function_call item
// (call_id call_9eTP7x0CjN1Cd1zk7U2GDxAq, item id fc_…) whose arguments
// "{}" come in one delta; no message, no reasoning item; a tool-call
// finish on "completed"; 66 in (cache_write_tokens 0 and cached_tokens 0
// in the details), 14 out, 80 total. The in-progress events carry fields
// new to us (reasoning.context and .mode, tool_usage, prompt_cache_retention
// "24h", a tool's output_schema), which change nothing we relay. Our
// request: the same tool (strict, its parameters), the system text and the
// question as chatlas's input had them.
func TestRound19bChatlasResponsesToolCall(t *testing.T) {
	t.Parallel()
	const name = "real_chatlas_responses_tool_call_stream"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.4", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Always use a tool to help you answer. Reply with 'It is ____.'.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What's the current date in YYYY-MM-DD format?")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_date", Description: "Gets the current date",
			Parameters: `{"properties": {}, "type": "object", "additionalProperties": false, "required": []}`, Strict: proto.Bool(true)}},
	}
	f, srv := r19bStream(t, name, req)
	parts := f.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_9eTP7x0CjN1Cd1zk7U2GDxAq" || tc.GetName() != "get_date" || tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
		t.Errorf("call %v", tc)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 66, OutputTokens: 14, TotalTokens: 80}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_075ddfa016e58c6b016a6bc6d272288195837c203a2e083401" || m.GetResolvedModel() != "gpt-5.4-2026-03-05" ||
		m.GetServiceTier() != "default" || m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r19bRateLimit(t, m, 14999, 39999479, time.Date(2026, 7, 30, 21, 49, 6, 0, time.UTC))
	// chatlas's request, less its include of reasoning.encrypted_content
	// (we ask for it with reasoning only): the same input items, tool,
	// store and stream.
	const recorded = `{"input": [{"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Always use a tool to help you answer. Reply with 'It is ____.'."}]}, ` +
		`{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What's the current date in YYYY-MM-DD format?"}]}], ` +
		`"model": "gpt-5.4", "store": false, "stream": true, "tools": [{"type": "function", "name": "get_date", "description": "Gets the current date", ` +
		`"parameters": {"properties": {}, "type": "object", "additionalProperties": false, "required": []}, "strict": true}]}`
	body, want := decodeBody(t, srv.Last(t).Body), decodeBody(t, []byte(recorded))
	for k, w := range want {
		if !jsonEqualAny(body[k], w) {
			t.Errorf("request %s: %v, want %v", k, body[k], w)
		}
	}
	if _, ok := body["include"]; ok {
		t.Errorf("include %v", body["include"])
	}
}

// r19bReplay is a replayed stream: its events and the replay server.
type r19bReplay struct {
	*providertest.Server
	evs []*provider.Event
}

// r19bStream replays a streamed recording, checks its golden and the
// Responses stream invariants, and returns the folded answer.
func r19bStream(t *testing.T, name string, req *provider.Request) (folded, r19bReplay) {
	t.Helper()
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
	checkRespStreamInvariants(t, evs)
	return accFold(t, evs), r19bReplay{srv, evs}
}

// TestRound19bChatlasAzureResponsesReasoning: gpt-5-nano on Azure's
// classic Responses route (api-version 2025-03-01-preview, December 2025),
// streamed with reasoning.encrypted_content included: a reasoning item
// (rs_…, an empty summary) whose encrypted_content differs in
// output_item.added, output_item.done and response.completed, then a
// message "2" (no phase: Azure's events carry none); "content_filters":
// null; 26 in, 135 out of which 128 reasoning, 161 total; service_tier
// "default" on completion. The apim-request-id header is the request id,
// x-ms-region the region that answered. The reasoning we relay is the
// item as output_item.done gave it (the same rule as for OpenAI), and the
// request is chatlas's (its input, model, store false, stream, include),
// the system text sent as a developer message.
func TestRound19bChatlasAzureResponsesReasoning(t *testing.T) {
	t.Parallel()
	const name = "real_chatlas_azure_responses_reasoning_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5-nano", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be as terse as possible; no punctuation")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is 1 + 1?")),
		}}
	s, err := newTestProvider(t, kAzure, srv.URL, WithAzureAPIVersion("2025-03-01-preview")).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkRespStreamInvariants(t, evs)
	c := srv.Last(t)
	if c.Path != "/openai/responses" || c.Query != "api-version=2025-03-01-preview" {
		t.Errorf("sent to %s?%s", c.Path, c.Query)
	}
	const recorded = `{"include": ["reasoning.encrypted_content"], "input": [{"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Be as terse as possible; no punctuation"}]}, ` +
		`{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is 1 + 1?"}]}], "model": "gpt-5-nano", "store": false, "stream": true}`
	// With reasoning asked for we send the system text as a developer
	// message (what a reasoning model reads it as); chatlas said system.
	body, want := decodeBody(t, c.Body), decodeBody(t, []byte(strings.Replace(recorded, `"role": "system"`, `"role": "developer"`, 1)))
	for k, w := range want {
		if !jsonEqualAny(body[k], w) {
			t.Errorf("request %s: %v, want %v", k, body[k], w)
		}
	}
	f := accFold(t, evs)
	parts := f.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	const encDone = "gAAAAABpVYkldzkn5jH-EFfV8bzC50nsOAcR6CtwgOF0OE0a_gRjOfXjOQ7Bq_o0KAsb57MW99iOwpCxE4Ynbd4MrpkughEnE0I-zOFbII9QH1jIWhZMNpgIahC0HRzwqLv8k1oEtATTx3VGsFPj8CAjxSv9LnnzowzzCjdum8holpYnHwNOlqIrIk_IclAcyuinSp4s0do"
	if r := parts[0].GetReasoning(); r.GetId() != "rs_02f969f744182c5c0169558925505c8197b16daf28c07d2549" || r.GetText() != "" ||
		len(r.GetSignature()) < len(encDone) || r.GetSignature()[:len(encDone)] != encDone || !strings.HasSuffix(r.GetSignature(), "_xMAUA6rKDDn9") {
		t.Errorf("reasoning %v", r)
	}
	if parts[1].GetText() != "2" || parts[1].GetPhase() != "" {
		t.Errorf("text %v", parts[1])
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 26, OutputTokens: 135, TotalTokens: 161, ReasoningTokens: 128}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_02f969f744182c5c0169558924f0a8819793d519e89bf465a1" || m.GetResolvedModel() != "gpt-5-nano" ||
		m.GetServiceTier() != "default" || m.GetProviderRequestId() != "985e0c9d-e801-43de-a0c6-2e14619e50d7" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got := m.GetExtended().AsMap()[extAzureRegion]; got != "East US 2" {
		t.Errorf("region %v (%v)", got, m.GetExtended().AsMap())
	}
}

// TestRound19bEllmerResponsesPriority: tidyverse/ellmer's
// openai-v2-service-tier cassette (August 2026): gpt-4.1-nano on the
// Responses API, unary, asked for service_tier "priority" at temperature
// 0, answers the joke served on the priority tier ("service_tier":
// "priority" in the body); "billing": {"payer": "developer"} beside it;
// 18 in, 18 out. The x-request-id header is the request id; the
// x-ratelimit-* headers give 500 requests and 200000 tokens, 499 and
// 199963 left, resets in 120ms and 11ms from the Date. Our request
// carries the tier, the temperature and the input as ellmer's did.
func TestRound19bEllmerResponsesPriority(t *testing.T) {
	t.Parallel()
	const name = "real_ellmer_responses_priority_tier"
	srv := providertest.ReplayFile(t, td(name+".http"))
	temp := 0.0
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4.1-nano", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Be terse.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Tell me a joke")),
		},
		Options:         &llmrelayv1.GenerationOptions{Temperature: &temp},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{ServiceTier: "priority"}}},
	}
	res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	const recorded = `{"input":[{"role":"system","content":[{"type":"input_text","text":"Be terse."}]},{"role":"user","content":[{"type":"input_text","text":"Tell me a joke"}]}],` +
		`"model":"gpt-4.1-nano","temperature":0,"stream":false,"store":false,"service_tier":"priority"}`
	body, want := decodeBody(t, srv.Last(t).Body), decodeBody(t, []byte(recorded))
	for k, w := range want {
		if k == "input" || k == "stream" {
			continue // below; stream false is the default we leave out
		}
		if !jsonEqualAny(body[k], w) {
			t.Errorf("request %s: %v, want %v", k, body[k], w)
		}
	}
	in, _ := body["input"].([]any)
	if len(in) != 2 {
		t.Fatalf("input %v", body["input"])
	}
	for i, item := range in {
		m, _ := item.(map[string]any)
		w := want["input"].([]any)[i].(map[string]any)
		if m["role"] != w["role"] || !jsonEqualAny(m["content"], w["content"]) {
			t.Errorf("input[%d] %v, want %v", i, m, w)
		}
	}
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Why did the scarecrow win an award? Because he was outstanding in his field." {
		t.Errorf("parts %v", p)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 18, OutputTokens: 18, TotalTokens: 36}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_0cc4179d06f1c1ad016a6fc6d3d3908195b41b6af4dd890896" || m.GetResolvedModel() != "gpt-4.1-nano-2025-04-14" ||
		m.GetServiceTier() != "priority" || m.GetProviderRequestId() != "req_b49e5db66aa5429fa0b0df945b4c212c" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	rl := m.GetRateLimit()
	date := time.Date(2026, 8, 2, 22, 38, 12, 0, time.UTC)
	if rl.GetRequestsLimit() != 500 || rl.GetRequestsRemaining() != 499 || rl.GetTokensLimit() != 200000 || rl.GetTokensRemaining() != 199963 ||
		!rl.GetRequestsResetTime().AsTime().Equal(date.Add(120*time.Millisecond)) || !rl.GetTokensResetTime().AsTime().Equal(date.Add(11*time.Millisecond)) {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound19bEllmerResponsesToolLoop: ellmer's openai-v2-tool cassette
// (October 2025), its first two interactions: gpt-4.1-nano on the
// Responses API, unary, one strict parameterless tool. _1: a function_call
// item (call_id call_WO9yrltzA0P4JxhivAPDPk3N, item id fc_…) with
// arguments "{}", 59 in, 11 out; _2, after the result: "It is
// 2024-01-01.", 81 in, 12 out. Both carry x-request-id and the rate-limit
// headers (30000 requests, 150000000 tokens).
//
// ellmer's follow-up sent the call and its output under the item id
// ("call_id": "fc_0d2a…"), not the call's call_id, and the API took it;
// ours sends the call_id the API gave (as its reference says), the same
// arguments and the output, after the same system and user input.
func TestRound19bEllmerResponsesToolLoop(t *testing.T) {
	t.Parallel()
	temp := 0.0
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-4.1-nano", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Always use a tool to answer. Reply with 'It is ____.'.")),
			msgOf(llmrelayv1.Role_ROLE_USER, text("What's the current date in Y-M-D format?")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "current_date", Description: "Return the current date", Strict: proto.Bool(true),
			Parameters: `{"type":"object","description":"","properties":{},"required":[],"additionalProperties":false}`}},
		Options: &llmrelayv1.GenerationOptions{Temperature: &temp},
	}
	const recordedTools = `[{"type":"function","name":"current_date","description":"Return the current date","strict":true,` +
		`"parameters":{"type":"object","description":"","properties":{},"required":[],"additionalProperties":false}}]`
	for i, tc := range []struct {
		name, respID, reqID string
		in, out             int32
		tokLeft             int64
		date                time.Time
	}{
		{"real_ellmer_responses_tool_1", "resp_0d2aa7193db670490168f249cd2f7c819083ff67b327379e29", "req_df231e8026074bfdabaed5f3cc65abfd", 59, 11, 149999722,
			time.Date(2025, 10, 17, 13, 51, 9, 0, time.UTC)},
		{"real_ellmer_responses_tool_2", "resp_0cca59a5d21ed5560168f249ce36e081958687985ded3be958", "req_8256bfe231fd4316bdd3dd2f88ad53d4", 81, 12, 149999702,
			time.Date(2025, 10, 17, 13, 51, 10, 0, time.UTC)},
	} {
		srv := providertest.ReplayFile(t, td(tc.name+".http"))
		res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkResultInvariants(t, res)
		providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
		body := decodeBody(t, srv.Last(t).Body)
		if !jsonEqualAny(body["tools"], decodeBody(t, []byte(`{"t":`+recordedTools+`}`))["t"]) || body["temperature"] != 0.0 || body["store"] != false {
			t.Errorf("%s: request %s", tc.name, srv.Last(t).Body)
		}
		in, _ := body["input"].([]any)
		m := res.Meta
		if i == 0 {
			if len(in) != 2 {
				t.Errorf("%s: input %v", tc.name, in)
			}
			p := res.Message.GetParts()
			if len(p) != 1 || p[0].GetToolCall().GetCallId() != "call_WO9yrltzA0P4JxhivAPDPk3N" || p[0].GetToolCall().GetName() != "current_date" ||
				p[0].GetToolCall().GetArguments() != "{}" || !p[0].GetToolCall().GetArgumentsValid() {
				t.Errorf("%s: parts %v", tc.name, p)
			}
			wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
		} else {
			if len(in) != 4 {
				t.Fatalf("%s: input %v", tc.name, in)
			}
			want := []map[string]any{
				{"type": "function_call", "call_id": "call_WO9yrltzA0P4JxhivAPDPk3N", "name": "current_date", "arguments": "{}"},
				{"type": "function_call_output", "call_id": "call_WO9yrltzA0P4JxhivAPDPk3N", "output": "2024-01-01"},
			}
			for j, w := range want {
				if !jsonEqualAny(in[2+j], w) {
					t.Errorf("%s: input[%d] %v, want %v", tc.name, 2+j, in[2+j], w)
				}
			}
			if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "It is 2024-01-01." {
				t.Errorf("%s: parts %v", tc.name, p)
			}
			wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
		}
		if want := (&llmrelayv1.Usage{InputTokens: tc.in, OutputTokens: tc.out, TotalTokens: tc.in + tc.out}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("%s: usage %v, want %v", tc.name, m.GetUsage(), want)
		}
		if m.GetResponseId() != tc.respID || m.GetProviderRequestId() != tc.reqID || m.GetResolvedModel() != "gpt-4.1-nano-2025-04-14" ||
			m.GetServiceTier() != "default" || len(m.GetWarnings()) != 0 {
			t.Errorf("%s: meta %v", tc.name, m)
		}
		if rl := m.GetRateLimit(); rl.GetRequestsLimit() != 30000 || rl.GetTokensLimit() != 150000000 || rl.GetTokensRemaining() != tc.tokLeft ||
			!rl.GetRequestsResetTime().AsTime().Equal(tc.date.Add(2*time.Millisecond)) {
			t.Errorf("%s: rate limit %v", tc.name, rl)
		}
		req.Messages = append(req.Messages, res.Message)
		if i == 0 {
			req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_WO9yrltzA0P4JxhivAPDPk3N", "2024-01-01")))
		}
	}
}
