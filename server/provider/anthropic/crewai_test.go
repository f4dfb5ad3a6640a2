package anthropic

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// crewAIInc/crewAI's VCR cassettes (testdata/README.md, "Real recordings
// from crewAI's cassettes"): the live API's answers to crewAI's tests. The
// cassettes redact request-id, the token rate-limit headers and the
// organization; what they keep (the requests-* headers, retry-after) is
// checked. Every expectation below is read off the cassette by hand.

// The signatures of test_anthropic_thinking_blocks_preserved_across_turns.
const (
	crewTurnSig1 = "EtsBCkYIChgCKkANrO4e7QOyBt+X28FZKLvTzNoQDVSTVMHBDOKtdn00Qyust7+mKBLyfu25KPMJ1vxi7EBV2nWiTwBDAqS5ISPSEgw4osCEgxoIKxtF4aEaDNjFV1lDPtM2C3ZHSSIwORbCdva9l0QAc7PYzQBqw8kW/BDbEnwQSCctHhwrUQithEBZ74VLo2m4+RcuFEO5KkNy+rjfKsdyFeJLr89CoBJJOmCyrssMFA+JHnDALdbz9T0LwkTLhOe6H/OxdAEgE2C5BrQOhxxoujWWMpFS0KqB7KoUGAE="
	crewTurnSig2 = "EowCCkYIChgCKkBQvv7OO+GZkN1IQV4rYUHhSxIOakaLF8r8Opyw1c2AlDWYrNo68wnpQgorxXUgYTeyO4EVVZpnDpMzittnHb6kEgzFqQkat+PkDjFD8ogaDOXAAxx0KkQkoBEpxCIwILoygq/ORofKYq5QU/MxZ4CEkGLgtoEDhHq8Ot+PJ/5XGu55karEW3vNJT8vFii9KnRKUY/z4pWZEmOhnnuS1YSePXtDZ2I8Xh7hStzHgu7nP4WKbGSCAzzXSVXg+b2jsUursNcsZjGeckUjKkkwE3XZAjkkL+1QfuiYwM/jrDYdG3mW7kwDTtGM+NuHpio6QhI9DwVxg4guX/YvT54Pv7sM8TmvDxgB"
)

// crewThinkingRequest is crewAI's request of the thinking cassette:
// claude-sonnet-4-5, max_tokens 10000, thinking with a budget of 5000.
func crewThinkingRequest(msgs ...*llmrelayv1.Message) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    "claude-sonnet-4-5",
		Messages: msgs,
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](10000)},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			ThinkingBudgetTokens: ptr[int32](5000),
		}}},
	}
}

func TestCrewGenerate(t *testing.T) {
	t.Parallel()
	user1 := msgOf(llmrelayv1.Role_ROLE_USER, text("What is 2+2?"))
	cases := []struct {
		name string
		req  *provider.Request
		want llmWant
		// The anthropic-ratelimit-requests-* headers.
		requestsLimit, requestsRemaining int64
		requestsReset                    time.Time
	}{
		// claude-sonnet-4-5 with thinking: a signed thinking block, then
		// text; cache_creation all zeros (no usage_details). The 200
		// carries retry-after: 12, which is not a rate limit.
		{"real_crew_anthropic_thinking_blocks_preserved_across_turns_1", crewThinkingRequest(user1), llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{Text: "This is a simple arithmetic question. 2+2 equals 4.", Signature: crewTurnSig1}),
				text("2 + 2 = 4"),
			},
			responseID: "msg_015YGo3nWoECsjkecM7cnkWC", model: "claude-sonnet-4-5-20250929",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:    usageOf(43, 36, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}, 50, 49, time.Date(2025, 12, 8, 23, 16, 48, 0, time.UTC)},
		// The second turn: thinking with blank lines, then text.
		{"real_crew_anthropic_thinking_blocks_preserved_across_turns_2", crewThinkingRequest(user1), llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text:      "The user is asking me to calculate 3 + 3.\n\n3 + 3 = 6\n\nThis is a straightforward arithmetic question.",
					Signature: crewTurnSig2,
				}),
				text("3 + 3 = 6"),
			},
			responseID: "msg_0118vijpYTXrZ1uxtPXFMR6j", model: "claude-sonnet-4-5-20250929",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:    usageOf(67, 53, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}, 50, 49, time.Date(2025, 12, 8, 23, 16, 51, 0, time.UTC)},
		// Tool search (tool_search_tool_bm25 with deferred tools): text, a
		// server_tool_use and its tool_search_tool_result (one warning
		// each, docs/decisions.md), text, then the client tool_use the
		// search found; usage.server_tool_use all zeros is left out.
		{"real_crew_tool_search_discovers_and_calls_tool", crewThinkingRequest(msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Tokyo?"))), llmWant{
			parts: []*llmrelayv1.Part{
				text("I'll search for a weather-related tool to help you get the weather information for Tokyo."),
				text("Great! I found a weather tool. Let me get the current weather conditions for Tokyo."),
				toolCallValid("toolu_01R3FavQLuTrwNvEk9gMaViK", "get_weather", `{"input":"Tokyo"}`),
			},
			responseID: "msg_01DAGCoL6C12u6yAgR1UqNAs", model: "claude-sonnet-4-5-20250929",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:    usageOf(1566, 155, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
			items:    []string{"server_tool_use", "tool_search_tool_result"},
		}, 20000, 19999, time.Date(2026, 3, 8, 21, 4, 7, 0, time.UTC)},
		// A forced tool (tool_choice get_weather) answered from a cached
		// system prompt: 1857 tokens read, 24 uncached; the tool_use has
		// no caller. The cassette kept no rate-limit header.
		{"real_crew_anthropic_cached_prompt_tokens_with_tools_1", crewWeatherRequest(), llmWant{
			parts:      []*llmrelayv1.Part{toolCallValid("toolu_01CX1yZuJ5MQaJbXNSrnCiqf", "get_weather", `{"location":"Tokyo"}`)},
			responseID: "msg_01WhFk2ppoz43nbh4uNhXBfL", model: "claude-sonnet-4-5-20250929",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:    usageOf(24, 33, 1857, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
		}, 0, 0, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			res, err := newTestProvider(t, srv.URL).Generate(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			crewCheck(t, "unary", res.Message, res.Meta, tc.want, tc.requestsLimit, tc.requestsRemaining, tc.requestsReset)
			if tc.name == "real_crew_tool_search_discovers_and_calls_tool" && res.Meta.GetToolCallCount() != 1 {
				t.Errorf("tool calls %d, want 1 (the server tool is not one)", res.Meta.GetToolCallCount())
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

// TestCrewStopSequences: claude-3-5-haiku asked with crewAI's two stop
// sequences; the request carries them as crewAI's did, and the answer
// ("Hello.") ended without one (end_turn, stop_sequence null). The
// cassette kept every header: the request id, all the rate limits (with a
// retry-after: 41 on the 200, which is no rate limit). The body was
// recorded gzip-compressed; the recording holds it decompressed.
func TestCrewStopSequences(t *testing.T) {
	t.Parallel()
	const name = "real_crew_anthropic_stop_sequences_sent_to_api"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    "claude-3-5-haiku-20241022",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Say hello in one word"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096), Stop: []string{"\nObservation:", "\nThought:"}},
	}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Hello.")},
		responseID: "msg_0168T3wxGsbhK1QU7ukEG76F", model: "claude-3-5-haiku-20241022", requestID: "req_011CUshbL7CEVoner91hUvxL",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(12, 5, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 11, 7, 1, 58, 22, 0, time.UTC),
		extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`},
			"400000", "400000", "2025-11-07T01:58:22Z", "80000", "80000", "2025-11-07T01:58:22Z"),
	})
	if rl := res.Meta.GetRateLimit(); rl.GetRequestsRemaining() != 3999 || rl.GetTokensRemaining() != 480000 {
		t.Errorf("rate limit %v, want 3999 requests and 480000 tokens remaining", rl)
	}
	// crewAI's request, as recorded (the user's text as a string there,
	// one text block here).
	const recorded = `{"max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"Say hello in one word"}]}],` +
		`"model":"claude-3-5-haiku-20241022","stop_sequences":["\nObservation:","\nThought:"]}`
	var want, got map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatalf("recorded request: %v", err)
	}
	if err := json.Unmarshal(srv.Last(t).Body, &got); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	for k, w := range want {
		if g := got[k]; !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("request %s\n got %s\nwant %s", k, gb, wb)
		}
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	providertest.Golden(t, "testdata/"+name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
}

// crewCheck is checkLLMWant for a cassette whose only rate-limit headers
// are anthropic-ratelimit-requests-* (the cassette redacted the token ones,
// which checkLLMWant checks): the rate limit is compared here, whole, and
// left out there. requestsLimit 0: the cassette kept none of them.
func crewCheck(t *testing.T, what string, msg *llmrelayv1.Message, m *llmrelayv1.ResponseMeta, w llmWant,
	requestsLimit, requestsRemaining int64, requestsReset time.Time) {
	t.Helper()
	meta := proto.Clone(m).(*llmrelayv1.ResponseMeta)
	meta.RateLimit = nil
	checkLLMWant(t, what, msg, meta, w)
	var want *llmrelayv1.RateLimit
	if requestsLimit != 0 {
		want = &llmrelayv1.RateLimit{RequestsLimit: ptr(requestsLimit), RequestsRemaining: ptr(requestsRemaining),
			RequestsResetTime: timestamppb.New(requestsReset),
			Windows: []*llmrelayv1.RateLimitWindow{{Budget: "requests", Header: "anthropic-ratelimit-requests",
				Limit: ptr(requestsLimit), Remaining: ptr(requestsRemaining), ResetTime: timestamppb.New(requestsReset)}}}
	}
	if rl := m.GetRateLimit(); !proto.Equal(rl, want) {
		t.Errorf("%s: rate limit %v, want %v", what, rl, want)
	}
}

// TestCrewThinkingRoundTrip: the answer of
// real_crew_anthropic_thinking_blocks_preserved_across_turns_1 sent back
// with the next user turn must go out as crewAI's second request did (the
// live API accepted it, _2 is its answer): the thinking block with its text
// and signature unchanged, then the text; same max_tokens and thinking.
// crewAI sends a user turn's text as a string, the adapter as one text
// block; the API takes them as the same, so the string is compared as that
// block.
func TestCrewThinkingRoundTrip(t *testing.T) {
	t.Parallel()
	first := providertest.ReplayFile(t, "testdata/real_crew_anthropic_thinking_blocks_preserved_across_turns_1.http")
	user1 := msgOf(llmrelayv1.Role_ROLE_USER, text("What is 2+2?"))
	res, err := newTestProvider(t, first.URL).Generate(context.Background(), crewThinkingRequest(user1))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	next := providertest.ReplayFile(t, "testdata/real_crew_anthropic_thinking_blocks_preserved_across_turns_2.http")
	res2, err := newTestProvider(t, next.URL).Generate(context.Background(),
		crewThinkingRequest(user1, res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("Now what is 3+3?"))))
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	if len(res2.Meta.GetWarnings()) != 0 {
		t.Errorf("follow-up warnings %q, want none", res2.Meta.GetWarnings())
	}
	// crewAI's second request, as recorded.
	const recorded = `{"max_tokens":10000,"messages":[{"role":"user","content":"What is 2+2?"},{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":"This is a simple arithmetic question. 2+2 equals 4.","signature":"` + crewTurnSig1 + `"},` +
		`{"type":"text","text":"2 + 2 = 4"}]},{"role":"user","content":"Now what is 3+3?"}],` +
		`"model":"claude-sonnet-4-5","stream":false,"thinking":{"type":"enabled","budget_tokens":5000}}`
	var want, got map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatalf("recorded request: %v", err)
	}
	for _, m := range want["messages"].([]any) {
		m := m.(map[string]any)
		if s, ok := m["content"].(string); ok {
			m["content"] = []any{map[string]any{"type": "text", "text": s}}
		}
	}
	if err := json.Unmarshal(next.Last(t).Body, &got); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	for k, w := range want {
		if k == "stream" {
			continue // the unary adapter leaves stream out (false is the default)
		}
		if g := got[k]; !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("request %s\n got %s\nwant %s", k, gb, wb)
		}
	}
	if s, ok := got["stream"]; ok && s != false {
		t.Errorf("request stream = %v, want false or absent", s)
	}
}

// TestCrewStreamCachedPrompt: claude-sonnet-4-5 streaming a prompt read
// from the cache (1217 tokens read, 3 uncached, none written); padded
// JSON (spaces before closing braces, a line break folded into a space in
// message_delta), a ping between block start and delta; message_delta
// repeats the input and cache counts, which must not be added twice.
func TestCrewStreamCachedPrompt(t *testing.T) {
	t.Parallel()
	const name = "real_crew_anthropic_streaming_cached_prompt_tokens_1"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	checkLLMWant(t, "stream", f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("Hello")},
		responseID: "msg_01LshZroyEGgd3HfDrKdQMLm", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(3, 4, 1217, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
	})
}

// crewTempRequest is crewAI's request with its get_current_temperature
// tool.
func crewTempRequest(msgs ...*llmrelayv1.Message) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS,
		Model:    "claude-3-5-haiku-latest",
		Messages: msgs,
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096)},
		Tools: []*llmrelayv1.Tool{{
			Name: "get_current_temperature", Description: "Get the current temperature in a city.",
			Parameters: `{"type":"object","properties":{"city":{"type":"string","description":"The name of the city to get the temperature for."}},"required":["city"]}`,
		}},
	}
}

// TestCrewToolStreamRoundTrip: claude-3-5-haiku streaming text then a
// tool_use whose arguments come in four input_json_delta pieces after an
// empty one (split inside the key and the value), padded JSON, a ping;
// then the answer, sent back with the tool's result, must give the
// messages crewAI sent next, which the live API accepted (_2 is its
// answer: text with °, stop end_turn).
func TestCrewToolStreamRoundTrip(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text("What is the temperature in San Francisco?"))
	const first = "real_crew_anthropic_streaming_emits_tool_call_events_1"
	srv := providertest.ReplayFile(t, "testdata/"+first+".http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), crewTempRequest(user))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	const intro = "I'll help you find out the current temperature in San Francisco. I'll use the get_current_temperature function to retrieve this information."
	crewCheck(t, first, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			text(intro),
			toolCallValid("toolu_01Lfr3kUnHMZApePPRWMv1uS", "get_current_temperature", `{"city": "San Francisco"}`),
		},
		responseID: "msg_01JCJXSfyzkcecJUydp157cS", model: "claude-3-5-haiku-20241022",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(351, 85, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`},
	}, 4000, 3999, time.Date(2026, 1, 5, 16, 4, 30, 0, time.UTC))
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulator message\n got %v\nwant %v", got, f.message)
	}
	var deltas []int
	for _, ev := range evs {
		if ev.Kind != provider.EventToolCall || ev.ToolCall.Arguments == "" {
			continue
		}
		for len(deltas) <= ev.ToolCall.Index {
			deltas = append(deltas, 0)
		}
		deltas[ev.ToolCall.Index]++
	}
	if !equalInts(deltas, []int{4}) {
		t.Errorf("argument deltas per call %v, want [4] (the empty one left out)", deltas)
	}

	result := msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01Lfr3kUnHMZApePPRWMv1uS", "The temperature in San Francisco is 72°F", false))
	second, sent := lcgStream(t, "real_crew_anthropic_streaming_emits_tool_call_events_2", crewTempRequest(user, f.message, result))
	// crewAI's second request's messages, as recorded (the user's text as
	// a string there, one text block here: the same to the API).
	recorded := `[{"role":"user","content":[{"type":"text","text":"What is the temperature in San Francisco?"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"` + intro + `"},` +
		`{"type":"tool_use","id":"toolu_01Lfr3kUnHMZApePPRWMv1uS","name":"get_current_temperature","input":{"city":"San Francisco"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01Lfr3kUnHMZApePPRWMv1uS","content":"The temperature in San Francisco is 72°F"}]}]`
	lcgSameMessages(t, "second request", sent, recorded)
	want := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("The current temperature in San Francisco is 72°F. It sounds like a pleasant day! Is there anything else I can help you with?"))
	if !proto.Equal(second, want) {
		t.Errorf("second answer\n got %v\nwant %v", second, want)
	}
}

// crewCalcRequest is crewAI's request of
// test_anthropic_agent_kickoff_structured_output_with_tools: claude-sonnet-4-6,
// a system prompt, one stop sequence and the add_numbers tool with strict
// set (its schema closed with additionalProperties false).
func crewCalcRequest(msgs ...*llmrelayv1.Message) *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS,
		Model:    "claude-sonnet-4-6",
		Messages: append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(crewCalcSystem))}, msgs...),
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096), Stop: []string{"\nObservation:"}},
		Tools: []*llmrelayv1.Tool{{
			Name: "add_numbers", Description: "Add two numbers together and return the sum.",
			Parameters: `{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object","additionalProperties":false}`,
			Strict:     ptr(true),
		}},
	}
}

const (
	crewCalcSystem = "You are Calculator. You are a calculator assistant that uses tools to compute results.\nYour personal goal is: Perform calculations using available tools"
	crewCalcTask   = "\nCurrent Task: Calculate 15 + 27 using your add_numbers tool. Report the result."
	crewCalcIntro  = "I'll calculate 15 + 27 right away using the `add_numbers` tool!"
)

// TestCrewStrictToolRoundTrip: a tool asked for with strict goes to
// Anthropic with "strict": true, as crewAI sent it (the live API accepted
// it, no beta header); it was dropped without a word before. The answer
// (text, a tool_use with integer arguments and caller, stop_details null)
// sent back with the result "42" gives the tool_use and tool_result crewAI
// sent next; crewAI left the assistant's text out of that turn, the
// adapter keeps it, so the text block is compared apart. _2 is the live
// answer to it: text with an emoji and blank lines.
func TestCrewStrictToolRoundTrip(t *testing.T) {
	t.Parallel()
	user := msgOf(llmrelayv1.Role_ROLE_USER, text(crewCalcTask))
	const first = "real_crew_anthropic_agent_kickoff_structured_output_with_tools_1"
	srv := providertest.ReplayFile(t, "testdata/"+first+".http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), crewCalcRequest(user))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	crewCheck(t, first, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			text(crewCalcIntro),
			toolCallValid("toolu_0111pu1MrxY8aTqNzYSWAgQF", "add_numbers", `{"a":15,"b":27}`),
		},
		responseID: "msg_01Hi6qhbcDQJas5A7kqA7Xif", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:    usageOf(633, 92, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global"}`},
	}, 20000, 19999, time.Date(2026, 5, 26, 16, 26, 47, 0, time.UTC))
	// crewAI's first request's tools and stop sequences, as recorded.
	const recordedTools = `[{"name":"add_numbers","description":"Add two numbers together and return the sum.",` +
		`"input_schema":{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object","additionalProperties":false},"strict":true}]`
	var sent struct {
		Tools         any `json:"tools"`
		StopSequences any `json:"stop_sequences"`
		System        any `json:"system"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	var wantTools any
	if err := json.Unmarshal([]byte(recordedTools), &wantTools); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sent.Tools, wantTools) {
		gb, _ := json.Marshal(sent.Tools)
		t.Errorf("tools\n got %s\nwant %s", gb, recordedTools)
	}
	if !reflect.DeepEqual(sent.StopSequences, []any{"\nObservation:"}) {
		t.Errorf("stop_sequences %v", sent.StopSequences)
	}
	providertest.Golden(t, "testdata/"+first+".golden", renderResult(t, res))
	providertest.Golden(t, "testdata/"+first+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))

	next := providertest.ReplayFile(t, "testdata/real_crew_anthropic_agent_kickoff_structured_output_with_tools_2.http")
	result := msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_0111pu1MrxY8aTqNzYSWAgQF", "42", false))
	res2, err := newTestProvider(t, next.URL).Generate(context.Background(), crewCalcRequest(user, res.Message, result))
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	crewCheck(t, "follow-up", res2.Message, res2.Meta, llmWant{
		parts: []*llmrelayv1.Part{text("The result of **15 + 27 = 42**! \U0001F9EE\n\n" +
			"Using the `add_numbers` tool, I calculated that adding 15 and 27 together gives you a sum of **42**.")},
		responseID: "msg_01Eqs4XnbiSubo442YWNnn7G", model: "claude-sonnet-4-6",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(717, 52, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global"}`},
	}, 20000, 19999, time.Date(2026, 5, 26, 16, 27, 7, 0, time.UTC))
	// crewAI's second request's messages, as recorded, with the
	// assistant's text block the adapter keeps put back in front of the
	// tool_use.
	recorded := `[{"role":"user","content":[{"type":"text","text":` + jsonQuote(t, crewCalcTask) + `}]},` +
		`{"role":"assistant","content":[{"type":"text","text":` + jsonQuote(t, crewCalcIntro) + `},` +
		`{"type":"tool_use","id":"toolu_0111pu1MrxY8aTqNzYSWAgQF","name":"add_numbers","input":{"a":15,"b":27}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_0111pu1MrxY8aTqNzYSWAgQF","content":"42"}]}]`
	lcgSameMessages(t, "second request", next.Last(t).Body, recorded)
}

// crewWeatherRequest is crewAI's request of
// test_anthropic_cached_prompt_tokens_with_tools: get_weather forced.
func crewWeatherRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS,
		Model:    "claude-sonnet-4-5-20250929",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Tokyo?"))},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096),
			ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_weather"}}},
		Tools: []*llmrelayv1.Tool{{
			Name: "get_weather", Description: "Get the current weather for a location",
			Parameters: `{"type":"object","properties":{"location":{"type":"string","description":"The city name"}},"required":["location"]}`,
		}},
	}
}
