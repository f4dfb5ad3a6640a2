package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Round 22: maruel/genai's go-vcr recordings of the live Gemini API
// (testdata/README.md, "Round 22"). Every expectation is read off the
// recording by hand.

func init() {
	round17Recordings = append(round17Recordings, "real_maruel_gemini35_flash_sqrt_stream_1", "real_maruel_gemini35_flash_sqrt_stream_2",
		"real_maruel_gemini25_flash_logprobs", "real_maruel_gemini35_flash_stream_logprobs_error",
		"real_maruel_gemini25_flash_lite_stream_logprobs_error", "real_maruel_gemini_exp_1206_not_found",
		"real_maruel_gemini35_flash_max_tokens_stream", "real_maruel_gemini35_flash_url_context_stream",
		"real_maruel_gemini25_flash_lite_thinking_sqrt_stream_1", "real_maruel_gemini25_flash_lite_thinking_sqrt_stream_2",
		"real_maruel_gemini35_flash_sqrt_1", "real_maruel_gemini35_flash_sqrt_2",
		"real_maruel_gemini25_flash_lite_parallel_same_tool_stream", "real_maruel_gemini25_flash_lite_thinking_max_tokens_stream",
		"real_maruel_gemini35_flash_search_stream")
}

// r22SquareRoot is maruel/genai's square_root tool (a number in, a string
// out).
var r22SquareRoot = &llmrelayv1.Tool{Name: "square_root", Description: "Calculates and return the square root of a number",
	Parameters: `{"properties":{"number":{"type":"number"}},"required":["number"],"type":"object"}`}

const r22SqrtQuestion = "Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."

// The call's thoughtSignature (373 bytes: a protobuf field 2 of 370).
const r22SqrtSig = "EvICCu8CAQw51sdUCu1wzvgm8ZbrA4wj96K+UNrDNGu5mceH91546Qt4hgZQnuW+0wMc2s5w8LUK38hLSZ7+ViA+zKMf2+T6Tmzom70XCx4WAHLrA/q0Mm3xhtEG8mVzJrHyzRExwqb6suiH3dv9aMEpUkt8G5hOtcTEFA3VyZwGCGmfSkMf1vVapXJskLvlKRjlLlU6uSY9WNY1D4Ye+x0uIRiUrvK4UPF4bibPNvhgwrnTLhJE3qtmrQSy7KtFs7VkOebtaJwvI3krFbnfR1gw97q3mENyAUbdAtaoUuuigbwHbfelPFb7GMgKcRg0s4vSik+XT0skaD/eQTmv7wuNyauEse1BtlItZopeq3eweYOIqO9GDwXBNaUHof2CcwShU31azwH3fVMf9PDJRbAXMfbvjbyUsHCG/u5e9QkZyvl1GkEkoCsScjoPEdKbHODHCFmowBuYKuY+aiT9vyjXFSxIbiFJxRw2Tr882f3tvN2x2g=="

func r22Mode(m llmrelayv1.ToolChoiceMode) *llmrelayv1.GenerationOptions {
	return &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: m}}}
}

// TestRound22SquareRootRoundTrip: gemini-flash-latest (modelVersion
// gemini-3.5-flash, May 2026) streamed, a call required (mode ANY). The
// first answer: one chunk with the whole call square_root({"number":
// 132413}) carrying the provider's id "3kuo8xzm" and a thoughtSignature,
// then an empty text part with STOP; 104 in, 19 + 74 thought tokens, 197
// total, serviceTier standard. maruel/genai sent it back (its second
// recording's request, which the API answered): the model turn with the
// signature and the call with its id, then the functionResponse with the
// same id and name, and mode NONE. The answer: "363.89", then the text's
// signature on an empty text part with STOP, whose usage raises
// promptTokenCount from 142 to 216 (242 total).
func TestRound22SquareRootRoundTrip(t *testing.T) {
	t.Parallel()
	user := msg(llmrelayv1.Role_ROLE_USER, text(r22SqrtQuestion))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-flash-latest",
		Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{r22SquareRoot},
		Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}
	evs, srv := r20Stream(t, "real_maruel_gemini35_flash_sqrt_stream_1", req)
	sent := r17JSON(t, srv.Last(t).Body)
	if srv.Last(t).Path != "/v1beta/models/gemini-flash-latest:streamGenerateContent" {
		t.Errorf("path %s", srv.Last(t).Path)
	}
	if got, want := sent["toolConfig"], r19Decode(t, `{"functionCallingConfig":{"mode":"ANY"}}`); !jsonEqual(got, want) {
		t.Errorf("toolConfig %v, recorded %v", got, want)
	}
	if got, want := sent["contents"], r19Decode(t, `[{"role":"user","parts":[{"text":"`+r22SqrtQuestion+`"}]}]`); !jsonEqual(got, want) {
		t.Errorf("contents %v, recorded %v", got, want)
	}
	f := foldEvents(evs)
	if f.text != "" || len(f.calls) != 1 {
		t.Fatalf("text %q, calls %v", f.text, f.calls)
	}
	if c := f.calls[0]; c.CallId != "3kuo8xzm" || c.Name != "square_root" || c.Arguments != `{"number":132413}` || c.Signature != r22SqrtSig || !c.ArgumentsValid {
		t.Errorf("call %v", c)
	}
	m := f.meta
	if m.GetResponseId() != "GNYZapuAJOHfjrEPuu7GkQY" || m.GetResolvedModel() != "gemini-3.5-flash" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 104, OutputTokens: 93, TotalTokens: 197, ReasoningTokens: 74}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}

	// The second turn, built from the first answer.
	answer := foldMessage(t, evs)
	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-flash-latest",
		Messages: []*llmrelayv1.Message{user, answer, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("3kuo8xzm", "363.89"))},
		Tools:    []*llmrelayv1.Tool{r22SquareRoot}, Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)}
	evs2, srv2 := r20Stream(t, "real_maruel_gemini35_flash_sqrt_stream_2", req2)
	sent2 := r17JSON(t, srv2.Last(t).Body)
	// maruel/genai's functionResponse was {"response": "363.89"}; ours wraps
	// a text result as {"result": ...}: the API takes any object.
	recorded := `[{"role":"user","parts":[{"text":"` + r22SqrtQuestion + `"}]},` +
		`{"role":"model","parts":[{"thoughtSignature":"` + r22SqrtSig + `","functionCall":{"id":"3kuo8xzm","name":"square_root","args":{"number":132413}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"3kuo8xzm","name":"square_root","response":{"result":"363.89"}}}]}]`
	if got := sent2["contents"]; !jsonEqual(got, r19Decode(t, recorded)) {
		b, _ := json.Marshal(got)
		t.Errorf("contents\n sent %s\n want %s", b, recorded)
	}
	if got, want := sent2["toolConfig"], r19Decode(t, `{"functionCallingConfig":{"mode":"NONE"}}`); !jsonEqual(got, want) {
		t.Errorf("toolConfig %v, recorded %v", got, want)
	}
	f2 := foldEvents(evs2)
	if f2.text != "363.89" || len(f2.calls) != 0 {
		t.Errorf("text %q, calls %v", f2.text, f2.calls)
	}
	var sig string
	for _, ev := range evs2 {
		if ev.Kind == provider.EventReasoning {
			sig += ev.Reasoning.Signature
		}
	}
	if sig != "EpIBCo8BAQw51se/7Hkd1MfERRzosIrE+GKOEk96oZ7OG/CM2ZvBSJUH5nuEibZi00RnswNiSt/OXi9C1Ro1aKPt3xeUbkcPYS3JYSdZ3CUocglbK1s9fGsmAm6MU2CjlZM5MM7ZyWm3nJ4zG+q6/HpIt8LJD7WJyOyEGkM+fWcyvbDlBIG4QRexX9V4ucYeI6uUS9s=" {
		t.Errorf("text signature %q", sig)
	}
	m2 := f2.meta
	if m2.GetResponseId() != "GdYZasvKLpKD-8YPsbSZmQU" || m2.GetResolvedModel() != "gemini-3.5-flash" ||
		m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m2.GetProviderFinishReason() != "STOP" || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v", m2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 216, OutputTokens: 26, TotalTokens: 242, ReasoningTokens: 20}); !proto.Equal(f2.usage, want) {
		t.Errorf("usage %v, want %v", f2.usage, want)
	}
}

// TestRound22StreamLogprobsRefused: the API refuses logprobs on
// streamGenerateContent (gemini-flash-latest: "LogProbs is not supported
// in streaming mode"; gemini-2.5-flash-lite: not enabled for the model)
// with a 400 whose Content-Type is text/event-stream, the body the usual
// JSON error, not SSE. It is an invalid request with the message whole.
func TestRound22StreamLogprobsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, model, message string }{
		{"real_maruel_gemini35_flash_stream_logprobs_error", "gemini-flash-latest", "LogProbs is not supported in streaming mode"},
		{"real_maruel_gemini25_flash_lite_stream_logprobs_error", "gemini-2.5-flash-lite", "Logprobs is not enabled for models/gemini-2.5-flash-lite"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, tc.name)
			req := r21User(tc.model, "", msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Use only one word.")))
			req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseLogprobs":true,"logprobs":2}}`}
			s, err := p.Stream(context.Background(), req)
			if s != nil {
				t.Fatal("Stream returned a stream with an error status")
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *provider.Error", err)
			}
			if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "INVALID_ARGUMENT" || pe.Message != tc.message ||
				pe.RetryAfter != 0 || pe.ShouldRetry != provider.RetryUnsaid || pe.Meta != nil {
				t.Errorf("got %+v", pe)
			}
			gc, _ := r17JSON(t, srv.Last(t).Body)["generationConfig"].(map[string]any)
			if gc["responseLogprobs"] != true || gc["logprobs"] != 2.0 {
				t.Errorf("generationConfig %v", gc)
			}
		})
	}
}

// TestRound22NotFound: a model the API does not have (gemini-exp-1206,
// retired): 404 NOT_FOUND, a not-found error with the message whole.
func TestRound22NotFound(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "real_maruel_gemini_exp_1206_not_found")
	_, err := p.Generate(context.Background(), r21User("gemini-exp-1206", "", msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Do not emit other words."))))
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *provider.Error", err)
	}
	const want = "models/gemini-exp-1206 is not found for API version v1beta, or is not supported for generateContent. Call ModelService.ListModels to see the list of available models and their supported methods."
	if pe.Kind != provider.KindNotFound || pe.HTTPStatus != 404 || pe.Code != "NOT_FOUND" || pe.Message != want || pe.RetryAfter != 0 {
		t.Errorf("got %+v", pe)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error text %q", err)
	}
}

// TestRound22UnaryLogprobs: gemini-2.5-flash (September 2025), unary,
// with responseLogprobs and 2 top candidates and no thinking: "Hi", STOP,
// and a logprobsResult of one decoding step: the top candidates "Hello"
// (-0.18852717, token 9259) and "Hi" (-1.812665, 10979), the chosen one
// "Hi" at -0.18852717 (the API's numbers: the chosen token's probability
// is the top one's, as recorded). No avgLogprobs. 9 in, 1 out.
func TestRound22UnaryLogprobs(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-2.5-flash", "", msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Use only one word.")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseLogprobs":true,"logprobs":2,"thinkingConfig":{"includeThoughts":false,"thinkingBudget":0}}}`}
	res, srv := r21Unary(t, "real_maruel_gemini25_flash_logprobs", req)
	gc, _ := r17JSON(t, srv.Last(t).Body)["generationConfig"].(map[string]any)
	if !jsonEqual(gc, r19Decode(t, `{"responseLogprobs":true,"logprobs":2,"thinkingConfig":{"includeThoughts":false,"thinkingBudget":0}}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Hi")); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	r21Meta(t, m, "ctOXaMG-B4Gl1MkP186K2Qk", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 1, TotalTokens: 10})
	const lp = `{"chosenCandidates":[{"logProbability":-0.18852717,"token":"Hi","tokenId":10979}],` +
		`"topCandidates":[{"candidates":[{"logProbability":-0.18852717,"token":"Hello","tokenId":9259},{"logProbability":-1.812665,"token":"Hi","tokenId":10979}]}]}`
	if got := r21Ext(t, m, extLogprobsResult); got != lp {
		t.Errorf("logprobs\n got %s\nwant %s", got, lp)
	}
	if got := r21Ext(t, m, extAvgLogprobs); got != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("avg logprobs %s, warnings %q", got, m.GetWarnings())
	}
}

// TestRound22MaxTokensStream: gemini-3.5-flash with maxOutputTokens 16:
// "The", then the text's signature on an empty text part with MAX_TOKENS;
// 10 in, 1 + 11 thought tokens (22 total). A length finish; the text is
// whole so far, the signature kept.
func TestRound22MaxTokensStream(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-flash-latest", "", msg(llmrelayv1.Role_ROLE_USER, text("Explain the theory of relativity in great details.")))
	req.Options = &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(16)}
	evs, srv := r20Stream(t, "real_maruel_gemini35_flash_max_tokens_stream", req)
	gc, _ := r17JSON(t, srv.Last(t).Body)["generationConfig"].(map[string]any)
	if gc["maxOutputTokens"] != 16.0 {
		t.Errorf("generationConfig %v", gc)
	}
	f := foldEvents(evs)
	if f.text != "The" || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	msgOut := foldMessage(t, evs)
	var sig string
	for _, p := range msgOut.GetParts() {
		sig += p.GetReasoning().GetSignature()
	}
	if sig != "En4KfAEMOdbHaXGpBRZLKEyot0pTIElv2keBxEWcWyah99XFcP2OauXwyEvhmaauNAkIrx/H6Csp6YQP8PC3tzakYCNxC9GbPWd1+ocD6NdmcmQ3eP2ZBzjNKE0gWSkjQataoE0NvoezU0tQ4Y0WbhoCp2WEe318nLdknWGCty4=" {
		t.Errorf("signature %q", sig)
	}
	m := f.meta
	if m.GetResponseId() != "DNYZauGYC9yu-8YP6f3yqQE" || m.GetResolvedModel() != "gemini-3.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || m.GetProviderFinishReason() != "MAX_TOKENS" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 10, OutputTokens: 12, TotalTokens: 22, ReasoningTokens: 11}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
}

// TestRound22URLContextStream: gemini-3.5-flash with urlContext, streamed
// in eight chunks: an empty text first, the answer (with "\u003e" and
// "\u003c" escapes and "ê"), then the signature on an empty text part
// with STOP, the groundingMetadata (one web chunk, one support at UTF-8
// bytes [75,100)) and the urlContextMetadata. The usage is not monotone:
// the first chunk says 17 candidate and 90 thought tokens, the second 3
// and 185; the last says 13 in + 199 tool-use prompt tokens, 135 + 275
// thought tokens out, 622 total.
func TestRound22URLContextStream(t *testing.T) {
	t.Parallel()
	req := r21User("gemini-flash-latest", "", msg(llmrelayv1.Role_ROLE_USER, text("Tell me what is written on https://perdu.com")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"urlContext":{}}]}`}
	evs, srv := r20Stream(t, "real_maruel_gemini35_flash_url_context_stream", req)
	if tools := r17JSON(t, srv.Last(t).Body)["tools"]; !jsonEqual(tools, r19Decode(t, `[{"urlContext":{}}]`)) {
		t.Errorf("tools %v", tools)
	}
	f := foldEvents(evs)
	const answer = "The website **https://perdu.com** is a classic, minimalist French website. The text written on it is:" +
		"\n\n> **Vous Etes Perdu ?** *(Are you lost?)*\n> \n> **Perdu sur l'Internet ?** *(Lost on the Internet?)*\n> \n> **Pas de panique, on va vous" +
		" aider** *(Don't panic, we are going to help you)*\n> \n> **`* <----- vous êtes ici`** *(* <----- you are here)*"
	if f.text != answer {
		t.Errorf("text\n got %q\nwant %q", f.text, answer)
	}
	if seg := []byte(answer)[75:100]; string(seg) != "The text written on it is" {
		t.Errorf("the support's bytes are %q", seg)
	}
	m := f.meta
	if m.GetResponseId() != "J9YZat2YKrKc-8YPnLuh8Ac" || m.GetResolvedModel() != "gemini-3.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 212, OutputTokens: 410, TotalTokens: 622, ReasoningTokens: 275}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	if got := r21Ext(t, m, extToolUsePromptTokens); got != "199" {
		t.Errorf("tool-use prompt tokens %s", got)
	}
	if got, want := r21Ext(t, m, extGroundingMetadata), `{"groundingChunks":[{"web":{"title":"Vous Etes Perdu ?","uri":"http://www.perdu.com/"}}],`+
		`"groundingSupports":[{"groundingChunkIndices":[0],"segment":{"endIndex":100,"startIndex":75,"text":"The text written on it is"}}]}`; got != want {
		t.Errorf("grounding\n got %s\nwant %s", got, want)
	}
	if got, want := r21Ext(t, m, extURLContextMetadata), `{"urlMetadata":[{"retrievedUrl":"http://www.perdu.com/","urlRetrievalStatus":"URL_RETRIEVAL_STATUS_SUCCESS"}]}`; got != want {
		t.Errorf("url context %s", got)
	}
}

// The thought summaries of real_maruel_gemini25_flash_lite_thinking_sqrt_stream_1,
// in two chunks, and the call's signature (534 bytes, four protobuf
// fields).
const (
	r22LiteThought1 = "**Calculating Square Root**\n\nI've determined I need to find the square root of 132413.0, and the tool to use is \"square_root,\" which takes a floating-point number. " +
		"I'm ready to call the tool with the provided number. No further complexities have emerged, and I am prepared to deliver the result once available.\n\n\n"
	r22LiteThought2 = "**Refining Result Delivery**\n\nI've decided to refine the output delivery. Since the user specifically requested *only* the result and no explanation, " +
		"I'll extract the 'response' directly from the tool's output and return that value. This is a streamlined approach to meet the user's specific requirement for a minimal response.\n\n\n"
	r22LiteSig = "Ci8BDDnWx3Ks3sk6UrIpsLS78V1SY5Qpg/t/K/dxXlmkPkWFIVKbXPI9nbG5GO3DCApbAQw51sf7vD57cjm0ihpJamf+HACa/aOkWpwK/9i4xSbfeChM2asAYO6WY6kkMlLa3+50ls14nX4wgc5fOpDVn4emE3CHZTTf9b5BYvU8GIqomm6B/eWHp0q/oAq9AQEMOdbH7zpeLT/xqUuq4lzyDiCT9Uh9QNhTUMINSC+okVXuUN60b8qpnv5pQHSel84dK4qiMEhREVbcvgW6njx8QflBNQwtQGX9f+Iz06+5yer9IUQFDrRUiKgKCO2x3IH0fHkTeYffmt2Ml6o4XfNk3Cq1NW3R5U3jgLVwHdL7hTvefrMqXP3uaFSm94z6FFmpnjDbk78TwE9U5ACu4PhH/wM7M66LSZYTIZpCxBdaOXRHzRywc6lrq5r/+QrFAQEMOdbHy0VC10Q7ScsGAnudGXbqSIxNGtMb6ocixxtGdS80nU4jZhurfTaG9R2QCkoJc44hfGsQU93TQVmCDyrlCuWwxei22hJzRN+Q17uCSu09GH4wz/tIWD4MAolDTHQjHuH46JKzREX1XyK6ztgExRouf4Sy7e+qF1YFG6A15fFhDb9tHkERuRpzl/dyBh2aY73FIg0sJBrwQaoiFl1L5+sUitIxK5ASaGloi3XeQSkzwXY/+LmYc52qeC6qeQjtYESE"
)

// TestRound22LiteThinkingRoundTrip: gemini-2.5-flash-lite with
// includeThoughts and a 512-token budget, a call required. The answer: two
// thought summaries in two chunks (usage without candidatesTokenCount,
// thoughts 69 then 105), then the signed call square_root({"number":
// 132413}) without an id, STOP and finishMessage "Model generated function
// call(s)."; 117 in, 18 + 105 thought tokens. maruel/genai sent it back
// (the second recording's request, which the API answered): the two
// summaries as one thought part, the call with its signature and no id,
// the functionResponse by name without id, mode NONE. Ours is the same
// but for the result's wrapping. The answer: "3" + "63.89", STOP, 410 in,
// 6 out, no thought tokens.
func TestRound22LiteThinkingRoundTrip(t *testing.T) {
	t.Parallel()
	yes, budget := true, int32(512)
	opts := &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{IncludeThoughts: &yes, ThinkingBudget: &budget}}}
	user := msg(llmrelayv1.Role_ROLE_USER, text(r22SqrtQuestion))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{r22SquareRoot},
		Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), ProviderOptions: opts}
	evs, srv := r20Stream(t, "real_maruel_gemini25_flash_lite_thinking_sqrt_stream_1", req)
	gc, _ := r17JSON(t, srv.Last(t).Body)["generationConfig"].(map[string]any)
	if !jsonEqual(gc["thinkingConfig"], r19Decode(t, `{"includeThoughts":true,"thinkingBudget":512}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	f := foldEvents(evs)
	if f.text != "" || len(f.calls) != 1 {
		t.Fatalf("text %q, calls %v", f.text, f.calls)
	}
	c := f.calls[0]
	if c.Name != "square_root" || c.Arguments != `{"number":132413}` || c.Signature != r22LiteSig || !c.ArgumentsValid {
		t.Errorf("call %v", c)
	}
	var thought strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			thought.WriteString(ev.Reasoning.Text)
			if ev.Reasoning.Signature != "" || ev.Reasoning.Index != 0 {
				t.Errorf("reasoning piece %+v: the signature is the call's, one block", ev.Reasoning)
			}
		}
	}
	if thought.String() != r22LiteThought1+r22LiteThought2 {
		t.Errorf("thought %q", thought.String())
	}
	m := f.meta
	if m.GetResponseId() != "udcZaqDaKufQ-8YPkuGY2QE" || m.GetResolvedModel() != "gemini-2.5-flash-lite" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got := r21Ext(t, m, extFinishMessage); got != `"Model generated function call(s)."` {
		t.Errorf("finish message %s", got)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 117, OutputTokens: 123, TotalTokens: 240, ReasoningTokens: 105}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}

	answer := foldMessage(t, evs)
	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user, answer, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(c.CallId, "363.89"))},
		Tools:    []*llmrelayv1.Tool{r22SquareRoot}, Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE), ProviderOptions: opts}
	evs2, srv2 := r20Stream(t, "real_maruel_gemini25_flash_lite_thinking_sqrt_stream_2", req2)
	sent := r17JSON(t, srv2.Last(t).Body)
	thoughtJSON, _ := json.Marshal(r22LiteThought1 + r22LiteThought2)
	recorded := `[{"role":"user","parts":[{"text":"` + r22SqrtQuestion + `"}]},` +
		`{"role":"model","parts":[{"thought":true,"text":` + string(thoughtJSON) + `},` +
		`{"thoughtSignature":"` + r22LiteSig + `","functionCall":{"name":"square_root","args":{"number":132413}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"square_root","response":{"result":"363.89"}}}]}]`
	if got := sent["contents"]; !jsonEqual(got, r19Decode(t, recorded)) {
		b, _ := json.Marshal(got)
		t.Errorf("contents\n sent %s\n want %s", b, recorded)
	}
	if got := sent["toolConfig"]; !jsonEqual(got, r19Decode(t, `{"functionCallingConfig":{"mode":"NONE"}}`)) {
		t.Errorf("toolConfig %v", got)
	}
	f2 := foldEvents(evs2)
	if f2.text != "363.89" || len(f2.calls) != 0 {
		t.Errorf("text %q, calls %v", f2.text, f2.calls)
	}
	m2 := f2.meta
	if m2.GetResponseId() != "u9cZapfxIOW5sOIPopjogQc" || m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v", m2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 410, OutputTokens: 6, TotalTokens: 416}); !proto.Equal(f2.usage, want) {
		t.Errorf("usage %v, want %v", f2.usage, want)
	}
}

// TestRound22SquareRootUnaryRoundTrip: the same tool loop unary. The
// first answer: the call with the provider's id "nkfu9fnh" and a 376-byte
// signature, STOP with finishMessage, 104 in, 19 + 89 thought tokens, the
// tier in the body and the X-Gemini-Service-Tier header. The second
// request (which the API answered) sends it back with its id and the
// functionResponse with the same id; the answer is "363.89" with its own
// signature on the text part, 231 in, 5 + 46 thought tokens.
func TestRound22SquareRootUnaryRoundTrip(t *testing.T) {
	t.Parallel()
	const sig1 = "EvUCCvICAQw51sds/mAKbVVk4ijXERzV/oG4mZkuSlVSik02I1xatmYI++2Gf9Saf5W73Q7rCebcR4k0r55DomUxzHZQJryOJJz70Fte2zyKUqJtmxsDLMyQbhCOdY8VOhTFpyiNkMAmOSLtIH2QS87bWsrnF764Z4YYz30r409Zk8xDllziQwS5Qjgb0oXwn+uFNwUHWpvmOSGgoOttywh8THCdO99S+gEDANRC8sR2Wi/o7nwkh292ZziTiMutbRLg5xxPRxlJeM/DWHAMIFUrFBiUWIMa4wgYZy0QDD/agC56pxI7Y2QnToHlrCj7BtlC/yhigZ6xj2j7LDP1W6I2Y5z8AkTyHs8ex/VHtL2JnemxGACwxY8lWkCc4wcJLh75YBK33KdxnEhUvv5348hrnvt3zY7VPNIuBUjjrLPCI9jsXV5GcAVyEzg9cNbnvDpDH6baxyhCPD3qeclXKNJ2iicajVyCa74Da2S6nA1cbw3pyZ7Cww=="
	const sig2 = "EsoBCscBAQw51sdffIA48EkiBEyHuYb63Y0tCDf+onE0jpSAeXJ2h/YUiAVngSWN7kYjt3GrsOV+ItV2eAsG9hq7t6bnCTtt2uN5hGg8cXv/PIazQpi5aMVVN7fj5WXYNg8nACr0OGzEjHs+EN28I/7DGbVopB0cPWQvXaMkMZMJwiU0VBoWc6uH88MugM7+RbgIZ3jzT0sRGNSBWTTsVdC0aPRG0GpJOjjqttHTDPdMPzxJGC+fD+iQwAS7RHsiW0JbCzlHF71XGwko6Q=="
	user := msg(llmrelayv1.Role_ROLE_USER, text(r22SqrtQuestion))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-flash-latest",
		Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{r22SquareRoot},
		Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}
	res, srv := r21Unary(t, "real_maruel_gemini35_flash_sqrt_1", req)
	if got := r17JSON(t, srv.Last(t).Body)["toolConfig"]; !jsonEqual(got, r19Decode(t, `{"functionCallingConfig":{"mode":"ANY"}}`)) {
		t.Errorf("toolConfig %v", got)
	}
	call := &llmrelayv1.ToolCall{CallId: "nkfu9fnh", Name: "square_root", Arguments: `{"number":132413}`, ArgumentsValid: true, Signature: sig1}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: call}}); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "I9YZaq-4OfXOjrEPiey4qQQ", "gemini-3.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 104, OutputTokens: 108, TotalTokens: 212, ReasoningTokens: 89})
	if m.GetServiceTier() != "standard" || m.GetToolCallCount() != 1 || len(m.GetWarnings()) != 0 ||
		r21Ext(t, m, extFinishMessage) != `"Model generated function call(s)."` {
		t.Errorf("meta %v", m)
	}

	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-flash-latest",
		Messages: []*llmrelayv1.Message{user, res.Message, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("nkfu9fnh", "363.89"))},
		Tools:    []*llmrelayv1.Tool{r22SquareRoot}, Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE)}
	res2, srv2 := r21Unary(t, "real_maruel_gemini35_flash_sqrt_2", req2)
	recorded := `[{"role":"user","parts":[{"text":"` + r22SqrtQuestion + `"}]},` +
		`{"role":"model","parts":[{"thoughtSignature":"` + sig1 + `","functionCall":{"id":"nkfu9fnh","name":"square_root","args":{"number":132413}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"nkfu9fnh","name":"square_root","response":{"result":"363.89"}}}]}]`
	if got := r17JSON(t, srv2.Last(t).Body)["contents"]; !jsonEqual(got, r19Decode(t, recorded)) {
		b, _ := json.Marshal(got)
		t.Errorf("contents\n sent %s\n want %s", b, recorded)
	}
	want2 := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("363.89"), &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: sig2}}})
	if !proto.Equal(res2.Message, want2) {
		t.Errorf("message\n got %v\nwant %v", res2.Message, want2)
	}
	r21Meta(t, res2.Meta, "JdYZataLCtK2jrEPt_fN2AQ", "gemini-3.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 231, OutputTokens: 51, TotalTokens: 282, ReasoningTokens: 46})
	if len(res2.Meta.GetWarnings()) != 0 || res2.Meta.GetServiceTier() != "standard" {
		t.Errorf("meta %v", res2.Meta)
	}
}

// TestRound22ParallelSameTool: gemini-2.5-flash-lite (August 2025), a call
// required, streamed in one chunk: two calls of the same function,
// best_country({"country":"USA"}) then best_country({"country":"Canada"}),
// without ids or signatures, STOP; 115 in, 30 out, no serviceTier. The
// calls get ids of their own derived from the response id and their
// position, and sent back with two results the model turn holds both
// calls in order without ids, and the user turn both functionResponses by
// name in the order of the calls, each with its own result, whatever
// order the client gave them in: Gemini pairs them by position when the
// ids are absent. **Bug:** they went out in the client's order.
func TestRound22ParallelSameTool(t *testing.T) {
	t.Parallel()
	const q = "I wonder if the USA is a better country than Canada? Call the tool best_country to tell me which country is the best one."
	tool := &llmrelayv1.Tool{Name: "best_country", Description: "A tool to specify the best country",
		Parameters: `{"properties":{"country":{"enum":["USA","Canada"],"type":"string"}},"required":["country"],"type":"object"}`}
	user := msg(llmrelayv1.Role_ROLE_USER, text(q))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{tool}, Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}
	evs, _ := r20Stream(t, "real_maruel_gemini25_flash_lite_parallel_same_tool_stream", req)
	f := foldEvents(evs)
	const rid = "pteDaOfwL_iOjMcPm9rssAs"
	usaID, canadaID := generatedID(rid, 0, "", ""), generatedID(rid, 1, "", "")
	if len(f.calls) != 2 || f.text != "" {
		t.Fatalf("text %q, calls %v", f.text, f.calls)
	}
	for i, want := range []struct{ id, args string }{{usaID, `{"country":"USA"}`}, {canadaID, `{"country":"Canada"}`}} {
		if c := f.calls[i]; c.CallId != want.id || c.Name != "best_country" || c.Arguments != want.args || c.Signature != "" || !c.ArgumentsValid {
			t.Errorf("call %d: %v", i, c)
		}
	}
	m := f.meta
	if m.GetResponseId() != rid || m.GetResolvedModel() != "gemini-2.5-flash-lite" || m.GetToolCallCount() != 2 ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetServiceTier() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 115, OutputTokens: 30, TotalTokens: 145}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}

	// The results go back in the order of the calls, whatever order the
	// client gives them in (here Canada's first): without ids, Gemini pairs
	// them by position, and in the client's order best_country(USA) would
	// have got Canada's result.
	answer := foldMessage(t, evs)
	p, srv := replay(t, "real_maruel_gemini25_flash_lite_parallel_same_tool_stream")
	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite", Tools: []*llmrelayv1.Tool{tool},
		Messages: []*llmrelayv1.Message{user, answer, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(canadaID, "Canada: yes")),
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(usaID, "USA: no"))}}
	if _, err := p.Generate(context.Background(), req2); err == nil {
		t.Fatal("the replayed stream is not a unary answer; want the decoding error")
	}
	const want = `[{"role":"user","parts":[{"text":"` + q + `"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"best_country","args":{"country":"USA"}}},{"functionCall":{"name":"best_country","args":{"country":"Canada"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"best_country","response":{"result":"USA: no"}}},{"functionResponse":{"name":"best_country","response":{"result":"Canada: yes"}}}]}]`
	if got := r17JSON(t, srv.Last(t).Body)["contents"]; !jsonEqual(got, r19Decode(t, want)) {
		b, _ := json.Marshal(got)
		t.Errorf("contents\n sent %s\n want %s", b, want)
	}
}

// TestRound22ThoughtCutByMaxTokens: gemini-2.5-flash-lite with
// includeThoughts, a 512-token thinking budget and maxOutputTokens 16:
// one chunk, a thought summary and MAX_TOKENS, no answer text and no
// candidatesTokenCount (10 in, 13 thought tokens, 23 total). An empty
// answer with a LENGTH finish, the summary as reasoning.
func TestRound22ThoughtCutByMaxTokens(t *testing.T) {
	t.Parallel()
	yes, budget := true, int32(512)
	req := r21User("gemini-2.5-flash-lite", "", msg(llmrelayv1.Role_ROLE_USER, text("Explain the theory of relativity in great details.")))
	req.Options = &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(16)}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{IncludeThoughts: &yes, ThinkingBudget: &budget}}}
	evs, srv := r20Stream(t, "real_maruel_gemini25_flash_lite_thinking_max_tokens_stream", req)
	if gc := r17JSON(t, srv.Last(t).Body)["generationConfig"]; !jsonEqual(gc, r19Decode(t, `{"maxOutputTokens":16,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":512}}`)) {
		t.Errorf("generationConfig %v", gc)
	}
	const thought = "**Initiating Explanations**\n\nMy initial focus is on outlining a process for creating a comprehensive explanation. I'm starting with a high-level approach, " +
		"aiming to break down the complex concept into manageable steps. The goal is to develop a structured methodology that addresses all key aspects thoroughly.\n\n\n"
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: thought}}})
	if got := foldMessage(t, evs); !proto.Equal(got, want) {
		t.Errorf("message\n got %v\nwant %v", got, want)
	}
	f := foldEvents(evs)
	m := f.meta
	if f.text != "" || m.GetResponseId() != "sNcZauKzH5u4sOIPlofduAg" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH ||
		m.GetProviderFinishReason() != "MAX_TOKENS" || m.GetServiceTier() != "standard" || len(m.GetWarnings()) != 0 {
		t.Errorf("text %q, meta %v", f.text, m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 10, OutputTokens: 13, TotalTokens: 23, ReasoningTokens: 13}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
}

// TestRound22SearchStream: gemini-3.5-flash with googleSearch, three
// chunks: an empty text (15 candidate + 132 thought tokens so far), "Mark
// Carney" in a chunk whose usage has no candidatesTokenCount (55 thought
// tokens), then the text's signature on an empty part with STOP and the
// groundingMetadata: the HTML searchEntryPoint, one web chunk, one support
// at [0,11) (no startIndex), the query. The last usage is the answer's: 29
// in, 9 + 187 thought tokens, 225 total; no toolUsePromptTokenCount.
func TestRound22SearchStream(t *testing.T) {
	t.Parallel()
	const q = "Search the web to tell who is currently the Prime Minister of Canada. Only search for one result. Give only the name with no explanation."
	req := r21User("gemini-flash-latest", "", msg(llmrelayv1.Role_ROLE_USER, text(q)))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"googleSearch":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	evs, srv := r20Stream(t, "real_maruel_gemini35_flash_search_stream", req)
	sent := r17JSON(t, srv.Last(t).Body)
	if !jsonEqual(sent, r19Decode(t, `{"contents":[{"role":"user","parts":[{"text":"`+q+`"}]}],"tools":[{"googleSearch":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`)) {
		t.Errorf("request %s differs from the recorded one", srv.Last(t).Body)
	}
	f := foldEvents(evs)
	if f.text != "Mark Carney" || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	m := f.meta
	if m.GetResponseId() != "JdYZatHIBOSc-8YPteagIQ" || m.GetResolvedModel() != "gemini-3.5-flash" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 29, OutputTokens: 196, TotalTokens: 225, ReasoningTokens: 187}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	if got := r21Ext(t, m, extToolUsePromptTokens); got != "" {
		t.Errorf("tool-use prompt tokens %s, none recorded", got)
	}
	g, _ := m.GetExtended().AsMap()[extGroundingMetadata].(map[string]any)
	entry, _ := g["searchEntryPoint"].(map[string]any)
	html, _ := entry["renderedContent"].(string)
	if !strings.HasPrefix(html, "<style>\n.container {") || !strings.HasSuffix(html, "Prime Minister of Canada</a>\n  </div>\n</div>") || len(html) != 4468 {
		t.Errorf("renderedContent (%d bytes) %.60q…", len(html), html)
	}
	delete(g, "searchEntryPoint")
	const rest = `{"groundingChunks":[{"web":{"title":"pm.gc.ca","uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQE1adwbf0MskfDtYYz-AxzwR9UPkwLtqvyZm1km0zU_VG2e8y0F2vY6Sm9UmEqpjkufvrXTqK8cX1tXfkoqR1u02q63MWTyTgtZGW-tnbvBx2KKfA=="}}],` +
		`"groundingSupports":[{"groundingChunkIndices":[0],"segment":{"endIndex":11,"text":"Mark Carney"}}],"webSearchQueries":["Prime Minister of Canada"]}`
	if b, _ := json.Marshal(g); string(b) != rest {
		t.Errorf("grounding\n got %s\nwant %s", b, rest)
	}
}
