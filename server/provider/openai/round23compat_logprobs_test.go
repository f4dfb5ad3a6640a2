package openai

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23LogprobsNotGivenStream: logprobs with 2 top candidates asked
// of qwen3.5-122b-a10b through OpenRouter, streamed, and every chunk's
// choice answering "logprobs": null (hand-built in the shape of
// maruel/genai's GenStream-TopLogprobs cassette, as the unary cassette of
// the same question answered: real_maruel_openrouter_qwen35_logprobs).
// **Bug:** nothing said the logprobs asked for were not given; a warning
// says it at the end. A stream that carries them
// (real_maruel_together_qwen_logprobs_stream) has no such warning, nor
// has a stream whose request did not ask.
func TestRound23LogprobsNotGivenStream(t *testing.T) {
	t.Parallel()
	req := r22Ask(w3aQwen, "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	evs, f, body := mgbStream(t, "dialect_openrouter_logprobs_null_stream", r22OpenRouter, "", req)
	if body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Errorf("request %v", body)
	}
	if p := f.Message.GetParts(); len(p) != 2 || p[1].GetText() != "Hello" {
		t.Errorf("parts %v", p)
	}
	if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != warnNoLogprobs {
		t.Errorf("warnings %v", w)
	}
	if last := evs[len(evs)-1]; last.Meta.GetWarnings() == nil {
		t.Errorf("the warning is not the last event: %v", last)
	}
	if _, ok := f.Meta.GetExtended().GetFields()[extLogprobs]; ok {
		t.Error("logprobs invented")
	}

	req.ProviderOptions = nil
	srv := providertest.ReplayFile(t, td("dialect_openrouter_logprobs_null_stream.http"))
	s, err := mgbProvider(t, r22OpenRouter, srv.URL, "").Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err = collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if w := accFold(t, evs).Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("not asked: warnings %v", w)
	}
}
