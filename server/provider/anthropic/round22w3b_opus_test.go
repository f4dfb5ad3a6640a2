package anthropic

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22 (w3b): more of maruel/genai's go-vcr recordings of the live
// Messages API, claude-opus-4-6 (February 2026): testdata/README.md,
// "Round 22: maruel/genai". Every expectation is read off the cassette;
// the requests are compared whole with the recorded ones (rmgSame).

const rw3Opus = "claude-opus-4-6"

// rw3Global is usage.inference_geo "global", which every claude-opus-4-6
// answer here names.
const rw3Global = `{"inference_geo":"global"}`

// TestRound22w3bOpusSquareRoot: claude-opus-4-6 unary, max_tokens 128000,
// tool_choice any. Turn 1: square_root {"number":132413} alone, tool_use;
// 713 in, 39 out. Turn 2, the result "363.89" with tool_choice none:
// "363.89", end_turn, 691 in, 6 out. Opus's limits: requests 4000, tokens
// 2400000 (input 2000000, output 400000); in turn 1 the requests limit
// resets a second before the others.
func TestRound22w3bOpusSquareRoot(t *testing.T) {
	t.Parallel()
	const first, second = "real_maruel_opus46_sqrt_1", "real_maruel_opus46_sqrt_2"
	req1 := rmgSqrtRequest(rw3Opus, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	req1.Options.MaxTokens = ptr[int32](128000)
	res1, srv1 := r22Unary(t, first, req1)
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_014BKQgsihpz8i8UdZYTG1zT", "square_root", `{"number":132413}`)},
		responseID: "msg_01LGKUwTSNJDxeyZZ8dYgtoA", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(713, 39, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:47:34Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global},
	})
	if got := res1.Meta.GetRateLimit().GetRequestsResetTime().AsTime(); !got.Equal(rmgReset(t, "2026-02-07T14:47:33Z")) {
		t.Errorf("requests reset %v, want 14:47:33Z", got)
	}
	r22SameRequest(t, srv1.Last(t).Body, first, rmgSame)

	req2 := rmgSqrtRequest(rw3Opus, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE,
		res1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_014BKQgsihpz8i8UdZYTG1zT", "363.89", false)))
	req2.Options.MaxTokens = ptr[int32](128000)
	res2, srv2 := r22Unary(t, second, req2)
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("363.89")},
		responseID: "msg_01B7jowGxRmY34UWASpkE7Hy", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(691, 6, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:47:35Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, rmgSame)
}

// TestRound22w3bOpusThinkingSquareRoot: claude-opus-4-6 unary with
// thinking at 1024 and tool_choice auto (maruel/genai's -1-any, after the
// API refused a forced call with thinking). Turn 1: a one-sentence signed
// thinking block then square_root {"number":132413}; tool_use; 650 in, 76
// out. Turn 2 sends the thinking block back with its signature, the call
// and its result, tool_choice none: "363.89", 741 in, 6 out.
func TestRound22w3bOpusThinkingSquareRoot(t *testing.T) {
	t.Parallel()
	const first, second = "real_maruel_opus46_thinking_sqrt_1", "real_maruel_opus46_thinking_sqrt_2"
	withThinking := func(mode llmrelayv1.ToolChoiceMode, more ...*llmrelayv1.Message) *provider.Request {
		req := rmgSqrtRequest(rw3Opus, mode, more...)
		req.Options.MaxTokens = ptr[int32](128000)
		req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: ptr[int32](1024)}}}
		return req
	}
	res1, srv1 := r22Unary(t, first, withThinking(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO))
	sig := r22Sig(t, first, 0)
	if len(sig) != 308 || sig[:20] != "EuEBCkYICxgCKkDcLc1w" {
		t.Fatalf("recorded signature %d bytes", len(sig))
	}
	checkLLMWant(t, first, res1.Message, res1.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "The user wants me to calculate the square root of 132413.", Signature: sig}),
			toolCallValid("toolu_01HU6qjBSeA9VHCX2wAJvst9", "square_root", `{"number":132413}`),
		},
		responseID: "msg_017k9PFHZNsuXbgmgPnvvRz2", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(650, 76, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:48:03Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global, "ratelimit_output_tokens_reset": `"2026-02-07T14:48:04Z"`},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, rmgSame)

	res2, srv2 := r22Unary(t, second, withThinking(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE,
		res1.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01HU6qjBSeA9VHCX2wAJvst9", "363.89", false))))
	checkLLMWant(t, second, res2.Message, res2.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("363.89")},
		responseID: "msg_014wr7xiYG12pTv4rMHwqXn1", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(741, 6, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:48:06Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global},
	})
	if got := res2.Meta.GetRateLimit().GetRequestsResetTime().AsTime(); !got.Equal(rmgReset(t, "2026-02-07T14:48:04Z")) {
		t.Errorf("requests reset %v, want 14:48:04Z", got)
	}
	r22SameRequest(t, srv2.Last(t).Body, second, rmgSame)
}

// TestRound22w3bOpusMaxTokens: claude-opus-4-6 unary, max_tokens 16: one
// text block "# The Theory of Relativity\n\nAlbert Einstein's Theory of
// Relativity" (its apostrophe doubled in the cassette, a YAML quote),
// stop_reason max_tokens (LENGTH); 18 in, 16 out; the output-tokens limit
// resets two seconds after the others (kept in extended).
func TestRound22w3bOpusMaxTokens(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_opus46_max_tokens"
	res, srv := r22Unary(t, name, r21Request(rw3Opus, "Explain the theory of relativity in great details.", 16, 0))
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text("# The Theory of Relativity\n\nAlbert Einstein's Theory of Relativity")},
		responseID: "msg_014udYGs6iitHsCV7H8cSgBX", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_LENGTH, providerStop: "max_tokens",
		usage:         usageOf(18, 16, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:47:27Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global, "ratelimit_output_tokens_reset": `"2026-02-07T14:47:29Z"`},
	})
	r22SameRequest(t, srv.Last(t).Body, name, rmgSame)
}

// TestRound22w3bOpusJSONSchema: claude-opus-4-6 unary without thinking,
// output_config.format json_schema (the model's structured_output: native):
// the text {"is_fruit": true} with its space, as the model wrote it;
// 194 in, 10 out; requests reset 14:47:31Z, tokens :32Z, output :33Z.
func TestRound22w3bOpusJSONSchema(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_opus46_json_schema"
	req := r21Request(rw3Opus, "Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON.", 128000, 0)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]}`}
	req.NativeStructuredOutput = true
	res, srv := r22Unary(t, name, req)
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(`{"is_fruit": true}`)},
		responseID: "msg_014brAZMndFUYgsLJodBKQyw", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(194, 10, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:47:32Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global, "ratelimit_output_tokens_reset": `"2026-02-07T14:47:33Z"`},
	})
	if got := res.Meta.GetRateLimit().GetRequestsResetTime().AsTime(); !got.Equal(rmgReset(t, "2026-02-07T14:47:31Z")) {
		t.Errorf("requests reset %v, want 14:47:31Z", got)
	}
	r22SameRequest(t, srv.Last(t).Body, name, rmgSame)
}

// TestRound22w3bOpusThinkingStop: claude-opus-4-6 unary with thinking at
// 1024 and stop_sequences ["is"]: the stop matched inside the thinking.
// The answer is one signed thinking block "The user wants a detailed
// discussion" and no text at all, stop_reason stop_sequence with "is";
// 48 in, 6 out. A STOP finish with the reasoning alone (its signature kept
// so the turn can go back).
func TestRound22w3bOpusThinkingStop(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_opus46_thinking_stop"
	req := r21Request(rw3Opus, "Talk about Canada in great details. Start with: Canada is", 128000, 1024)
	req.Options.Stop = []string{"is"}
	res, srv := r22Unary(t, name, req)
	sig := r22Sig(t, name, 0)
	if len(sig) != 280 || sig[:20] != "EswBCkYICxgCKkDimx0C" {
		t.Fatalf("recorded signature %q (%d)", sig, len(sig))
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: "The user wants a detailed discussion", Signature: sig})},
		responseID: "msg_01QnpcrkoJTkqUThz5MowGn8", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "stop_sequence",
		usage:         usageOf(48, 6, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:47:56Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global, "stop_sequence": `"is"`},
	})
	r22SameRequest(t, srv.Last(t).Body, name, rmgSame)
}

// TestRound22w3bOpusThinkingStopStream: the same request streamed (another
// answer): a thinking block in three deltas "The user wants a" " detailed"
// " discussion", its 280-byte signature in one signature_delta, then
// message_delta stop_sequence "is" with no text block at all; 48 in, 6 out
// (message_start's 4 provisional). All four limits reset at 14:47:54Z.
func TestRound22w3bOpusThinkingStopStream(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_opus46_thinking_stop_stream"
	req := r21Request(rw3Opus, "Talk about Canada in great details. Start with: Canada is", 128000, 1024)
	req.Options.Stop = []string{"is"}
	_, f, srv := r21Stream(t, name, req)
	const sig = "EswBCkYICxgCKkDimx0CHL96XtZweWUHWNHczIHikIPoIXH6PL+ibFKEKbYC2qPgEsQvedLm8BwEjVnOJwc5RCFQPWPqPw2w9NjvEgy8DKAUnKLXcied8jMaDJV0Xw3eULscl6JPPCIwCZN2+gwsu8Q0Tv4Vg9QVYU8RKuZv8hto5Xp8nR30saLfGgT2DK4XVKidfzmca+40KjSNgHgq5fd9TivFGsIPH2VV3TvKXxDfFIcB602H8jqz6ygMyWnSO438jcpniLiHvmSqvXedGAE="
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: "The user wants a detailed discussion", Signature: sig})},
		responseID: "msg_01Hakxwz4Pg9AoeScqkCa1Uy", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "stop_sequence",
		usage:         usageOf(48, 6, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:47:54Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global, "stop_sequence": `"is"`},
	})
	r22SameRequest(t, srv.Last(t).Body, name, rmgSame)
}

// TestRound22w3bOpusThinkingCitationsMarkdown: claude-opus-4-6 unary with
// thinking at 1024, a text/plain document holding markdown ("#
// Quackiland\n\n..."): a signed thinking block "Simple factual question.",
// an empty text block, then a text block citing chars [0, 50) of the
// document, its heading included ("# Quackiland\n\nThe capital of
// Quackiland is Quack. "); end_turn, 633 in, 45 out. The answer is the
// reasoning and one text part (the empty block adds nothing); the one
// citation names its block. The request is the recorded one but for the
// document's citations and cache_control (see TestRound22MaruelCitationsStream).
func TestRound22w3bOpusThinkingCitationsMarkdown(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_opus46_thinking_citations_markdown"
	req := r21Request(rw3Opus, "", 128000, 1024)
	req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("# Quackiland\n\nThe capital of Quackiland is Quack. The Big Canard Statue is located in Quack.")}, MimeType: "text/plain"}}},
		text("What is the capital of Quackiland?"))}
	res, srv := r22Unary(t, name, req)
	sig := r22Sig(t, name, 0)
	if len(sig) != 264 || sig[:20] != "EsABCkYICxgCKkAukQw0" {
		t.Fatalf("recorded signature %q (%d)", sig, len(sig))
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "Simple factual question.", Signature: sig}),
			text("The capital of Quackiland is Quack."),
		},
		responseID: "msg_01HD7AbTWGsLDj7AgPxi1YKv", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(633, 45, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:48:36Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global,
			"ratelimit_output_tokens_reset": `"2026-02-07T14:48:37Z"`},
		cited: []citedWant{
			{"The capital of Quackiland is Quack.", []citeWant{{"char_location", "# Quackiland\n\nThe capital of Quackiland is Quack. ", ""}}},
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, func(m map[string]any) {
		rmgSame(m)
		doc := rmgRecordedBlock(t, name, 0, 0)
		delete(doc, "citations")
		delete(doc, "cache_control")
		msgs, _ := m["messages"].([]any)
		msgs[0].(map[string]any)["content"].([]any)[0] = doc
	})
}

// TestRound22w3bOpusThinkingCitationsMarkdownStream: the same request
// streamed (another answer): the thinking in four deltas (the last empty)
// and a 264-byte signature in one signature_delta; an empty text block
// opened and closed with no delta; then a text block opened with
// "citations": [], one citations_delta (chars [0, 50), the heading in its
// cited_text) before its two text deltas; end_turn, 633 in, 45 out. The
// same message and citation as the unary answer's; the request as there.
func TestRound22w3bOpusThinkingCitationsMarkdownStream(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_opus46_thinking_citations_markdown_stream"
	req := r21Request(rw3Opus, "", 128000, 1024)
	req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("# Quackiland\n\nThe capital of Quackiland is Quack. The Big Canard Statue is located in Quack.")}, MimeType: "text/plain"}}},
		text("What is the capital of Quackiland?"))}
	_, f, srv := r21Stream(t, name, req)
	const sig = "EsABCkYICxgCKkAukQw0TMUITSGpoLtS2O9ilZv7WkGA7oetwq6sNVvHjVJ94gxOWZ3u+sMryvSFKm+ddDwdGkbrnVeotguR8xPIEgyB4Wt3Tu/HimuXz5caDPvXB9n19U1HSyEr5CIwVKilGshYlRbHafoX8D0rDuLjj0JWbaB9cmk0UDixHdxAxh+YdoN6ziJwHWy0jEHhKiiTE5qaRzuQCFeNYhk9WqKsf8xL7EoR7jtWPiRsRCgJ1lENo1+9P/gWGAE="
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts: []*llmrelayv1.Part{
			reasoningPart(&llmrelayv1.Reasoning{Text: "Simple factual question.", Signature: sig}),
			text("The capital of Quackiland is Quack."),
		},
		responseID: "msg_01K784VRUKfijJLSuTrT6c7x", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(633, 45, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:49:55Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global},
		cited: []citedWant{
			{"The capital of Quackiland is Quack.", []citeWant{{"char_location", "# Quackiland\n\nThe capital of Quackiland is Quack. ", ""}}},
		},
	})
	r22SameRequest(t, srv.Last(t).Body, name, func(m map[string]any) {
		rmgSame(m)
		doc := rmgRecordedBlock(t, name, 0, 0)
		delete(doc, "citations")
		delete(doc, "cache_control")
		msgs, _ := m["messages"].([]any)
		msgs[0].(map[string]any)["content"].([]any)[0] = doc
	})
}
