package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 14 (gemini): the X-Gemini-Service-Tier header and the Developer
// API's automatic continuation (continuationToken, turnToken,
// rawPromptTokenCount, finishReason CONTINUATION), both seen in
// googleapis/js-genai's system-test recording
// GenerateContentContinuationTest.GenerateContentAutomaticContinuationGeminiTest.json
// (480 KB: too large to keep). The fixtures are hand-built from it and
// labelled so in testdata/README.md ("Round 14: service tier header and
// continuation").

var round14GemRecordings = []string{
	"continuation_header_tier_1", "continuation_header_tier_2", "stream_continuation", "stream_continuation_cut",
	"real_image_gemini_3_1_flash_image", "real_jsgenai_vertex_stream_function_call_arguments",
	"int_enum_prohibited_content", "int_enum_prompt_blocklist",
}

// continuationPrompt is the prompt of the js-genai recording.
const continuationPrompt = "Write an exhaustive, multi-chapter textbook on compiler design that is around 40,000 tokens long."

// r14Ext is meta.extended as a map.
func r14Ext(m *llmrelayv1.ResponseMeta) map[string]any { return m.GetExtended().AsMap() }

// TestRound14GemContinuation: the answer stopped at the API's output cap
// per response (32768 candidate tokens): finishReason CONTINUATION is a
// LENGTH finish with the provider's reason kept; the candidate's
// continuationToken and the response's turnToken are kept in
// meta.extended; usageMetadata has no serviceTier but the header says
// "standard", which is the service tier; rawPromptTokenCount is a usage
// detail. The client continues by sending the token back through
// extra_body: the request carries it as the top-level continuationToken
// with the same contents, as js-genai's recorded second request did, and
// the answer to it (STOP) counts the first answer's 32823 tokens as its
// prompt.
func TestRound14GemContinuation(t *testing.T) {
	t.Parallel()
	const token = "AWkUfROng22cEj8EwqR9cTjN+YZaR0ep5M4ks02l6CvsuXojWu6+FzCbrYPiIYnC"
	cases := []struct {
		name, extra, text, id, turn, finish string
		want                                llmrelayv1.FinishReason
		in, out, total                      int32
		token                               string
	}{
		{"continuation_header_tier_1", "",
			"# MODERN COMPILER ARCHITECTURE: THEORY, DESIGN, AND IMPLEMENTATION\n\n---\n\n## Chapter 1: Introduction to Compiler Architecture\n\n",
			"eCPIatCaF5SI6dkPnLPg2A0", "v1_ChdlQ1BJYXRDYUY1U0k2ZGtQbkxQZzJBMBIXZUNQSWF0Q2FGNVNJNmRrUG5MUGcyQTA",
			"CONTINUATION", llmrelayv1.FinishReason_FINISH_REASON_LENGTH, 55, 32768, 32823, token},
		{"continuation_header_tier_2", `{"continuationToken": "` + token + `"}`,
			"The result is a tight, 8-instruction inner loop with zero memory accesses, zero branch mispredictions on the even/odd alternation, and zero multiplications\u2014executing in roughly 1.5\u20132 CPU clock cycles per iteration on a modern superscalar x86-64 processor.",
			"3yTIarGgGaqHqtsPz73rwQg", "v1_ChczeVRJYXJHZ0dhcUhxdHNQejczcndRZxIXM3lUSWFyR2dHYXFIcXRzUHo3M3J3UWc",
			"STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP, 32823, 16789, 49612, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, tc.name)
			req := crewRequest(continuationPrompt)
			if tc.extra != "" {
				req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: tc.extra}
			}
			res, err := p.Generate(context.Background(), req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(tc.text)); !proto.Equal(res.Message, want) {
				t.Errorf("message\n got %v\nwant %v", res.Message, want)
			}
			m := res.Meta
			if m.GetResponseId() != tc.id || m.GetResolvedModel() != "REDACTED" || m.GetFinishReason() != tc.want ||
				m.GetProviderFinishReason() != tc.finish || m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
				t.Errorf("meta %v", m)
			}
			r13Usage(t, m.GetUsage(), &llmrelayv1.Usage{InputTokens: tc.in, OutputTokens: tc.out, TotalTokens: tc.total})
			ext := r14Ext(m)
			if ext[extServiceTier] != "standard" || ext[extTurnToken] != tc.turn {
				t.Errorf("extended %v", ext)
			}
			if got, _ := ext[extContinuationToken].(string); got != tc.token {
				t.Errorf("continuation token %q, want %q", got, tc.token)
			}
			d := r13Details(m)
			if len(d) != 3 || d["rawPromptTokenCount"] != float64(tc.in) || d["promptTokensDetails.TEXT"] != float64(tc.in) ||
				d["candidatesTokensDetails.TEXT"] != float64(tc.out) {
				t.Errorf("usage_details %v (no serviceTier in the body: none among them)", d)
			}
			// The request: the prompt alone, and for the second the
			// token at the top level, as js-genai sent it.
			var sent struct {
				Contents          []json.RawMessage `json:"contents"`
				ContinuationToken *string           `json:"continuationToken"`
			}
			body := srv.Last(t).Body
			if err := json.Unmarshal(body, &sent); err != nil {
				t.Fatal(err)
			}
			if len(sent.Contents) != 1 || !jsonTextEqual(t, sent.Contents[0], `{"parts": [{"text": "`+continuationPrompt+`"}], "role": "user"}`) {
				t.Errorf("request contents %s", body)
			}
			if tc.extra == "" && sent.ContinuationToken != nil || tc.extra != "" && (sent.ContinuationToken == nil || *sent.ContinuationToken != token) {
				t.Errorf("request %s: continuationToken", body)
			}
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderResult(t, res))
		})
	}
}

// TestRound14GemStreamContinuation: the same protocol streamed. A
// checkpoint chunk carries a continuationToken and no finishReason, the
// last chunk another token with CONTINUATION and the turnToken. The header
// tier comes first; the finish is LENGTH with the last token; the
// turnToken arrives with the chunk that has it; rawPromptTokenCount is a
// usage detail.
func TestRound14GemStreamContinuation(t *testing.T) {
	t.Parallel()
	const name = "stream_continuation"
	p, _ := replay(t, name)
	s, err := p.Stream(context.Background(), crewRequest(continuationPrompt))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	if len(evs) == 0 || evs[0].Kind != provider.EventMeta || evs[0].Meta.GetServiceTier() != "standard" {
		t.Errorf("first event %v, want the header's service tier", evs[0])
	}
	f := foldEvents(evs)
	if f.text != "## Chapter 1: Introduction to Compiler Architecture\n\n### 1.1 The Compilation Pipeline\n\n" {
		t.Errorf("text %q", f.text)
	}
	if !proto.Equal(f.usage, &llmrelayv1.Usage{InputTokens: 55, OutputTokens: 32768, TotalTokens: 32823}) {
		t.Errorf("usage %v", f.usage)
	}
	m := f.meta
	if m.GetResponseId() != "RaL8Kd5us9IvAPhEBvmvk9A" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH ||
		m.GetProviderFinishReason() != "CONTINUATION" || m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	ext := r14Ext(m)
	if ext[extContinuationToken] != "ROpt5zQx9rsenKsXvhKwO9NIBRyn2/9+9Q52KUZKsU7SXtVHhCsOANN9bzuZx/YC" ||
		ext[extTurnToken] != "v1_ChdSYUw4S2Q1dXM5SXZBUGhFQnZtdms5QRIXUmFMOEtkNXVzOUl2QVBoRUJ2bXZrOUE" {
		t.Errorf("extended %v", ext)
	}
	if d := r13Details(m); d["rawPromptTokenCount"] != float64(55) {
		t.Errorf("usage_details %v", d)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
}

// TestRound14GemStreamContinuationCut: a stream cut after a checkpoint
// chunk (a continuationToken, no finishReason) is a cut stream, and the
// checkpoint's token is delivered before the error: the client can go on
// from there instead of starting again.
func TestRound14GemStreamContinuationCut(t *testing.T) {
	t.Parallel()
	const name = "stream_continuation_cut"
	p, _ := replay(t, name)
	s, err := p.Stream(context.Background(), crewRequest(continuationPrompt))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	var pe *provider.Error
	if !errors.As(end, &pe) || !errors.Is(end, provider.ErrStreamCut) {
		t.Fatalf("stream ended with %v, want a cut", end)
	}
	last := evs[len(evs)-1]
	if last.Kind != provider.EventMeta || r14Ext(last.Meta)[extContinuationToken] != "dt3DtrJkzLf/loTXd8EWOUxiP1S0YDNHYchLCeFdzyI3liQiDaOaRRLgDjb8YxSM" {
		t.Errorf("last event before the cut %v, want the checkpoint's token", last)
	}
	f := foldEvents(evs)
	if f.text != "## Chapter 2: Lexical Analysis\n\n" || f.meta.GetServiceTier() != "standard" ||
		f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
		t.Errorf("text %q meta %v", f.text, f.meta)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
}

// TestRound14GemBodyTierWins: when both the header and the body name a
// tier, the body's is the service tier, unary and streamed. The bodies are
// real recordings whose serviceTier is "standard", served here with a
// header that says otherwise.
func TestRound14GemBodyTierWins(t *testing.T) {
	t.Parallel()
	serve := func(t *testing.T, name, ctype string) *Provider {
		body := r13Body(t, name)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set(serviceTierHeader, "priority")
			_, _ = w.Write(body)
		}))
		t.Cleanup(srv.Close)
		p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		p := serve(t, "real_vxlcg_google_structured_output_array", "application/json; charset=UTF-8")
		res, err := p.Generate(context.Background(), crewRequest("x"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Meta.GetServiceTier() != "standard" || r14Ext(res.Meta)[extServiceTier] != "standard" {
			t.Errorf("meta %v", res.Meta)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		p := serve(t, "real_vxlcg_google_structured_output_streaming", "text/event-stream")
		s, err := p.Stream(context.Background(), crewRequest("x"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		evs, end := drain(t, s)
		if !errors.Is(end, io.EOF) {
			t.Fatalf("stream ended with %v", end)
		}
		var tiers []string
		for _, ev := range evs {
			if ev.Kind == provider.EventMeta && ev.Meta.GetServiceTier() != "" {
				tiers = append(tiers, ev.Meta.GetServiceTier())
			}
		}
		if strings.Join(tiers, ",") != "priority,standard" || foldEvents(evs).meta.GetServiceTier() != "standard" {
			t.Errorf("service tiers in order %q: want the header's first, then the body's, which wins", tiers)
		}
	})
}

// TestRound14GemImageOutput: gemini-3.1-flash-image answering with one
// generated image (vercel/ai's live fixture, the image data and the
// signature redacted by the SDK's authors): an inlineData part carrying a
// thoughtSignature, STOP. The image is a provider item (round 23), the
// part as it came with its signature, no warning; the next turn sends the
// recorded part back unchanged (Gemini 3 image models check the image
// part's signature). Before, it was a warning and a signature-only
// reasoning part, sent back on an empty thought part without the image.
// Usage as recorded: 10 in, 1392 out (1120 of them image tokens, kept per
// modality), 1402 total; serviceTier standard.
func TestRound14GemImageOutput(t *testing.T) {
	t.Parallel()
	const name = "real_image_gemini_3_1_flash_image"
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), crewRequest("Generate an image of a cat"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	recPart := r21RecordedCandidate(t, name)["content"].(map[string]any)["parts"].([]any)[0]
	parts := res.Message.GetParts()
	if it := parts[0].GetProviderItem(); len(parts) != 1 || it.GetType() != "inlineData" || !jsonEqual(r19Decode(t, it.GetJson()), recPart) {
		t.Errorf("message %v, want the recorded part as an inlineData item", res.Message)
	}
	next := crewRequest("Generate an image of a cat")
	next.Messages = append(next.Messages, res.Message, msg(llmrelayv1.Role_ROLE_USER, text("Make it orange.")))
	sent, warnings := r23Contents(t, next)
	wantTurns := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Generate an image of a cat"}}},
		map[string]any{"role": "model", "parts": []any{recPart}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Make it orange."}}},
	}
	if !jsonEqual(r19Decode(t, sent), wantTurns) || len(warnings) != 0 {
		t.Errorf("next turn %s (warnings %q), want the recorded image part back", sent, warnings)
	}
	m := res.Meta
	if m.GetResponseId() != "dTOras2iGqLc-sAPiO2BiAw" || m.GetResolvedModel() != "gemini-3.1-flash-image" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" ||
		m.GetServiceTier() != "standard" || m.GetToolCallCount() != 0 {
		t.Errorf("meta %v", m)
	}
	if w := m.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	r13Usage(t, m.GetUsage(), &llmrelayv1.Usage{InputTokens: 10, OutputTokens: 1392, TotalTokens: 1402})
	if d := r13Details(m); len(d) != 3 || d["candidatesTokensDetails.IMAGE"] != float64(1120) ||
		d["promptTokensDetails.TEXT"] != float64(10) || d["serviceTier"] != "standard" {
		t.Errorf("usage_details %v", d)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
}

// jsgenaiStreamArgsSig is the thoughtSignature of the streamed call in
// real_jsgenai_vertex_stream_function_call_arguments.
const jsgenaiStreamArgsSig = "CmAB4/H/XjMJHE7D6md5DkxjVQTcNUDFEWnlqRvmkBdT+dzXqtgz9VgkmYMinBkuxk+rm8+/RbfzqCxL28NOCYJJq2HooJ1vui5+48Z3AVAR70IM8ygSA99l+6k5yCnRYpQKigEB4/H/XuP2/GyB+RGsb7tb8NDEPYBWlDNgxCsxcZGw3rODmNr8gAbXObNqkhkmfF01iViQl5J9XZalgrnf+jhYy2d78Ds+8XSiJk2j4ph3GHN+q1UGLJHAW6bQ71Fh6SxpttkNTBlVKE1pH5W4u8yBzZ/2o/rTSmo6uzXGvM4Jlx+41SIcjqTISE4KcQHj8f9eGXzS7NFNr9KsCVeIQDdDZ+Ht+NMtJel78JVy5PTYSP1qPisJAcsYrOS7ThXVmOWyv0I1C+rg5IaepzwJneFCXjpRyHCBSfo1100HTGTJ02GtdgLtR3FtD7f+w7RnaDFrKFNn3iQ3zcfnzbMMCloB4/H/XoGKhymxaw4NrlRkFK8DNlbGblhcBYlaZwD2ruUuPcMspGKrUW+mKXJSsG7YiH+vJsPc7Baom0ZDoB2+UWDltIPn0x6E1GjF4yvkZK395W7qwjanX4gKTAHj8f9eG/lZN/6r3XRBm6wtrwHmGlURosfiPq/tD/jQDsWtRciJMB0WM1jS72iFe4pSdxk7Pad7EO0vHVZ7sp55jPcLQBl5SWuniGcKVQHj8f9eB6gPNlGo1TQB2jfn1SmYKG39D7Ls5oivph/Aazvv98LzBfOxtP0qvYD2djUNIAkZTu0CDX04ebyb+r0UmGN+KNQ+AGaVAKJhw89LQPlhj8UKewHj8f9eXj9xWJ+NV7I9Q9rbRvEwoW/eu4Q7r1Myp186XrZS30BAmtuyzNCrgPaJnVYPe4PR/38ePnXFAog3CUwOu8g9dQ5UHXG3CJijUsfFK4BenTDo/v6CoZBhs0cNuo3qM8+7Za3so+CFI+TLQSSaT2mnRULbj9CUYwp4AePx/17XoYwAIPMrVzlEH6u/G3muZRllYlNEctVF8axpd4sWZvH+d9ZfcG85qhn7wpqC+ZQFJ/icJG81afpA+aG96UYfd51DqyLNajVxoUt+V3see0IMvirXmoscYuOLEP6/Zmd5Aqjf55pIapPoeif84sVuXR3hCnAB4/H/XsYS3DDpnz+Bh92W74HgThdXTi0xcQ1xGtq1b721/3llWM2663jPoDwIADdUCiUZOFi9qePkPGSbdWQujoOAz7UiRvnNuSlTTqTZj7oTL4VMyzKanq+K5ZSGO3q7/OzeYKlP2xO5h0wwGOeTCm0B4/H/Xn9W9zTd9l9/BCUuY6d/6CuzJhZEZDRdH3G5WsD4IEtzLqBKvX9BmTVcEFl03iDd/ThlZpmvUe4ZJe7AwI/n/Jqh+ryBYj5ekSBx3ogQpV8QOZ/GK/qrxH007MxLRM80sIQlfXvv1lAGCkYB4/H/Xp/EeXQwpdA9vO7szPA/B+Ewy/+sWOmie7LmA1p35QjoppESmg94L4NtUt+sLyabfXNEBDLYeOIK0hwhw8sShmMd"

// TestRound14GemJsgenaiStreamedArguments: js-genai's Vertex AI system test
// of streamFunctionCallArguments (gemini-2.5-pro): the call starts with its
// name, willContinue and the signature, each argument comes as a string
// piece continued by an empty one, an empty functionCall with STOP closes
// it. One whole call getCurrentWeather with the four arguments in the
// order streamed, its id derived from the responseId, the signature whole;
// a tool-call finish; the first chunk's count-less usage
// (billablePromptUsage, trafficType) gives no usage event, the last one
// 36 in, 29 + 193 out, 258 total. The request asks for streamed arguments
// the way js-genai did (toolConfig.functionCallingConfig.
// streamFunctionCallArguments, through extra_body): the adapter sets no
// mode for the default tool choice, so the functionCallingConfig is the
// recorded one.
func TestRound14GemJsgenaiStreamedArguments(t *testing.T) {
	t.Parallel()
	const name = "real_jsgenai_vertex_stream_function_call_arguments"
	p, srv := replay(t, name)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-pro",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text(
			"get the current weather in NewYorkCity in celsius, the country should be USA, the purpose is to know what to wear today."))},
		Tools: []*llmrelayv1.Tool{{Name: "getCurrentWeather", Description: "Get the current weather in a city",
			Parameters: `{"type":"object","properties":{"country":{"anyOf":[{"type":"string","description":"The country to get the weather for"},{"type":"null"}],"description":"The country to get the weather for"},` +
				`"location":{"type":"string","description":"The location to get the weather for"},"purpose":{"type":"string","description":"Discribes the purpose of asking the weather"},` +
				`"unit":{"type":"string","enum":["C","F"]}},"required":["location","unit","country"]}`}},
		Options:         &llmrelayv1.GenerationOptions{},
		ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"toolConfig": {"functionCallingConfig": {"streamFunctionCallArguments": true}}}`},
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	f := foldEvents(evs)
	id := generatedID("xD0VaberBfSanvgPoPLHkAU", 0, "", "")
	want := []*llmrelayv1.ToolCall{{CallId: id, Name: "getCurrentWeather", ArgumentsValid: true, Signature: jsgenaiStreamArgsSig,
		Arguments: `{"country":"USA","location":"NewYorkCity","purpose":"to know what to wear today","unit":"C"}`}}
	if len(f.calls) != 1 || !proto.Equal(f.calls[0], want[0]) || f.text != "" {
		t.Errorf("calls %v text %q, want %v", f.calls, f.text, want)
	}
	usages := 0
	for _, ev := range evs {
		if ev.Kind == provider.EventUsage {
			usages++
		}
	}
	if usages != 1 || !proto.Equal(f.usage, &llmrelayv1.Usage{InputTokens: 36, OutputTokens: 222, TotalTokens: 258, ReasoningTokens: 193}) {
		t.Errorf("%d usage events, last %v", usages, f.usage)
	}
	m := f.meta
	if m.GetResponseId() != "xD0VaberBfSanvgPoPLHkAU" || m.GetResolvedModel() != "gemini-2.5-pro" ||
		m.GetCreateTime().AsTime().Format("2006-01-02T15:04:05.999999Z07:00") != "2025-11-13T02:09:08.087479Z" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 || m.GetServiceTier() != "" {
		t.Errorf("meta %v", m)
	}
	if d := r13Details(m); len(d) != 4 || d["trafficType"] != "ON_DEMAND" || d["billablePromptUsage.textCount"] != float64(441) ||
		d["promptTokensDetails.TEXT"] != float64(36) || d["candidatesTokensDetails.TEXT"] != float64(29) {
		t.Errorf("usage_details %v", d)
	}
	var sent struct {
		ToolConfig struct {
			FunctionCallingConfig map[string]any `json:"functionCallingConfig"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	if fc := sent.ToolConfig.FunctionCallingConfig; len(fc) != 1 || fc["streamFunctionCallArguments"] != true {
		t.Errorf("functionCallingConfig %v, want js-genai's recorded {\"streamFunctionCallArguments\": true}", fc)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
}

// TestRound14GemIntEnumFilters: answers in the API's numeric enum encoding
// ($alt=json;enum-encoding=int, as the older Go SDK asked and a proxy may
// relay), hand-built in the shape of real_vxlcg_google_call_int_enums with
// numbers the enum tables did not hold: finishReason 8 is
// PROHIBITED_CONTENT, a content filter (it was kept as "8", a finish of
// OTHER), and blockReason 3 is BLOCKLIST (the error's code was "3").
func TestRound14GemIntEnumFilters(t *testing.T) {
	t.Parallel()
	t.Run("finish", func(t *testing.T) {
		t.Parallel()
		p, _ := replay(t, "int_enum_prohibited_content")
		res, err := p.Generate(context.Background(), crewRequest("x"))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if len(res.Message.GetParts()) != 0 {
			t.Errorf("message %v, want no parts", res.Message)
		}
		m := res.Meta
		if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER || m.GetProviderFinishReason() != "PROHIBITED_CONTENT" ||
			m.GetResponseId() != "0pesXcxgfe2NXcN6UTqoc5w" || len(m.GetWarnings()) != 0 {
			t.Errorf("meta %v", m)
		}
		r13Usage(t, m.GetUsage(), &llmrelayv1.Usage{InputTokens: 11, TotalTokens: 11})
		if r, _ := r14Ext(m)[extSafetyRatings].([]any); len(r) != 4 {
			t.Errorf("safety ratings %v", r14Ext(m)[extSafetyRatings])
		}
	})
	t.Run("blocked", func(t *testing.T) {
		t.Parallel()
		p, _ := replay(t, "int_enum_prompt_blocklist")
		_, err := p.Generate(context.Background(), crewRequest("x"))
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindContentFilter || pe.Code != "BLOCKLIST" ||
			pe.Message != "prompt blocked by Gemini: BLOCKLIST" || pe.Extended[extBlockReason] != "BLOCKLIST" {
			t.Fatalf("error %#v", err)
		}
		if pe.Meta.GetResponseId() != "URJCW3Nyy_K7LIokMvuNPZY" || !proto.Equal(pe.Meta.GetUsage(), &llmrelayv1.Usage{InputTokens: 7, TotalTokens: 7}) {
			t.Errorf("error meta %v", pe.Meta)
		}
	})
}
