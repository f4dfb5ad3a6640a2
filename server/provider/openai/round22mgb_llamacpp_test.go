package openai

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// mgbLlama stands for the llama.cpp server maruel/genai recorded
// (127.0.0.1, its OpenAI-compatible /chat/completions).
const mgbLlama = "http://127.0.0.1:8080/v1"

const mgbGemma = "gemma-3-4b-it-Q4_K_M.gguf"

// TestRound22MgbLlamaCitationsCached: gemma-3-4b-it on llama.cpp
// (b8180-d979f2b17, March 2026), unary, a user turn of two text parts:
// "The capital of Quackiland is Quack. \n\nThe question is a bit of a
// trick! 😊 \n", stop; usage 40 in, 25 out, 65, and timings.cache_n 4 (the
// prompt tokens llama.cpp took from its cache: the cached input tokens);
// the timings object kept as sent. llama.cpp sends no request id.
func TestRound22MgbLlamaCitationsCached(t *testing.T) {
	t.Parallel()
	req := r22Ask(mgbGemma, "")
	req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER,
		text("The capital of Quackiland is Quack. The Big Canard Statue is located in Quack."), text("What is the capital of Quackiland?"))}
	res, body := mgbUnary(t, "real_maruel_llama_gemma_citations", mgbLlama, "", req)
	if !mgbJSONEqual(t, body["messages"], `[{"role":"user","content":[{"type":"text","text":"The capital of Quackiland is Quack. The Big Canard Statue is located in Quack."},{"type":"text","text":"What is the capital of Quackiland?"}]}]`) {
		t.Errorf("request %v", body)
	}
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "The capital of Quackiland is Quack. \n\nThe question is a bit of a trick! \U0001F60A \n" {
		t.Errorf("parts %v", p)
	}
	r22Meta(t, res.Meta, "chatcmpl-so3vMI89ux55aEq63UFuq7DIKZVc39J0", "", mgbGemma, 1772373145,
		&llmrelayv1.Usage{InputTokens: 40, OutputTokens: 25, TotalTokens: 65, CachedInputTokens: 4}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res.Meta, map[string]any{"system_fingerprint": "b8180-d979f2b17", "timings": map[string]any{"cache_n": 4.0, "prompt_n": 36.0,
		"prompt_ms": 346.492, "prompt_per_token_ms": 9.624777777777778, "prompt_per_second": 103.8985027071332, "predicted_n": 25.0,
		"predicted_ms": 16919.433, "predicted_per_token_ms": 676.77732, "predicted_per_second": 1.4775908861721312}})
}

// TestRound22MgbLlamaToolThenTemplateError: the same server streaming a
// required call: a role chunk with content null, the call
// (K1HskTwp8RXBFPUgoBDoIw40XZZqqvzi, llama.cpp's own id) with its name and
// "" arguments, then `{"`, `number`, `":`, `132413}`; "tool_calls" on an
// empty delta beside the timings (cache_n 0, prompt_n 73, predicted_n 29).
// No usage: maruel/genai did not ask for one (no stream_options), ours
// does. The second turn (the call, its result "363.89" by id, tool choice
// none) was refused by gemma-3's chat template: llama.cpp's 500
// server_error "Error: Jinja Exception: Conversation roles must alternate
// user/assistant/…". **Bug:** it was read as the server unavailable (500),
// to retry and fall back on; the template refuses that conversation every
// time: an invalid request now, the message whole.
func TestRound22MgbLlamaToolThenTemplateError(t *testing.T) {
	t.Parallel()
	const callID = "K1HskTwp8RXBFPUgoBDoIw40XZZqqvzi"
	req := mgbSqrtReq(mgbGemma, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)
	_, f, body := mgbStream(t, "real_maruel_llama_gemma_sqrt_stream_1", mgbLlama, "", req)
	if body["tool_choice"] != "required" || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number":132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	m := f.Meta
	r22Meta(t, m, "chatcmpl-tamERF6cWniyH8i2IzknVOF1i0d7UjSH", "", mgbGemma, 1772373124, nil, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	if m.GetToolCallCount() != 1 {
		t.Errorf("meta %v", m)
	}
	r22Ext(t, m, map[string]any{"system_fingerprint": "b8180-d979f2b17", "timings": map[string]any{"cache_n": 0.0, "prompt_n": 73.0,
		"prompt_ms": 700.399, "prompt_per_token_ms": 9.594506849315069, "prompt_per_second": 104.22630529169801, "predicted_n": 29.0,
		"predicted_ms": 2541.263, "predicted_per_token_ms": 87.62975862068966, "predicted_per_second": 11.411648459840638}})

	const msg = "------------\nWhile executing CallExpression at line 19, column 27 in source:\n...% 2 == 0) -%}↵        {{ raise_exception(\"Conversation roles must alternate user...\n" +
		"                                           ^\nError: Jinja Exception: Conversation roles must alternate user/assistant/user/assistant/..."
	for _, stream := range []bool{true, false} {
		e, sent := mgbErr(t, "real_maruel_llama_gemma_sqrt_stream_2_err", mgbLlama, mgbSqrtFollowUp(mgbGemma, f.Message, callID), stream)
		// maruel/genai sent the result as one text part
		// ([{"type":"text","text":"363.89"}]), ours as a string.
		const recorded = `[{"role":"user","content":"` + mgbSqrtQuestion + `"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"type":"function","id":"` + callID + `","function":{"name":"square_root","arguments":"{\"number\":132413}"}}]},` +
			`{"role":"tool","content":"363.89","tool_call_id":"` + callID + `"}]`
		if !mgbJSONEqual(t, sent["messages"], recorded) || sent["tool_choice"] != "none" {
			t.Errorf("second request %v", sent)
		}
		if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 500 || e.Message != msg || e.RetryAfter != 0 {
			t.Errorf("stream %v: error %+v", stream, e)
		}
	}
}

// TestRound22MgbLlamaLogprobs: llama.cpp (b9020) serving Qwen3-ASR-0.6B
// as a chat model, with logprobs and 2 top: "language None<asr_text>Say
// hello." (the ASR model's own format, as it answered), seven tokens with
// llama.cpp's token "id"s, the special ones as "" with bytes [] (the last
// at -0.0060430001467466354), kept as sent; usage 16 in of which 15
// cached, said twice (prompt_tokens_details.cached_tokens and
// timings.cache_n): 15, not 30. No bug.
func TestRound22MgbLlamaLogprobs(t *testing.T) {
	t.Parallel()
	const model = "ggml-org/Qwen3-ASR-0.6B-GGUF"
	req := r22Ask(model, "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	res, body := mgbUnary(t, "real_maruel_llama_qwen3asr_logprobs", mgbLlama, "", req)
	if body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Errorf("request %v", body)
	}
	if p := res.Message.GetParts(); len(p) != 1 || p[0].GetText() != "language None<asr_text>Say hello." {
		t.Errorf("parts %v", p)
	}
	m := res.Meta
	r22Meta(t, m, "chatcmpl-zbrP7X2tjMn6E40lIy8wXet0zx2p8JlL", "", model, 1777931902,
		&llmrelayv1.Usage{InputTokens: 16, OutputTokens: 7, TotalTokens: 23, CachedInputTokens: 15}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	lp, _ := m.GetExtended().AsMap()["logprobs"].(map[string]any)
	content, _ := lp["content"].([]any)
	if len(content) != 7 {
		t.Fatalf("logprobs %v", lp)
	}
	if last, _ := content[6].(map[string]any); !mgbJSONEqual(t, last, `{"id":151645,"token":"","bytes":[],"logprob":-0.0060430001467466354,"top_logprobs":[{"id":151645,"token":"","bytes":[],"logprob":-0.0060430001467466354},{"id":5443,"token":" Use","bytes":[32,85,115,101],"logprob":-5.324163913726807}]}`) {
		t.Errorf("last token %v", last)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %v", m.GetWarnings())
	}
}
