package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Real recordings from simonw/llm-anthropic's VCR cassettes (see
// testdata/README.md, "real_llm_*"). Each case replays one response and
// checks the answer against what the recording says, written out by hand
// from the cassette (texts joined from the deltas as YAML folds them, ids,
// counts, headers), so an accepted golden cannot hide a wrong answer.

// llmWant is what a recording says, field by field.
type llmWant struct {
	parts        []*llmrelayv1.Part
	responseID   string
	model        string
	requestID    string
	finish       llmrelayv1.FinishReason
	providerStop string
	usage        *llmrelayv1.Usage
	// requestsLimit/tokensLimit are anthropic-ratelimit-requests-limit
	// and -tokens-limit (0: the header is absent).
	requestsLimit, tokensLimit int64
	tokensReset                time.Time
	// extended are meta.extended entries as compact JSON.
	extended map[string]string
	// warnings are substrings, one per expected warning, in order.
	warnings []string
	// items are the types of the answer's provider items (server tool
	// blocks, compaction), in order; when parts holds none, the message's
	// other parts are compared with parts, and each item is checked to
	// be its block as sent (one JSON object of that type).
	items []string
	// cited is meta.extended.citations (none when nil): each cited text
	// block's text and its citations.
	cited []citedWant
}

func checkLLMWant(t *testing.T, what string, msg *llmrelayv1.Message, m *llmrelayv1.ResponseMeta, w llmWant) {
	t.Helper()
	want := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: w.parts}
	if !hasItems(want) {
		msg = splitItems(t, what, msg, w.items)
	}
	if !proto.Equal(msg, want) {
		t.Errorf("%s: message\n got %v\nwant %v", what, msg, want)
	}
	if m.GetResponseId() != w.responseID || m.GetResolvedModel() != w.model || m.GetProviderRequestId() != w.requestID {
		t.Errorf("%s: ids %q %q %q, want %q %q %q", what, m.GetResponseId(), m.GetResolvedModel(), m.GetProviderRequestId(), w.responseID, w.model, w.requestID)
	}
	if m.GetFinishReason() != w.finish || m.GetProviderFinishReason() != w.providerStop {
		t.Errorf("%s: finish %v %q, want %v %q", what, m.GetFinishReason(), m.GetProviderFinishReason(), w.finish, w.providerStop)
	}
	if !proto.Equal(m.GetUsage(), w.usage) {
		t.Errorf("%s: usage %v, want %v", what, m.GetUsage(), w.usage)
	}
	rl := m.GetRateLimit()
	if w.tokensReset.IsZero() {
		if rl != nil {
			t.Errorf("%s: rate limit %v, want none (no headers)", what, rl)
		}
	} else if rl.GetRequestsLimit() != w.requestsLimit || rl.GetTokensLimit() != w.tokensLimit ||
		!rl.GetTokensResetTime().AsTime().Equal(w.tokensReset) {
		t.Errorf("%s: rate limit %v, want requests %d tokens %d reset %v", what, rl, w.requestsLimit, w.tokensLimit, w.tokensReset)
	}
	for k, v := range w.extended {
		if budget, field, ok := windowKey(k); ok {
			// The input and output token limits are windows
			// (RateLimit.windows), not extended keys.
			if _, in := m.GetExtended().GetFields()[k]; in {
				t.Errorf("%s: extended[%s] set, want it only in rate_limit.windows", what, k)
			}
			if got := windowValue(m, budget, field); got != v {
				t.Errorf("%s: rate_limit window %s %s = %s, want %s", what, budget, field, got, v)
			}
			continue
		}
		if got := valueJSON(t, m.GetExtended().GetFields()[k]); got != v {
			t.Errorf("%s: extended[%s] = %s, want %s", what, k, got, v)
		}
	}
	checkCited(t, what, m, w.cited)
	if len(m.GetWarnings()) != len(w.warnings) {
		t.Errorf("%s: warnings %q, want %d matching %q", what, m.GetWarnings(), len(w.warnings), w.warnings)
	} else {
		for i, sub := range w.warnings {
			if !strings.Contains(m.GetWarnings()[i], sub) {
				t.Errorf("%s: warning %d %q does not say %q", what, i, m.GetWarnings()[i], sub)
			}
		}
	}
}

func usageOf(in, out, cacheRead, cacheWrite, reasoning int32) *llmrelayv1.Usage {
	total := in + cacheRead + cacheWrite + out
	return &llmrelayv1.Usage{
		InputTokens: in + cacheRead + cacheWrite, OutputTokens: out, TotalTokens: total,
		CachedInputTokens: cacheRead, CacheCreationInputTokens: cacheWrite, ReasoningTokens: reasoning,
	}
}

func toolCallValid(id, name, args string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
		CallId: id, Name: name, Arguments: args, ArgumentsValid: true,
	}}}
}

// sfChronicle is the article most of real_llm_test_web_search's citations
// point to.
const sfChronicle = "https://www.sfchronicle.com/weather-forecast/article/california-heat-wave-may-2025-20345059.php"

func TestSimonwStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(t *testing.T) *provider.Request
		want llmWant
	}{
		{"real_llm_test_prompt", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			// "-", "\n        Captain" (folded: " Captain"), "\\n-\n        Sc", "oop"
			parts:      []*llmrelayv1.Part{text("- Captain\n- Scoop")},
			responseID: "msg_014Z12bJxZvKUjLkhBzUz358", model: "claude-sonnet-4-5-20250929", requestID: "req_011CV8mLyP9MnkAHjmZDx7Wv",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:       usageOf(17, 10, 0, 0, 0),
			tokensLimit: 2400000, tokensReset: time.Date(2025, 11, 15, 0, 56, 29, 0, time.UTC),
			extended: map[string]string{"ratelimit_input_tokens_limit": "2000000", "ratelimit_output_tokens_remaining": "400000", "service_tier": `"standard"`},
		}},
		{"real_llm_test_prompt_with_prefill_and_stop_sequences", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts: []*llmrelayv1.Part{text("\ndef describe_pelican():\n    \"\"\"Returns a brief description of a pelican.\"\"\"\n" +
				"    return \"Large seabird with a massive bill, capable of scooping fish from water.\"\n")},
			responseID: "msg_01Vh9gCUUDMykSLHm8Jesir4", model: "claude-3-5-haiku-20241022", requestID: "req_011CV8mP633bNwcdKJNTY8s9",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "stop_sequence",
			usage:         usageOf(16, 43, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 11, 15, 0, 56, 58, 0, time.UTC),
			extended: map[string]string{"stop_sequence": "\"```\""},
		}},
		{"real_llm_test_thinking_prompt", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text: "The person is asking for two names for a pet pelican, and they want me to be brief in my response. " +
						"I'll provide two concise, creative names that would suit a pelican:\n\n1. Something that relates to their large beak/pouch\n" +
						"2. Something that relates to water/fishing\n\nI'll keep my response very short as requested.",
					Signature: "EuYBCkQYAiJAZFFuoMD/kqVzMZ887Sa1rJBpa5UU5W+YVHe0PV1dh0T1ZHHOQcSUTMB9iPC6hhduyszf501Ao1McU4sUwlL2UhIM0nyNDklwN6dy0bkUGgx7Ny7JpGHlGJ3+mR8iMHcNBzvnVJwp6XmCs9jieB8BWgth2vmVOuSU+mUYw2bT4pkzVkVsxFnA1lh2T1kjRSpQltDXxi/Pyq3WdD/W4gnV9HIJ4Cb5olNXUrMvKUyoim0MfvyOU7wuyAi7J74CVw0Te6DW8GQf3/1jVYxeMEEBszuSU5IuyxB0BKWW5TfALM0=",
				}),
				text("Scoop and Beaky"),
			},
			responseID: "msg_01SNKQD4WaGocVoAVDeL7eZX", model: "claude-3-7-sonnet-20250219", requestID: "req_01Xh2DgdnZ2DPE5bACEkXpMG",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			// message_delta carries only output_tokens: the input stays message_start's.
			usage:         usageOf(45, 94, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 280000, tokensReset: time.Date(2025, 2, 25, 7, 47, 28, 0, time.UTC),
		}},
		{"real_llm_test_tools_1", toolsRequest, llmWant{
			parts: []*llmrelayv1.Part{
				text("I'll help you generate two names for a pet pelican using the pelican name generator tool."),
				toolCallValid("toolu_017ngBid8gmdReTeroVSZf7r", "pelican_name_generator", "{}"),
				toolCallValid("toolu_01FJrHJrmnfEqR6NxkQ3yhpu", "pelican_name_generator", "{}"),
			},
			responseID: "msg_015S7FCRZ7rzjcyuJgzDu35c", model: "claude-3-5-haiku-latest", requestID: "req_011CP6WAyuHukdWpSHUSs5Xa",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(310, 82, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 5, 14, 0, 49, 34, 0, time.UTC),
		}},
		{"real_llm_test_refusal_raises", thinkingRequest, llmWant{
			responseID: "msg_011Cef1BfCEZn512shRMGG4q", model: "claude-fable-5-1", requestID: "req_011Cef1BeSqcyH3S7gNQq2MN",
			finish: llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, providerStop: "refusal",
			usage:         usageOf(97, 0, 0, 0, 0),
			requestsLimit: 20000, tokensLimit: 4800000, tokensReset: time.Date(2026, 9, 2, 17, 25, 56, 0, time.UTC),
			extended: map[string]string{
				"stop_details": `{"category":"reasoning_extraction","explanation":"This request was blocked as it seems to violate Anthropic's Terms of Service ` +
					`restrictions on reverse engineering or duplicating model outputs. To learn more, visit https://www.anthropic.com/legal/commercial-terms. ` +
					`API integrators: you can reduce refusals for your users by configuring a fallback model — see ` +
					`https://platform.claude.com/docs/en/build-with-claude/refusals-and-fallback","type":"refusal"}`,
				provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
			},
		}},
		{"real_llm_test_schema_prompt", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			// Structured output (output_format) streamed as text: the
			// pieces join to one JSON object, split inside keys and values.
			parts: []*llmrelayv1.Part{text(`{"name": "Biscuit", "age": 4, "bio": "Biscuit is a loyal golden retriever with a gentle temperament ` +
				`and boundless enthusiasm for life. He loves swimming in lakes, playing fetch until sunset, and has an uncanny ability to sense ` +
				`when someone needs comfort. Known in his neighborhood for his friendly demeanor, Biscuit volunteers at the local children's ` +
				`hospital bringing joy to young patients."}`)},
			responseID: "msg_01EC9rUWdnDsNne92QpiUGqR", model: "claude-sonnet-4-5-20250929", requestID: "req_011CV8oWKLvhXUDMFqY1Siz4",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:       usageOf(230, 96, 0, 0, 0),
			tokensLimit: 2400000, tokensReset: time.Date(2025, 11, 15, 1, 24, 50, 0, time.UTC),
		}},
		{"real_llm_test_code_execution", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			// A bash_code_execution call and its result, run by the API:
			// warned about; the text after them is whole; the container
			// it ran in (message_delta's delta.container) is kept.
			parts:      []*llmrelayv1.Part{text("121932631112635269")},
			responseID: "msg_011CdiP31ZC91pv56oRVa6T6", model: "claude-sonnet-4-6", requestID: "req_011CdiP2wz8UWz3QLigpGGbA",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(4627, 77, 0, 0, 0),
			requestsLimit: 20000, tokensLimit: 12000000, tokensReset: time.Date(2026, 8, 4, 20, 59, 48, 0, time.UTC),
			extended: map[string]string{
				"container":              `{"expires_at":"2026-08-04T21:59:53.096637Z","id":"container_01VV73UUWfmQL4NyTCXwE6qe"}`,
				provider.ExtUsageDetails: `{"inference_geo":"global"}`,
			},
			items: []string{"server_tool_use", "bash_code_execution_tool_result"},
		}},
		{"real_llm_test_async_prompt_1", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts:      []*llmrelayv1.Part{text("- Captain\n- Scoop")},
			responseID: "msg_01RSrER3RvH5a1GvAeMuTVfk", model: "claude-sonnet-4-5-20250929", requestID: "req_011CV8oJfFQZxSudWi62YDfh",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:       usageOf(17, 10, 0, 0, 0),
			tokensLimit: 2400000, tokensReset: time.Date(2025, 11, 15, 1, 22, 11, 0, time.UTC),
		}},
		{"real_llm_test_async_prompt_2", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts:      []*llmrelayv1.Part{text("- Capitaine\n- Bec (meaning \"beak\")")},
			responseID: "msg_01Ps4WX7cAj5LbpQuviAGTb4", model: "claude-sonnet-4-5-20250929", requestID: "req_011CV8oJrYocKcxpQQ2Nx3tR",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:       usageOf(32, 18, 0, 0, 0),
			tokensLimit: 2400000, tokensReset: time.Date(2025, 11, 15, 1, 22, 14, 0, time.UTC),
		}},
		{"real_llm_test_web_fetch", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			// Programmatic web fetch: code_execution calls web_fetch
			// (caller), two results; four warnings, the text after them
			// whole, the container and web_fetch_requests kept.
			parts: []*llmrelayv1.Part{text("The first sentence of [example.com](https://www.example.com/) is:\n\n" +
				"> \"This domain is for use in documentation examples without needing permission.\"")},
			responseID: "msg_011CdiGkjBYvDVmDDwhLnuib", model: "claude-sonnet-4-6", requestID: "req_011CdiGkhAkqa6vVuaXhcS2W",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(7867, 163, 0, 0, 0),
			requestsLimit: 20000, tokensLimit: 12000000, tokensReset: time.Date(2026, 8, 4, 19, 37, 27, 0, time.UTC),
			extended: map[string]string{
				"container":              `{"expires_at":"2026-08-04T20:37:41.233410Z","id":"container_01Eh28C5Ljas41Jm1u1YpFw7"}`,
				provider.ExtUsageDetails: `{"inference_geo":"global","server_tool_use.web_fetch_requests":1}`,
			},
			items: []string{"server_tool_use", "server_tool_use", "web_fetch_tool_result", "code_execution_tool_result"},
		}},
		{"real_llm_test_refusal_raises_async", thinkingRequest, llmWant{
			responseID: "msg_011Cef1FHLCUWYaBAAiXsM41", model: "claude-fable-5-1", requestID: "req_011Cef1FGoCvofWQaw5QtDZd",
			finish: llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER, providerStop: "refusal",
			usage:         usageOf(97, 0, 0, 0, 0),
			requestsLimit: 20000, tokensLimit: 4800000, tokensReset: time.Date(2026, 9, 2, 17, 26, 46, 0, time.UTC),
			extended: map[string]string{
				"stop_details": `{"category":"reasoning_extraction","explanation":"This request was blocked as it seems to violate Anthropic's Terms of Service ` +
					`restrictions on reverse engineering or duplicating model outputs. To learn more, visit https://www.anthropic.com/legal/commercial-terms. ` +
					`API integrators: you can reduce refusals for your users by configuring a fallback model — see ` +
					`https://platform.claude.com/docs/en/build-with-claude/refusals-and-fallback","type":"refusal"}`,
				provider.ExtUsageDetails: `{"inference_geo":"not_available"}`,
			},
		}},
		{"real_llm_test_url_prompt_3", func(*testing.T) *provider.Request { return visionRequest() }, llmWant{
			// visionRequest asks for detail high, which Anthropic has no field for.
			warnings: []string{"messages[0].parts[1].image.detail IMAGE_DETAIL_HIGH not sent"},
			parts: []*llmrelayv1.Part{text("This image shows a Brown Pelican perched on rocky ground near what appears to be a marina or harbor, " +
				"with boats visible in the background. The pelican is captured in a profile view, showing off its distinctive long beak and " +
				"throat pouch. The bird's feathers appear to be a grayish-brown color, and there's a nice rim lighting effect around its head " +
				"and neck created by what seems to be backlighting from the sun. The pelican's posture is upright and alert, which is typical " +
				"for these coastal birds. The setting suggests this is likely taken at a coastal location where pelicans commonly gather to rest and fish.")},
			responseID: "msg_01EgvnRR6doZ6VBsmZCc1Vgo", model: "claude-3-5-sonnet-20241022", requestID: "req_01YacrDAN17FHf8NeaFaPxsb",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage: usageOf(273, 139, 0, 0, 0),
			// The tokens reset (00:25:23) is not the requests reset (00:25:22).
			requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 3, 1, 0, 25, 23, 0, time.UTC),
			extended: map[string]string{"ratelimit_output_tokens_reset": `"2025-03-01T00:25:26Z"`, "ratelimit_input_tokens_remaining": "398000"},
		}},
		{"real_llm_test_image_prompt", func(*testing.T) *provider.Request { return visionRequest() }, llmWant{
			// visionRequest asks for detail high, which Anthropic has no field for.
			warnings:   []string{"messages[0].parts[1].image.detail IMAGE_DETAIL_HIGH not sent"},
			parts:      []*llmrelayv1.Part{text("Red square, green square.")},
			responseID: "msg_015BAr4z2vgXmB2YBmG6mkZy", model: "claude-sonnet-4-5-20250929", requestID: "req_011CV8mML5qnE1Ai9BccNDPd",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:       usageOf(83, 9, 0, 0, 0),
			tokensLimit: 2400000, tokensReset: time.Date(2025, 11, 15, 0, 56, 34, 0, time.UTC),
			extended: map[string]string{"ratelimit_input_tokens_remaining": "1999000"},
		}},
		{"real_llm_test_web_search", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			// A web search run by the API, then an answer in eleven text
			// blocks, five of them with citations: the text is the blocks'
			// text joined, the server tool and its result are warned about,
			// and the citations are kept with their blocks' text. Block 0
			// is a part; blocks 3 to 10, in a row after the server
			// blocks, are one.
			parts: []*llmrelayv1.Part{text("Let me search for the current weather in San Francisco."), text( // block 0
				"\n\nBased on the search results, here is the current weather in San Francisco:\n\n" + // 3
					"It is currently 59°F and partly sunny" + // 4 (cited)
					". \n\nAdditional current conditions show that:\n- " + // 5
					"It's cool and breezy with winds gusting 25 to 35 mph through the Golden Gate, making it feel even chillier" + // 6 (cited)
					"\n- " + // 7
					"The Mission and Potrero Hill might see some sun by afternoon, though the west side stays cloudy" + // 8 (cited)
					"\n\nLooking ahead for the next few days:\n- " + // 9
					"Tonight will stay breezy and overcast with lows near 50°F. Tomorrow will bring quicker clearing and a slight warmup, " +
					"with highs in the low to mid-60s, though it will still feel brisk near the coast" + // 10 (cited)
					"\n\nInterestingly, " + // 11
					"while inland California is set to experience a heat wave with temperatures surging into the 90s and triple digits this week, " +
					"coastal areas like San Francisco will stay much cooler in the 60s and 70s, thanks to a persistent marine layer" + // 12 (cited)
					".")}, // 13
			responseID: "msg_01RMmnAV553xeZ7kyYC3speS", model: "claude-3-5-sonnet-20241022", requestID: "req_011CPdDhDUb7e5tzcUgxTY6g",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(10387, 390, 0, 0, 0),
			requestsLimit: 1000, tokensLimit: 96000, tokensReset: time.Date(2025, 5, 30, 6, 11, 56, 0, time.UTC),
			extended: map[string]string{
				provider.ExtUsageDetails: `{"server_tool_use.web_search_requests":1}`,
				"service_tier":           `"standard"`,
			},
			items: []string{"server_tool_use", "web_search_tool_result"},
			// The five cited blocks (4, 6, 8, 10, 12), each with its
			// citations_delta events (two for block 12).
			cited: []citedWant{
				{"It is currently 59°F and partly sunny", []citeWant{{"web_search_result_location",
					"Currently: 59 °F. Partly sunny. ", "https://www.timeanddate.com/weather/usa/san-francisco/historic"}}},
				{"It's cool and breezy with winds gusting 25 to 35 mph through the Golden Gate, making it feel even chillier", []citeWant{{"web_search_result_location",
					"It will stay cool and breezy, with highs in the upper 50s at the beach and low 60s elsewhere. Winds gusting 25 to 35 mph through the Golden Gate will ...", sfChronicle}}},
				{"The Mission and Potrero Hill might see some sun by afternoon, though the west side stays cloudy", []citeWant{{"web_search_result_location",
					"The Mission and Potrero Hill might see some sun by afternoon, but the west side stays cloudy. ", sfChronicle}}},
				{"Tonight will stay breezy and overcast with lows near 50°F. Tomorrow will bring quicker clearing and a slight warmup, " +
					"with highs in the low to mid-60s, though it will still feel brisk near the coast", []citeWant{{"web_search_result_location",
					"Monday night stays breezy and overcast, with lows near 50. Tuesday brings quicker clearing and a slight warmup, with highs in the low to mid-60s, but ...", sfChronicle}}},
				{"while inland California is set to experience a heat wave with temperatures surging into the 90s and triple digits this week, " +
					"coastal areas like San Francisco will stay much cooler in the 60s and 70s, thanks to a persistent marine layer", []citeWant{
					{"web_search_result_location", "Coastal areas will stay much cooler in the 60s and 70s, with San Francisco and much of the shoreline pinned under a shallow but persistent marine laye...", sfChronicle},
					{"web_search_result_location", "Temperatures across inland California are set to surge into the 90s and triple digits this week, kicking off the state’s first major heat stretch of t...", sfChronicle},
				}},
			},
		}},
		{"real_llm_test_mcp_server_side_tool", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			// Two MCP tool calls the API ran itself (mcp_tool_use with
			// input_json_delta pieces, mcp_tool_result): warned about, not
			// in the message; the text after them is whole.
			parts: []*llmrelayv1.Part{text("**`simonw/llm`** is a CLI tool and Python library that lets you interact with a wide variety of " +
				"Large Language Models (LLMs) — from providers like OpenAI, Anthropic, and Google, as well as local models — with features " +
				"like prompt execution, multi-turn conversations, persistent logging to SQLite, embeddings, structured output, and an extensible plugin system.")},
			responseID: "msg_011CdiPLDTXJznH4KWHARyGG", model: "claude-sonnet-4-6", requestID: "req_011CdiPL3D8by8uPrjJpzehe",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			// message_delta's input_tokens (4007: the tool results read
			// back) replaces message_start's 852.
			usage:         usageOf(4007, 245, 0, 0, 0),
			requestsLimit: 20000, tokensLimit: 12000000, tokensReset: time.Date(2026, 8, 4, 21, 3, 41, 0, time.UTC),
			extended: map[string]string{provider.ExtUsageDetails: `{"inference_geo":"global"}`},
			items:    []string{"mcp_tool_use", "mcp_tool_result", "mcp_tool_use", "mcp_tool_result"},
		}},
		{"real_llm_claude_3_test_async_prompt_1", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts:      []*llmrelayv1.Part{text("1. Pelly\n2. Beaky")},
			responseID: "msg_01Y7zzLKf38mb1RnpWmw6VX9", model: "claude-3-opus-20240229", requestID: "req_01FiKk7ZC9CPz7zFV7vw6JAK",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(17, 15, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 2, 25, 0, 28, 18, 0, time.UTC),
		}},
		{"real_llm_claude_3_test_async_prompt_2", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts:      []*llmrelayv1.Part{text("1. Pélican\n2. Bec")},
			responseID: "msg_015SvBNusrUgb8baUgMgmETs", model: "claude-3-opus-20240229", requestID: "req_01U2Uk4ETm2btk9FP7aG2vaA",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(37, 16, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 2, 25, 0, 28, 20, 0, time.UTC),
		}},
		{"real_llm_test_thinking_blocks_survive_db_round_trip_1", thinkingRequest, llmWant{
			parts:      thinkingBlocksParts(),
			responseID: "msg_thinking_first", model: "claude-haiku-4-5-20251001",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage: usageOf(100, 60, 0, 0, 0),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			s, err := newTestProvider(t, srv.URL).Stream(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			evs, err := collect(s)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			f := foldEvents(t, evs)
			checkLLMWant(t, "streamed", f.message, f.meta, tc.want)
			if got := accumulate(t, evs); !proto.Equal(got, f.message) {
				t.Errorf("accumulator message\n got %v\nwant %v", got, f.message)
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, err))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

// TestInputTransformations: input_transformations (the history's thinking
// blocks the API removed before the model saw them) reach
// meta.extended.input_transformations: from message_start in a real
// stream (testdata/real_pyd_anthropic_fable_5_1_drops_a_stale_thinking_block_streamed_2.http),
// from the body unary; [] (nothing removed) adds nothing; a message_delta
// list (after a server-side fallback) replaces message_start's, even when
// empty.
func TestInputTransformations(t *testing.T) {
	t.Parallel()
	const dropped = `[{"path":"messages.1.content.0","reason":"prefix_binding_mismatch","type":"thinking_dropped"}]`
	srv := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_fable_5_1_drops_a_stale_thinking_block_streamed_2.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), thinkingRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := valueJSON(t, foldEvents(t, evs).meta.GetExtended().GetFields()["input_transformations"]); got != dropped {
		t.Errorf("real stream: input_transformations %s, want %s", got, dropped)
	}

	unary := func(it string) *llmrelayv1.ResponseMeta {
		t.Helper()
		res, err := parseResponse([]byte(`{"id":"msg_01InputTransformUnaryK8","type":"message","role":"assistant","model":"m",`+
			`"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","input_transformations":`+it+`,"usage":{"input_tokens":3,"output_tokens":1}}`), http.Header{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Meta
	}
	if got := valueJSON(t, unary(dropped).GetExtended().GetFields()["input_transformations"]); got != dropped {
		t.Errorf("unary: input_transformations %s, want %s", got, dropped)
	}
	for _, it := range []string{`[]`, `null`} {
		if _, ok := unary(it).GetExtended().GetFields()["input_transformations"]; ok {
			t.Errorf("unary %s: input_transformations set", it)
		}
	}

	stream := func(start, delta string) *llmrelayv1.ResponseMeta {
		t.Helper()
		body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01InputTransformStreamV2\",\"model\":\"m\"," +
			"\"input_transformations\":" + start + ",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}" + delta + "}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		evs, err := collect(streamFromBody([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		return foldEvents(t, evs).meta
	}
	const fallback = `[{"path":"messages.3.content.0","reason":"model_binding_mismatch","type":"thinking_dropped"}]`
	for _, c := range []struct{ start, delta, want string }{
		{`[]`, ``, ``},
		{dropped, ``, dropped},
		{`[]`, `,"input_transformations":` + fallback, fallback},
		{dropped, `,"input_transformations":[]`, `[]`},
		{`[]`, `,"input_transformations":[]`, ``},
		{dropped, `,"input_transformations":null`, dropped},
	} {
		v, ok := stream(c.start, c.delta).GetExtended().GetFields()["input_transformations"]
		got := ""
		if ok {
			got = valueJSON(t, v)
		}
		if got != c.want {
			t.Errorf("stream start %s delta %q: input_transformations %q, want %q", c.start, c.delta, got, c.want)
		}
	}
}

// thinkingBlocksParts is llm-anthropic's thinking_blocks fixture: a
// thinking block, one with only a signature, two redacted blocks, a
// no-argument call.
func thinkingBlocksParts() []*llmrelayv1.Part {
	return []*llmrelayv1.Part{
		reasoningPart(&llmrelayv1.Reasoning{Text: "Weighing which version joke lands best.", Signature: "sig-visible-abc123"}),
		reasoningPart(&llmrelayv1.Reasoning{Signature: "sig-omitted-def456"}),
		reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: "EroBCkYIABgCKkboUrOmNvxg-redacted-one=="}),
		reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: "EroBCkYIABgCKkboUrOmNvxg-redacted-two=="}),
		toolCallValid("toolu_fixed_1", "fixed_version", "{}"),
	}
}

func TestSimonwGenerate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(t *testing.T) *provider.Request
		want llmWant
	}{
		{"real_llm_test_thinking_blocks_preserved_async_non_streaming_1", thinkingRequest, llmWant{
			parts:      thinkingBlocksParts(),
			responseID: "msg_thinking_first", model: "claude-haiku-4-5-20251001",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage: usageOf(100, 60, 0, 0, 0),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			res, err := newTestProvider(t, srv.URL).Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkLLMWant(t, "unary", res.Message, res.Meta, tc.want)
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

// TestContainerKept: the code-execution container an answer ran in ({id,
// expires_at}; its id lets the next request reuse it) is kept in
// meta.extended.container: unary from the body, streamed from
// message_delta (testdata/real_llm_test_code_execution.http, checked in
// TestSimonwStream) or from message_start
// (testdata/real_message_start_prepopulated_stream.http); null adds nothing.
func TestContainerKept(t *testing.T) {
	t.Parallel()
	unary := func(c string) *llmrelayv1.ResponseMeta {
		t.Helper()
		res, err := parseResponse([]byte(`{"id":"msg_01ContainerUnaryJr5Vq","type":"message","role":"assistant","model":"m",`+
			`"content":[{"type":"text","text":"42"}],"container":`+c+`,"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`), http.Header{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Meta
	}
	const c = `{"expires_at":"2026-08-04T21:59:53Z","id":"container_01Hq8ZkR2mWb5TnCsLx4Pd7e"}`
	if got := valueJSON(t, unary(c).GetExtended().GetFields()["container"]); got != c {
		t.Errorf("unary container %s, want %s", got, c)
	}
	if _, ok := unary(`null`).GetExtended().GetFields()["container"]; ok {
		t.Error("unary null container set")
	}
	srv := providertest.ReplayFile(t, "testdata/real_message_start_prepopulated_stream.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), toolsRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	const pre = `{"expires_at":"2026-04-24T00:40:16.098987Z","id":"container_prepopulated"}`
	if got := valueJSON(t, foldEvents(t, evs).meta.GetExtended().GetFields()["container"]); got != pre {
		t.Errorf("message_start container %s, want %s", got, pre)
	}
}

// TestContextManagementKept: the context edits the API applied (top-level
// context_management on the message and on message_delta, as the SDKs
// type it) are kept in meta.extended.context_management when there is at
// least one; the real recordings' {applied_edits: []}
// (testdata/real_clear_thinking_stream.http,
// testdata/real_pyd_anthropic_compaction_round_trip.http) add nothing.
func TestContextManagementKept(t *testing.T) {
	t.Parallel()
	const edits = `{"applied_edits":[{"cleared_input_tokens":10000,"cleared_tool_uses":5,"type":"clear_tool_uses_20250919"}]}`
	res, err := parseResponse([]byte(`{"id":"msg_01CtxMgmtUnaryBv6Hs","type":"message","role":"assistant","model":"m",`+
		`"content":[{"type":"text","text":"ok"}],"context_management":`+edits+`,"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if got := valueJSON(t, res.Meta.GetExtended().GetFields()["context_management"]); got != edits {
		t.Errorf("unary context_management %s, want %s", got, edits)
	}

	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01CtxMgmtStreamTy3Ka\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"ok\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"context_management\":" + edits + ",\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	evs, err := collect(streamFromBody([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	if got := valueJSON(t, foldEvents(t, evs).meta.GetExtended().GetFields()["context_management"]); got != edits {
		t.Errorf("streamed context_management %s, want %s", got, edits)
	}

	for _, name := range []string{"real_clear_thinking_stream", "real_pyd_anthropic_compaction_usage_with_cache_streaming"} {
		srv := providertest.ReplayFile(t, "testdata/"+name+".http")
		s, err := newTestProvider(t, srv.URL).Stream(context.Background(), thinkingRequest(t))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := collect(s)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := foldEvents(t, evs).meta.GetExtended().GetFields()["context_management"]; ok {
			t.Errorf("%s: context_management %v, want none (no edit applied)", name, v)
		}
	}
	res, err = parseResponse(providertest.Load(t, "testdata/real_pyd_anthropic_compaction_round_trip.http").Body, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := res.Meta.GetExtended().GetFields()["context_management"]; ok {
		t.Errorf("compaction_round_trip: context_management %v, want none", v)
	}
}

func hasItems(m *llmrelayv1.Message) bool {
	for _, p := range m.GetParts() {
		if p.GetProviderItem() != nil {
			return true
		}
	}
	return false
}

// splitItems checks msg's provider items against the types wanted, each
// one JSON object whose type is its own, and returns msg without them.
func splitItems(t *testing.T, what string, msg *llmrelayv1.Message, want []string) *llmrelayv1.Message {
	t.Helper()
	var got []string
	rest := &llmrelayv1.Message{Role: msg.GetRole(), Name: msg.GetName()}
	for _, p := range msg.GetParts() {
		it := p.GetProviderItem()
		if it == nil {
			rest.Parts = append(rest.Parts, p)
			continue
		}
		got = append(got, it.GetType())
		var v struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(it.GetJson()), &v); err != nil || v.Type != it.GetType() {
			t.Errorf("%s: provider item %s is not its block: %v %q", what, it.GetType(), err, it.GetJson())
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: provider items %q, want %q", what, got, want)
	}
	return rest
}

// windowKey splits a want key ratelimit_{input,output}_tokens_{limit,remaining,reset}
// (the names the recordings' anthropic-ratelimit-input-tokens-* and
// -output-tokens-* headers had as extended keys before they were
// windows) into its budget and field; ok is false for any other key.
func windowKey(k string) (budget, field string, ok bool) {
	for _, b := range [...]string{"input_tokens", "output_tokens"} {
		if f, found := strings.CutPrefix(k, "ratelimit_"+b+"_"); found && (f == "limit" || f == "remaining" || f == "reset") {
			return b, f, true
		}
	}
	return "", "", false
}

// windowValue is the field of m's rate-limit window of budget (its
// anthropic-ratelimit-* header family) as JSON: a count as a number, a
// reset as a quoted RFC 3339 time; "" when there is none.
func windowValue(m *llmrelayv1.ResponseMeta, budget, field string) string {
	for _, w := range m.GetRateLimit().GetWindows() {
		if w.GetBudget() != budget || w.GetHeader() != "anthropic-ratelimit-"+strings.ReplaceAll(budget, "_", "-") {
			continue
		}
		switch {
		case field == "limit" && w.Limit != nil:
			return strconv.FormatInt(w.GetLimit(), 10)
		case field == "remaining" && w.Remaining != nil:
			return strconv.FormatInt(w.GetRemaining(), 10)
		case field == "reset" && w.GetResetTime() != nil:
			return `"` + w.GetResetTime().AsTime().UTC().Format(time.RFC3339) + `"`
		}
	}
	return ""
}
