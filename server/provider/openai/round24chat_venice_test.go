package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 24: anomalyco/opencode's recordings of Venice's OpenAI-compatible
// Chat Completions endpoint (api.venice.ai/api/v1, October 2026).

const veniceBaseURL = "https://api.venice.ai/api/v1"

// veniceRateTool is opencode's lookup_rate tool, its schema as sent.
var veniceRateTool = &llmrelayv1.Tool{Name: "lookup_rate", Description: "Retrieve the private conversion rate for a code. Only this tool knows the rate.",
	Parameters: `{"type":"object","properties":{"code":{"type":"string","enum":["ZEBRA","MOOSE"]}},"required":["code"],"additionalProperties":false}`}

// veniceLoopRequest is the first request of opencode's recorded Venice
// tool loops: its system prompt, question and lookup_rate tool.
func veniceLoopRequest(model string) *provider.Request {
	system := "Use the provided tool for private data. After receiving the result, give only the requested number; do not call the tool again."
	req := r22Ask(model, "Look up conversion rate for code ZEBRA. Then multiply that rate by 17 and add 9. You must use lookup_rate before answering.")
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system))}, req.Messages...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{veniceRateTool}
	return req
}

// veniceFollowUp is the loop's second request: the first answer, its call
// answered with the rate, tool choice none.
func veniceFollowUp(model string, req *provider.Request, answer *llmrelayv1.Message, callID string) *provider.Request {
	follow := r22Ask(model, req.Messages[1].GetParts()[0].GetText())
	follow.Messages = append([]*llmrelayv1.Message{req.Messages[0]}, follow.Messages...)
	follow.Protocol, follow.Tools = req.Protocol, req.Tools
	follow.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	follow.Messages = append(follow.Messages, answer,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: callID, Content: `{"code":"ZEBRA","rate":23}`}}}))
	return follow
}

// veniceSecondTurn is a recorded Venice tool loop's second turn: the
// follow-up built from the first answer f1 (its one call answered with the
// rate), compared with the request Venice took, replayed, and answered
// "400" without warnings. It returns the call, the follow-up request and
// the second answer.
func veniceSecondTurn(t *testing.T, name, model string, req *provider.Request, f1 folded) (*llmrelayv1.ToolCall, *provider.Request, folded) {
	t.Helper()
	var call *llmrelayv1.ToolCall
	for _, p := range f1.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			call = c
		}
	}
	if call == nil {
		t.Fatalf("no call in %v", f1.Message)
	}
	follow := veniceFollowUp(model, req, f1.Message, call.GetCallId())
	evs2, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	if got, want := sent2["messages"], veniceRecordedMessages(t, name+"2"); !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	for _, ev := range evs2 {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("turn 2 warnings %v", ev.Meta.GetWarnings())
		}
	}
	var answer string
	for _, p := range f2.Message.GetParts() {
		answer += p.GetText()
	}
	if answer != "400" {
		t.Errorf("answer %q", answer)
	}
	return call, follow, f2
}

// veniceThirdRequest is the recorded loop's third request: the follow-up,
// its answer f2, and the next question.
func veniceThirdRequest(model string, follow *provider.Request, f2 folded) *provider.Request {
	third := r22Ask(model, "Add 7 to your previous final answer. Reply with just the number.")
	third.Protocol, third.Tools, third.Options.ToolChoice = follow.Protocol, follow.Tools, follow.Options.ToolChoice
	third.Messages = append(append(follow.Messages, f2.Message), third.Messages...)
	return third
}

// veniceRecordedMessages is the messages array of a recorded request.
func veniceRecordedMessages(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(td(name + ".recorded_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r20Request(t, b)["messages"]
}

// TestRound24VeniceGeminiParallelSignatures: gemini-3-8-flash through Venice,
// two parallel calls. Venice writes Gemini's thought signature as a
// thought_signature key of the tool call itself (not Google's
// extra_content.google), on the first call only, and the follow-up that
// Venice took sends it back there, with the reasoning as reasoning_content.
// Bug: the signature was not read (the call had none) and the follow-up
// sent neither it nor the reasoning; Gemini 3 refuses a replayed call
// without its signature.
func TestRound24VeniceGeminiParallelSignatures(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_gemini_parallel_stream_", "gemini-3-8-flash"
	const sig = "AY89a19LGc+MNKKabLeDsoXmlmLVvuG+r9VLGaQzjwP7kNUYy5GSXdZJXpbkqTSyFMwUn76GRLOvtNAi45K6/0Gx8J8ejFkVvYXgn1fe5XzvbJoBMbRIiyrowncBepu1sJMyH0iPHSifJXG1P/NMcXUZEuYFwtpaSPUnWBMP1yqPx3Uwv/EKULOsGa6HoHXd8I8/zuNXzoB/H5r6mFqFOZ1mX6MAL17mrSoahvH/D+QZ16uhLXPMZZIddOAzCmzFH/A6dPw9wHdVGR7aiIJT0JdNbgzA+vm5kho4yP7wOuX2N8znpzHcYCNBj3tRQ4Zm5V+oQjHPMNPBtRRRc5q6AJMHIgwxoCo14Tayshly1HzYHK83FBCEhaSb7XlJ4mHX9ak1O+OLx4cGGw68ITh3UrV67/kiILU1ox/rYHgb43UJcYRJ79EXGKs+YTzs4zwqb8x0Ot/TVmpDoYBU3/6YULy/TxQucUKJFe8x8yyaNl2rDziBm5AViV69Jw0vtKcsJfmTc+qmu/fhdPLEn9mjVetkLSGV2Ems/lkbZ3aO6gH1J7k2s0yjD3ZjvYt0BJx/gY1NUZS/7bP85qCRt1a+Ky1XpBfxl+DM6r/MEugpTLQlwpBlxJTv9JtSg3ZmnUzgoKjhInSby7H0qubuOYEQZ0BxaaNYi2JkJbz9660/a2cpTZ35AeGbhtDwfN4/Wk36/D/yQTi2RJPrN2NILCBYH7TDyGB3MgIIgkF5zkUSHbtxBSBwImktFXv5wq1l8OXpQHKtHxmkAFcyj9g+xL9EgXUmHLMOI3nyQ7zA1BZ/qdLWTz05fX56/Y86xSrYkz+wbiJSDn6PcVZF9OFZgBdYjt6fA0OsvcBwqls="
	req := r22Ask(model, "Look up private rates for both ZEBRA and MOOSE using two calls to lookup_rate. Then add the rates and multiply by 7. Use parallel calls if possible.")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{veniceRateTool}
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH

	_, f1, sent1 := mgbStream(t, name+"1", veniceBaseURL, "", req)
	if !reflect.DeepEqual(sent1["messages"], veniceRecordedMessages(t, name+"1")) {
		t.Errorf("turn 1 messages %v", sent1["messages"])
	}
	var calls []*llmrelayv1.ToolCall
	var reasoning string
	for _, p := range f1.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			calls = append(calls, c)
		}
		if r := p.GetReasoning(); r != nil {
			reasoning += r.GetText()
		}
	}
	if len(calls) != 2 || calls[0].GetCallId() != "call_0" || calls[1].GetCallId() != "call_1" {
		t.Fatalf("calls %v", calls)
	}
	if calls[0].GetSignature() != sig || calls[1].GetSignature() != "" {
		t.Errorf("signatures %q, %q: want the first call's only", calls[0].GetSignature(), calls[1].GetSignature())
	}
	if want := "**Searching Rates**\n\nI am initiating two separate calls to the `lookup_rate` tool, one for the ZEBRA code and another for the MOOSE code, to retrieve their respective private rates.\n\n"; reasoning != want {
		t.Errorf("reasoning %q", reasoning)
	}
	if f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("finish %v", f1.Meta.GetFinishReason())
	}

	follow := r22Ask(model, req.Messages[0].GetParts()[0].GetText())
	follow.Protocol, follow.Tools, follow.Options.ReasoningEffort = req.Protocol, req.Tools, req.Options.ReasoningEffort
	follow.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	follow.Messages = append(follow.Messages, f1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_0", Content: `{"rate":23}`}}}),
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_1", Content: `{"rate":31}`}}}))
	evs, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	if got, want := sent2["messages"], veniceRecordedMessages(t, name+"2"); !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	if got := f2.Message.GetParts(); len(got) == 0 || got[0].GetText() != "The rates retrieved are:\n- **ZEBRA:** 23\n- **MOOSE:** 31\n\n### Calculation:\n1. **Add the rates:**  \n   $$23 + 31 = 54$$\n\n2. **Multiply by 7:**  \n   $$54 \\times 7 = 378$$\n\nThe final result is **378**." {
		t.Errorf("answer %v", got)
	}
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Logf("warnings %v", ev.Meta.GetWarnings())
		}
	}
}

// TestRound24StreamFlatErrorObject: a flat error object ({"object":"error",
// "message", "type", "param", "code"}: vLLM's and Mistral's error body
// layout) as a chunk of a 200 stream, then [DONE]. Bug: the chunk (no
// choices) was skipped and the stream ended complete with the partial
// text; the unary path reads the same body as an error. It is now the
// stream's error, classified by its code as the unary body is.
func TestRound24StreamFlatErrorObject(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_compat_stream_flat_error.http"))
	p := newTestProvider(t, kOpenAI, srv.URL)
	s, err := p.Stream(context.Background(), r22Ask("Qwen/Qwen3-8B", "What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = collect(t, s)
	pe := providerError(t, err)
	if pe.Kind != provider.KindUnavailable || pe.Message != "Internal server error" || pe.Code != "500" {
		t.Errorf("error %+v", pe)
	}
	// A chunk with an id, with choices, or with a message and no code is
	// no error object: the stream ends complete.
	for _, chunk := range []string{
		`{"id":"chatcmpl-flat-1","object":"chat.completion.chunk","choices":[],"message":"m","code":1}`,
		`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}],"message":"m","code":1}`,
		`{"message":"no code"}`,
	} {
		srv := providertest.Replay(t, providertest.Recording{Status: http.StatusOK,
			Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte("data: " + chunk + "\n\ndata: [DONE]\n\n")})
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), r22Ask("Qwen/Qwen3-8B", "What is the capital of France?"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := collect(t, s); err != nil {
			t.Errorf("%s: %v", chunk, err)
		}
		s.Close()
	}
}

// TestRound24OllamaV1Errors: Ollama's OpenAI-compatible route (/v1) puts
// its errors in OpenAI's error object (openai.NewError: type api_error for
// a 500, param and code null). ollama.com's reference "(ref: <uuid>)" at
// the end of the message is now the request id when no header gives one
// (it was none), and the runner's refusal of an image ("image: unknown
// format") an invalid request with what to change (it was unavailable and
// retried), as the ollama adapter reads both.
func TestRound24OllamaV1Errors(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_ollama_v1_err_500_cloud_ref.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), r22Ask("minimax-m3:cloud", "Hello"))
	pe := providerError(t, err)
	if pe.Kind != provider.KindUnavailable || pe.RequestID != "5c0e9a7d-31f4-4b8e-9d62-a7f03c18e4b2" {
		t.Errorf("cloud ref: %+v", pe)
	}

	const recorded = "Failed to create new sequence: failed to process inputs: image: unknown format"
	req := r22Ask("gemma3:4b", "What is it?")
	req.Messages[0].Parts = append(req.Messages[0].Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{
		Source: &llmrelayv1.Image_Data{Data: []byte("RIFF\x24\x00\x00\x00WEBPVP8 ")}, MimeType: "image/webp"}}})
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("dialect_ollama_v1_err_500_image_unknown_format.http"))
		p := newTestProvider(t, kOpenAI, srv.URL)
		if stream {
			_, err = p.Stream(context.Background(), req)
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		pe := providerError(t, err)
		if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 500 || pe.Message != recorded+provider.OllamaImageFormatAdvice || pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
			t.Errorf("stream %v: %+v (retryable %v)", stream, pe, pipeline.Retryable(err))
		}
	}
	if a := provider.OllamaImageAdvice("Failed to create new sequence: failed to process inputs: this model is missing data required for image input"); a != provider.OllamaNoVisionAdvice {
		t.Errorf("no vision: %q", a)
	}
}

// TestRound24GitHubModelsDailyLimit: GitHub Models' 429 RateLimitReached
// for its per-day request limit, whose message says when to come back
// ("Rate limit of 8 per 86400s exceeded for UserByModelByDay. Please wait
// 83652 seconds before retrying."), without a retry-after header. Bug: no
// delay and no limit were read (retried at once into the same refusal);
// the wait is now the retry delay (longer than the gateway waits: the
// call falls back, RetryInfo saying when), the limit a QuotaFailure
// violation.
func TestRound24GitHubModelsDailyLimit(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_github_err_429_user_by_model_by_day.http"))
	_, err := newHostProvider(t, "https://models.github.ai/inference", srv.URL).Generate(context.Background(), r22Ask("openai/gpt-4.1", "hi"))
	e := providerError(t, err)
	if e.Kind != provider.KindRateLimited || e.RetryAfter != 83652*time.Second || e.RequestID != "91D4:2F07C8:5A13E2:61B0F4:6924B7A1" || e.Code != "RateLimitReached" {
		t.Errorf("%s (retry after %v)", renderErr(err), e.RetryAfter)
	}
	if len(e.Quota) != 1 || e.Quota[0].GetQuotaId() != "UserByModelByDay" || e.Quota[0].GetQuotaValue() != 8 || e.Quota[0].GetQuotaMetric() != "requests" {
		t.Errorf("quota %v", e.Quota)
	}
	// A per-minute limit: its few seconds are waited out.
	e2 := &provider.Error{Kind: provider.KindRateLimited, Message: "Rate limit of 15 per 60s exceeded for UserByModelByMinute. Please wait 25 seconds before retrying."}
	vendorReset(e2, http.Header{})
	if e2.RetryAfter != 25*time.Second || len(e2.Quota) != 1 || e2.Quota[0].GetQuotaId() != "UserByModelByMinute" {
		t.Errorf("per minute: %+v", e2)
	}
}

// TestRound24SGLangContextLength: SGLang's 400 for an input past the
// model's context ("The input (43028 tokens) is longer than the model's
// context length (40960 tokens).", its TokenizerManager's words, in its
// flat error object; Together's serverless models answer the same words).
// Bug: an invalid request; it is now a context-length error (another
// route with a larger window may take it), unary and streamed.
func TestRound24SGLangContextLength(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("dialect_sglang_err_400_input_longer_than_context.http"))
		p := newTestProvider(t, kOpenAI, srv.URL)
		var err error
		if stream {
			_, err = p.Stream(context.Background(), r22Ask("Qwen/Qwen3-32B", "hi"))
		} else {
			_, err = p.Generate(context.Background(), r22Ask("Qwen/Qwen3-32B", "hi"))
		}
		if e := providerError(t, err); e.Kind != provider.KindContextLength || e.HTTPStatus != 400 ||
			e.Message != "The input (43028 tokens) is longer than the model's context length (40960 tokens)." {
			t.Errorf("stream %v: %s", stream, renderErr(err))
		}
	}
}

// TestRound24OpencodeGroqQwenParallel: opencode's recording of Groq
// (qwen/qwen3.6-27b, reasoning_effort none) answering with two parallel
// calls (ids of Groq's, each whole in one chunk), the finish chunk carrying
// the usage (and x_groq's copy of it) and a last chunk without choices
// repeating it; then the follow-up with both results. The usage counts
// once; the follow-up's messages, tool choice, effort and parallel flag
// are the recorded ones (the limit goes as max_tokens, which Groq takes,
// where opencode sent max_completion_tokens).
func TestRound24OpencodeGroqQwenParallel(t *testing.T) {
	t.Parallel()
	const name, model, base = "real_opencode_groq_qwen_parallel_stream_", "qwen/qwen3.6-27b", "https://api.groq.com/openai/v1"
	req := r22Ask(model, "Look up the current weather in Paris and London. Call lookup_weather once for each city in the same response before answering. After receiving all results, report each city's weather in one short sentence.")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "lookup_weather", Description: "Look up the current weather for a city",
		Parameters: `{"type":"object","properties":{"city":{"type":"string","enum":["Paris","London"]}},"required":["city"],"additionalProperties":false}`}}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
	maxTok := int32(1536)
	req.Options.MaxTokens = &maxTok
	par := true
	req.Options.ParallelToolCalls = &par
	check := func(turn string, sent map[string]any) {
		t.Helper()
		b, err := os.ReadFile(td(name + turn + ".recorded_request.json"))
		if err != nil {
			t.Fatal(err)
		}
		want := r20Request(t, b)
		if sent["max_tokens"] != want["max_completion_tokens"] {
			t.Errorf("turn %s max_tokens %v", turn, sent["max_tokens"])
		}
		for _, k := range []string{"messages", "tool_choice", "reasoning_effort", "parallel_tool_calls", "tools", "stream_options"} {
			if !reflect.DeepEqual(sent[k], want[k]) {
				g, _ := json.Marshal(sent[k])
				w, _ := json.Marshal(want[k])
				t.Errorf("turn %s %s: sent %s, recorded %s", turn, k, g, w)
			}
		}
	}
	_, f1, sent1 := mgbStream(t, name+"1", base, "", req)
	check("1", sent1)
	u := f1.Meta.GetUsage()
	if u.GetInputTokens() != 326 || u.GetOutputTokens() != 54 || f1.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS {
		t.Errorf("turn 1 usage %v finish %v", u, f1.Meta.GetFinishReason())
	}
	follow := r22Ask(model, req.Messages[0].GetParts()[0].GetText())
	follow.Protocol, follow.Tools, follow.Options = req.Protocol, req.Tools, req.Options
	follow.Options = proto.Clone(req.Options).(*llmrelayv1.GenerationOptions)
	follow.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	result := `{"condition":"sunny","temperature":"18C"}`
	follow.Messages = append(follow.Messages, f1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "v77yebs6v", Content: result}}}),
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "88gq045p2", Content: result}}}))
	_, f2, sent2 := mgbStream(t, name+"2", base, "", follow)
	check("2", sent2)
	if got := f2.Message.GetParts()[0].GetText(); got != "The weather in Paris is sunny and 18C, while London is also sunny and 18C." {
		t.Errorf("answer %q", got)
	}
	if u := f2.Meta.GetUsage(); u.GetInputTokens() != 426 || u.GetOutputTokens() != 24 {
		t.Errorf("turn 2 usage %v", u)
	}
}

// TestRound24BedrockMantleReasoningBack: gpt-oss on Bedrock's
// OpenAI-compatible endpoint (bedrock-mantle.us-east-1.api.aws/v1) streams
// its reasoning as delta.reasoning; opencode's recorded tool loop sent the
// tool-call turn back with that reasoning in a "reasoning" field and was
// answered. Bug: the reasoning was dropped with a warning ("Chat Completions
// has no field for them"). The tool-call turn now carries it as recorded;
// the text turns' reasoning (which opencode also sent) is left out, as
// gpt-oss drops an answered turn's reasoning, with the warning saying so.
func TestRound24BedrockMantleReasoningBack(t *testing.T) {
	t.Parallel()
	p, err := New(testKey, WithBaseURL("https://bedrock-mantle.us-east-1.api.aws/v1"))
	if err != nil {
		t.Fatal(err)
	}
	reasoning := func(s string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: s}}}
	}
	req := r22Ask("openai.gpt-oss-20b", `Reply with exactly "OK".`)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "lookup_code", Description: "Return the code to reply with",
		Parameters: `{"type":"object","properties":{},"additionalProperties":false}`}}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning(`User asks: "Reply with exactly 'OK'." So should respond with OK. No extra text. Probably just the string OK.`), text("OK")),
		msgOf(llmrelayv1.Role_ROLE_USER, text(`Now reply with exactly "TEST".`)),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning("We must reply exactly TEST."), text("TEST")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Call lookup_code. After the tool returns, reply with exactly the returned code.")),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning("We need to call function lookup_code."),
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "chatcmpl-tool-82c9186d5345251e", Name: "lookup_code", Arguments: "{}"}}}),
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "chatcmpl-tool-82c9186d5345251e", Content: "DONE"}}}))
	body, warnings, err := p.buildChatRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	sent := r20Request(t, body)
	b, err := os.ReadFile(td("real_opencode_mantle_gptoss20b_tool_4.recorded_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := r20Request(t, b)
	wantMsgs := want["messages"].([]any)
	for _, i := range []int{1, 3} { // the answered turns: their reasoning is not sent
		delete(wantMsgs[i].(map[string]any), "reasoning")
	}
	if !reflect.DeepEqual(sent["messages"], wantMsgs) {
		g, _ := json.Marshal(sent["messages"])
		w, _ := json.Marshal(wantMsgs)
		t.Errorf("messages\n got %s\nwant %s", g, w)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "2 reasoning part(s)") || !strings.Contains(warnings[0], "tool-call turns only") {
		t.Errorf("warnings %q", warnings)
	}
	for _, k := range []string{"tool_choice", "reasoning_effort", "stream_options"} {
		if !reflect.DeepEqual(sent[k], want[k]) {
			t.Errorf("%s: sent %v, recorded %v", k, sent[k], want[k])
		}
	}
}

// TestRound24VeniceClaudeSignedReasoning: claude-sonnet-4-6 through Venice,
// a tool loop with thinking. Venice streams Claude's thinking twice, as
// reasoning_content and as OpenRouter-style reasoning_details
// (reasoning.text, format anthropic-claude-v1, the signature in the last
// entry), then text and the call. The recorded follow-up, which Venice
// took, sends both back: reasoning_details with the signed block (Claude
// refuses a tool-use turn whose thinking lost its signature) and
// reasoning_content. Bug: only reasoning_content went back (the signature
// was dropped with a warning).
func TestRound24VeniceClaudeSignedReasoning(t *testing.T) {
	t.Parallel()
	const name, model = "real_venice_claude_tool_stream_", "claude-sonnet-4-6"
	req := veniceLoopRequest(model)
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH
	_, f1, _ := mgbStream(t, name+"1", veniceBaseURL, "", req)
	var r *llmrelayv1.Reasoning
	for _, p := range f1.Message.GetParts() {
		if p.GetReasoning() != nil {
			r = p.GetReasoning()
		}
	}
	if r == nil || r.GetText() != "The user wants me to look up the conversion rate for code ZEBRA, then multiply it by 17 and add 9." ||
		r.GetFormat() != "anthropic-claude-v1" || !strings.HasPrefix(r.GetSignature(), "EoYDCsAB") {
		t.Fatalf("reasoning %v", r)
	}
	follow := r22Ask(model, req.Messages[1].GetParts()[0].GetText())
	follow.Messages = append([]*llmrelayv1.Message{req.Messages[0]}, follow.Messages...)
	follow.Protocol, follow.Tools = req.Protocol, req.Tools
	follow.Options.ReasoningEffort = req.Options.ReasoningEffort
	follow.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	follow.Messages = append(follow.Messages, f1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "toolu_01CKvbhQF9LoyoWgnTFTiGD3", Content: `{"code":"ZEBRA","rate":23}`}}}))
	evs, f2, sent2 := mgbStream(t, name+"2", veniceBaseURL, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	// opencode re-serialized the call's arguments; ours go back as the
	// model streamed them.
	call := want.([]any)[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	call["arguments"] = `{"code": "ZEBRA"}`
	if got := sent2["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("warnings %v", ev.Meta.GetWarnings())
		}
	}
	if got := f2.Message.GetParts()[0].GetText(); got != "The conversion rate for **ZEBRA** is **23**.\n\nNow for the calculation:\n\n(23 × 17) + 9 = 391 + 9 = **400**" {
		t.Errorf("answer %q", got)
	}
}

// TestRound24VeniceOpenAIEncryptedReasoning: an OpenAI reasoning model
// through Venice (openai-gpt-6-luna) streams its summary as
// reasoning_content, then a chunk whose reasoning_content is
// "\n\n__ENCRYPTED_REASONING__id=rs_…\ngAAAA…" with reasoning_encrypted and
// reasoning_details [reasoning.encrypted, format openai-responses-v1, the
// item's id and data]: the details win, so the marker never reaches the
// reasoning text, and the part holds the summary, the id and the encrypted
// data. The recorded follow-up sends reasoning_details back with the
// encrypted entry alone (the summary went as reasoning_content). Bug: ours
// sent a reasoning.summary entry before it, which Venice never gave.
func TestRound24VeniceOpenAIEncryptedReasoning(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(td("real_venice_gpt6luna_3.recorded_reasoning_details.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	entry := want[0].(map[string]any)
	p, err := New(testKey, WithBaseURL(veniceBaseURL))
	if err != nil {
		t.Fatal(err)
	}
	req := r22Ask("openai-gpt-6-luna", "Look up conversion rate for code ZEBRA. Then multiply that rate by 17 and add 9. You must use lookup_rate before answering.")
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{
			Text:      "**Calculating the answer**\n\nI'm working out this calculation: 23 times 17 plus 9.",
			Signature: entry["data"].(string), Id: entry["id"].(string), Format: formatOpenAI}}}, text("400")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Add 7 to your previous final answer. Reply with just the number.")))
	body, _, err := p.buildChatRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	got := r20Request(t, body)["messages"].([]any)[1].(map[string]any)["reasoning_details"]
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Errorf("reasoning_details %s", g)
	}
	// The stream: the recorded marker chunk (its reasoning_content and its
	// detail), after a summary chunk.
	marker := "\n\n__ENCRYPTED_REASONING__id=" + entry["id"].(string) + "\n" + entry["data"].(string)
	chunk, _ := json.Marshal(map[string]any{"id": "resp_0a1d602f8c8da5ae016ac313f3cd1c87d2a1bf93f64fce8c2f", "object": "chat.completion.chunk",
		"created": 1791169525, "model": "openai-gpt-6-luna", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{
			"reasoning_content": marker, "reasoning_encrypted": true, "reasoning_details": want}, "finish_reason": nil}}})
	sse := `data: {"id":"resp_0a1d602f8c8da5ae016ac313f3cd1c87d2a1bf93f64fce8c2f","object":"chat.completion.chunk","created":1791169524,"model":"openai-gpt-6-luna","choices":[{"index":0,"delta":{"reasoning_content":"**Calculating the answer**"},"finish_reason":null}]}` +
		"\n\ndata: " + string(chunk) + "\n\n" +
		`data: {"id":"resp_0a1d602f8c8da5ae016ac313f3cd1c87d2a1bf93f64fce8c2f","object":"chat.completion.chunk","created":1791169525,"model":"openai-gpt-6-luna","choices":[{"index":0,"delta":{"content":"400"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	srv := providertest.Replay(t, providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: []byte(sse)})
	st, err := mgbProvider(t, veniceBaseURL, srv.URL, "").Stream(context.Background(), r22Ask("openai-gpt-6-luna", "q"))
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := collect(t, st)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var r *llmrelayv1.Reasoning
	for _, part := range accFold(t, evs).Message.GetParts() {
		if part.GetReasoning() != nil {
			r = part.GetReasoning()
		}
	}
	if r == nil || r.GetText() != "**Calculating the answer**" || r.GetSignature() != entry["data"] || r.GetId() != entry["id"] || r.GetFormat() != formatOpenAI {
		t.Errorf("streamed reasoning %v", r)
	}
	// OpenRouter keeps its summary entry.
	p2, err := New(testKey, WithBaseURL("https://openrouter.ai/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	body, _, err = p2.buildChatRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := r20Request(t, body)["messages"].([]any)[1].(map[string]any)["reasoning_details"].([]any); len(got) != 2 {
		t.Errorf("openrouter reasoning_details %v", got)
	}
}

// TestRound24OpencodeDeepInfraGptOss: DeepInfra (api.deepinfra.com/v1/openai)
// serving openai/gpt-oss-20b at reasoning_effort low: reasoning_content
// pieces (null on the other chunks), then the text; the finish chunk
// carries the usage with estimated_cost null and a last chunk without
// choices repeats it with estimated_cost 4.98e-6 and service_tier default.
// No bug: one reasoning part, "Hello!", usage 82/18 once; the request is
// the recorded one (max_tokens and reasoning_effort as sent).
func TestRound24OpencodeDeepInfraGptOss(t *testing.T) {
	t.Parallel()
	const name = "real_opencode_deepinfra_gptoss20b_reasoning_stream"
	req := r22Ask("openai/gpt-oss-20b", "Think briefly, then reply exactly with: Hello!")
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Show concise reasoning when the provider supports visible reasoning summaries."))}, req.Messages...)
	// req.Reasoning stays false: a reasoning request sends the system message as
	// developer on every host (OpenAI's rule), where opencode sent system.
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	maxTok := int32(512)
	req.Options.MaxTokens = &maxTok
	evs, f, sent := mgbStream(t, name, "https://api.deepinfra.com/v1/openai", "", req)
	b, err := os.ReadFile(td(name + ".recorded_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := r20Request(t, b)
	for _, k := range []string{"messages", "reasoning_effort", "stream_options", "model"} {
		if !reflect.DeepEqual(sent[k], want[k]) {
			t.Errorf("%s: sent %v, recorded %v", k, sent[k], want[k])
		}
	}
	if sent["max_tokens"] != want["max_tokens"] && sent["max_completion_tokens"] != want["max_tokens"] {
		t.Errorf("limit: sent %v / %v", sent["max_tokens"], sent["max_completion_tokens"])
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != `User wants exactly "Hello!"` || parts[1].GetText() != "Hello!" {
		t.Errorf("parts %v", parts)
	}
	if u := f.Meta.GetUsage(); u.GetInputTokens() != 82 || u.GetOutputTokens() != 18 {
		t.Errorf("usage %v", u)
	}
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 {
			t.Errorf("warnings %v", ev.Meta.GetWarnings())
		}
	}
}

// TestRound24VercelGatewayChatMuse: the Vercel AI Gateway's Chat
// Completions endpoint (ai-gateway.vercel.sh/v1) serving meta/muse-spark-1.3
// (October 2026), a tool loop: the finish chunk's delta carries the
// gateway's provider_metadata (routing, cost); the provider that served
// the call, gateway.routing.finalProvider, is now
// meta.extended.upstream_provider, as the anthropic adapter reads the same
// gateway's Messages answers and this adapter OpenRouter's "provider" (it
// was dropped). The follow-up's messages are the recorded ones but for
// opencode's empty "reasoning" on the tool-call turn.
func TestRound24VercelGatewayChatMuse(t *testing.T) {
	t.Parallel()
	const name, model, base = "real_vercelgw_chat_muse_tool_stream_", "meta/muse-spark-1.3", "https://ai-gateway.vercel.sh/v1"
	req := r22Ask(model, "What is the weather in Paris?")
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text("Use the get_weather tool exactly once. After the tool result, reply exactly: Paris is sunny."))}, req.Messages...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get current weather for a city.",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	_, f1, _ := mgbStream(t, name+"1", base, "", req)
	if got := f1.Meta.GetExtended().GetFields()["upstream_provider"]; got == nil || got.GetStringValue() != "meta" {
		t.Errorf("turn 1 upstream_provider %v", got)
	}
	follow := r22Ask(model, "What is the weather in Paris?")
	follow.Messages = append([]*llmrelayv1.Message{req.Messages[0]}, follow.Messages...)
	follow.Protocol, follow.Tools = req.Protocol, req.Tools
	follow.Options.ReasoningEffort = req.Options.ReasoningEffort
	follow.Messages = append(follow.Messages, f1.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_01a109fdbbdd7347a6918c3662c8128e", Content: `{"temperature":22,"condition":"sunny"}`}}}))
	_, f2, sent2 := mgbStream(t, name+"2", base, "", follow)
	want := veniceRecordedMessages(t, name+"2")
	delete(want.([]any)[2].(map[string]any), "reasoning")
	if got := sent2["messages"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("follow-up messages\n got %s\nwant %s", g, w)
	}
	if got := f2.Message.GetParts()[0].GetText(); got != "Paris is sunny." {
		t.Errorf("answer %q", got)
	}
	if got := f2.Meta.GetExtended().GetFields()["upstream_provider"]; got == nil || got.GetStringValue() != "meta" {
		t.Errorf("turn 2 upstream_provider %v", got)
	}
}
