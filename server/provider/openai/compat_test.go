package openai

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestCompatibleReasoning: the reasoning of OpenAI-compatible servers
// (DeepSeek's reasoning_content, Ollama's /v1 reasoning, OpenRouter's
// reasoning_details) becomes a reasoning part before the text, unary and
// streamed, and the folded stream gives the unary answer.
func TestCompatibleReasoning(t *testing.T) {
	t.Parallel()
	req := chatRequests(t)["chat_plain"]
	cases := []struct {
		name      string
		reasoning string
		signed    bool
		text      string
	}{
		{"deepseek_reasoning", "The user asks for 12 squared. 12 × 12 = 144. Answer briefly.", false, "12² = 144."},
		{"ollama_v1_reasoning", "Okay, the user wants the capital of Norway. It is Oslo.", false, "The capital of Norway is Oslo."},
		{"openrouter_reasoning", "The user wants a haiku about autumn. Five, seven, five syllables.", true,
			"Crisp leaves drift and fall\namber light on quiet paths\nthe year exhales slow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, kOpenAI, u.URL).Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			parts := res.Message.GetParts()
			if len(parts) != 2 || parts[0].GetReasoning().GetText() != tc.reasoning || (parts[0].GetReasoning().GetSignature() != "") != tc.signed ||
				parts[1].GetText() != tc.text {
				t.Fatalf("unary parts %v", parts)
			}
			for _, w := range res.Meta.Warnings {
				if !strings.Contains(w, "top_k") { // the request's top_k is expected
					t.Errorf("warning %q", w)
				}
			}

			srv := providertest.ReplayFile(t, td(tc.name+"_stream.http"))
			s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			providertest.Golden(t, td(tc.name+"_stream.golden"), rendered)
			f := accFold(t, evs)
			if got, want := providertest.Answer(f.Message), providertest.Answer(res.Message); got != want {
				t.Errorf("message:\nstream %s\nunary  %s", got, want)
			}
			if f.Meta.FinishReason != res.Meta.FinishReason || !proto.Equal(f.Meta.Usage, res.Meta.Usage) {
				t.Errorf("finish %v/%v, usage %v/%v", f.Meta.FinishReason, res.Meta.FinishReason, f.Meta.Usage, res.Meta.Usage)
			}
			if f.Meta.FinishReason != llmrelayv1.FinishReason_FINISH_REASON_STOP {
				t.Errorf("finish %v", f.Meta.FinishReason)
			}
		})
	}
}

// TestUsageDetails: usage fields no normalized counter holds reach
// meta.extended (unary and streamed); DeepSeek's cache hits without
// prompt_tokens_details are cached input tokens.
func TestUsageDetails(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const usage = `{"prompt_tokens":40,"completion_tokens":30,"total_tokens":70,` +
		`"prompt_tokens_details":{"cached_tokens":8,"cache_write_tokens":16,"audio_tokens":12},` +
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":5,"accepted_prediction_tokens":9,"rejected_prediction_tokens":3},` +
		`"future_tokens":{"kind":7}}`
	wantDetails := `{"completion_tokens_details.accepted_prediction_tokens":9,"completion_tokens_details.audio_tokens":5,` +
		`"completion_tokens_details.rejected_prediction_tokens":3,"future_tokens.kind":7,"prompt_tokens_details.audio_tokens":12}`
	res, err := p.parseChatResponse([]byte(`{"id":"chatcmpl-usage-details-1","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":` + usage + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := protoCompact(t, res.Meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != wantDetails {
		t.Errorf("unary usage_details %s, want %s", got, wantDetails)
	}
	if u := res.Meta.GetUsage(); u.GetCachedInputTokens() != 8 || u.GetCacheCreationInputTokens() != 16 || u.GetInputTokens() != 40 || u.GetTotalTokens() != 70 {
		t.Errorf("usage %v", u)
	}

	s := streamFrom(p, `data: {"id":"chatcmpl-usage-details-2","choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\n"+
		`data: {"id":"chatcmpl-usage-details-2","choices":[],"usage":`+usage+"}\n\ndata: [DONE]\n\n")
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := protoCompact(t, accFold(t, evs).Meta.GetExtended().GetFields()[provider.ExtUsageDetails]); got != wantDetails {
		t.Errorf("streamed usage_details %s, want %s", got, wantDetails)
	}

	res, err = p.parseResponsesResponse([]byte(`{"id":"resp_usage_details_4","status":"completed","output":[{"type":"message","content":"x"}],`+
		`"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":4,"image_tokens":6},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":39,"tool_usage":{"web_search":{"num_requests":1}}}}`), "m")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := protoCompact(t, res.Meta.GetExtended().GetFields()[provider.ExtUsageDetails]), `{"input_tokens_details.image_tokens":6,"tool_usage.web_search.num_requests":1}`; got != want {
		t.Errorf("responses usage_details %s, want %s", got, want)
	}

	res, err = p.parseChatResponse([]byte(`{"id":"ds-usage-3","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22,"prompt_cache_hit_tokens":16,"prompt_cache_miss_tokens":4}}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.GetUsage().GetCachedInputTokens() != 16 || res.Meta.GetExtended() != nil {
		t.Errorf("DeepSeek cache hits: usage %v, extended %v", res.Meta.GetUsage(), res.Meta.GetExtended())
	}
}

// TestMistralThinking: Mistral's reasoning models send their reasoning in
// content, as "thinking" parts holding text chunks
// (testdata/real_mistral_thinking_stream.http, a real stream): it is
// reasoning, never text shown as raw JSON; the last chunk mixes a thinking
// part and a text part.
func TestMistralThinking(t *testing.T) {
	t.Parallel()
	const (
		wantReasoning = "Okay, the user is asking for the product of 17 and 23. I need to calculate this multiplication. Let me break it down:\n\n" +
			"First, I recall that 17 multiplied by 20 is 340 (since 17 * 20 = 340).\nThen, I need to add 17 multiplied by 3, which is 51 " +
			"(since 17 * 3 = 51).\nNow, add these two results together: 340 + 51 = 391.\n\nSo, 17 * 23 = 391."
		wantText = "391"
	)
	srv := providertest.ReplayFile(t, td("real_mistral_thinking_stream.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["chat_plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	providertest.Golden(t, td("real_mistral_thinking_stream.golden"), rendered)
	f := accFold(t, evs)
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != wantReasoning || parts[1].GetText() != wantText {
		t.Fatalf("parts %v", parts)
	}
	for _, w := range f.Meta.GetWarnings() {
		if !strings.Contains(w, "top_k") { // the request's top_k is expected
			t.Errorf("warning %q", w)
		}
	}
	want := &llmrelayv1.Usage{InputTokens: 28, OutputTokens: 139, TotalTokens: 167}
	if !proto.Equal(f.Meta.GetUsage(), want) || f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("usage %v, finish %v", f.Meta.GetUsage(), f.Meta.GetFinishReason())
	}

	// The unary shape: a message whose content is the same parts.
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseChatResponse([]byte(`{"id":"mistral-unary","choices":[{"message":{"role":"assistant","content":[` +
		`{"type":"thinking","thinking":[{"type":"text","text":"Two and two."}]},{"type":"text","text":"4"}]},"finish_reason":"stop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ps := res.Message.GetParts(); len(ps) != 2 || ps[0].GetReasoning().GetText() != "Two and two." || ps[1].GetText() != "4" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("unary parts %v, warnings %q", ps, res.Meta.GetWarnings())
	}
}

// TestDeepSeekToolCallStream: a real DeepSeek stream
// (testdata/real_deepseek_tool_call_stream.http): reasoning_content, then a
// tool call keyed by DeepSeek's call id with content null throughout, and
// usage with cache hits and reasoning tokens.
func TestDeepSeekToolCallStream(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_deepseek_tool_call_stream.http"))
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["tools_parallel"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	providertest.Golden(t, td("real_deepseek_tool_call_stream.golden"), rendered)
	f := accFold(t, evs)
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "The user asks about the weather in San Francisco. I should use the weather tool." {
		t.Fatalf("parts %v", parts)
	}
	if tc := parts[1].GetToolCall(); tc.GetCallId() != "call_00_IhCAliIHtM9gKpgfqbBV9873" || tc.GetName() != "weather" ||
		tc.GetArguments() != `{"location": "San Francisco"}` || !tc.GetArgumentsValid() {
		t.Errorf("call %v", tc)
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	want := &llmrelayv1.Usage{InputTokens: 374, OutputTokens: 61, TotalTokens: 435, CachedInputTokens: 256, ReasoningTokens: 17}
	if !proto.Equal(f.Meta.GetUsage(), want) {
		t.Errorf("usage %v, want %v", f.Meta.GetUsage(), want)
	}
	// DeepSeek sends no x-request-id; its request id is x-ds-trace-id.
	if got := f.Meta.GetProviderRequestId(); got != "cf047389a5ee8f7597ed9a3934a6ceff" {
		t.Errorf("provider request id %q, want the x-ds-trace-id", got)
	}
}
