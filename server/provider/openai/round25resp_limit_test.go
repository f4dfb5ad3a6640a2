package openai

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// r25Limited is r21Request asking for at most n output tokens.
func r25Limited(model, question string, n int32) *provider.Request {
	req := r21Request(model, question)
	req.Options = &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(n)}
	return req
}

// r25HiddenWarning is limitCutHidden's warning for a limit of n.
func r25HiddenWarning(n string) string {
	return `the response is reported "completed" but used all ` + n + ` output tokens allowed (max_output_tokens): ` +
		`it was cut by the token limit (Ollama's and llama.cpp's /v1/responses report "completed" whatever stopped the answer)`
}

// TestRound25OllamaResponsesLengthText: Ollama's /v1/responses answer cut
// by max_output_tokens (testdata/ollama_responses_length_text.http, built
// from ollama/ollama's ToResponse): status "completed", incomplete_details
// null, output_tokens 24 of the 24 the request asked for (echoed as
// max_output_tokens). It was FINISH_REASON_STOP, a cut answer labelled
// complete; it is LENGTH, the provider's "completed" kept as its finish
// reason, with a warning saying why.
func TestRound25OllamaResponsesLengthText(t *testing.T) {
	t.Parallel()
	for _, asked := range []int32{24, 0} {
		// The limit is read from the echo when the request's options
		// do not give it (extra_body, or a gateway in between).
		req := r21Request("llama3.2:3b", "What are the primary colors of light?")
		if asked > 0 {
			req = r25Limited("llama3.2:3b", "What are the primary colors of light?", asked)
		}
		res := r21Unary(t, "ollama_responses_length_text", req)
		if got := res.Message.GetParts(); len(got) != 1 || !strings.HasSuffix(got[0].GetText(), "and mixing two") {
			t.Fatalf("parts %v", got)
		}
		m := res.Meta
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "completed")
		if want := (&llmrelayv1.Usage{InputTokens: 31, OutputTokens: 24, TotalTokens: 55}); !proto.Equal(m.GetUsage(), want) {
			t.Errorf("usage %v, want %v", m.GetUsage(), want)
		}
		if w := m.GetWarnings(); len(w) != 1 || w[0] != r25HiddenWarning("24") {
			t.Errorf("warnings %q", w)
		}
	}
}

// TestRound25OllamaResponsesLengthTextStream: the same cut, streamed
// (testdata/ollama_responses_length_text_stream.http, from Ollama's
// ResponsesStreamConverter): every event says nothing of the limit, the
// message item is done "completed", and response.completed has 40 output
// tokens of the 40 asked for (echoed in every response object). LENGTH,
// with or without the limit in the request's options.
func TestRound25OllamaResponsesLengthTextStream(t *testing.T) {
	t.Parallel()
	for _, asked := range []int32{40, 0} {
		req := r21Request("qwen3:4b", "Write a haiku about autumn.")
		if asked > 0 {
			req = r25Limited("qwen3:4b", "Write a haiku about autumn.", asked)
		}
		req.Reasoning = true
		f := r21Stream(t, "ollama_responses_length_text_stream", req)
		p := f.Message.GetParts()
		if len(p) != 2 || p[0].GetReasoning().GetText() != "The user wants a haiku about autumn. Five, seven, five syllables." ||
			p[1].GetText() != "Crimson leaves descend\nwhispering to the cooling earth\nthe year" {
			t.Fatalf("parts %v", p)
		}
		wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "completed")
		if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != r25HiddenWarning("40") {
			t.Errorf("warnings %q", w)
		}
	}
}

// TestRound25LlamaCppResponsesLengthCalls: llama.cpp's /v1/responses
// stream cut by the limit in its second call
// (testdata/llamacpp_responses_length_calls_stream.http, from
// server-task.cpp): llama.cpp parses the cut output as a partial message,
// so the second call comes with the arguments written so far
// ({"city":"Li), and every item, the response included, is "completed";
// no max_output_tokens is echoed. With the request's limit (80) reached,
// the answer is LENGTH and the second call is cut (arguments_valid false,
// warned); the first, another call after it, is whole. Both were relayed
// whole and the answer TOOL_CALLS. Without a limit in
// the request nothing says the answer was cut: as the server says.
func TestRound25LlamaCppResponsesLengthCalls(t *testing.T) {
	t.Parallel()
	tools := []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	for _, asked := range []int32{80, 0} {
		req := r21Request("qwen3-8b", "What is the weather in Oslo and in Lima?")
		if asked > 0 {
			req = r25Limited("qwen3-8b", "What is the weather in Oslo and in Lima?", asked)
		}
		req.Protocol, req.Reasoning, req.Tools = llmrelayv1.Protocol_PROTOCOL_TOOLS, true, tools
		srv := providertest.ReplayFile(t, td("llamacpp_responses_length_calls_stream.http"))
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		evs, rendered, err := collect(t, s)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if asked > 0 {
			providertest.Golden(t, td("llamacpp_responses_length_calls_stream.golden"), rendered)
		}
		checkRespStreamInvariants(t, evs)
		f := accFold(t, evs)
		p := f.Message.GetParts()
		if len(p) != 4 {
			t.Fatalf("parts %v", p)
		}
		first, second := p[2].GetToolCall(), p[3].GetToolCall()
		if first.GetCallId() != "fc_Yj6Rm1Tx8Kq3Wb5Nd9Lc2Vz7Hp4Fs0Ok" || first.GetArguments() != `{"city":"Oslo"}` || !first.GetArgumentsValid() {
			t.Errorf("first call %v", first)
		}
		if second.GetCallId() != "fc_Ce2Vh7Lq4Xn9Mw1Kt6Rb3Zd8Jp5Gs0Uy" || second.GetArguments() != `{"city":"Li` || second.GetArgumentsValid() {
			t.Errorf("second call %v", second)
		}
		m := f.Meta
		if asked == 0 {
			wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "completed")
			if len(m.GetWarnings()) != 0 {
				t.Errorf("warnings %q", m.GetWarnings())
			}
			continue
		}
		wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "completed")
		want := []string{cutCallWarning("fc_Ce2Vh7Lq4Xn9Mw1Kt6Rb3Zd8Jp5Gs0Uy", "the token limit"), r25HiddenWarning("80")}
		if w := m.GetWarnings(); !slices.Equal(w, want) {
			t.Errorf("warnings %q, want %q", w, want)
		}

		// The final response alone (a unary answer of the same
		// server) is read the same way.
		body := providertest.Load(t, td("llamacpp_responses_length_calls_stream.http")).Body
		final := body[bytes.LastIndex(body, []byte(`"response":`))+len(`"response":`):]
		final = bytes.TrimSuffix(bytes.TrimSpace(final), []byte("}"))
		p2, err := New(testKey, WithBaseURL(srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p2.parseResponsesAnswer(final, "qwen3-8b", asked)
		if err != nil {
			t.Fatal(err)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "completed")
		if c := res.Message.GetParts()[3].GetToolCall(); c.GetArgumentsValid() {
			t.Errorf("unary second call %v", c)
		}
		if w := res.Meta.GetWarnings(); !slices.Equal(w, []string{want[1], want[0]}) {
			t.Errorf("unary warnings %q", w)
		}
	}
}

// TestRound25LimitTrustedHosts: OpenAI and Azure say "incomplete" when
// the limit cuts an answer; a "completed" answer of theirs that used
// exactly the limit ended on its own, and is believed. So is any answer
// under its limit, or one whose response echoes no limit (null) however
// many tokens the request allowed.
func TestRound25LimitTrustedHosts(t *testing.T) {
	t.Parallel()
	raw := providertest.Load(t, td("ollama_responses_length_text.http")).Body
	for _, tc := range []struct {
		name   string
		set    func(*Provider)
		body   []byte
		asked  int32
		finish llmrelayv1.FinishReason
	}{
		{"compatible", func(*Provider) {}, raw, 0, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
		{"openai", func(p *Provider) { p.openAI = true }, raw, 0, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"azure", func(p *Provider) { p.azure = true }, raw, 0, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"under", func(*Provider) {}, bytes.Replace(raw, []byte(`"output_tokens":24,`), []byte(`"output_tokens":23,`), 1), 0, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"null echo", func(*Provider) {}, bytes.Replace(raw, []byte(`"max_output_tokens":24,`), []byte(`"max_output_tokens":null,`), 1), 24, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"no echo", func(*Provider) {}, bytes.Replace(raw, []byte(`"max_output_tokens":24,`), nil, 1), 24, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
	} {
		p, err := New(testKey, WithBaseURL("http://127.0.0.1:11434/v1"))
		if err != nil {
			t.Fatal(err)
		}
		tc.set(p)
		res, err := p.parseResponsesAnswer(tc.body, "llama3.2:3b", tc.asked)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Meta.GetFinishReason(); got != tc.finish {
			t.Errorf("%s: finish %v, want %v (warnings %q)", tc.name, got, tc.finish, res.Meta.GetWarnings())
		}
	}
}

// TestRound25LiteLLMResponsesIncompleteWithoutReason: LiteLLM's proxy
// serving /v1/responses over a Chat Completions model (a Claude), its
// answer cut at the 32 output tokens asked for
// (testdata/litellm_responses_length_incomplete.http, built from
// litellm's transformation.py): status "incomplete" and the message item
// "incomplete", as for a content_filter finish, with incomplete_details
// and max_output_tokens null. It was FINISH_REASON_OTHER; with the
// request's limit used up it is LENGTH (the provider's "incomplete" kept
// as its finish reason), warned. Under the limit it stays OTHER: the
// content filter may have stopped it.
func TestRound25LiteLLMResponsesIncompleteWithoutReason(t *testing.T) {
	t.Parallel()
	const q = "Explain Rust's ownership model."
	res := r21Unary(t, "litellm_responses_length_incomplete", r25Limited("claude-sonnet-4-5", q, 32))
	if got := res.Message.GetParts(); len(got) != 1 || !strings.HasSuffix(got[0].GetText(), "Borrowing lets code use a value") {
		t.Fatalf("parts %v", got)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "incomplete")
	want := `the response is reported "incomplete" without a reason and used all 32 output tokens allowed (max_output_tokens): it was cut by the token limit`
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q", w)
	}
	for _, asked := range []int32{0, 64} {
		srv := providertest.ReplayFile(t, td("litellm_responses_length_incomplete.http"))
		req := r21Request("claude-sonnet-4-5", q)
		if asked > 0 {
			req = r25Limited("claude-sonnet-4-5", q, asked)
		}
		res, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_OTHER, "incomplete")
	}
}

// TestRound25OllamaResponsesLengthCallStream: Ollama's stream of a model
// that thinks, writes a sentence and calls a tool
// (testdata/ollama_responses_length_call_stream.http, the shape of
// ollama_responses_text_then_call_stream with a limit of 58 echoed in the
// response objects and 58 output tokens). The call's item is done
// "completed" before response.completed says anything of the count: its
// end is held (the request gave no limit; the echo did) and, the limit
// used up, the call ends cut (arguments_valid false, even though
// {"city":"Paris"} parses: Ollama emits a call once its closing tag is
// parsed, so the limit may have stopped it right after, or mid-way in a
// parser that let it through); the answer is LENGTH. It was relayed whole,
// the answer TOOL_CALLS.
func TestRound25OllamaResponsesLengthCallStream(t *testing.T) {
	t.Parallel()
	req := r21Request("qwen3:8b", "What is the weather in Paris?")
	req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
	req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Description: "Get the current weather for a city",
		Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`}}
	f := r21Stream(t, "ollama_responses_length_call_stream", req)
	p := f.Message.GetParts()
	if len(p) != 3 || p[1].GetText() != "I'll check the weather in Paris for you." {
		t.Fatalf("parts %v", p)
	}
	if c := p[2].GetToolCall(); c.GetCallId() != "call_h3v9xk2p" || c.GetArguments() != `{"city":"Paris"}` || c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "completed")
	want := []string{cutCallWarning("call_h3v9xk2p", "the token limit"), r25HiddenWarning("58")}
	if w := f.Meta.GetWarnings(); !slices.Equal(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
}
