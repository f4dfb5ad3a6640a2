package openai

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const mgbTogether = "https://api.together.xyz/v1"

// mgbTogetherRateLimit checks Together's bare x-ratelimit-* triple (the
// request budget; the remaining count above the limit, as Together sends
// it) and its token limit and remaining count (no token reset is sent).
func mgbTogetherRateLimit(t *testing.T, rl *llmrelayv1.RateLimit, date string, reqLeft int64, reset time.Duration) {
	t.Helper()
	at, err := time.Parse(time.RFC1123, date)
	if err != nil {
		t.Fatal(err)
	}
	if rl.RequestsLimit != nil || rl.GetRequestsRemaining() != reqLeft || rl.GetTokensLimit() != 3000 || rl.GetTokensRemaining() != 3000 ||
		rl.TokensResetTime != nil || !rl.GetRequestsResetTime().AsTime().Equal(at.Add(reset)) {
		t.Errorf("rate limit %v", rl)
	}
}

// TestRound22MgbTogetherLogprobs: Qwen3-235B-A22B-Instruct-2507-tput on
// Together (December 2025), unary, with logprobs and 2 top logprobs
// (maruel/genai sent Together's "logprobs": 2; ours logprobs true and
// top_logprobs 2, OpenAI's form, which Together also takes): "Hello.",
// stop, 16 in, 3 out; three tokens "Hello", "." and "<|im_end|>" (logprob
// 0), each with bytes and two top logprobs, the last one's second token
// " \uFFFD" (bytes 32 239 191 189) kept as sent in meta.extended
// ["logprobs"]. The cassette kept no Date nor x-request-id (the body's id
// is Together's request id, not read as one from the body); the Date is
// pinned to x-api-call-end's second.
func TestRound22MgbTogetherLogprobs(t *testing.T) {
	t.Parallel()
	const date = "Sun, 14 Dec 2025 13:26:53 GMT"
	req := r22Ask("Qwen/Qwen3-235B-A22B-Instruct-2507-tput", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	res, body := mgbUnary(t, "real_maruel_together_qwen_logprobs", mgbTogether, date, req)
	if body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Errorf("request %v", body)
	}
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Hello." {
		t.Errorf("parts %v", p)
	}
	m := res.Meta
	r22Meta(t, m, "oPBXTbH-6Ng1vN-9ade091ab84ca275", "", "Qwen/Qwen3-235B-A22B-Instruct-2507-tput", 1765718813,
		&llmrelayv1.Usage{InputTokens: 16, OutputTokens: 3, TotalTokens: 19}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	lp, _ := m.GetExtended().AsMap()["logprobs"].(map[string]any)
	content, _ := lp["content"].([]any)
	if len(content) != 3 {
		t.Fatalf("logprobs %v", lp)
	}
	wantTok := []struct {
		token string
		lp    float64
	}{{"Hello", -0.000024915052563301288}, {".", -0.6205676794052124}, {"<|im_end|>", 0}}
	for i, w := range wantTok {
		c, _ := content[i].(map[string]any)
		top, _ := c["top_logprobs"].([]any)
		if c["token"] != w.token || c["logprob"] != w.lp || len(top) != 2 {
			t.Errorf("token %d: %v", i, c)
		}
	}
	last, _ := content[2].(map[string]any)["top_logprobs"].([]any)
	if second, _ := last[1].(map[string]any); second["token"] != " \uFFFD" || second["logprob"] != -24.464284896850586 ||
		!mgbJSONEqual(t, second["bytes"], `[32,239,191,189]`) {
		t.Errorf("last token's second candidate %v", second)
	}
	mgbTogetherRateLimit(t, m.GetRateLimit(), date, 16, time.Second)
}

// TestRound22MgbTogetherSquareRoot: the same model with square_root
// required: content null, one call (call_lu6vo8048fii0giy095kz6wd, index
// 0) with {"number":132413}, tool_calls; 210 in, 25 out. maruel/genai's
// second request (answered: "363.89", stop, 254 in, 7 out) sent the call
// back (with its index) and the result by id, tool choice none; ours is
// the same but for the index and content null.
func TestRound22MgbTogetherSquareRoot(t *testing.T) {
	t.Parallel()
	const (
		date   = "Mon, 15 Dec 2025 22:49:55 GMT"
		model  = "Qwen/Qwen3-235B-A22B-Instruct-2507-tput"
		callID = "call_lu6vo8048fii0giy095kz6wd"
	)
	res, body := mgbUnary(t, "real_maruel_together_qwen_sqrt_1", mgbTogether, date, mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "oPN9RF3-3pDw3Z-9ae97f336da7a29f", "", model, 1765838995,
		&llmrelayv1.Usage{InputTokens: 210, OutputTokens: 25, TotalTokens: 235}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, res.Meta, nil)
	mgbTogetherRateLimit(t, res.Meta.GetRateLimit(), date, 18, time.Second)

	res2, body2 := mgbUnary(t, "real_maruel_together_qwen_sqrt_2", mgbTogether, date, mgbSqrtFollowUp(model, res.Message, callID))
	const recorded = `[{"role":"user","content":"` + mgbSqrtQuestion + `"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"` + callID + `","type":"function","function":{"name":"square_root","arguments":"{\"number\":132413}"}}]},` +
		`{"role":"tool","content":"363.89","tool_call_id":"` + callID + `"}]`
	if !mgbJSONEqual(t, body2["messages"], recorded) || body2["tool_choice"] != "none" {
		t.Errorf("second request %v", body2)
	}
	if p := res2.Message.GetParts(); len(p) != 1 || p[0].GetText() != "363.89" {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, res2.Meta, "oPN9RSW-3pDw3Z-9ae97f38ff0aa29f", "", model, 1765838995,
		&llmrelayv1.Usage{InputTokens: 254, OutputTokens: 7, TotalTokens: 261}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	mgbTogetherRateLimit(t, res2.Meta.GetRateLimit(), date, 17, time.Second)
}

// TestRound22MgbTogetherThinkingPrefilled: Qwen3-235B-A22B-Thinking-2507
// on Together with square_root required. Together does not parse this
// model's reasoning ("reasoning" absent): its chat template opens the
// think block in the prompt, so the content is the reasoning ("Okay, the
// user wants me to calculate the square root of 132413 using the
// square_root tool. …I'll generate the tool call as specified.\n") then
// "</think>\n\n", with no "<think>"; then the call
// call_4hpuwh3ustunkpmtb4o9ehu5 {"number":132413}; 212 in, 250 out.
// **Bug:** the reasoning and the closing tag were the answer's text. The
// reasoning is now a reasoning part and "\n\n" (what follows the tag) the
// text.
func TestRound22MgbTogetherThinkingPrefilled(t *testing.T) {
	t.Parallel()
	const model = "Qwen/Qwen3-235B-A22B-Thinking-2507"
	res, _ := mgbUnary(t, "real_maruel_together_qwen_thinking_sqrt_1", mgbTogether, "Mon, 15 Dec 2025 23:04:53 GMT", mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	parts := res.Message.GetParts()
	if len(parts) != 3 || parts[1].GetText() != "\n\n" {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning().GetText()
	if !strings.HasPrefix(r, "Okay, the user wants me to calculate the square root of 132413 using the square_root tool. Let me check the tools provided.\n\n") ||
		!strings.Contains(r, `a JSON object with "number": 132413.`) || !strings.HasSuffix(r, "I'll generate the tool call as specified.\n") || strings.Contains(r, "think>") {
		t.Errorf("reasoning %q", r)
	}
	if c := parts[2].GetToolCall(); c.GetCallId() != "call_4hpuwh3ustunkpmtb4o9ehu5" || c.GetArguments() != `{"number":132413}` {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "oPNE1C1-zqrih-9ae995098d7ea2ea", "", model, 1765839893,
		&llmrelayv1.Usage{InputTokens: 212, OutputTokens: 250, TotalTokens: 462}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	mgbTogetherRateLimit(t, res.Meta.GetRateLimit(), "Mon, 15 Dec 2025 23:04:53 GMT", 18, 2*time.Second)
}

// TestRound22MgbTogetherThinkingCut: the same model with max_tokens 16:
// "Okay, the user asked me to explain the theory of relativity in great
// detail", length, "reasoning": null; 21 in, 16 out. It is reasoning the
// template's block holds, but without "</think>" nothing in the answer
// tells it from a parsed server's answer text: it stays text (see
// prefilledThink).
func TestRound22MgbTogetherThinkingCut(t *testing.T) {
	t.Parallel()
	const model = "Qwen/Qwen3-235B-A22B-Thinking-2507"
	req := r22Ask(model, "Explain the theory of relativity in great details.")
	req.Options.MaxTokens = proto.Int32(16)
	res, body := mgbUnary(t, "real_maruel_together_qwen_thinking_max_tokens", mgbTogether, "Mon, 15 Dec 2025 21:18:39 GMT", req)
	if body["max_tokens"] != 16.0 && body["max_completion_tokens"] != 16.0 {
		t.Errorf("request %v", body)
	}
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "Okay, the user asked me to explain the theory of relativity in great detail" {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, res.Meta, "oPMfMeV-zqrih-9ae8f988d881a2f0", "", model, 1765833519,
		&llmrelayv1.Usage{InputTokens: 21, OutputTokens: 16, TotalTokens: 37}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	mgbTogetherRateLimit(t, res.Meta.GetRateLimit(), "Mon, 15 Dec 2025 21:18:39 GMT", 19, 2*time.Second)
}

// TestRound22MgbTogetherBadKey: Together's 401 for a bad key: its body
// carries Together's request id beside the error ("id":
// "oPBSiFu-zqrih-9addf27bee29a320"), code invalid_api_key, type
// invalid_request_error, param null.
func TestRound22MgbTogetherBadKey(t *testing.T) {
	t.Parallel()
	e, _ := mgbErr(t, "real_maruel_together_err_401", mgbTogether, r22Ask("Qwen/Qwen3-235B-A22B-Thinking-2507", "Say hello. Use only one word."), false)
	if e.Kind != provider.KindUnauthenticated || e.HTTPStatus != 401 || e.Code != "invalid_api_key" || e.Param != "" ||
		e.Message != "Invalid API key provided. You can find your API key at https://api.together.ai/settings/api-keys." {
		t.Errorf("error %+v", e)
	}
	if e.RequestID != "oPBSiFu-zqrih-9addf27bee29a320" {
		t.Errorf("request id %q", e.RequestID)
	}
}

// TestRound22MgbTogetherBodyRequestID: pydantic-ai's recording of
// Together's 500 through Hugging Face's router, code null, retry-after 1 (testdata/real_pyd_together_500_on_tool_continuation_3.http,
// which kept no x-request-id header either) has the request id beside the
// error ("id": "oS9XtEv-3pDw3Z-9b97ab906d73553b"): the error's request id,
// by Chat Completions and by the Responses API, unary and streamed (it
// was read from headers only).
func TestRound22MgbTogetherBodyRequestID(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_together_500_on_tool_continuation_3"
	for _, responses := range []bool{false, true} {
		for _, stream := range []bool{false, true} {
			srv := providertest.ReplayFile(t, td(name+".http"))
			p := newTestProvider(t, kOpenAI, srv.URL)
			req := simpleRequest("gpt-4o-prod")
			if responses {
				req = responsesSimpleRequest("gpt-4o-prod")
			}
			var err error
			if stream {
				var s provider.Stream
				if s, err = p.Stream(context.Background(), req); s != nil {
					s.Close()
					t.Fatal("a stream for an error status")
				}
			} else {
				_, err = p.Generate(context.Background(), req)
			}
			e := providerError(t, err)
			if e.Kind != provider.KindUnavailable || e.HTTPStatus != 500 || e.Code != "server_error" || e.RetryAfter != time.Second ||
				e.Message != "Internal server error" || e.RequestID != "oS9XtEv-3pDw3Z-9b97ab906d73553b" {
				t.Errorf("responses %v stream %v: %+v", responses, stream, e)
			}
		}
	}
}
