package gemini

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22 (w3c): more of maruel/genai's go-vcr recordings of the live
// Gemini API (testdata/README.md, "Round 22 (w3c)"): stop sequences, seed,
// JSON and JSON schema, a thinking model's parallel calls of which only
// the first is signed. Every expectation is read off the recording by hand.

func init() {
	round17Recordings = append(round17Recordings, "real_maruel_gemini25_flash_lite_stop",
		"real_maruel_gemini25_flash_lite_thinking_stop_stream", "real_maruel_gemini25_flash_lite_thinking_seed",
		"real_maruel_gemini25_flash_lite_thinking_json", "real_maruel_gemini25_flash_lite_thinking_json_schema",
		"real_maruel_gemini25_flash_lite_thinking_parallel_calls_one_signature",
		"real_maruel_gemini25_flash_lite_search", "real_maruel_gemini35_flash_json_schema_stream",
		"real_maruel_gemini25_flash_lite_thinking_sqrt_1", "real_maruel_gemini25_flash_lite_thinking_sqrt_2",
		"real_maruel_gemini25_flash_lite_thinking_parallel_calls_stream", "real_maruel_gemini25_flash_lite_thinking_max_tokens")
}

// w3cThinking is maruel/genai's "_thinking" scoreboard setting: thought
// summaries with a 512-token budget.
func w3cThinking() *llmrelayv1.ProviderOptions {
	budget, yes := int32(512), true
	return &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{ThinkingBudget: &budget, IncludeThoughts: &yes}}}
}

// w3cParts splits an answer into its reasoning texts, its text and its
// tool calls, in order.
func w3cParts(m *llmrelayv1.Message) (reasoning []*llmrelayv1.Reasoning, text string, calls []*llmrelayv1.ToolCall) {
	for _, p := range m.GetParts() {
		switch {
		case p.GetReasoning() != nil:
			reasoning = append(reasoning, p.GetReasoning())
		case p.GetToolCall() != nil:
			calls = append(calls, p.GetToolCall())
		default:
			text += p.GetText()
		}
	}
	return reasoning, text, calls
}

// w3cSentConfig is the generationConfig of the request the adapter sent.
func w3cSentConfig(t *testing.T, body []byte) map[string]any {
	t.Helper()
	gc, _ := r17JSON(t, body)["generationConfig"].(map[string]any)
	return gc
}

const w3cCanadaPrompt = "Talk about Canada in great details. Start with: Canada is"

// TestW3CStopSequence: gemini-2.5-flash-lite (July 2025), unary, with the
// stop sequence "is": the model wrote "Canada " and stopped before "is";
// the API answers STOP (it has no reason of its own for a stop sequence,
// and does not say which sequence matched), the sequence removed from the
// text. 13 in, 1 out, 14 total; no serviceTier, no thoughts.
func TestW3CStopSequence(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text(w3cCanadaPrompt)))
	req.Options = &llmrelayv1.GenerationOptions{Stop: []string{"is"}}
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_stop", req)
	if srv.Last(t).Path != "/v1beta/models/gemini-2.5-flash-lite:generateContent" {
		t.Errorf("path %s", srv.Last(t).Path)
	}
	if gc := w3cSentConfig(t, srv.Last(t).Body); !jsonEqual(gc["stopSequences"], r19Decode(t, `["is"]`)) {
		t.Errorf("generationConfig %v, recorded stopSequences [\"is\"]", gc)
	}
	if r, txt, calls := w3cParts(res.Message); len(r) != 0 || txt != "Canada " || len(calls) != 0 {
		t.Errorf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	m := res.Meta
	r21Meta(t, m, "p7eCaJjvJ8COjMcPkZz9qAY", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 1, TotalTokens: 14})
	if m.GetServiceTier() != "" || m.GetStopSequence() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestW3CStopSequenceThinkingStream: gemini-2.5-flash-lite with thought
// summaries (512-token budget) streamed, stop sequence "is": the sequence
// cuts the thought summaries too (each of the three ends in "Canada "),
// then "Canada " and STOP. The chunks have no candidatesTokenCount; the
// thoughts count rises 68, 313, 376 and the last two chunks both say 376
// (389 total), so the answer's usage is 13 in, 376 thought tokens and no
// answer tokens the API counted: the output is 376 (total 389, the API's).
func TestW3CStopSequenceThinkingStream(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text(w3cCanadaPrompt)))
	req.Options = &llmrelayv1.GenerationOptions{Stop: []string{"is"}}
	req.ProviderOptions = w3cThinking()
	evs, srv := r20Stream(t, "real_maruel_gemini25_flash_lite_thinking_stop_stream", req)
	if srv.Last(t).Path != "/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent" {
		t.Errorf("path %s", srv.Last(t).Path)
	}
	recorded := r19Decode(t, `{"stopSequences":["is"],"thinkingConfig":{"includeThoughts":true,"thinkingBudget":512}}`).(map[string]any)
	gc := w3cSentConfig(t, srv.Last(t).Body)
	for k, want := range recorded {
		if !jsonEqual(gc[k], want) {
			t.Errorf("generationConfig.%s %v, recorded %v", k, gc[k], want)
		}
	}
	var thoughts []string
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning && ev.Reasoning.Text != "" {
			thoughts = append(thoughts, ev.Reasoning.Text)
		}
	}
	want := []string{"**Defining Canada's Identity**\n\nCanada ",
		"**Structuring the Description**\n\nI've got the foundational structure for describing Canada! \"Canada ",
		"**Outlining Canada's Aspects**\n\nI am now organizing the detailed aspects of Canada into clearly defined categories. I am setting up the structure based on Geography & Landscape, Population & Demographics, Government & Politics, and Economy, and I am ensuring that the introduction includes the user's specific phrase \"Canada "}
	if got, w := w3cMarshal(t, thoughts), w3cMarshal(t, want); got != w {
		t.Errorf("thoughts %s, recorded %s", got, w)
	}
	f := foldEvents(evs)
	if f.text != "Canada " || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	m := f.meta
	if m.GetResponseId() != "sdcZapiqJc6ajrEPxMqeEQ" || m.GetResolvedModel() != "gemini-2.5-flash-lite" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 376, TotalTokens: 389, ReasoningTokens: 376}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
}

func w3cMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestW3CSeed: gemini-2.5-flash-lite with thought summaries and seed 42,
// unary: a thought summary part, then "Hello"; 9 in, 1 + 29 thought
// tokens, 39 total, serviceTier standard (body and X-Gemini-Service-Tier).
func TestW3CSeed(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Use only one word.")))
	seed := int64(42)
	req.Options = &llmrelayv1.GenerationOptions{Seed: &seed}
	req.ProviderOptions = w3cThinking()
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_thinking_seed", req)
	gc := w3cSentConfig(t, srv.Last(t).Body)
	if !jsonEqual(gc["seed"], 42.0) || !jsonEqual(gc["thinkingConfig"], r19Decode(t, `{"includeThoughts":true,"thinkingBudget":512}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	r, txt, calls := w3cParts(res.Message)
	const thought = "**My Immediate Response**\n\nOkay, so the user wants a single-word greeting. No complex phrasing, no embellishment, just the purest, most concise form of \"hello.\" Let's be efficient here. The most obvious and universally understood choice, the bedrock of greetings... is \"Hello.\" There's no need to overthink this.\n"
	if len(r) != 1 || r[0].GetText() != thought || r[0].GetSignature() != "" || txt != "Hello" || len(calls) != 0 {
		t.Errorf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	m := res.Meta
	r21Meta(t, m, "r9cZasvUJKKssOIPxYbnSQ", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 30, TotalTokens: 39, ReasoningTokens: 29})
	if m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestW3CJSON: JSON mode (responseMimeType application/json, no schema)
// with thought summaries: the summary (which itself holds a fenced JSON
// block) stays reasoning, the answer is exactly {"is_fruit": true} as the
// model spaced it. 30 in, 7 + 87 thought tokens, 124 total.
func TestW3CJSON(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER,
		text(`Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON according to the provided schema: {"is_fruit": bool}.`)))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}}
	req.ProviderOptions = w3cThinking()
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_thinking_json", req)
	gc := w3cSentConfig(t, srv.Last(t).Body)
	if gc["responseMimeType"] != "application/json" || gc["responseSchema"] != nil || gc["responseJsonSchema"] != nil {
		t.Errorf("generationConfig %v", gc)
	}
	r, txt, calls := w3cParts(res.Message)
	if len(r) != 1 || r[0].GetText() != "**Banana Classification Thoughts**\n\nOkay, so the user's asking the age-old question, is a banana a fruit? This is straightforward, and I need to respond with a JSON object. I'm going to structure it as `{\"is_fruit\": bool}`. The key is clearly `is_fruit`, and the value needs to be a boolean, either `true` or `false`.\n\nBotanically, a banana *is* a fruit. It's even a specific type of fruit – a berry, if memory serves. Therefore, the boolean value I'm going to assign to `is_fruit` has to be `true`. Here's the JSON object to confirm:\n\n```json\n{\"is_fruit\": true}\n```\n" ||
		txt != `{"is_fruit": true}` || len(calls) != 0 {
		t.Errorf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	m := res.Meta
	r21Meta(t, m, "uNcZatybB7yR-8YPhaC3KA", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 30, OutputTokens: 94, TotalTokens: 124, ReasoningTokens: 87})
	if m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestW3CJSONSchema: a JSON schema (maruel/genai sent it as the OpenAPI
// subset, responseSchema with upper-case types) with thought summaries:
// {"is_fruit":true}; 18 in, 7 + 149 thought tokens, 174 total. Ours sends
// the JSON Schema as responseJsonSchema (the API takes either); the
// schema's content is the recorded one.
func TestW3CJSONSchema(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text("Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON.")))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"properties":{"is_fruit":{"type":"boolean"}},"required":["is_fruit"],"type":"object"}`}}
	req.ProviderOptions = w3cThinking()
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_thinking_json_schema", req)
	gc := w3cSentConfig(t, srv.Last(t).Body)
	if gc["responseMimeType"] != "application/json" || gc["responseSchema"] != nil || !jsonEqual(gc["responseJsonSchema"], r19Decode(t, `{"properties":{"is_fruit":{"type":"boolean"}},"required":["is_fruit"],"type":"object"}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	r, txt, calls := w3cParts(res.Message)
	if len(r) != 1 || r[0].GetText() != "**My Response to the Banana Question**\n\nOkay, a straightforward yes/no question. They want to know if a banana is a fruit. And, importantly, *only* the JSON answer, no explanation. I have a schema to adhere to, which is good. That eliminates any ambiguity. The schema demands a boolean value for the key `is_fruit`. Now, I know my botany, and a banana is, indeed, a fruit from a biological perspective. So, the `is_fruit` value has to be `true`. Time to format that into the required JSON object.\n" ||
		txt != `{"is_fruit":true}` || len(calls) != 0 {
		t.Errorf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	m := res.Meta
	r21Meta(t, m, "vNcZavmDFeHfjrEPuu7GkQY", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 18, OutputTokens: 156, TotalTokens: 174, ReasoningTokens: 149})
	if m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// w3cBestCountry is maruel/genai's best_country tool.
var w3cBestCountry = &llmrelayv1.Tool{Name: "best_country", Description: "A tool to specify the best country",
	Parameters: `{"properties":{"country":{"enum":["Canada","USA"],"type":"string"}},"required":["country"],"type":"object"}`}

// The first call's thoughtSignature (1368 bytes: a protobuf field 1 of
// 1365).
const w3cBiasSig = "CtUKAQw51scpmGK7SgUzBKkFXeBi3BSoAJ/6LQ4TVuICe3xXNQZ4pUXckCDhJDsLNSm4VPKYvgFywnKQodPpQNvGO4chbmrfQlBdc7GkBOnPP2Pp7EaoC0BoEYaNI1xE0AdrYeOcLKLpkUYjMPJbWlTna+WxecH9ios7W43D1FgynAGxxLz0vtvkQjfQ7k7iDJLo2oQsyKPRBAVNrceXEoS9kR+asT3tFPu+HhI2vwlhm6jMZAiihcuxa8OtW41hOA5g3W9iGcWAmEN9X/KkNlR4RJT6Xy1PrpAc8wRgRgTB8E5Fa3xfnyn/pyBkcyVMhswNcguJnrOsFzKyuDSV3bER6iyVkIfCAWD/S0d/UIQ206UWlknDFulaVlfLUHlG+cUPmNAgJ5M+ZvGGItZgZZXRZJqZJyb20Mlj9KJW2mTAynsebUlvJ/QYR2ruLkdDEbpOGx55OPt+c1VUVasZ3osBMpf2feKVCZu3OhjfSJDYGvZUnp2TkuXDcSyGniBoSBFHfgh4sAy1vNUx+dGP7aY1ARpBMmFmwBB2uWdwPbsbf9XxwISxUGHCRfqA/NaQ6JLZI2cGZqDy2xk5ExSyfG9+PzuK6UtdcW20jy/qYy1k+/WNtsyR8jsusPBSog8NwLNaZUhkl0UlDS7JWqn6291ZwYdcCrG+2UnZAiwm4EtGpWMcqsbudO0soePWxZbjaQW4rYCXpkr70dPf/FRhid1V0A8EtEPiUmNIUFMfVExh3U0but568UrxNvIO/mVDw5KvgrfF92XghKYWd936kRb2gcq139s7V3X5KiND0ro5NiZBv76Rr82LjnWDzGDtzlVfIsy7HSi1KrjaDQfoN97nnq0KlD+cqvPgtnI9j70e9h12IyqlhCEMyLfAo+I9PVjJZe5VnN0wEYG6jCDeFpQOZ0lxnJXEuJlsJn+soeknMvPexWxJJnOEVwNl+sTQbUU+dJfMJEMp5Rn6xnhBHq+japfghWC5WE2qlbmnO1+2CnkDO+L45yt1EV3vZl0z/kpz2jRZKSxxBHdvnbszbVYMC/qQXhNXxuYJjbLtqCuXrHkj0LdtZHqf+ukzmAaTQfDJTnp3nrsx6i2s81ognS4+KwgK+dEJtzYXxqC1qONECSTekpxEKklROurdD2u6QF49j5dnSiOFakUwy/T8gXmQBbx2smj+I/H/Nr0Ah5DUdbBD/VDET7n+Fc3Jxjk1xFMSjE/nTXjFM/BQamE3BcbaqFDJ4C8GH3VXwU1bUL9ci23GR1Ng9gpp5C6A5Kl3uGnFhIOaPQwO1zLyQ4uCcyk6mvGwd2OQzaNlUuGBWyDzsFkeboddKcNFFz4XVTsbT9jDNJtVmion9Ew2y8rVsA0Jl8/okQptUIxXznjQ+ur93zdPBEU0AJV2toXGDao3H0DDoRCrcmKCp4fTXPVd4H8JnsxZH0WnyLaJtea124e0D3eYlZn3XRA2rVDANJ7VqGlZzdgk2GEx8YRgwHU1zCYvdGSiCeI/1dP1tq3QWnqhxCyTy0t3Yxa13v+aaxwiM5bTt72EZjTWi6Ihazg0XDVyEyw0RmzKKrCBe4qoLLb8wr0XDBZ2bISnrtibqQIH1+mDkDw1iJzuRoLrfKsv8h6CLay2xFNGPxaJ72uTwnvP0IQTbK9L2y+30FOynaCvbiX5dxIIZ/WkRfyfwpQlK2UxhHPdcfBm5SLg7bdCmwmBCz1DcZi7Mq+7fyJqtmR3fTHD9Sd9un38am1SR5kCcE4aFzTHRrRmKzCDZ3JRttufcDbzQDZzddYsyIFYvfqV5avwVlZQINVPcTrlmHVtrcXBn+hiTms3"

// TestW3CParallelCallsOneSignature: gemini-2.5-flash-lite with thought
// summaries, unary, a call required: a thought summary, then two calls of
// best_country without ids, only the first (Canada) signed, as Gemini
// signs parallel calls; STOP with finishMessage; 115 in, 30 + 320 thought
// tokens, 465 total. Sending the answer back, the signature goes on the
// Canada call alone and the USA call goes unsigned (no dummy signature:
// the model signed it by the first), the calls in the model's order and
// the results in the calls' order though the client answered USA first.
func TestW3CParallelCallsOneSignature(t *testing.T) {
	t.Parallel()
	const q = "I wonder if Canada is a better country than the USA? Call the tool best_country to tell me which country is the best one."
	user := msg(llmrelayv1.Role_ROLE_USER, text(q))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{w3cBestCountry},
		Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), ProviderOptions: w3cThinking()}
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_thinking_parallel_calls_one_signature", req)
	sent := r17JSON(t, srv.Last(t).Body)
	if got, want := sent["toolConfig"], r19Decode(t, `{"functionCallingConfig":{"mode":"ANY"}}`); !jsonEqual(got, want) {
		t.Errorf("toolConfig %v, recorded %v", got, want)
	}
	if got, want := sent["contents"], r19Decode(t, `[{"role":"user","parts":[{"text":"`+q+`"}]}]`); !jsonEqual(got, want) {
		t.Errorf("contents %v, recorded %v", got, want)
	}
	r, txt, calls := w3cParts(res.Message)
	if len(r) != 1 || !strings.HasPrefix(r[0].GetText(), "**Analyzing the User's Query and Tool Capabilities**\n\nOkay, so the user wants me") ||
		!strings.HasSuffix(r[0].GetText(), "So, in short, I'll need to call the tool and see what the output is.\n") || r[0].GetSignature() != "" || txt != "" {
		t.Errorf("reasoning %v, text %q", r, txt)
	}
	if len(calls) != 2 {
		t.Fatalf("calls %v", calls)
	}
	canada, usa := calls[0], calls[1]
	if canada.Name != "best_country" || canada.Arguments != `{"country":"Canada"}` || canada.Signature != w3cBiasSig || !canada.ArgumentsValid ||
		usa.Name != "best_country" || usa.Arguments != `{"country":"USA"}` || usa.Signature != "" || !usa.ArgumentsValid ||
		canada.CallId == "" || canada.CallId == usa.CallId {
		t.Errorf("calls %v", calls)
	}
	m := res.Meta
	r21Meta(t, m, "wNcZaszsCMOR-8YPqK3g-QE", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 115, OutputTokens: 350, TotalTokens: 465, ReasoningTokens: 320})
	if m.GetServiceTier() != "standard" || m.GetToolCallCount() != 2 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	// The second turn: the client answers USA first.
	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user, res.Message,
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(usa.CallId, "USA is second"), toolResultPart(canada.CallId, "Canada is best"))},
		Tools: []*llmrelayv1.Tool{w3cBestCountry}, ProviderOptions: w3cThinking()}
	p, srv2 := replay(t, "real_maruel_gemini25_flash_lite_stop")
	if _, err := p.Generate(context.Background(), req2); err != nil {
		t.Fatalf("second turn: %v", err)
	}
	contents, _ := r17JSON(t, srv2.Last(t).Body)["contents"].([]any)
	if len(contents) != 3 {
		t.Fatalf("contents %v", contents)
	}
	model, _ := contents[1].(map[string]any)
	var sentCalls []string
	for _, pt := range model["parts"].([]any) {
		part := pt.(map[string]any)
		if fc, ok := part["functionCall"].(map[string]any); ok {
			b, _ := json.Marshal(fc)
			sig, _ := part["thoughtSignature"].(string)
			sentCalls = append(sentCalls, string(b)+" sig="+strconv.Itoa(len(sig)))
		}
	}
	if want := []string{`{"args":{"country":"Canada"},"name":"best_country"} sig=` + strconv.Itoa(len(w3cBiasSig)),
		`{"args":{"country":"USA"},"name":"best_country"} sig=0`}; w3cMarshal(t, sentCalls) != w3cMarshal(t, want) {
		t.Errorf("model turn calls %v, want %v", sentCalls, want)
	}
	results, _ := contents[2].(map[string]any)
	if got, want := results, r19Decode(t, `{"role":"user","parts":[`+
		`{"functionResponse":{"name":"best_country","response":{"result":"Canada is best"}}},`+
		`{"functionResponse":{"name":"best_country","response":{"result":"USA is second"}}}]}`); !jsonEqual(got, want) {
		b, _ := json.Marshal(got)
		t.Errorf("results %s", b)
	}
}

// TestW3CWebSearchUnary: gemini-2.5-flash-lite (September 2025) with
// googleSearch, unary: "Justin Trudeau." and a groundingMetadata with the
// 4673-byte HTML searchEntryPoint, two web chunks (un.org, liberal.ca),
// one support over the whole answer (no startIndex, endIndex 15, both
// chunks) and the query. The usage counts the search results apart:
// 29 prompt + 47 tool-use prompt tokens in, 21 out, 97 total (the three
// add up to the API's total). The tool goes as extra_body (the contract
// has no server-side search tool); the request is the recorded one.
func TestW3CWebSearchUnary(t *testing.T) {
	t.Parallel()
	const q = "Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation."
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text(q)))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"googleSearch":{}}]}`}
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_search", req)
	sent := r17JSON(t, srv.Last(t).Body)
	if !jsonEqual(sent["tools"], r19Decode(t, `[{"googleSearch":{}}]`)) || !jsonEqual(sent["contents"], r19Decode(t, `[{"role":"user","parts":[{"text":"`+q+`"}]}]`)) {
		t.Errorf("tools %v, contents %v", sent["tools"], sent["contents"])
	}
	if r, txt, calls := w3cParts(res.Message); len(r) != 0 || txt != "Justin Trudeau." || len(calls) != 0 {
		t.Errorf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	m := res.Meta
	r21Meta(t, m, "STe3aPmDKLDe_uMP_Y_v2Ao", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 76, OutputTokens: 21, TotalTokens: 97})
	if got := r21Ext(t, m, extToolUsePromptTokens); got != "47" {
		t.Errorf("tool-use prompt tokens %s", got)
	}
	var gm map[string]any
	if err := json.Unmarshal([]byte(r21Ext(t, m, extGroundingMetadata)), &gm); err != nil {
		t.Fatalf("grounding metadata: %v", err)
	}
	chunks, _ := gm["groundingChunks"].([]any)
	html, _ := gm["searchEntryPoint"].(map[string]any)["renderedContent"].(string)
	if len(chunks) != 2 || len(html) != 4673 || !strings.HasPrefix(html, "<style>\n.container {") ||
		!jsonEqual(gm["groundingSupports"], r19Decode(t, `[{"segment":{"endIndex":15,"text":"Justin Trudeau."},"groundingChunkIndices":[0,1]}]`)) ||
		!jsonEqual(gm["webSearchQueries"], r19Decode(t, `["who is the prime minister of Canada"]`)) {
		t.Errorf("grounding metadata %v", gm)
	}
	if title := chunks[1].(map[string]any)["web"].(map[string]any)["title"]; title != "liberal.ca" {
		t.Errorf("second chunk %v", chunks[1])
	}
	if m.GetServiceTier() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// The answer's thoughtSignature in real_maruel_gemini35_flash_json_schema_stream
// (1124 bytes: a protobuf field 2 of 1121).
const w3cSchemaSig = "EuEICt4IAQw51sfltHTDfF2xcOqNWMN16ZgoBI/LJX3+iGzkLml4qlvwCtceF2LxQ5KXzKPDuGrHXlC1orzYe1MIg0RDvNnRejgE2mBxkUmOmNnhe+P0NGB9Rep6k7XtdqEWXcz1Ff/p3oSa5Vmq63PiyIq/pnMBHOcu3UCQrcixuj013RLUloAucmFbIQ/NbygfXjJBHBCQGlbjk/BSosDly49lr5EQziOZYDweVlgJbEHehUz+86UNZnK9tQIwuvYyYZcc4YC2NNNlaWbI7+OJ8f3Fp1b/anFlMMFiq6NpE1zm4WJARP+trpGyBjy+mUNwBxrkhE17831/Z/ygqhDDEgyNE3Rq8v4jEHOOQN0Ed5QWCwpAgtp/y3WpiQthqyIdUxB5t2pVnjo4XfMvwWPnuPcCXgxOtctF9ZNiR6NkMaSQ5TDePxGiq6izbot2e9JOslbQdMp9Mmh5FGQi0hJUP1aLU9D1em8cc4dob+RvxZmSi0yvJGQ0SXMWTQ3kEWQaaSaTeTUyz5ChIZMJsDDV8A085OrAwZ3aDL4jVu+t7MMrVuyKxMwNJp/2DpBSKzNKypIEDxNfacW02L5fvIWrcf7+TbMNnJj1QlUmgNIQV+p/zuhqUbXEwQ5pb09gT5qwEM1N77qco0ILMB6WNgF4qy8TnOKV7VROLwANVTGVZo87uQaS/Ik6ibxj5LnjHUkeWRI/+22qzx7LctVKVAvGG25CS2bxWkq9KT3DLLTnbvR6uQswGxaQWvKXfiOAmNiL/9rmvVwO6cJOmk+6Xi8OuneOaZiXDWH1JgYXDhL8JVYMRZUJQrZJaMUx6Spzq4pZd9TpomwV8LjFonk67MJt7wq4zyaxT55LpReNyBU6MCfsEDGMAcCnggD++j9qGjEp863jS2PP+h/lYNRbFeZm7C5GOKZ9uuH+rZc3j/lUg8fzkWUpIl9oqe4qiMwiu8cFxSLlCr59yfY8CFAFBlJQEhO4u7wzOht6S33B9eEi9rgVV6AhMViSxKcVGw6DoWe5Hlf5Nv5UuiJ7mpUw/BI2m6WYwyS3T+JxXGQGzAWNAzAxgBlhiB4qKMp5hpb2yTSyHDReoZ7E0KP5VZJBaHRARX6OcqCnKKa1YW2kFcRLtkeKmRftXheNjsClZ229T+YRm5RTF53asIYWp/zcs1DFoxkVGikIb84uosG+5VWkkzr+55bIbzfgw+Ui64yOChE7B0DkxvWnjKzvbKkFbLvhCsXHnUbagpaEc1SU61l/b8LwA+DTLyY0j0g1g3o1eD5T/rs7M2wSOCT+szQ+NoxpYJqVOtEAVsm4sdtV4fkjtOfioCLQgHOfoqn7iZlH718iZi+NovgBWOpsBPk+mMlHOaGntkXHeYYJVIG56PkbN1ktl4pDp3za0J6OdIl5Bg/cnTxST8b7EU1dJtxHiYJrGesZzfFeux1+1sUQ+pZ9kZXJnMi5UKaod2KlJGPpVVQlHM7tlMkq8iSvtDK2Sdq1Qn0="

// TestW3CJSONSchemaStream: gemini-flash-latest (modelVersion
// gemini-3.5-flash) streamed with a JSON schema and no thought summaries:
// the whole object {"is_fruit":true} in the first chunk, then the
// signature on an empty text part with STOP. Both chunks carry the same
// usage: 18 in, 7 + 258 thought tokens, 283 total. The object is the
// answer's text alone (the empty signed part adds nothing to it) and the
// signature is relayed as reasoning without text, for the next turn.
func TestW3CJSONSchemaStream(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-flash-latest", "", msg(llmrelayv1.Role_ROLE_USER, text("Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON.")))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"properties":{"is_fruit":{"type":"boolean"}},"required":["is_fruit"],"type":"object"}`}}
	evs, srv := r20Stream(t, "real_maruel_gemini35_flash_json_schema_stream", req)
	if srv.Last(t).Path != "/v1beta/models/gemini-flash-latest:streamGenerateContent" {
		t.Errorf("path %s", srv.Last(t).Path)
	}
	gc := w3cSentConfig(t, srv.Last(t).Body)
	if gc["responseMimeType"] != "application/json" || gc["responseSchema"] != nil || !jsonEqual(gc["responseJsonSchema"], r19Decode(t, `{"properties":{"is_fruit":{"type":"boolean"}},"required":["is_fruit"],"type":"object"}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	var sig, thought string
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			sig += ev.Reasoning.Signature
			thought += ev.Reasoning.Text
		}
	}
	if sig != w3cSchemaSig || thought != "" {
		t.Errorf("signature %d bytes, thought %q", len(sig), thought)
	}
	f := foldEvents(evs)
	if f.text != `{"is_fruit":true}` || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	m := f.meta
	if m.GetResponseId() != "FtYZaryKKaGb-8YPw7H0QA" || m.GetResolvedModel() != "gemini-3.5-flash" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 18, OutputTokens: 265, TotalTokens: 283, ReasoningTokens: 258}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
}

// w3cSqrtRecordedContents is the contents of the second request maruel/genai
// sent (GenSync-Tools-SquareRoot-2.yaml), which the API answered: the
// thought summary as a thought part, the signed call without id, the
// result by name.
const w3cSqrtRecordedContents = "[{\"role\":\"user\",\"parts\":[{\"text\":\"Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation.\"}]},{\"role\":\"model\",\"parts\":[{\"thought\":true,\"text\":\"**Calculating the Square Root**\\n\\nOkay, so the user wants me to find the square root of 132413. They are very precise in their instructions - they want just the result, no extra fluff or explanations. This means I'm going to use the `square_root` tool. I'll need to feed the number 132413 to the tool as the `number` argument. Once I have the result, I'll output *only* that value. Simplicity is key here; the user knows what they're doing, so my role is just to provide the requested data. No need to overthink it. Let's get this done.\\n\"},{\"thoughtSignature\":\"CuUCAQw51sfoolwx4NN/PkvPlitqekCtiIQXGKEU9YiEdkL23KjaDfDxPLF4MsztiTTwEG+5IFtEMp/yx8EjO2i+6vatpX5TRuxa+2868OZ/Pr7kk4Apw2XHK20xdUUEsCdoo7QYjAv+Gkb95J2u6/fveYBJWJIiobLus88mPwMN9giB/5VCH76w469LzsOjNFgtVcOhR1gu5Rvm+tMadgBOJ/9Z5iLG/V2sq6K+lmpbRhj9KmmrPLVaVjTP3Phong+KgnLPQgld1qq5O0lZElUhKrRliwrHmQ4muDPAs+wV98y3dw4dalmUQQzczE3HW5w489IqHhNrueyo/+sreFQ37zdUbnf9fJjOQ+/vsyIqJ/cB97IU+9SuHAlQAN2At+qR5Y2SDuRf17G4ObdLsRcGZ0NMT4P2zIhe8hbATFiL3lxTgAAjaPPnlESTzpmI9otd3HDQ7emAxquBcLuDXxYliIVAfLH2\",\"functionCall\":{\"name\":\"square_root\",\"args\":{\"number\":132413}}}]},{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"square_root\",\"response\":{\"response\":\"363.89\"}}}]}]"

// TestW3CThinkingSquareRootUnary: gemini-2.5-flash-lite with thought
// summaries (512-token budget), unary, a call required: the summary, then
// square_root({"number": 132413}) without id carrying a 360-byte
// signature (a protobuf field 1 of 357), STOP with finishMessage; 117 in,
// 20 + 89 out, 226 total. The second request maruel/genai built from it
// (which the API answered) is the summary as a thought part, the signed
// call, the functionResponse by name, mode NONE; ours is the same but for
// the result's wrapping ({"result": …}, maruel/genai's {"response": …}).
// The answer: "363.89", no thoughts, 303 in, 6 out, 309 total.
func TestW3CThinkingSquareRootUnary(t *testing.T) {
	t.Parallel()
	user := msg(llmrelayv1.Role_ROLE_USER, text(r22SqrtQuestion))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{r22SquareRoot},
		Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), ProviderOptions: w3cThinking()}
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_thinking_sqrt_1", req)
	if got, want := r17JSON(t, srv.Last(t).Body)["toolConfig"], r19Decode(t, `{"functionCallingConfig":{"mode":"ANY"}}`); !jsonEqual(got, want) {
		t.Errorf("toolConfig %v, recorded %v", got, want)
	}
	recorded := r19Decode(t, w3cSqrtRecordedContents).([]any)
	model := recorded[1].(map[string]any)["parts"].([]any)
	thought := model[0].(map[string]any)["text"].(string)
	sig := model[1].(map[string]any)["thoughtSignature"].(string)
	r, txt, calls := w3cParts(res.Message)
	if len(r) != 1 || r[0].GetText() != thought || r[0].GetSignature() != "" || txt != "" || len(calls) != 1 {
		t.Fatalf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	if c := calls[0]; c.Name != "square_root" || c.Arguments != `{"number":132413}` || c.Signature != sig || !c.ArgumentsValid || c.CallId == "" {
		t.Errorf("call %v", c)
	}
	r21Meta(t, res.Meta, "vtcZau6RAaKssOIPk9fuwQQ", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 117, OutputTokens: 109, TotalTokens: 226, ReasoningTokens: 89})
	if res.Meta.GetServiceTier() != "standard" || res.Meta.GetToolCallCount() != 1 || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", res.Meta)
	}

	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user, res.Message, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(calls[0].CallId, "363.89"))},
		Tools:    []*llmrelayv1.Tool{r22SquareRoot}, Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE), ProviderOptions: w3cThinking()}
	res2, srv2 := r21Unary(t, "real_maruel_gemini25_flash_lite_thinking_sqrt_2", req2)
	sent2 := r17JSON(t, srv2.Last(t).Body)
	// Ours wraps a text result as {"result": …}; the API takes any object.
	recorded[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)["response"] = map[string]any{"result": "363.89"}
	if !jsonEqual(sent2["contents"], recorded) {
		t.Errorf("contents\n sent %s\n want %s", w3cMarshal(t, sent2["contents"]), w3cMarshal(t, recorded))
	}
	if got, want := sent2["toolConfig"], r19Decode(t, `{"functionCallingConfig":{"mode":"NONE"}}`); !jsonEqual(got, want) {
		t.Errorf("toolConfig %v, recorded %v", got, want)
	}
	if r, txt, calls := w3cParts(res2.Message); len(r) != 0 || txt != "363.89" || len(calls) != 0 {
		t.Errorf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	r21Meta(t, res2.Meta, "v9cZavC5MZKD-8YPsbSZmQU", "gemini-2.5-flash-lite", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 303, OutputTokens: 6, TotalTokens: 309})
	if len(res2.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", res2.Meta)
	}
}

// The Canada call's signature in
// real_maruel_gemini25_flash_lite_thinking_parallel_calls_stream (1537
// bytes: eight whole protobuf fields).
const w3cBiasStreamSig = "CiYBDDnWx+WsNzMAjdK2V8+R4pVWFPc9sPq5R+MFwnkF1Arsw843NAp3AQw51sdZDRzKN7Z2/rZrq2vSOdQQrDwWyFsnY4xbAPAAbRVNM29dhWyFuJPRt6dGc6NABD6G6PpHP2OPntseg6uf2vpK2ThbhGxKV455TSd5C+oAax6xA3amKVhRYTz4qu/9RYv6qAXVZupDUqHFv7AWnpFqFDUK8QEBDDnWx8OXTWygkDuqb6Y0OcZmNdpYEoFZh2SFbReFModbNQf4gFGGvL5z4j504FtnBwfexlB5B533pXxwphQ0P5Uwg5uAP5pLqktS9PctpNvQmN+Wyrokqq8L6CIYO/daeXq1Gf9+HJXf0hsAUcpUDmAwqQri4Xeg31EfKbEowux0RlPk+06qIIFSFpQHqzq1EnfCPUi1DeG7ifH9OwnG8ycxWjcTLd1u+VUi9b2fHxZQxjh56tPY0nVzTxZzWifmrCjZJwc3k/Jdx3N7Afrt/HnkPOmxcswn8ALoIEvT56dsy+/P2HnNpAw1TyPefo5eCuEBAQw51se1zUPJd+G3d9KHPois4F8PAKUO2gEhnjJ6oP+i8+W2wAWtJgeqlE8OKaLlDDAkdSmmQWVZRBlE4QCZO/JlQG1F0oOrov+eY1lx6KG3fXH8zG5YXWJMwmNUqMlzbWEcUz7a33dBu3fSxCXYzGQKnmjxD4yoDCV9fAnU9hZy68H76e3Z9J0xPVfL53uyr+sUvPqHOpellPOK/c8nmiE9Lhr52x4e7rHGj8BXBekneZNP/K+PCJwx0I1ratGLkNuwYYQzU2RPuL9pZJWFF1Mxnw2lv6ET9poURza8UEYECv8BAQw51sc+E44R/+D+ujcdmfE18DrOT/An50zcEby4rs1VCK5BiTwnBWvb98P8ntToNOTlH75cV/PjXBUJ4jVdrv49V7bNWfzG119HHjjmiQ8xcEPi67jkDRpS/FjcjtzgBdSWr/kkPYQ8BSOJ6uJA52AWlFRZ/1NqzPyYqScif5TuOVdX/R9lbkvJ5jk3B9yzkgo7auqYTeoYTEXiuS3ZYe4eXbM5Hp0DiVe7BBNEYBpG2Y/b5atj9vaXWpu+uSyVw1MOjEOFRl2/0d/JzEckqPbxWSixtLTjiT8X7VVcaXP7bJR9W1I6/SyKt7IKZaAqjsDL+sqhgOUmt69nvC5NCtwBAQw51seh6CARvaAYeTKSeFKKJiGk+OjDFFOH8iCTSKrSnoyMwNZycT8Ct6blCKgx+KdkZL0lYnFBJvyuseT/5MBsh9aG1DkFJOFfCBWiVHNWbv6FE8cF/uy/lca2vdRZsWysBTLH+90LPwvFJ+EOzHyUlEneg+qIJZExN9RurBQAnEg9aTSqJGHcvf593xJLJaaRsB4SVhO4frrTEuRhdap+4FT/qAgKLjD/4hEzKJFfnHGlV1zvsNDMWgpHBeDRAeCtKcsq6hn6VgkfKuNAikBaggE7GtcAV7G97QruAQEMOdbHPP5fIU43PIixsIIZB1u9j/7HDZokn0t6JHGlynsstrkgWWB1zNJVRhrBTykGZ5+BTUWqq8qXQPS83TH+pp+F/bUErJoPoVWac2luxzOkJE3nzk9RrgfVvJCY9/r4Cgn+0ie8q2HdM9XBUH72TqSuNUhXAcoX6P3PCxFulGcBRCpsxJXguqAVnJA5uQsMAWDOX3CToeRhVKtbR+RhzMr0fjj2Rgqco+4iC2+EmmmppSScpwIpbdTzcowoS/oC8P17v0CfmYXKXjhZyYWB12pcSgkGdZwBpgBs2UN74jaOGz0g06CAQuwLeFcKswEBDDnWx21axXbhcnyGm8ZKpBjDOP/w8oo4SCmpIH1ZlSOKAHOSzgMHX2HdKVhaB3LEvORPhNW+kl3MDIKbTfmBcybdGBSCmxgJbkB4VouAD/vFPLbkpsjeG0CW/X2KhLyH9I4gQu6FrV0+rEWtE73fVdzbpQiBC+J5JRUsEiVF7DH2gkaM6Q6ACOKVNHiVoi1wSk8u7PisDzpL3XF6XaXSIKWM2aSVVXQbXxcVeQO7V5py2A=="

// TestW3CParallelCallsOneSignatureStream: the same ToolBias question
// streamed: two thought summaries in two chunks (no candidatesTokenCount;
// thoughts 70 then 293), then one chunk with both calls, Canada signed and
// USA not, neither with an id, STOP with finishMessage: 115 in, 28 + 293
// out, 436 total. Each call is whole (valid arguments), the ids the
// gateway's own and distinct, the signature on the first call alone.
func TestW3CParallelCallsOneSignatureStream(t *testing.T) {
	t.Parallel()
	const q = "I wonder if Canada is a better country than the USA? Call the tool best_country to tell me which country is the best one."
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text(q))}, Tools: []*llmrelayv1.Tool{w3cBestCountry},
		Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), ProviderOptions: w3cThinking()}
	evs, srv := r20Stream(t, "real_maruel_gemini25_flash_lite_thinking_parallel_calls_stream", req)
	if got, want := r17JSON(t, srv.Last(t).Body)["toolConfig"], r19Decode(t, `{"functionCallingConfig":{"mode":"ANY"}}`); !jsonEqual(got, want) {
		t.Errorf("toolConfig %v, recorded %v", got, want)
	}
	var thoughts []string
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			thoughts = append(thoughts, ev.Reasoning.Text)
			if ev.Reasoning.Signature != "" {
				t.Errorf("a thought summary carries a signature")
			}
		}
	}
	if len(thoughts) != 2 || !strings.HasPrefix(thoughts[0], "**Considering Country Comparison**") || !strings.HasPrefix(thoughts[1], "**Assessing Tool Limitations**") {
		t.Errorf("thoughts %q", thoughts)
	}
	f := foldEvents(evs)
	if f.text != "" || len(f.calls) != 2 {
		t.Fatalf("text %q, calls %v", f.text, f.calls)
	}
	canada, usa := f.calls[0], f.calls[1]
	if canada.Name != "best_country" || canada.Arguments != `{"country":"Canada"}` || canada.Signature != w3cBiasStreamSig ||
		usa.Name != "best_country" || usa.Arguments != `{"country":"USA"}` || usa.Signature != "" ||
		canada.CallId == "" || usa.CallId == "" || canada.CallId == usa.CallId {
		t.Errorf("calls %v", f.calls)
	}
	m := f.meta
	if m.GetResponseId() != "u9cZaoriM7iZ-8YPopuuiAg" || m.GetResolvedModel() != "gemini-2.5-flash-lite" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 2 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 115, OutputTokens: 321, TotalTokens: 436, ReasoningTokens: 293}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	answer := foldMessage(t, evs)
	for _, p := range answer.GetParts() {
		if tc := p.GetToolCall(); tc != nil && !tc.ArgumentsValid {
			t.Errorf("call %v not whole", tc)
		}
	}
}

// TestW3CMaxTokensThinkingUnary: gemini-2.5-flash-lite with thought
// summaries and maxOutputTokens 16, unary: a long thought summary (the
// budget counts 11 thought tokens for it), then "The" and MAX_TOKENS: a
// LENGTH finish with the summary as reasoning; 10 in, 1 + 11 out, 22
// total. The request's maxOutputTokens is the recorded one.
func TestW3CMaxTokensThinkingUnary(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text("Explain the theory of relativity in great details.")))
	maxTok := int32(16)
	req.Options = &llmrelayv1.GenerationOptions{MaxTokens: &maxTok}
	req.ProviderOptions = w3cThinking()
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_lite_thinking_max_tokens", req)
	gc := w3cSentConfig(t, srv.Last(t).Body)
	if !jsonEqual(gc["maxOutputTokens"], 16.0) || !jsonEqual(gc["thinkingConfig"], r19Decode(t, `{"includeThoughts":true,"thinkingBudget":512}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	r, txt, calls := w3cParts(res.Message)
	if len(r) != 1 || !strings.HasPrefix(r[0].GetText(), "Okay, I'm ready. Let's see what we're working with.") ||
		!strings.HasSuffix(r[0].GetText(), "I'm ready to dive deeper and see where this leads.\n") || txt != "The" || len(calls) != 0 {
		t.Errorf("reasoning %v, text %q, calls %v", r, txt, calls)
	}
	r21Meta(t, res.Meta, "sdcZaqjIBam4jrEPh-7ZmQg", "gemini-2.5-flash-lite", "MAX_TOKENS", llmrelayv1.FinishReason_FINISH_REASON_LENGTH,
		&llmrelayv1.Usage{InputTokens: 10, OutputTokens: 12, TotalTokens: 22, ReasoningTokens: 11})
	if res.Meta.GetServiceTier() != "standard" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", res.Meta)
	}
}
