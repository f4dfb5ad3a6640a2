package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestSimonwChatStreams replays Chat Completions streams recorded in
// simonw/llm's VCR cassettes (testdata/README.md); the expectations are
// what llm's own tests assert of the same answers, checked by hand
// against the recorded chunks.
func TestSimonwChatStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, req string
		check     func(t *testing.T, f folded)
	}{
		// OpenRouter relaying kimi-k2 on Novita: the call (id "0") opens
		// with arguments "", then a second fragment repeats its id and
		// name with the arguments "{}" (llm's "variant a"): one call, named
		// once. No chunk has a finish_reason: none is reported (the
		// server's tool-calls rule makes it TOOL_CALLS), and the usage
		// comes with OpenRouter's cost.
		{"real_llm_tools_streaming_variant_a_1", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "0" || tc.GetName() != "llm_version" || tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			if f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED || f.Meta.GetProviderFinishReason() != "" {
				t.Errorf("finish %v %q, want none (the stream sent none)", f.Meta.GetFinishReason(), f.Meta.GetProviderFinishReason())
			}
			if want := (&llmrelayv1.Usage{InputTokens: 57, OutputTokens: 17, TotalTokens: 74}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if d := f.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap(); len(d) != 1 || d["cost"] != 0.00007159 {
				t.Errorf("usage_details %v", d)
			}
			if f.Meta.GetResponseId() != "gen-1753242299-QZRAt5HJHd1ptY8sdS0s" || f.Meta.GetResolvedModel() != "moonshotai/kimi-k2" {
				t.Errorf("ids %q %q", f.Meta.GetResponseId(), f.Meta.GetResolvedModel())
			}
		}},
		// kimi-k2 on Novita ("variant c"): the body opens with a line
		// " data: {...}" (a leading space: not a data field, ignored as
		// the SSE rules and llm's client ignore it; it only announced the
		// role), then a call "llm_version:0" named in one fragment and
		// given "{}" by index alone in the next, finish tool_calls, the
		// usage after the finish.
		{"real_llm_tools_streaming_variant_c_1", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "llm_version:0" || tc.GetName() != "llm_version" || tc.GetArguments() != "{}" || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 56, OutputTokens: 12, TotalTokens: 68}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "gen-1753248108-FGOxpkEzFEwhNKSPpI4a" || f.Meta.GetExtended().GetFields()["system_fingerprint"].GetStringValue() != "fpv0_170758dd" {
				t.Errorf("meta %v", f.Meta)
			}
		}},
		// gpt-4o-mini (llm's fixture, served by its test one chunk per
		// event): a call opened with "content": null and "refusal": null,
		// its arguments in eight fragments, finish tool_calls, no usage
		// (the request asked for none).
		{"real_llm_fixture_stream_tool_call", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_eHh2kRnDdLBSQJ0HaSA4A4uF" || tc.GetName() != "read_files" ||
				tc.GetArguments() != `{"filenames":["LICENSE.txt"]}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if f.Meta.GetUsage() != nil || f.Meta.GetResponseId() != "chatcmpl-AGWNrkc8I43YTP6kbGNFCr9FtiBsJ" || f.Meta.GetResolvedModel() != "gpt-4o-mini-2024-07-18" {
				t.Errorf("meta %v", f.Meta)
			}
		}},
		// Mistral magistral-small-latest (llm-mistral's fixture, reasoning
		// effort omitted): text only ("323") with Mistral's "p" padding,
		// the usage on the finishing chunk carrying the service tier
		// ("service_tier": "standard" inside the usage; no top-level one).
		{"real_llm_mistral_magistral_stream", "chat_plain", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "323" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 28, OutputTokens: 4, TotalTokens: 32}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetServiceTier() != "standard" || f.Meta.GetResponseId() != "9bc79f2031ee479486a36543066c2a1c" {
				t.Errorf("meta %v", f.Meta)
			}
		}},
		// Written by llm's authors ("variant d", ids and model theirs):
		// a call whose arguments are null. The arguments are kept as sent
		// (none: ""), flagged invalid, never rewritten to "{}"
		// (docs/decisions.md, "Tool calls are message parts").
		{"real_llm_tools_streaming_variant_d_1", "tools_parallel", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "0" || tc.GetName() != "llm_version" || tc.GetArguments() != "" || tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 57, OutputTokens: 17, TotalTokens: 74}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			tc.check(t, accFold(t, evs))
		})
	}
}

// TestSimonwChatUnary replays unary Chat Completions answers from
// simonw/llm's plugins' fixtures (testdata/README.md).
func TestSimonwChatUnary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, req string
		check     func(t *testing.T, res *provider.Result)
	}{
		// gpt-4o-mini (llm's chain-of-two-calls cassette, first turn,
		// gzip body stored decompressed): a call with "content": null,
		// "refusal": null, "annotations": [], zero usage details.
		{"real_llm_tool_use_chain_of_two_calls_1", "tools_parallel", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_TTY8UFNo7rNCaOBUNtlRSvMG" || tc.GetName() != "lookup_population" ||
				tc.GetArguments() != `{"country":"Crumpet"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
			if want := (&llmrelayv1.Usage{InputTokens: 92, OutputTokens: 17, TotalTokens: 109}); !proto.Equal(res.Meta.GetUsage(), want) || res.Meta.GetExtended().GetFields()["usage_details"] != nil {
				t.Errorf("usage %v (extended %v), want %v", res.Meta.GetUsage(), res.Meta.GetExtended(), want)
			}
			if res.Meta.GetProviderRequestId() != "req_1e7dabaf1f0dba1ec89a134d3bde8476" || res.Meta.GetServiceTier() != "default" ||
				res.Meta.GetResponseId() != "chatcmpl-BWpGNGdPONTwxHkZVxbqctQSBDmTn" || res.Meta.GetRateLimit().GetTokensRemaining() != 149999981 {
				t.Errorf("meta %v", res.Meta)
			}
		}},
		// Mistral magistral-small-latest, reasoning effort high
		// (llm-mistral's fixture): content is an array of a "thinking"
		// part (its text in text chunks, "closed": true) and a text part;
		// "tool_calls": null; the service tier inside the usage.
		{"real_llm_mistral_magistral_high_completion", "chat_plain", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[1].GetText() != "323" {
				t.Fatalf("parts %v", parts)
			}
			if r := parts[0].GetReasoning().GetText(); !strings.HasPrefix(r, "I need to calculate 17 multiplied by 19. Let me think about this step by step.\n\nFirst,") ||
				!strings.HasSuffix(r, "340 - 17 = 323.\n\nSo, 17 times 19 equals 323.") || strings.Contains(r, `"type"`) {
				t.Errorf("reasoning %q", r)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
			if want := (&llmrelayv1.Usage{InputTokens: 28, OutputTokens: 252, TotalTokens: 280}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetServiceTier() != "standard" || res.Meta.GetResponseId() != "cd4da9ae91fc48fb9884cd2feae899a6" || res.Meta.GetToolCallCount() != 0 {
				t.Errorf("meta %v", res.Meta)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}

// TestSimonwResponses replays Responses API answers recorded in
// simonw/llm's cassettes (testdata/README.md), streamed and unary.
func TestSimonwResponses(t *testing.T) {
	t.Parallel()
	streams := []struct {
		name  string
		check func(t *testing.T, f folded)
	}{
		// gpt-5.5, store false, reasoning effort low: one message item
		// with "phase": "final_answer", one text delta, no reasoning item
		// (0 reasoning tokens).
		{"real_llm_responses_basic_streaming", func(t *testing.T, f folded) {
			if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetText() != "pong" {
				t.Fatalf("parts %v", parts)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 11, OutputTokens: 5, TotalTokens: 16}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "resp_00592e63e61b66660169fab1b9f8e481a2b321356198d7ac1b" || f.Meta.GetProviderRequestId() != "req_445d87d531af499daeb09f7826886b8c" ||
				f.Meta.GetServiceTier() != "default" || len(f.Meta.GetWarnings()) != 0 {
				t.Errorf("meta %v", f.Meta)
			}
		}},
		// gpt-5.5, store false, reasoning effort low: no reasoning item,
		// one function_call streamed in eleven argument deltas (each with
		// an obfuscation field), keyed by its call_id; service_tier
		// "auto" in response.created, "default" in response.completed.
		{"real_llm_responses_tool_use_streaming_1", func(t *testing.T, f folded) {
			parts := f.Message.GetParts()
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			if tc := parts[0].GetToolCall(); tc.GetCallId() != "call_sVidsfFJ6zlzRpelrPkTPlpd" || tc.GetName() != "multiply" ||
				tc.GetArguments() != `{"a":1231,"b":2331}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 58, OutputTokens: 23, TotalTokens: 81}); !proto.Equal(f.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
			}
			if f.Meta.GetResponseId() != "resp_00d64fa806f333310169fab1be69d081a08f8285661855594c" || f.Meta.GetResolvedModel() != "gpt-5.5-2026-04-23" ||
				f.Meta.GetServiceTier() != "default" || f.Meta.GetProviderRequestId() != "req_996657ef97514aeb93f449d57303514d" {
				t.Errorf("meta %v", f.Meta)
			}
		}},
	}
	for _, tc := range streams {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), responsesRequests(t)["responses_tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkRespStreamInvariants(t, evs)
			tc.check(t, accFold(t, evs))
		})
	}
	unary := []struct {
		name  string
		check func(t *testing.T, res *provider.Result)
	}{
		// gpt-5.5, store false, reasoning effort high (llm's
		// interleaved-reasoning test, first turn): an encrypted reasoning
		// item with an empty summary, then a function_call; 45 of 65
		// output tokens reasoning.
		{"real_llm_responses_interleaved_reasoning_1", func(t *testing.T, res *provider.Result) {
			parts := res.Message.GetParts()
			if len(parts) != 2 {
				t.Fatalf("parts %v", parts)
			}
			if r := parts[0].GetReasoning(); r.GetId() != "rs_0429c1fcf5cbfa350169fabfe62a9c8197914677ea9a2424a0" || r.GetText() != "" ||
				!strings.HasPrefix(r.GetSignature(), "gAAAAABp-r_nDEFD_pLd6MEz") || !strings.HasSuffix(r.GetSignature(), "GPX33OVw0-mgm") || len(r.GetSignature()) != 1228 {
				t.Errorf("reasoning %v", r)
			}
			if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_I670mAzR6AYszdoqaI96qg0k" || tc.GetName() != "db_lookup" ||
				tc.GetArguments() != `{"key":"start"}` || !tc.GetArgumentsValid() {
				t.Errorf("call %v", tc)
			}
			wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			if want := (&llmrelayv1.Usage{InputTokens: 88, OutputTokens: 65, TotalTokens: 153, ReasoningTokens: 45}); !proto.Equal(res.Meta.GetUsage(), want) {
				t.Errorf("usage %v, want %v", res.Meta.GetUsage(), want)
			}
			if res.Meta.GetResponseId() != "resp_0429c1fcf5cbfa350169fabfe5357c8197bfe6aae6fb45ffb9" || res.Meta.GetProviderRequestId() != "req_c48ea45fc57a407bb6b100db8c59af68" {
				t.Errorf("meta %v", res.Meta)
			}
		}},
	}
	for _, tc := range unary {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), responsesRequests(t)["responses_tools_parallel"])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}

// TestSimonwEncryptedReasoningRoundTrip: the second request of llm's
// interleaved-reasoning cassette sends back the first answer's encrypted
// reasoning item ({"type":"reasoning","id":…,"encrypted_content":…,
// "summary":[]}, the encrypted_content being the one of the answer) and its
// function_call before the tool's output. The request we build from the
// answer Generate made of real_llm_responses_interleaved_reasoning_1 has
// the same items (the arguments as the model sent them: llm re-serializes
// them with spaces).
func TestSimonwEncryptedReasoningRoundTrip(t *testing.T) {
	t.Parallel()
	const name = "real_llm_responses_interleaved_reasoning_1"
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	raw := providertest.Load(t, td(name+".http")).Body
	res, err := p.parseResponsesResponse(raw, "gpt-5.5")
	if err != nil {
		t.Fatal(err)
	}
	var recorded struct {
		Output []map[string]any `json:"output"`
	}
	if err := json.Unmarshal(raw, &recorded); err != nil {
		t.Fatal(err)
	}
	user := "Solve this puzzle: call db_lookup('start'), then follow each instruction step by step. Each lookup tells you the next key to use. " +
		"Compute each step in your head. State only the final integer."
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.5", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text(user)),
			res.Message,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_I670mAzR6AYszdoqaI96qg0k", "Begin with the value 7.")),
		},
		Options: &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH},
	}
	body, _, err := p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeBody(t, body)
	if inc, _ := m["include"].([]any); len(inc) != 1 || inc[0] != "reasoning.encrypted_content" || m["store"] != false {
		t.Errorf("include %v, store %v", m["include"], m["store"])
	}
	items, _ := m["input"].([]any)
	if len(items) != 4 {
		t.Fatalf("input %v", m["input"])
	}
	rs := recorded.Output[0]
	wantReasoning := map[string]any{"type": "reasoning", "id": rs["id"], "encrypted_content": rs["encrypted_content"], "summary": []any{}}
	if !reflect.DeepEqual(items[1], wantReasoning) {
		t.Errorf("reasoning item %v, want %v", items[1], wantReasoning)
	}
	call, _ := items[2].(map[string]any)
	if call["type"] != "function_call" || call["call_id"] != "call_I670mAzR6AYszdoqaI96qg0k" || call["name"] != "db_lookup" || call["arguments"] != `{"key":"start"}` {
		t.Errorf("call item %v", call)
	}
	out, _ := items[3].(map[string]any)
	if out["type"] != "function_call_output" || out["call_id"] != "call_I670mAzR6AYszdoqaI96qg0k" || out["output"] != "Begin with the value 7." {
		t.Errorf("output item %v", out)
	}
}
