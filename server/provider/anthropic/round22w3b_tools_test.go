package anthropic

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound22w3bOpusThinkingToolBias: claude-opus-4-6 unary with thinking
// at 1024, tool_choice auto and best_country (enum USA, Canada): the model
// thinks (930 characters, apostrophes doubled in the cassette, a YAML
// quote; "myself. \n\n" keeping its space) and declines to call the tool:
// one text block of 944 characters (946 bytes: an em dash; markdown), end_turn; 654
// in, 480 out; the output-tokens limit resets at 14:48:28Z, eleven seconds
// after the tokens limit. No tool call; the request is the recorded one.
func TestRound22w3bOpusThinkingToolBias(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_opus46_thinking_tool_bias"
	req := r21Request(rw3Opus, "I wonder if the USA is a better country than Canada? Call the tool best_country to tell me which country is the best one.", 128000, 1024)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "best_country", Description: "A tool to specify the best country",
		Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"country":{"type":"string","enum":["USA","Canada"]}},"additionalProperties":false,"type":"object","required":["country"]}`}}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	res, srv := r22Unary(t, name, req)
	body := r19bBody(t, name)
	thinking, _ := r19bBlock(t, body, 0)["thinking"].(string)
	answer, _ := r19bBlock(t, body, 1)["text"].(string)
	sig := r22Sig(t, name, 0)
	if len(thinking) != 930 || !strings.HasPrefix(thinking, "The user is asking me to call the best_country tool") ||
		!strings.Contains(thinking, "I don't have an objective basis") || !strings.Contains(thinking, "myself. \n\nThe tool seems") {
		t.Fatalf("recorded thinking %q (%d)", thinking, len(thinking))
	}
	if len(answer) != 946 || !strings.HasPrefix(answer, "I appreciate the question, but I want to be transparent") ||
		!strings.HasSuffix(answer, "which one you'd like me to specify.\n\nWhat would you prefer?") {
		t.Fatalf("recorded answer %q (%d)", answer, len(answer))
	}
	if len(sig) != 1720 || sig[:20] != "EoUKCkYICxgCKkBIjKXV" {
		t.Fatalf("recorded signature %d bytes", len(sig))
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{reasoningPart(&llmrelayv1.Reasoning{Text: thinking, Signature: sig}), text(answer)},
		responseID: "msg_01TziWMofyHJVzSVmKRUmHvf", model: rw3Opus,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(654, 480, 0, 0, 0),
		requestsLimit: 4000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-02-07T14:48:17Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global,
			"ratelimit_output_tokens_reset": `"2026-02-07T14:48:28Z"`},
	})
	r22SameRequest(t, srv.Last(t).Body, name, rmgSame)
}

// TestRound22w3bSonnet46WebFetch: claude-sonnet-4-6 (May 2026) unary with
// web_fetch_20250910 (through extra_body, with the anthropic-beta
// web-fetch-2025-09-10 maruel/genai sent): a server_tool_use web_fetch
// {"url":"https://perdu.com"} (caller direct), its web_fetch_tool_result
// (a text/plain document titled "Vous Etes Perdu ?", retrieved
// 2026-05-29T22:26:52.805Z), then the answer (an em dash, "vous êtes ici",
// a closing U+1F604); end_turn, stop_details null; 2266 in, 217 out, one
// fetch (no search) in server_tool_use. The provider ran the tool itself:
// no tool call, a warning for each of its two blocks. Requests limit 20000
// (the account's tier moved since February), remaining tokens 1999000 of
// input and 2399000 in all. The request and its beta are the recorded ones.
func TestRound22w3bSonnet46WebFetch(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_sonnet46_web_fetch"
	const model = "claude-sonnet-4-6"
	req := r21Request(model, "Tell me what is written on https://perdu.com", 128000, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
		Betas: []string{"web-fetch-2025-09-10"},
	}}, ExtraBody: `{"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`}
	res, srv := r22Unary(t, name, req)
	body := r19bBody(t, name)
	fetched, _ := r19bBlock(t, body, 1)["content"].(map[string]any)
	if fetched["url"] != "https://perdu.com" || fetched["retrieved_at"] != "2026-05-29T22:26:52.805000+00:00" {
		t.Fatalf("recorded fetch result %v", fetched)
	}
	answer, _ := r19bBlock(t, body, 2)["text"].(string)
	if !strings.HasPrefix(answer, "Here is what is written on **perdu.com**:\n\n- **Title:** Vous Etes Perdu ?") ||
		!strings.Contains(answer, "`* <----- vous êtes ici` *(you are here)*") || !strings.HasSuffix(answer, "points out your location! \U0001F604") {
		t.Fatalf("recorded answer %q", answer)
	}
	checkLLMWant(t, name, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer)},
		responseID: "msg_01Ft1Z5TyAG8ebd5ejKd7TwB", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(2266, 217, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-05-29T23:19:03Z"),
		extended: map[string]string{
			provider.ExtUsageDetails:        `{"inference_geo":"global","server_tool_use.web_fetch_requests":1}`,
			"service_tier":                  `"standard"`,
			"ratelimit_output_tokens_reset": `"2026-05-29T23:19:06Z"`,
		},
		items: []string{"server_tool_use", "web_fetch_tool_result"},
	})
	if rl := res.Meta.GetRateLimit(); rl.GetTokensRemaining() != 2399000 || rl.GetRequestsRemaining() != 19999 {
		t.Errorf("remaining %v", rl)
	}
	sent := srv.Last(t)
	if got := sent.Header.Get("Anthropic-Beta"); got != "web-fetch-2025-09-10" {
		t.Errorf("anthropic-beta %q, want the recorded web-fetch-2025-09-10", got)
	}
	r22SameRequest(t, sent.Body, name, rmgSame)
}

// TestRound22w3bSonnet46WebFetchStream: the same request streamed (May
// 2026, another answer): server_tool_use web_fetch whose input streams in
// five input_json_delta pieces (the first empty) to {"url":
// "https://perdu.com"}, the web_fetch_tool_result whole in its
// content_block_start, then the text in nine deltas (an Ê, an em dash, a
// closing U+1F604: 558 bytes); end_turn. message_start says 1041 in and 59
// out; message_delta's final count is 2266 in (the fetched page read) and
// 231 out, one fetch. No tool call event for the provider's own tool: a
// warning for each of its two blocks. Tokens remaining 2386000 (input
// 1986000). The request (stream true) and its beta are the recorded ones.
func TestRound22w3bSonnet46WebFetchStream(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_sonnet46_web_fetch_stream"
	const model = "claude-sonnet-4-6"
	req := r21Request(model, "Tell me what is written on https://perdu.com", 128000, 0)
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
		Betas: []string{"web-fetch-2025-09-10"},
	}}, ExtraBody: `{"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`}
	evs, f, srv := r21Stream(t, name, req)
	const answer = "Here is what is written on **perdu.com** (which means \"lost\" in French):\n\n" +
		"- **Title:** Vous Êtes Perdu ? *(Are You Lost?)*\n- **Heading:** Perdu sur l'Internet ? *(Lost on the Internet?)*\n" +
		"- **Subheading:** Pas de panique, on va vous aider *(Don't panic, we'll help you)*\n" +
		"- **A small ASCII-style indicator:** `* <----- vous êtes ici` *(you are here)*\n\n" +
		"It's a minimalist and humorous French website, essentially a joke page for people who end up there by mistake — " +
		"telling them they're lost on the internet, but reassuring them that help is on the way! \U0001F604"
	if len(answer) != 558 {
		t.Fatalf("answer %d bytes", len(answer))
	}
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer)},
		responseID: "msg_01NHUz3URqYgLHn6TV9emYf9", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(2266, 231, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-05-29T23:19:01Z"),
		extended: map[string]string{
			provider.ExtUsageDetails: `{"inference_geo":"global","server_tool_use.web_fetch_requests":1}`,
			"service_tier":           `"standard"`,
		},
		items: []string{"server_tool_use", "web_fetch_tool_result"},
	})
	if n := countKind(evs, provider.EventToolCall) + countKind(evs, provider.EventToolCallEnd) + countKind(evs, provider.EventToolCallCut); n != 0 {
		t.Errorf("%d tool-call events, want none (the API ran the fetch)", n)
	}
	if rl := f.meta.GetRateLimit(); rl.GetTokensRemaining() != 2386000 || rl.GetRequestsRemaining() != 19999 {
		t.Errorf("remaining %v", rl)
	}
	sent := srv.Last(t)
	if got := sent.Header.Get("Anthropic-Beta"); got != "web-fetch-2025-09-10" {
		t.Errorf("anthropic-beta %q, want the recorded web-fetch-2025-09-10", got)
	}
	r22SameRequest(t, sent.Body, name, rmgSame)
}

// TestRound22w3bSonnet46SquareRootStream: claude-sonnet-4-6 (May 2026)
// streamed, max_tokens 128000, tool_choice any. Turn 1: square_root
// (caller direct) whose input streams in three pieces ("", `{"number`,
// `": 132413}`): arguments `{"number": 132413}` with the model's space;
// tool_use, stop_details null; 713 in, 39 out (message_start's 5
// provisional). Turn 2 sends the call back (the API reads the same JSON
// whichever spacing: maruel/genai sent it compact) with the result
// "363.89" and tool_choice none: "363" ".89", end_turn, 691 in, 6 out.
// Both requests are the recorded ones (rmgSame; JSON compared as values).
func TestRound22w3bSonnet46SquareRootStream(t *testing.T) {
	t.Parallel()
	const model = "claude-sonnet-4-6"
	const first, second = "real_maruel_sonnet46_sqrt_stream_1", "real_maruel_sonnet46_sqrt_stream_2"
	build := func(mode llmrelayv1.ToolChoiceMode, more ...*llmrelayv1.Message) *provider.Request {
		req := rmgSqrtRequest(model, mode, more...)
		req.Options.MaxTokens = ptr[int32](128000)
		return req
	}
	_, f1, srv1 := r21Stream(t, first, build(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	checkLLMWant(t, first, f1.message, f1.meta, llmWant{
		parts:      []*llmrelayv1.Part{toolCallValid("toolu_012q4T8Bc33FNB9nVbuhJXuw", "square_root", `{"number": 132413}`)},
		responseID: "msg_019ULrBsn8X44PdqAZDKZCrq", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
		usage:         usageOf(713, 39, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-05-29T23:18:50Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global},
	})
	r22SameRequest(t, srv1.Last(t).Body, first, rmgSame)

	_, f2, srv2 := r21Stream(t, second, build(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE,
		f1.message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_012q4T8Bc33FNB9nVbuhJXuw", "363.89", false))))
	checkLLMWant(t, second, f2.message, f2.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("363.89")},
		responseID: "msg_01Kyu3xeHajJtjDCZkGGQm94", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(691, 6, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 2400000, tokensReset: rmgReset(t, "2026-05-29T23:18:52Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": rw3Global},
	})
	r22SameRequest(t, srv2.Last(t).Body, second, rmgSame)
}
