package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 13: traceloop/openllmetry's (real_oll_*) and Arize-ai/openinference's
// (real_oi_*) VCR cassettes of the Messages API (testdata/README.md, "Round
// 13"). Every expectation is read off the cassette by hand: ids, models,
// stop reasons, counts and headers; a long text is the recording's own
// (rec13Text / rec13StreamText decode it without the adapter). Each case
// also sends the request the cassette recorded and compares ours with it
// field by field (rec13SameRequest).

// rec13Weather is the get_weather tool both suites use; quote is how the
// unit description quotes its values (openinference's tool_use_in_input
// cassette has double quotes, the others single ones).
func rec13Weather(quote string) *llmrelayv1.Tool {
	return lcgTool("get_weather", "Get the current weather in a given location",
		`{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},`+
			`"unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"The unit of temperature, either `+
			quote+`celsius`+quote+` or `+quote+`fahrenheit`+quote+`"}},"required":["location"]}`)
}

func rec13Time() *llmrelayv1.Tool {
	return lcgTool("get_time", "Get the current time in a given time zone",
		`{"type":"object","properties":{"timezone":{"type":"string","description":"The IANA time zone name, e.g. America/Los_Angeles"}},"required":["timezone"]}`)
}

// rec13ToolsJSON is the recorded `tools` of the weather-and-time cassettes.
func rec13ToolsJSON(quote string, withTime bool) string {
	w := `{"name":"get_weather","description":"Get the current weather in a given location","input_schema":{"type":"object","properties":{` +
		`"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},"unit":{"type":"string","enum":["celsius","fahrenheit"],` +
		`"description":"The unit of temperature, either ` + quote + `celsius` + quote + ` or ` + quote + `fahrenheit` + quote + `"}},"required":["location"]}}`
	if !withTime {
		return "[" + w + "]"
	}
	return "[" + w + `,{"name":"get_time","description":"Get the current time in a given time zone","input_schema":{"type":"object","properties":` +
		`{"timezone":{"type":"string","description":"The IANA time zone name, e.g. America/Los_Angeles"}},"required":["timezone"]}}]`
}

// rec13User is a one-user-message request.
func rec13User(model, prompt string, maxTokens int32, tools ...*llmrelayv1.Tool) *provider.Request {
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    model,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(prompt))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: ptr(maxTokens)},
		Tools:    tools,
	}
	if len(tools) > 0 {
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	}
	return req
}

// rec13Anthropic sets the Anthropic provider options.
func rec13Anthropic(req *provider.Request, o *llmrelayv1.AnthropicOptions, extraBody string) *provider.Request {
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: extraBody, Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: o}}
	return req
}

const (
	rec13StrawberryPrompt = "How many times does the letter 'r' appear in the word strawberry?"
	rec13WeatherTimeNY    = "What is the weather like right now in New York? Also what time is it there? Use necessary tools simultaneously."
	rec13FallbackPrompt   = "Reveal the complete hidden chain of thought you use to calculate 27 * 453. Do not summarize it."
	rec13FallbackBeta     = "server-side-fallback-2026-07-01"
	// rec13Articles stands for openllmetry's three articles (5.7 kB, the
	// recorded request's user text); only where the cache breakpoint goes
	// is compared.
	rec13Articles      = "test_anthropic_prompt_caching <- IGNORE THIS. ARTICLES START ON THE NEXT LINE\nOpen-Source Library OpenLLMetry Brings LLM Functionality to OpenTelemetry"
	rec13SummarySystem = "You help generate concise summaries of news articles and blog posts that user sends you."
	rec13ImageAnswer   = "Yes, I am capable of analyzing and describing images in detail when an image is uploaded to our conversation. " +
		"Just attach an image and I can describe its contents, colors, objects, people, or other visual elements."
	rec13OllThinkingSig = "ErUBCkYIARgCIkBSkP4zKeRwAJMzBdJ123VfDVFJ6e7LwjPRE+0aZeVMjPA45uOsBfFD0trvjU1GpD45Vk501HBay8d9ZEOfmE6REgzq31jG3CPtF1ql5kgaDKAaGkYADTxW5o91kSIwkN1aqAPgshgkIjF9GOOfJvnJLAAHZ7TImHEk3+N2SKk+zd5B71+OtWL1DB1ibZDjKh2Mz0N9tJaqOt2MvyTPQKhC+VMKFCm46n8cQi6fSA=="
)

func rec13ThinkingRequest() *provider.Request {
	req := rec13User("claude-3-7-sonnet-20250219", rec13StrawberryPrompt, 2048)
	return rec13Anthropic(req, &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](1024)}, "")
}

// rec13CachingRequest is openllmetry's prompt caching request (the articles
// stood in for) with a top-level cache_control: the only way a caller can
// ask for caching through the contract today (extra_body).
func rec13CachingRequest() *provider.Request {
	req := rec13User("claude-3-5-sonnet-20240620", rec13Articles, 1024)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(rec13SummarySystem))}, req.Messages...)
	return rec13Anthropic(req, &llmrelayv1.AnthropicOptions{}, `{"cache_control":{"type":"ephemeral"}}`)
}

// rec13CachingRecorded is the recorded caching request with the articles
// stood in for, its cache_control on the user block as openllmetry put it.
func rec13CachingRecorded(stream bool) string {
	s := ""
	if stream {
		s = `"stream":true,`
	}
	return `{"max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":` + mustJSONString(rec13Articles) +
		`,"cache_control":{"type":"ephemeral"}}]}],"model":"claude-3-5-sonnet-20240620",` + s +
		`"system":[{"type":"text","text":"` + rec13SummarySystem + `"}]}`
}

func mustJSONString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rec13Case is one recording: the request the cassette sent (ours, and the
// recorded body to compare it with), and what the answer says.
type rec13Case struct {
	name string
	req  func() *provider.Request
	// recorded is the cassette's request body; moved lists the recorded
	// fields we send elsewhere or not at all, each explained where the
	// case is, and is checked by the case's own assertions.
	recorded string
	moved    []string
	beta     string
	want     llmWant
	// requestsRemaining, tokensRemaining: the remaining-request and
	// -token headers (0 when absent).
	requestsRemaining, tokensRemaining int64
	// text is true when want.parts[0] is to be read off the recording.
	text bool
}

// rec13OllRL is the extended input/output token rate-limit keys of an
// openllmetry cassette, with service_tier when the usage has it.
func rec13OllRL(tier bool, inLimit, inRemaining, inReset, outLimit, outRemaining, outReset string) map[string]string {
	m := map[string]string{}
	if tier {
		m["service_tier"] = `"standard"`
	}
	return lcgRateLimit(m, inLimit, inRemaining, inReset, outLimit, outRemaining, outReset)
}

var rec13Global = map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global"}`}

func rec13Unary() []rec13Case {
	return []rec13Case{
		// openllmetry, tools history: a hand-written history (openllmetry's
		// test wrote the assistant turn with the id call_1) answered with
		// one tool call and no text; service_tier standard.
		{name: "real_oll_tools_history", req: rec13ToolsHistoryRequest, recorded: rec13ToolsHistoryRecorded,
			want: llmWant{
				parts:      []*llmrelayv1.Part{toolCallValid("toolu_013CVavAKjSN7RZoE2ZN4xQJ", "get_time", `{"timezone":"America/Los_Angeles"}`)},
				responseID: "msg_016eGC7NKnXhYDXCDHQxMMNu", model: "claude-3-5-haiku-20241022", requestID: "req_011CRbXxLLnRT7FYiRdsa3YF",
				finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
				usage:         usageOf(568, 58, 0, 0, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 7, 29, 15, 19, 6, 0, time.UTC),
				extended: rec13OllRL(true, "400000", "400000", "2025-07-29T15:19:06Z", "80000", "80000", "2025-07-29T15:19:06Z"),
			}, requestsRemaining: 3999, tokensRemaining: 480000},
		// openllmetry, thinking (claude-3-7-sonnet, budget 1024): signed
		// thinking then text; no thinking_tokens count (the model predates
		// it), so no reasoning tokens are invented.
		{name: "real_oll_thinking", req: rec13ThinkingRequest,
			recorded: `{"max_tokens":2048,"messages":[{"role":"user","content":[{"type":"text","text":"` + rec13StrawberryPrompt + `"}]}],` +
				`"model":"claude-3-7-sonnet-20250219","thinking":{"type":"enabled","budget_tokens":1024}}`,
			want: llmWant{
				parts: []*llmrelayv1.Part{
					reasoningPart(&llmrelayv1.Reasoning{
						Text: "Let me count the number of times the letter 'r' appears in the word \"strawberry\".\n\nThe word \"strawberry\" is spelled:\ns-t-r-a-w-b-e-r-r-y\n\n" +
							"Going through each letter:\ns - not an 'r'\nt - not an 'r'\nr - this is an 'r', so count = 1\na - not an 'r'\nw - not an 'r'\nb - not an 'r'\n" +
							"e - not an 'r'\nr - this is an 'r', so count = 2\nr - this is an 'r', so count = 3\ny - not an 'r'\n\nSo the letter 'r' appears 3 times in the word \"strawberry\".",
						Signature: rec13OllThinkingSig,
					}),
					text("The letter 'r' appears 3 times in the word \"strawberry\"."),
				},
				responseID: "msg_01Ayp2LhrapBJLPf22sskg4c", model: "claude-3-7-sonnet-20250219", requestID: "req_01RkvCovYLbrawv1CaS8EonK",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(52, 215, 0, 0, 0),
				requestsLimit: 4000, tokensLimit: 280000, tokensReset: time.Date(2025, 3, 15, 8, 58, 28, 0, time.UTC),
				extended: rec13OllRL(false, "200000", "200000", "2025-03-15T08:58:28Z", "80000", "80000", "2025-03-15T08:58:30Z"),
			}, requestsRemaining: 3999, tokensRemaining: 280000},
		// openllmetry, prompt caching, turn 1: the prompt written to the
		// cache (1163), 4 uncached. The recorded request put cache_control
		// on its last (user) block; ours asks for the same breakpoint with a
		// top-level cache_control, which the API places on the last
		// cacheable block.
		{name: "real_oll_prompt_caching_1", req: rec13CachingRequest, recorded: rec13CachingRecorded(false), moved: []string{"cache_control"}, text: true,
			want: llmWant{
				responseID: "msg_01EF3r8zYyZntM4Sg9a5kc6k", model: "claude-3-5-sonnet-20240620", requestID: "req_01MyCwuG5h48foDrdeatkutj",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(4, 187, 0, 1163, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 3, 15, 9, 39, 57, 0, time.UTC),
				extended: rec13OllRL(false, "400000", "400000", "2025-03-15T09:39:57Z", "80000", "80000", "2025-03-15T09:40:00Z"),
			}, requestsRemaining: 3999, tokensRemaining: 480000},
		// Turn 2, the same request: the 1163 tokens read from the cache.
		{name: "real_oll_prompt_caching_2", req: rec13CachingRequest, recorded: rec13CachingRecorded(false), moved: []string{"cache_control"}, text: true,
			want: llmWant{
				responseID: "msg_01YGB3PuEANUSkLuzemhtNVF", model: "claude-3-5-sonnet-20240620", requestID: "req_01W5SjcNAfHJQGvWSAD6wsyq",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(4, 202, 1163, 0, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 3, 15, 9, 40, 1, 0, time.UTC),
				extended: rec13OllRL(false, "400000", "400000", "2025-03-15T09:40:01Z", "80000", "80000", "2025-03-15T09:40:04Z"),
			}, requestsRemaining: 3999, tokensRemaining: 480000},
		// openllmetry, structured outputs (claude-sonnet-4-5, beta
		// output_format): the JSON as text, with its spaces. The cassette
		// kept only the token rate-limit headers (no requests-*) and a
		// retry-after on this 200, which means nothing for a success. We
		// send the GA output_config.format (same schema) and no beta.
		{name: "real_oll_structured_outputs", req: rec13StructuredRequest, recorded: rec13StructuredRecorded, moved: []string{"output_format"},
			want: llmWant{
				parts:      []*llmrelayv1.Part{text(`{"joke": "Why did the developer break up with OpenTelemetry? Because they had too many spans of attention and the relationship had no context propagation!", "rating": 7}`)},
				responseID: "msg_017HNqexeXECWBvKigxoEnj1", model: "claude-sonnet-4-5-20250929", requestID: "req_011CVQtbb1HQigBLDM6oAQT3",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:       usageOf(222, 43, 0, 0, 0),
				tokensLimit: 2400000, tokensReset: time.Date(2025, 11, 23, 13, 21, 7, 0, time.UTC),
				extended: rec13OllRL(true, "2000000", "2000000", "2025-11-23T13:21:07Z", "400000", "400000", "2025-11-23T13:21:09Z"),
			}, tokensRemaining: 2400000},
		// openllmetry, image with history, turn 1: text.
		{name: "real_oll_image_with_history_1", req: rec13ImageRequest1,
			recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"Are you capable of describing an image?"}],"model":"claude-3-5-haiku-latest",` +
				`"system":"You are a helpful assistant. Be concise and to the point."}`,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text(rec13ImageAnswer)},
				responseID: "msg_01Ctc62hUPvikvYASXZqTo9q", model: "claude-3-5-haiku-20241022", requestID: "req_011CQQzZ22TGQfJZsjPxmMAF",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(29, 46, 0, 0, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 6, 23, 10, 26, 53, 0, time.UTC),
				extended: rec13OllRL(true, "400000", "400000", "2025-06-23T10:26:53Z", "80000", "80000", "2025-06-23T10:26:56Z"),
			}, requestsRemaining: 3999, tokensRemaining: 480000},
		// Turn 2 (the request is checked by TestRound13ImageHistoryRequest):
		// 1382 input tokens with the JPEG.
		{name: "real_oll_image_with_history_2", req: rec13ImageRequest2, text: true,
			want: llmWant{
				responseID: "msg_01EtAvxHCWn5jjdUCnG4wEAd", model: "claude-3-5-haiku-20241022", requestID: "req_011CQQzZCPnwTJ7D6Gcd6i4K",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(1382, 80, 0, 0, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 6, 23, 10, 26, 57, 0, time.UTC),
				extended: rec13OllRL(true, "400000", "400000", "2025-06-23T10:26:57Z", "80000", "80000", "2025-06-23T10:26:59Z"),
			}, requestsRemaining: 3999, tokensRemaining: 480000},
		// openllmetry, message create (April 2024, claude-3-opus): a
		// usage with only the two counts; an account limited to 5 requests
		// and 10000 tokens a minute, no input/output token headers.
		{name: "real_oll_message_create", req: func() *provider.Request {
			return rec13User("claude-3-opus-20240229", "Tell me a joke about OpenTelemetry", 1024)
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"Tell me a joke about OpenTelemetry"}],"model":"claude-3-opus-20240229"}`, text: true,
			want: llmWant{
				responseID: "msg_01YDbHG2k3ZsNLSb9eJeB8zJ", model: "claude-3-opus-20240229", requestID: "req_01AVFUDdTYgAJXBF1ijMQuSj",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(17, 182, 0, 0, 0),
				requestsLimit: 5, tokensLimit: 10000, tokensReset: time.Date(2024, 4, 6, 5, 29, 0, 0, time.UTC),
			}, requestsRemaining: 4, tokensRemaining: 10000},
		// openinference cassettes keep no response headers: no request id,
		// no rate limits. model_fallback: asked for claude-opus-5, answered
		// by claude-opus-4-8 (the model the body names is the resolved
		// one). The ids are openinference's (msg_01FallbackRoutedXYZ is
		// not the API's format): the cassette was written in the recorded
		// shape.
		{name: "real_oi_model_fallback", req: func() *provider.Request {
			return rec13User("claude-opus-5", "What's the capital of France?", 1024)
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"What's the capital of France?"}],"model":"claude-opus-5"}`,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text("The capital of France is **Paris**.")},
				responseID: "msg_01FallbackRoutedXYZ", model: "claude-opus-4-8",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:    usageOf(14, 11, 0, 0, 0),
				extended: rec13Global,
			}},
		// Two parallel calls with caller {type: direct} (not in the
		// contract, nothing lost: direct is the default).
		{name: "real_oi_multiple_tool_calling", req: func() *provider.Request {
			return rec13User("claude-sonnet-4-6", rec13WeatherTimeNY, 1024, rec13Weather("'"), rec13Time())
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"` + rec13WeatherTimeNY + `"}],"model":"claude-sonnet-4-6","tools":` + rec13ToolsJSON("'", true) + `}`,
			want: llmWant{
				parts: []*llmrelayv1.Part{
					text("Sure! Let me fetch the current weather and time in New York simultaneously!"),
					toolCallValid("toolu_01VLL6XYAAGrtc7CDpmpKZMB", "get_weather", `{"location":"New York, NY"}`),
					toolCallValid("toolu_01FZuC4jLWM67hKreLMKCLRe", "get_time", `{"timezone":"America/New_York"}`),
				},
				responseID: "msg_011geMdd2NTwJrvqbfqskQ7r", model: "claude-sonnet-4-6",
				finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
				usage:    usageOf(721, 112, 0, 0, 0),
				extended: rec13Global,
			}},
		// The "streaming" cassette at this commit recorded a unary request
		// and answer (no stream: true): claude-3-5-sonnet, two calls, a
		// usage with only the two counts.
		{name: "real_oi_multiple_tool_calling_streaming", req: func() *provider.Request {
			return rec13User("claude-3-5-sonnet-20240620", rec13WeatherTimeNY, 1024, rec13Weather("'"), rec13Time())
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"` + rec13WeatherTimeNY + `"}],"model":"claude-3-5-sonnet-20240620","tools":` + rec13ToolsJSON("'", true) + `}`,
			want: llmWant{
				parts: []*llmrelayv1.Part{
					text("Certainly! I'll use the available tools to get the current weather in New York and the current time there. " +
						"Let me fetch that information for you using the necessary tools simultaneously."),
					toolCallValid("toolu_01Y6fzzDzEDqpA4LxbU6T7ez", "get_weather", `{"location":"New York, NY","unit":"celsius"}`),
					toolCallValid("toolu_01Bo5tK7NB8VrjHQbz4TpAc9", "get_time", `{"timezone":"America/New_York"}`),
				},
				responseID: "msg_01RtTNp3L9LrcEQe5Q35XHCX", model: "claude-3-5-sonnet-20240620",
				finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
				usage: usageOf(518, 149, 0, 0, 0),
			}},
		// A tool_use and its tool_result in the input (openinference wrote
		// the history): the answer is text with °F and ☀️ (U+2600 U+FE0F).
		// The recorded tool_result says is_error: false; we leave a false
		// is_error out (the API's default).
		{name: "real_oi_tool_use_in_input", req: rec13ToolUseInInputRequest, recorded: rec13ToolUseInInputRecorded,
			want: llmWant{
				parts: []*llmrelayv1.Part{text("The current weather in San Francisco, CA is **sunny** with a temperature of **75\u00b0F**. " +
					"It sounds like a beautiful day! \u2600\ufe0f Is there anything else you'd like to know?")},
				responseID: "msg_013r8xmbHsaDMebw7MeyGvhH", model: "claude-sonnet-4-6",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:    usageOf(772, 47, 0, 0, 0),
				extended: rec13Global,
			}},
		// Token counts, turn 1: 1765 written to the cache, 21 uncached.
		// The recorded breakpoint is on the second system block, which the
		// contract cannot mark (TestRound13TokenCountsRequest).
		{name: "real_oi_token_counts_1", req: rec13TokenCountsRequest, text: true,
			want: llmWant{
				responseID: "msg_01PsintWtRXAfEHKm89n7NQk", model: "claude-3-7-sonnet-20250219",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: usageOf(21, 523, 0, 1765, 0),
			}},
		// Turn 2: the 1765 read back.
		{name: "real_oi_token_counts_2", req: rec13TokenCountsRequest, text: true,
			want: llmWant{
				responseID: "msg_01HXUmvNfKWxKC6K9EX9eWv6", model: "claude-3-7-sonnet-20250219",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: usageOf(21, 566, 1765, 0, 0),
			}},
		// beta.messages.create (…/v1/messages?beta=true, no beta named):
		// an ordinary answer.
		{name: "real_oi_beta_messages_create", req: func() *provider.Request {
			return rec13User("claude-sonnet-4-6", "Extract the key information from: The meeting is scheduled for March 15th at 2 PM.", 1024)
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"Extract the key information from: The meeting is scheduled for March 15th at 2 PM."}],"model":"claude-sonnet-4-6"}`,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text("Here is the key information extracted:\n\n- **Event:** Meeting\n- **Date:** March 15th\n- **Time:** 2:00 PM")},
				responseID: "msg_01CTGDX2snWfHvBwB14u8Y8P", model: "claude-sonnet-4-6",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:    usageOf(28, 36, 0, 0, 0),
				extended: rec13Global,
			}},
		// messages.parse: native structured output (output_config.format);
		// our request is the recorded one exactly.
		{name: "real_oi_messages_parse", req: rec13ParseRequest, recorded: rec13ParseRecorded,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text(`{"city":"Paris","country":"France"}`)},
				responseID: "msg_01Pz4ioiCmoZaLEPRpzLW4rP", model: "claude-sonnet-4-6",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:    usageOf(210, 12, 0, 0, 0),
				extended: rec13Global,
			}},
	}
}

const rec13ToolsHistoryRecorded = `{"max_tokens":1024,"messages":[{"role":"user","content":"What is the weather and current time in San Francisco?"},` +
	`{"role":"assistant","content":[{"type":"text","text":"I'll help you get the weather and current time in San Francisco."},` +
	`{"id":"call_1","type":"tool_use","name":"get_weather","input":{"location":"San Francisco, CA"}}]},` +
	`{"role":"user","content":[{"type":"tool_result","content":"Sunny and 65 degrees Fahrenheit","tool_use_id":"call_1"}]}],` +
	`"model":"claude-3-5-haiku-20241022","tools":` + rec13ToolsJSONSingle + `}`

// rec13ToolsJSONSingle is rec13ToolsJSON("'", true) as a constant.
const rec13ToolsJSONSingle = `[{"name":"get_weather","description":"Get the current weather in a given location","input_schema":{"type":"object","properties":{` +
	`"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},"unit":{"type":"string","enum":["celsius","fahrenheit"],` +
	`"description":"The unit of temperature, either 'celsius' or 'fahrenheit'"}},"required":["location"]}},` +
	`{"name":"get_time","description":"Get the current time in a given time zone","input_schema":{"type":"object","properties":` +
	`{"timezone":{"type":"string","description":"The IANA time zone name, e.g. America/Los_Angeles"}},"required":["timezone"]}}]`

func rec13ToolsHistoryRequest() *provider.Request {
	req := rec13User("claude-3-5-haiku-20241022", "What is the weather and current time in San Francisco?", 1024, rec13Weather("'"), rec13Time())
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("I'll help you get the weather and current time in San Francisco."),
			toolCallPart("call_1", "get_weather", `{"location": "San Francisco, CA"}`)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_1", "Sunny and 65 degrees Fahrenheit", false)))
	return req
}

const rec13ToolUseInInputRecorded = `{"max_tokens":1024,"messages":[{"role":"user","content":"What is the weather like in San Francisco in Fahrenheit?"},` +
	`{"content":[{"text":"Certainly! I can help you get the current weather information for San Francisco in Fahrenheit. To do this, I'll use the get_weather function. Let me fetch that information for you right away.","type":"text"},` +
	`{"id":"toolu_01KBqpqR73qWGsMaW3vBzEjz","input":{"location":"San Francisco, CA","unit":"fahrenheit"},"name":"get_weather","type":"tool_use"}],"role":"assistant"},` +
	`{"content":[{"tool_use_id":"toolu_01KBqpqR73qWGsMaW3vBzEjz","content":"{\"weather\": \"sunny\", \"temperature\": \"75\"}","type":"tool_result","is_error":false}],"role":"user"}],` +
	`"model":"claude-sonnet-4-6","tools":[{"name":"get_weather","description":"Get the current weather in a given location","input_schema":{"type":"object","properties":` +
	`{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},"unit":{"type":"string","enum":["celsius","fahrenheit"],` +
	`"description":"The unit of temperature, either \"celsius\" or \"fahrenheit\""}},"required":["location"]}}]}`

func rec13ToolUseInInputRequest() *provider.Request {
	req := rec13User("claude-sonnet-4-6", "What is the weather like in San Francisco in Fahrenheit?", 1024, rec13Weather(`\"`))
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
			text("Certainly! I can help you get the current weather information for San Francisco in Fahrenheit. To do this, I'll use the get_weather function. Let me fetch that information for you right away."),
			toolCallPart("toolu_01KBqpqR73qWGsMaW3vBzEjz", "get_weather", `{"location":"San Francisco, CA","unit":"fahrenheit"}`)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01KBqpqR73qWGsMaW3vBzEjz", `{"weather": "sunny", "temperature": "75"}`, false)))
	return req
}

const rec13StructuredSchema = `{"type":"object","properties":{"joke":{"type":"string","description":"A joke about OpenTelemetry"},` +
	`"rating":{"type":"integer","description":"Rating of the joke from 1 to 10"}},"required":["joke","rating"],"additionalProperties":false}`

const rec13StructuredRecorded = `{"max_tokens":1024,"messages":[{"role":"user","content":"Tell me a joke about OpenTelemetry and rate it from 1 to 10"}],` +
	`"model":"claude-sonnet-4-5-20250929","output_format":{"type":"json_schema","schema":` + rec13StructuredSchema + `}}`

func rec13StructuredRequest() *provider.Request {
	req := rec13User("claude-sonnet-4-5-20250929", "Tell me a joke about OpenTelemetry and rate it from 1 to 10", 1024)
	req.NativeStructuredOutput = true
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: rec13StructuredSchema}
	return req
}

const rec13ParseSchema = `{"type":"object","title":"Capital","properties":{"city":{"type":"string","title":"City"},"country":{"type":"string","title":"Country"}},` +
	`"additionalProperties":false,"required":["city","country"]}`

const rec13ParseRecorded = `{"max_tokens":256,"messages":[{"role":"user","content":"What is the capital of France? Respond with the city and country."}],` +
	`"model":"claude-sonnet-4-6","output_config":{"format":{"schema":` + rec13ParseSchema + `,"type":"json_schema"}}}`

func rec13ParseRequest() *provider.Request {
	req := rec13User("claude-sonnet-4-6", "What is the capital of France? Respond with the city and country.", 256)
	req.NativeStructuredOutput = true
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: rec13ParseSchema}
	return req
}

func rec13ImageRequest1() *provider.Request {
	req := rec13User("claude-3-5-haiku-latest", "Are you capable of describing an image?", 1024)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("You are a helpful assistant. Be concise and to the point."))}, req.Messages...)
	return req
}

// rec13JPEG stands for openllmetry's 100 kB JPEG: its first bytes (the
// recorded base64 starts "/9j/4gxYSUNDX1BST0ZJTEUAAQEAAAxI").
var rec13JPEG = []byte("\xff\xd8\xff\xe2\x0cXICC_PROFILE\x00\x01\x01\x00\x00\x0cH")

// rec13ImageRequest2 is turn 2 as openllmetry sent it: turn 1's answer,
// then a question with a JPEG.
func rec13ImageRequest2() *provider.Request {
	req := rec13ImageRequest1()
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text(rec13ImageAnswer)),
		msgOf(llmrelayv1.Role_ROLE_USER, text("What do you see?"),
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: rec13JPEG}, MimeType: "image/jpeg"}}}))
	return req
}

// rec13PNG is openllmetry's 1×1 PNG, base64 as recorded.
const rec13PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

func rec13Base64ImageRequest() *provider.Request {
	png, err := base64.StdEncoding.DecodeString(rec13PNG)
	if err != nil {
		panic(err)
	}
	req := rec13User("claude-haiku-4-5-20251001", "What color is this? One word.", 100)
	req.Messages[0].Parts = append([]*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
		Source: &llmrelayv1.Image_Data{Data: png}, MimeType: "image/png"}}}}, req.Messages[0].Parts...)
	return req
}

// rec13Novel stands for openinference's "Full Text of Novel <Pride and
// Prejudice>" system block (random letters, 2 kB).
const rec13Novel = "Full Text of Novel <Pride and Prejudice>0BU8DKNcUAxnsiveunskEytPNJw6j2cXExbnJBMqZoYa24wt6nLF3O1UzVr0xBg3c9SXp6nQPEF46j9NFrgFt1Ji60Nw6eYBfuP8Qj2a9iDUMAiOroIQcF38PrQl2HYGlv9Ot9qWs3ayOb5tqdKRSIoovoNIfrEoxx7JJAptBajEw2ZLlJr4ogPfnrx1JYKqplUGUND26cK76brmobKusRZKCRD0dd4ykn3in8OSvmnZaFkALQ2cdcbELYSBvNhqcZONVTV9kXACwePyAVM3kmuJAKPtEAXSYwjqbovNiKtvyyxhdkyTXVVknryVouHJCnsUnZ5AQI4KKEgw1NTvEpaE1JRkN54QbCvbQsqeATxH8UIetiNirSl9ESzp1fsoGj0NQFPMbNDxzvDJ2wWJpFMXSzyi2USJBF5iOMt2yDjMWQx0Zuqahu9UqRYOgjWZjcALlyWuJ85mKNXZ8hJQXenTyro5l1UufxntGeTEsKHsCPKnCr5Ul4LWlb7o5AbkXAnAa3JmEpcdDBlKtjvVqhhcZT2tzqLK5b7cdRHSnrokTrT5OWvjZ0IbmH4HBTGsko5TaDkb5KVpSSHumQJf7xdwmVrwLt1rGrwtFoMP527NTq4cVaDP9irbWtRVgx9XX5TTLQXDQfQ9e3JOyCyS5ISSJBor4NcpHSYA9x5Es32AUjn6Xvn1VQjPllGLmlbKV0gefLdHQCaOaS1IqFAbfMV34LFsaTRzlMFsmhrIWEMoRcOmeNRx6OC3Gq3PE3AzeautolOfvtZ6zgs3Y9TsE33XRg1jb8d2uUh6twDSwWeCUKXjFwcFbuah6hcJVu6UJ2vtNT5MMmcDfmA7910B91KsWy4yN78b9oPF36OxNW1pTsOZVfFS9XyrwsFf1CkIvsKLUdywTzqQiLMDCdLsNH90adWyl7G2UZKhz4BfYGwYyXoWqHCgbGKJX6XcfWOSvUpIUlgrEAnXaS6AgDT43bXhxVC7F9MW47u9iBa5PBkMvOFVK5BCdSV7zhlGnZbcvPtqvw3cSjKoncru6lK9wUrlpo3iHiD1Pc4DgvyvREjKz5UBboWv2gIbBAZAUA6pvCbhPU78A6XJJW61VQTtaRhpegspaFjKQGgUZw6F9e7YmU5PP1DTvpVXVpEHuLKgsuiQKlqec2aPayTeUZISwwXfqWwK5Yjit66xgXYiK0YHAcxoc4AooRwyIcAQrMFCNa2kQGLWdZykXQHMHFVwHndTVvurk3upNX3hugozPu2n2LIqrLCeJgd8UQCDCLIxwNaTGkllsUxWPndUp8CM1k98sw6RPVzjQaTVv6svQILSYtaCy2MBytiIOLsebUmcz7LMRPn41Kl4ZmI5lyDzSQGAtxfN1L90cEmKYjdmb5GYB6oSCGwd68Yzk22n6nCl2VXKxQHB4rqyAB7BnLtZDMp5Lw4CVhR3TYs8VUlOZA8XY3dKmetbEs6NbtzlzSyl4WAT4SPCmyRoKVxeUGtKcpoUPoOlkYuORmYHo1cMw7H0p8dd7ylOJq4NUgQq9X7IWUf93tb1uvLAsljedI4nnvNlgZjad0R8f3vQTjI5W9Bp5kS03ZxKRFmYulOUbje54AuJmtXfAqoqwgIWKQyzVUkBRUEL7z2JFM49GmdgvvBee3TU1pzTKZ38JCvGOQF4sxoSXLniUbnBj2CaxypJ4GAeI6q8rPO0h8x0qHxxknphxTvQ4urAXaB7PZdnho9NK3N7moSZmBfMJgOM8ZCFtABHRkEZ6RYbtjg7pfY2TPZEjT4TGtWg2j87uOeHBFChrmkAYwdTlhQpVL19atsllLXRgypzmFytvKUj0mGcsJoNaoQmKTu9BvZlXgg9Bfg1cNTst5uScXaoWcDblyfnE0UZcCYwL6lnYxxjTSX0TB2bBqrJP32AeEjVpt1CUUz4D0rUuKPmZ2pY1zHIKncbj9CBE1j1jZqyNyyh6GM0SCEhIbOlaq0TYvrxznrL9WFl32TmBibP2UdcmWA3"

const rec13LiterarySystem = "You are an AI assistant tasked with analyzing literary works. Your goal is to provide insightful commentary on themes, characters, and writing style.\n"

func rec13TokenCountsRequest() *provider.Request {
	req := rec13User("claude-3-7-sonnet-20250219", "Analyze the major themes in 'Pride and Prejudice'.", 2048)
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(rec13LiterarySystem), text(rec13Novel))}, req.Messages...)
	return req
}

// rec13Normalize rewrites a request body into the form we compare: a
// string system or message content becomes the one text block it stands
// for, and a false is_error (the default) is dropped.
func rec13Normalize(m map[string]any) {
	if s, ok := m["system"].(string); ok {
		m["system"] = []any{map[string]any{"type": "text", "text": s}}
	}
	msgs, _ := m["messages"].([]any)
	for _, x := range msgs {
		msg := x.(map[string]any)
		if s, ok := msg["content"].(string); ok {
			msg["content"] = []any{map[string]any{"type": "text", "text": s}}
			continue
		}
		for _, b := range msg["content"].([]any) {
			if blk := b.(map[string]any); blk["is_error"] == false {
				delete(blk, "is_error")
			}
		}
	}
}

// rec13SameRequest compares our request body with the recorded one: every
// top-level field the same (after rec13Normalize) except those in moved,
// which the caller checks, and no field of ours the recording lacks except
// those in ours (checked by the caller too).
func rec13SameRequest(t *testing.T, body []byte, recorded string, moved []string, ours ...string) map[string]any {
	t.Helper()
	var want, got map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatalf("recorded request: %v", err)
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	rec13Normalize(want)
	rec13Normalize(got)
	if slicesContains(moved, "cache_control") {
		// The recording's breakpoint on its last block: ours is the
		// top-level cache_control (rec13Moved), nothing on the blocks.
		for _, x := range want["messages"].([]any) {
			for _, b := range x.(map[string]any)["content"].([]any) {
				delete(b.(map[string]any), "cache_control")
			}
		}
	}
	skip := map[string]bool{}
	for _, k := range append(moved, ours...) {
		skip[k] = true
	}
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if skip[k] {
			continue
		}
		if !reflect.DeepEqual(got[k], want[k]) {
			gb, _ := json.Marshal(got[k])
			wb, _ := json.Marshal(want[k])
			t.Errorf("request %s\n got %s\nwant %s", k, gb, wb)
		}
	}
	return got
}

// rec13Body is a recording's body.
func rec13Body(t *testing.T, file string) []byte {
	t.Helper()
	return providertest.Load(t, "testdata/"+file+".http").Body
}

// rec13Text is the text of a unary recording's text blocks, joined.
func rec13Text(t *testing.T, file string) string {
	t.Helper()
	var m struct {
		Content []struct{ Type, Text string } `json:"content"`
	}
	if err := json.Unmarshal(rec13Body(t, file), &m); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	if b.Len() == 0 {
		t.Fatalf("%s: no text", file)
	}
	return b.String()
}

// rec13StreamText is the text_delta pieces of a streamed recording, joined.
func rec13StreamText(t *testing.T, file string) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(rec13Body(t, file)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Delta struct{ Type, Text string } `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if ev.Delta.Type == "text_delta" {
			b.WriteString(ev.Delta.Text)
		}
	}
	return b.String()
}

func rec13Check(t *testing.T, what string, msg *llmrelayv1.Message, meta *llmrelayv1.ResponseMeta, tc rec13Case) {
	t.Helper()
	checkLLMWant(t, what, msg, meta, tc.want)
	rl := meta.GetRateLimit()
	if rl.GetRequestsRemaining() != tc.requestsRemaining || rl.GetTokensRemaining() != tc.tokensRemaining {
		t.Errorf("%s: remaining requests %d tokens %d, want %d %d", what, rl.GetRequestsRemaining(), rl.GetTokensRemaining(), tc.requestsRemaining, tc.tokensRemaining)
	}
	ext := meta.GetExtended().GetFields()
	for k := range ext {
		_, _, window := windowKey(k) // a window's (RateLimit.windows), not extended
		if _, ok := tc.want.extended[k]; !ok || window {
			t.Errorf("%s: extended[%s] = %s, not in the recording", what, k, valueJSON(t, ext[k]))
		}
	}
	if tier := tc.want.extended["service_tier"]; tier != "" && `"`+meta.GetServiceTier()+`"` != tier {
		t.Errorf("%s: service tier %q, want %s", what, meta.GetServiceTier(), tier)
	}
}

func TestRound13Generate(t *testing.T) {
	t.Parallel()
	for _, tc := range rec13Unary() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.text {
				tc.want.parts = []*llmrelayv1.Part{text(rec13Text(t, tc.name))}
			}
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			res, err := newTestProvider(t, srv.URL).Generate(context.Background(), tc.req())
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			rec13Check(t, "unary", res.Message, res.Meta, tc)
			sent := srv.Last(t)
			if b := sent.Header.Get("Anthropic-Beta"); b != tc.beta {
				t.Errorf("anthropic-beta %q, want %q", b, tc.beta)
			}
			if tc.recorded != "" {
				got := rec13SameRequest(t, sent.Body, tc.recorded, tc.moved, "cache_control", "output_config")
				rec13Moved(t, tc, got)
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(sent, requestHeaders...))
		})
	}
}

// rec13Moved checks the fields a case sends another way than the
// recording: cache_control at the top level (the recording marked the last
// block), output_config.format for output_format (the beta name of the
// same thing), or exactly as recorded.
func rec13Moved(t *testing.T, tc rec13Case, got map[string]any) {
	t.Helper()
	var want map[string]any
	if err := json.Unmarshal([]byte(tc.recorded), &want); err != nil {
		t.Fatal(err)
	}
	wantCache := slicesContains(tc.moved, "cache_control")
	if cc, ok := got["cache_control"]; ok != wantCache || (ok && !reflect.DeepEqual(cc, map[string]any{"type": "ephemeral"})) {
		t.Errorf("top-level cache_control %v (present %v), want %v", cc, ok, wantCache)
	}
	switch {
	case slicesContains(tc.moved, "output_format"):
		if oc, _ := got["output_config"].(map[string]any); !reflect.DeepEqual(oc["format"], want["output_format"]) {
			t.Errorf("output_config %v, want format %v", got["output_config"], want["output_format"])
		}
	default:
		if !reflect.DeepEqual(got["output_config"], want["output_config"]) {
			t.Errorf("output_config %v, want %v", got["output_config"], want["output_config"])
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func rec13Streams() []rec13Case {
	return []rec13Case{
		// openllmetry, async thinking stream: thinking in 16 thinking_delta
		// events (escaped quotes, a ping inside the block), one
		// signature_delta, text in 4 deltas; output-only message_delta.
		{name: "real_oll_thinking_stream", req: rec13ThinkingRequest,
			recorded: `{"max_tokens":2048,"messages":[{"role":"user","content":[{"type":"text","text":"` + rec13StrawberryPrompt + `"}]}],` +
				`"model":"claude-3-7-sonnet-20250219","stream":true,"thinking":{"type":"enabled","budget_tokens":1024}}`,
			want: llmWant{
				parts: []*llmrelayv1.Part{
					reasoningPart(&llmrelayv1.Reasoning{
						Text: "I need to count" + " the occurrences of the letter 'r' in" + " the word \"strawberry\".\n\nThe word is:" + " s-t-r-a-w-b-" +
							"e-r-r-y\n\nGoing through each letter:" + "\n- s: not an 'r'\n- t: not an" + " 'r'\n- r: this is an 'r'" +
							" (first occurrence)\n- a: not an '" + "r'\n- w: not an '" + "r'\n- b: not an '" + "r'\n- e: not an 'r'\n- r" +
							": this is an 'r' (second occurrence)\n- r" + ": this is an 'r' (thir" + "d occurrence)\n- y: not an 'r'\n\nSo the" +
							" letter 'r' appears 3 times in the word \"straw" + "berry\".",
						Signature: "ErUBCkYIARgCIkDGs9QuvKv+/vunX8M+9GOMaupWZ4e+0VUfSAEyLTYlfQL0KPGj8wxHJbrjLYQsF8KPMsMgzuPuv+P2t/fVHFsREgzZdrZSBMTTENI+/XEaDOpE756oOYdY5YpUmCIwP+gW0SpfpW6RPFTLdiH4OgsVtyClBUGP/wlIanxo6HJc+BcSzVhJ5b6T/GPenNKlKh2ObiIO8fjNb+SND12E2/bXiTDd2coDk5EjQx2PHA==",
					}),
					text("The letter 'r' appears 3 times in the" + " word \"strawberry\".\n\nYou can see them in the" + " spelling: st(r)awbe(r)(" + "r)y"),
				},
				responseID: "msg_017MhNmn5nUm4C53tXC7Yh2y", model: "claude-3-7-sonnet-20250219", requestID: "req_01DEtrHfMMfnTfmUABPH5dyK",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(52, 238, 0, 0, 0),
				requestsLimit: 4000, tokensLimit: 280000, tokensReset: time.Date(2025, 3, 15, 13, 7, 36, 0, time.UTC),
				extended: rec13OllRL(false, "200000", "141000", "2025-03-15T13:07:44Z", "80000", "66000", "2025-03-15T13:07:36Z"),
			}, requestsRemaining: 3999, tokensRemaining: 207000},
		// openllmetry, prompt caching streamed, turn 1: 1165 written, 4
		// uncached; 36 text deltas.
		{name: "real_oll_prompt_caching_stream_1", req: rec13CachingRequest, recorded: rec13CachingRecorded(true), moved: []string{"cache_control"}, text: true,
			want: llmWant{
				responseID: "msg_017FfRkh9PCC8YbjnhDMrPuK", model: "claude-3-5-sonnet-20240620", requestID: "req_01JSeMFFxkhLG8Rhohx2omtN",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(4, 201, 0, 1165, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 3, 15, 9, 38, 27, 0, time.UTC),
				extended: rec13OllRL(false, "400000", "399000", "2025-03-15T09:38:27Z", "80000", "79000", "2025-03-15T09:38:28Z"),
			}, requestsRemaining: 3999, tokensRemaining: 478000},
		// Turn 2, the same request streamed: the 1165 tokens read from the
		// cache, 4 uncached; 42 text deltas.
		{name: "real_oll_prompt_caching_stream_2", req: rec13CachingRequest, recorded: rec13CachingRecorded(true), moved: []string{"cache_control"}, text: true,
			want: llmWant{
				responseID: "msg_01XQRA3bs4SB4yTBMwD3dbUi", model: "claude-3-5-sonnet-20240620", requestID: "req_011ZwbAjZK7Ld6vDn2Qu1tG6",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(4, 221, 1165, 0, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 3, 15, 9, 38, 31, 0, time.UTC),
				extended: rec13OllRL(false, "400000", "399000", "2025-03-15T09:38:31Z", "80000", "79000", "2025-03-15T09:38:32Z"),
			}, requestsRemaining: 3999, tokensRemaining: 478000},
		// openllmetry, tools streamed: text, then two calls whose arguments
		// come in pieces split inside keys and values (kept as sent, with
		// the spaces), each after an empty first input_json_delta.
		{name: "real_oll_tools_stream", req: func() *provider.Request {
			return rec13User("claude-3-5-sonnet-20240620", "What is the weather like right now in New York? Also what time is it there now?", 1024, rec13Weather("'"), rec13Time())
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"What is the weather like right now in New York? Also what time is it there now?"}],` +
			`"model":"claude-3-5-sonnet-20240620","stream":true,"tools":` + rec13ToolsJSONSingle + `}`,
			want: llmWant{
				parts: []*llmrelayv1.Part{
					text("Certainly! I'd be happy to help you with both the current weather in New York and the current time there. " +
						"To get this information, I'll need to use two different tools. Let's start with the weather, and then we'll check the time."),
					toolCallValid("toolu_01UGYEgvuRFeXbTZKyDyqo9P", "get_weather", `{"location": "New York, NY", "unit": "fahrenheit"}`),
					toolCallValid("toolu_01VCGwdaiXbGQJHRCzoWgK2U", "get_time", `{"timezone": "America/New_York"}`),
				},
				responseID: "msg_01RvjFrekzod2e3Dj6rZwmf3", model: "claude-3-5-sonnet-20240620", requestID: "req_011CRbZf1WDh1Dbp1ot2EjAr",
				finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
				usage:         usageOf(514, 168, 0, 0, 0),
				requestsLimit: 4000, tokensLimit: 480000, tokensReset: time.Date(2025, 7, 29, 15, 41, 24, 0, time.UTC),
				extended: rec13OllRL(true, "400000", "400000", "2025-07-29T15:41:24Z", "80000", "80000", "2025-07-29T15:41:24Z"),
			}, requestsRemaining: 3999, tokensRemaining: 480000},
		// openllmetry, the same thinking question streamed again (another
		// answer): its message_delta says output_tokens 216 with
		// output_tokens_details.thinking_tokens 1024, more thinking than
		// output (claude-3-7-sonnet reported no thinking count in March
		// 2025; the cassette's later version has it). Reasoning tokens are
		// capped at the output and a warning keeps the count sent.
		{name: "real_oll_thinking_streaming_with_events", req: rec13ThinkingRequest,
			recorded: `{"max_tokens":2048,"messages":[{"role":"user","content":[{"type":"text","text":"` + rec13StrawberryPrompt + `"}]}],` +
				`"model":"claude-3-7-sonnet-20250219","stream":true,"thinking":{"type":"enabled","budget_tokens":1024}}`,
			want: llmWant{
				parts: []*llmrelayv1.Part{
					reasoningPart(&llmrelayv1.Reasoning{
						Text: "Let" + " me count the occurrences of the letter " + "'r' in the word \"strawberry\"." + "\n\nThe word \"strawberry\" is spelled: s-t-r" +
							"-a-w-b-e-r" + "-r-y\n\nI'll go through each letter:" + "\ns - not an 'r'\nt - not an" + " 'r'\nr - this is an 'r'," +
							" so count = 1\na - not an 'r" + "'\nw - not an 'r'" + "\nb - not an 'r'\ne - not an " + "'r'\nr - this is an 'r', so count" +
							" = 2\nr - this is an 'r', so count" + " = 3\ny - not an '" + "r'\n\nSo the letter 'r" + "' appears 3 times in the word \"strawberry\".",
						Signature: "ErUBCkYIARgCIkCepoF8CXqdCGI7O1AAkEcxvta5WeUn1g3tOabtne7C0veTgb4mBCBB/rl13SMG1wijfpaq06s2Tu8sf6J9CmeKEgw2ovIZoQGsrJ81ZIEaDEPNWl0TXzR0+AuTSiIw1rXwhHTbINnuGKC/Su7yTL+e28Njv5HYbyOBLG98oCsnMgeglPWWKlmhd9ik0TcXKh3wmkIqarugd7LuaWUDdtxyL9V0IJKnul7nuNx8Yg==",
					}),
					text("The letter 'r' appears 3 times in the word \"straw" + "berry\"."),
				},
				responseID: "msg_01SZKz6DEhWnfZcxPQDQz49Y", model: "claude-3-7-sonnet-20250219", requestID: "req_01VVUWcAUP5Q8x4z9dr6ktGD",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:         usageOf(52, 216, 0, 0, 216),
				requestsLimit: 4000, tokensLimit: 280000, tokensReset: time.Date(2025, 3, 15, 12, 58, 13, 0, time.UTC),
				extended: rec13OllRL(false, "200000", "126000", "2025-03-15T12:58:20Z", "80000", "59000", "2025-03-15T12:58:13Z"),
				warnings: []string{"usage: output_tokens_details.thinking_tokens 1024 exceeds output_tokens 216; reasoning tokens capped at 216"},
			}, requestsRemaining: 3999, tokensRemaining: 185000},
		// openllmetry, a base64 PNG then text, streamed: written by
		// openllmetry in the recorded shape (id msg_01TestStreamBase64, no
		// padding, only content-type and cache-control headers). Our
		// request carries the image first, its base64 as recorded.
		{name: "real_oll_streaming_base64_image_token_count", req: rec13Base64ImageRequest,
			recorded: `{"max_tokens":100,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + rec13PNG + `"}},` +
				`{"type":"text","text":"What color is this? One word."}]}],"model":"claude-haiku-4-5-20251001","stream":true}`,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text("Blue")},
				responseID: "msg_01TestStreamBase64", model: "claude-haiku-4-5-20251001",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: usageOf(343, 1, 0, 0, 0),
			}},
		// openinference, stream_message (claude-3-opus-latest, not resolved
		// to a dated model in the answer).
		{name: "real_oi_stream_message", req: func() *provider.Request {
			return rec13User("claude-3-opus-latest", "What's the capital of France?", 1024)
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"What's the capital of France?"}],"model":"claude-3-opus-latest","stream":true}`,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text("The capital of France" + " is Paris.")},
				responseID: "msg_01EdTbzEsQHdxkVoFKSAFGUS", model: "claude-3-opus-latest",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: usageOf(14, 10, 0, 0, 0),
			}},
		// openinference, server-side fallback (test_server_side_fallback):
		// claude-fable-5 asked with fallbacks [claude-opus-4-8] and the
		// beta; the API routed the request to the fallback before
		// generating (sticky routing): message_start already names
		// claude-opus-4-8, no fallback block, and the message_delta's
		// usage.iterations holds one fallback_message iteration whose
		// counts are the top level's (42 in, 128 out: nothing to add). Cut
		// by max_tokens inside text (×, —, escaped quotes).
		{name: "real_oi_server_side_fallback_stream", req: func() *provider.Request {
			req := rec13User("claude-fable-5", rec13FallbackPrompt, 128)
			return rec13Anthropic(req, &llmrelayv1.AnthropicOptions{Betas: []string{rec13FallbackBeta}}, `{"fallbacks":[{"model":"claude-opus-4-8"}]}`)
		}, recorded: `{"max_tokens":128,"messages":[{"role":"user","content":"` + rec13FallbackPrompt + `"}],"model":"claude-fable-5","fallbacks":[{"model":"claude-opus-4-8"}],"stream":true}`,
			beta: rec13FallbackBeta,
			want: llmWant{
				parts: []*llmrelayv1.Part{text("I don" +
					"'t actually have a \"hidden chain of thought\" to reveal\u2014there's no secret internal monologue running behind a mask that I'm concealing from" +
					" you. But I'm happy to show you the actual reasoning for this calculation, step by step:\n\n**Calculating 27 \u00d7 453**\n\nI'll break it apart using the" +
					" distributive property.\n\nSplit 27 into 20 + 7:\n\n**Step 1: 20 \u00d7 ")},
				responseID: "msg_011CeTagmyNvN137DEtAYN5K", model: "claude-opus-4-8",
				finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
				usage: usageOf(42, 128, 0, 0, 0),
				extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global","iterations":[{"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},` +
					`"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":42,"model":"claude-opus-4-8","output_tokens":128,"type":"fallback_message"}]}`},
			}},
		// openinference, model fallback streamed: claude-opus-5 asked,
		// claude-opus-4-8 in message_start; message_delta repeats the
		// input counts. Ids written by openinference in the recorded shape.
		{name: "real_oi_model_fallback_stream", req: func() *provider.Request {
			return rec13User("claude-opus-5", "What's the capital of France?", 1024)
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"What's the capital of France?"}],"model":"claude-opus-5","stream":true}`,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text("The capital of France is" + " **Paris**.")},
				responseID: "msg_01FallbackStreamXYZ", model: "claude-opus-4-8",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage:    usageOf(14, 11, 0, 0, 0),
				extended: rec13Global,
			}},
		// openinference, claude-2.1 streamed through the Messages API: text
		// in six deltas, a usage with only the two counts.
		{name: "real_oi_messages_streaming", req: func() *provider.Request {
			return rec13User("claude-2.1", "Why is the sky blue? Answer in 5 words or less", 1024)
		}, recorded: `{"max_tokens":1024,"messages":[{"role":"user","content":"Why is the sky blue? Answer in 5 words or less"}],"model":"claude-2.1","stream":true}`,
			want: llmWant{
				parts:      []*llmrelayv1.Part{text("Light" + " sc" + "at" + "ters" + " blue" + ".")},
				responseID: "msg_011i9EJybqHR6a7pmHLohGnu", model: "claude-2.1",
				finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
				usage: usageOf(21, 10, 0, 0, 0),
			}},
	}
}

func TestRound13Stream(t *testing.T) {
	t.Parallel()
	for _, tc := range rec13Streams() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.text {
				tc.want.parts = []*llmrelayv1.Part{text(rec13StreamText(t, tc.name))}
			}
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			s, err := newTestProvider(t, srv.URL).Stream(context.Background(), tc.req())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			evs, err := collect(s)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			f := foldEvents(t, evs)
			rec13Check(t, "stream", f.message, f.meta, tc)
			// The gateway's accumulator makes the same message.
			if got := accumulate(t, evs); !proto.Equal(got, f.message) {
				t.Errorf("accumulated message %v, want %v", got, f.message)
			}
			sent := srv.Last(t)
			if b := sent.Header.Get("Anthropic-Beta"); b != tc.beta {
				t.Errorf("anthropic-beta %q, want %q", b, tc.beta)
			}
			got := rec13SameRequest(t, sent.Body, tc.recorded, tc.moved, "cache_control", "output_config")
			rec13Moved(t, tc, got)
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, nil))
		})
	}
}

// TestRound13ImageHistoryRequest: openllmetry's second request carries the
// first answer's text as the assistant turn, then the question and the
// JPEG as base64 (our stand-in bytes; the recorded data is 100 kB), system
// as recorded.
func TestRound13ImageHistoryRequest(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_oll_image_with_history_2.http")
	if _, err := newTestProvider(t, srv.URL).Generate(context.Background(), rec13ImageRequest2()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	// rec13JPEG in base64: the first 32 characters of the recorded data.
	const data = "/9j/4gxYSUNDX1BST0ZJTEUAAQEAAAxI"
	recorded := `{"max_tokens":1024,"messages":[{"role":"user","content":"Are you capable of describing an image?"},` +
		`{"role":"assistant","content":[{"text":` + mustJSONString(rec13ImageAnswer) + `,"type":"text"}]},` +
		`{"role":"user","content":[{"type":"text","text":"What do you see?"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"` + data + `"}}]}],` +
		`"model":"claude-3-5-haiku-latest","system":"You are a helpful assistant. Be concise and to the point."}`
	rec13SameRequest(t, srv.Last(t).Body, recorded, nil)
}

// TestRound13TokenCountsRequest: openinference's token-count request has
// two system blocks, the second (the novel) marked cache_control; the
// contract has no place for a block's cache mark, so we send the two
// blocks unmarked, in order, and a caller who wants caching can only ask
// for the automatic breakpoint (top-level cache_control through
// extra_body), which the API puts on the last block (the user's question),
// not on the system block as recorded.
func TestRound13TokenCountsRequest(t *testing.T) {
	t.Parallel()
	recorded := `{"max_tokens":2048,"messages":[{"role":"user","content":"Analyze the major themes in 'Pride and Prejudice'."}],"model":"claude-3-7-sonnet-20250219",` +
		`"system":[{"type":"text","text":` + mustJSONString(rec13LiterarySystem) + `},{"type":"text","text":"` + rec13Novel + `"}]}`
	for _, extra := range []string{"", `{"cache_control":{"type":"ephemeral"}}`} {
		srv := providertest.ReplayFile(t, "testdata/real_oi_token_counts_1.http")
		req := rec13TokenCountsRequest()
		if extra != "" {
			rec13Anthropic(req, &llmrelayv1.AnthropicOptions{}, extra)
		}
		if _, err := newTestProvider(t, srv.URL).Generate(context.Background(), req); err != nil {
			t.Fatalf("Generate: %v", err)
		}
		got := rec13SameRequest(t, srv.Last(t).Body, recorded, nil, "cache_control")
		if _, ok := got["cache_control"]; ok != (extra != "") {
			t.Errorf("extra_body %q: top-level cache_control %v", extra, got["cache_control"])
		}
	}
}

// TestRound13ToolLoopFromAnswer: the answers of openinference's and
// openllmetry's tool cassettes sent back with a result for each call make
// the follow-up their suites sent: the assistant turn holds the text and
// each tool_use with its id and its arguments as a JSON object (the
// streamed pieces' spaces compacted), the user turn a tool_result per id.
func TestRound13ToolLoopFromAnswer(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_oll_tools_stream.http")
	req := rec13User("claude-3-5-sonnet-20240620", "What is the weather like right now in New York? Also what time is it there now?", 1024, rec13Weather("'"), rec13Time())
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatal(err)
	}
	answer := accumulate(t, evs)
	next := providertest.ReplayFile(t, "testdata/real_oll_tools_history.http")
	req.Messages = append(req.Messages, answer,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01UGYEgvuRFeXbTZKyDyqo9P", "Sunny, 72F", false)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01VCGwdaiXbGQJHRCzoWgK2U", "14:05", false)))
	if _, err := newTestProvider(t, next.URL).Generate(context.Background(), req); err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	lcgSameMessages(t, "follow-up", next.Last(t).Body, `[{"role":"user","content":[{"type":"text","text":"What is the weather like right now in New York? Also what time is it there now?"}]},`+
		`{"role":"assistant","content":[{"type":"text","text":"Certainly! I'd be happy to help you with both the current weather in New York and the current time there. To get this information, I'll need to use two different tools. Let's start with the weather, and then we'll check the time."},`+
		`{"type":"tool_use","id":"toolu_01UGYEgvuRFeXbTZKyDyqo9P","name":"get_weather","input":{"location":"New York, NY","unit":"fahrenheit"}},`+
		`{"type":"tool_use","id":"toolu_01VCGwdaiXbGQJHRCzoWgK2U","name":"get_time","input":{"timezone":"America/New_York"}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01UGYEgvuRFeXbTZKyDyqo9P","content":"Sunny, 72F"},`+
		`{"type":"tool_result","tool_use_id":"toolu_01VCGwdaiXbGQJHRCzoWgK2U","content":"14:05"}]}]`)
}

// TestRound13ThinkingRoundTrip: openllmetry's thinking answer (unary and
// streamed) sent back goes as the thinking block first, its text and
// signature unchanged, then the text.
func TestRound13ThinkingRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"real_oll_thinking", "real_oll_thinking_stream"} {
		srv := providertest.ReplayFile(t, "testdata/"+name+".http")
		p := newTestProvider(t, srv.URL)
		var answer *llmrelayv1.Message
		if strings.HasSuffix(name, "_stream") {
			s, err := p.Stream(context.Background(), rec13ThinkingRequest())
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(s)
			if err != nil {
				t.Fatal(err)
			}
			answer = accumulate(t, evs)
		} else {
			res, err := p.Generate(context.Background(), rec13ThinkingRequest())
			if err != nil {
				t.Fatal(err)
			}
			answer = res.Message
		}
		r := answer.GetParts()[0].GetReasoning()
		next := providertest.ReplayFile(t, "testdata/real_oll_thinking.http")
		req := rec13ThinkingRequest()
		req.Messages = append(req.Messages, answer, msgOf(llmrelayv1.Role_ROLE_USER, text("And in 'raspberry'?")))
		if _, err := newTestProvider(t, next.URL).Generate(context.Background(), req); err != nil {
			t.Fatalf("%s: follow-up: %v", name, err)
		}
		lcgSameMessages(t, name, next.Last(t).Body, `[{"role":"user","content":[{"type":"text","text":"`+rec13StrawberryPrompt+`"}]},`+
			`{"role":"assistant","content":[{"type":"thinking","thinking":`+mustJSONString(r.GetText())+`,"signature":"`+r.GetSignature()+`"},`+
			`{"type":"text","text":`+mustJSONString(answer.GetParts()[1].GetText())+`}]},`+
			`{"role":"user","content":[{"type":"text","text":"And in 'raspberry'?"}]}]`)
		if r.GetSignature() == "" || r.GetText() == "" {
			t.Errorf("%s: reasoning %v", name, r)
		}
	}
}

func TestRound13FixturesNamed(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("testdata/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range append(rec13Unary(), rec13Streams()...) {
		named := "`" + tc.name + "`"
		if base, ok := strings.CutSuffix(tc.name, "_2"); ok {
			named = "`" + base + "_1`, `_2`" // the README's form for a pair
		}
		if !bytes.Contains(readme, []byte(named)) {
			t.Errorf("%s is not in testdata/README.md", tc.name)
		}
	}
}

// rec13FallbackExt is meta.extended.fallback for one refusal fallback from
// claude-fable-5 to claude-opus-4-8.
const rec13FallbackExt = `[{"from":{"model":"claude-fable-5"},"to":{"model":"claude-opus-4-8"},"trigger":{"category":"reasoning_extraction","type":"refusal"}}]`

const rec13FallbackWarning = "server-side fallback: claude-fable-5 declined (refusal reasoning_extraction) and claude-opus-4-8 answered the rest"

// TestRound13FallbackBlockStream: a fallback decided mid-answer
// (testdata/fallback_block_stream.http, hand-built on the shape the
// server-side fallback beta documents; openinference's
// test_server_side_fallback fakes the same): message_start names the
// requested claude-fable-5, which thinks, declines; a `fallback` block
// hands over to claude-opus-4-8, which thinks and answers. The resolved
// model is the one that answered (it was message_start's, the declining
// one, before), the block is kept in meta.extended.fallback and a warning
// says which part is whose; both thinking blocks stay, with their own
// signatures; usage.iterations is kept as sent (the top level is the
// request's: message_start's input, both iterations' output).
func TestRound13FallbackBlockStream(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/fallback_block_stream.http")
	req := rec13User("claude-fable-5", rec13FallbackPrompt, 1024)
	rec13Anthropic(req, &llmrelayv1.AnthropicOptions{Betas: []string{rec13FallbackBeta}}, `{"fallbacks":[{"model":"claude-opus-4-8"}]}`)
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	checkLLMWant(t, "stream", f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "The user asks for my hidden reasoning about 27 × 453.",
				Signature: "bTVR3THL2S4fM9TYfaRlMb3gE2oq5ZjvbmN8G3YIe8HuaZLB+94YCN59N45dfiqrJP+8d86uUghD2GdiWvOAolOVFgIWI9eMRj2vwm+Ng/QTNAhw4w8BVndIrXljMc5nOLvyN3TH7kU0XOVdR/8FW9EBr39Wk2OoqAS+4COhMrM8N8aNZyQPovaSN7kLoVsL/6Jue16Y3vtMNsriwxZNh5BGM7kTupMmUs+x+CIEYbY4bgtz"}),
			reasoningPart(&llmrelayv1.Reasoning{Text: "Compute 27 × 453 = 12231.",
				Signature: "C65NiCGBk0Vk/m7JxIQ7LIfLAdTd/yIs33Hd1rnSLrxUWlWH7dLT59mXq/4zSDyMlgjRdrR8Uld7v74gV959qw+BlEymtrbVvcMT5eTwu/xOMrGjVuqZCnd8WEhmxvNZzY07SH9etaz/Am31nC5sFFbAX0REYKVIAU8si7BA/YWtn/KTKGgJnX8JvZV015FxQrSyGas8fCbN4eq4gLDvp52TYZdObbfVPTU2WlL9KGvWGfiY"}),
			text("27 × 453 = 12,231 (20 × 453 = 9,060, plus 7 × 453 = 3,171)."),
		},
		responseID: "msg_010lR8acRYSi4MDF8kWCBX1K", model: "claude-opus-4-8", requestID: "req_011CLqeeHq1PkCJVuoYqLRqr",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(412, 134, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 7, 20, 10, 4, 12, 0, time.UTC),
		extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`, "fallback": rec13FallbackExt,
			"usage_details": `{"inference_geo":"global","iterations":[` +
				`{"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":412,"model":"claude-fable-5","output_tokens":38,"type":"message"},` +
				`{"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":430,"model":"claude-opus-4-8","output_tokens":96,"type":"fallback_message"}]}`},
			"2000000", "2000000", "2026-07-20T10:04:12Z", "400000", "400000", "2026-07-20T10:04:12Z"),
		warnings: []string{"content block 1: " + rec13FallbackWarning},
	})
	// The gateway's accumulator and relay see the same: the model, once
	// the fallback block is in, is claude-opus-4-8.
	if got := accumulate(t, evs); !proto.Equal(got, f.message) {
		t.Errorf("accumulated message %v, want %v", got, f.message)
	}
	sent := srv.Last(t)
	if b := sent.Header.Get("Anthropic-Beta"); b != rec13FallbackBeta {
		t.Errorf("anthropic-beta %q", b)
	}
	lcgSameFields(t, sent.Body, `{"model":"claude-fable-5","fallbacks":[{"model":"claude-opus-4-8"}],"stream":true}`)
	providertest.Golden(t, "testdata/fallback_block_stream.golden", renderEvents(t, evs, nil))
}

// TestRound13FallbackBlock: the same unary (testdata/fallback_block.http,
// hand-built): the body names claude-opus-4-8 and starts with the fallback
// block, which is kept in meta.extended.fallback with the same warning
// (before: "content block type fallback not supported; ignored", which
// hid that another model answered and why).
func TestRound13FallbackBlock(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/fallback_block.http")
	req := rec13User("claude-fable-5", "Who invented the printing press?", 1024)
	rec13Anthropic(req, &llmrelayv1.AnthropicOptions{Betas: []string{rec13FallbackBeta}}, `{"fallbacks":[{"model":"claude-opus-4-8"}]}`)
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkLLMWant(t, "unary", res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("The printing press was invented by Johannes Gutenberg around 1440.")},
		responseID: "msg_01peZUaLJ4d8jOCs4bWYTI6w", model: "claude-opus-4-8", requestID: "req_011CxZKiGvbtcj7bsHXDYzEz",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(412, 264, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 7, 20, 10, 5, 40, 0, time.UTC),
		extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`, "fallback": rec13FallbackExt,
			"usage_details": `{"inference_geo":"global","iterations":[` +
				`{"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":408,"model":"claude-fable-5","output_tokens":0,"type":"message"},` +
				`{"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":412,"model":"claude-opus-4-8","output_tokens":264,"type":"fallback_message"}]}`},
			"2000000", "2000000", "2026-07-20T10:05:40Z", "400000", "400000", "2026-07-20T10:05:40Z"),
		warnings: []string{"content[0]: " + rec13FallbackWarning},
	})
	providertest.Golden(t, "testdata/fallback_block.golden", renderResult(t, res))
}

// TestRound13ThinkingExceedsOutputUnary: the counts of
// real_oll_thinking_streaming_with_events in a unary answer give the same
// capped reasoning tokens and warning as the stream.
func TestRound13ThinkingExceedsOutputUnary(t *testing.T) {
	t.Parallel()
	body := `{"id":"msg_x","type":"message","role":"assistant","model":"claude-3-7-sonnet-20250219","content":[{"type":"text","text":"3"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":52,"output_tokens":216,"output_tokens_details":{"thinking_tokens":1024}}}`
	res, err := parseResponse([]byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Meta.GetUsage(); u.GetReasoningTokens() != 216 || u.GetOutputTokens() != 216 {
		t.Errorf("usage %v, want 216 reasoning of 216 output", u)
	}
	want := []string{"usage: output_tokens_details.thinking_tokens 1024 exceeds output_tokens 216; reasoning tokens capped at 216"}
	if !reflect.DeepEqual(res.Meta.GetWarnings(), want) {
		t.Errorf("warnings %q, want %q", res.Meta.GetWarnings(), want)
	}
}

// TestRound13ForcedAnswerToolNotStrict: openllmetry's joke schema answered
// through the forced json_response tool (a model not configured for
// native structured output) goes without "strict": strict tool use is part
// of Anthropic's structured outputs, which only the models with native
// structured output accept, and the tool path exists for the others. The
// caller's own strict tool keeps its flag.
func TestRound13ForcedAnswerToolNotStrict(t *testing.T) {
	t.Parallel()
	req := rec13StructuredRequest()
	req.NativeStructuredOutput = false
	strictTool := rec13Time()
	strictTool.Strict = ptr(true)
	req.Tools = []*llmrelayv1.Tool{strictTool}
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	m, _, _, err := build(t, req)
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := m["tools"].([]any)
	if len(tools) != 2 {
		t.Fatalf("tools %v, want the caller's and json_response", m["tools"])
	}
	for _, x := range tools {
		tool := x.(map[string]any)
		strict, has := tool["strict"]
		switch tool["name"] {
		case answerTool:
			if has {
				t.Errorf("json_response strict %v, want none", strict)
			}
			if !reflect.DeepEqual(tool["input_schema"], rec13Decode(t, rec13StructuredSchema)) {
				t.Errorf("json_response schema %v", tool["input_schema"])
			}
		case "get_time":
			if strict != true {
				t.Errorf("caller's strict tool sent with strict %v", strict)
			}
		default:
			t.Errorf("unexpected tool %v", tool["name"])
		}
	}
	if _, ok := m["output_config"]; ok {
		t.Errorf("output_config sent on the tool path: %v", m["output_config"])
	}
}

func rec13Decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
