package openai

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound22AudioOutputStream: gpt-4o-audio-preview asked for modalities
// text and audio, streamed (the shape of openai/openai-dotnet's
// ChatWithBasicAudioOutput record, February 2026, its base64 shortened):
// the transcript "Hello" comes with the audio's id in delta.audio, the
// audio data in later deltas, the usage (12 audio and 5 text output
// tokens), then expires_at after it; no chunk has a finish reason. The
// audio was dropped without a word, the transcript (the answer's only
// words) and the id with it: they are in meta.extended["audio"] now, with
// the expiry, and a warning says the audio itself was dropped.
func TestRound22AudioOutputStream(t *testing.T) {
	t.Parallel()
	const name = "dialect_openai_audio_output_stream"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := r22Ask("gpt-4o-audio-preview", "Say the exact word 'hello' and nothing else.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"modalities":["text","audio"],"audio":{"voice":"ash","format":"pcm16"}}`}
	s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td(name+".golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	f := accFold(t, evs)
	if len(f.Message.GetParts()) != 0 {
		t.Errorf("parts %v", f.Message.GetParts())
	}
	audio, _ := f.Meta.GetExtended().AsMap()[extAudio].(map[string]any)
	if audio["id"] != "audio_698e909820f88191b0f56e92ff76182e" || audio["transcript"] != "Hello" || audio["expires_at"] != float64(1770954408) || len(audio) != 3 {
		t.Errorf("audio %v", audio)
	}
	if w := f.Meta.GetWarnings(); len(w) != 1 || w[0] != warnAudioOutput {
		t.Errorf("warnings %v", w)
	}
	if u := f.Meta.GetUsage(); u.GetOutputTokens() != 17 || u.GetInputTokens() != 18 {
		t.Errorf("usage %v", u)
	}
	d, _ := f.Meta.GetExtended().AsMap()["usage_details"].(map[string]any)
	if d["completion_tokens_details.audio_tokens"] != float64(12) || d["completion_tokens_details.text_tokens"] != float64(5) {
		t.Errorf("usage details %v", d)
	}
}

// TestRound22AudioOutputUnary: the unary answer's message.audio ({"id",
// "data", "expires_at", "transcript"} beside content null, OpenAI's
// documented shape) keeps its id, transcript and expiry in
// meta.extended["audio"], without the data, with one warning; a transcript
// streamed in pieces is joined, and an audio value that is no object warns
// and is ignored.
func TestRound22AudioOutputUnary(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, kOpenAI, "http://unused")
	res, err := p.parseChatResponse([]byte(`{"id":"chatcmpl-a","object":"chat.completion","created":1770950808,"model":"gpt-4o-audio-preview-2025-06-03",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"audio":{"id":"audio_1","data":"UklGRg==","expires_at":1770954408,"transcript":"Hello"}},"finish_reason":"stop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	audio, _ := res.Meta.GetExtended().AsMap()[extAudio].(map[string]any)
	if audio["id"] != "audio_1" || audio["transcript"] != "Hello" || audio["expires_at"] != float64(1770954408) || len(audio) != 3 ||
		len(res.Meta.GetWarnings()) != 1 || res.Meta.GetWarnings()[0] != warnAudioOutput || len(res.Message.GetParts()) != 0 {
		t.Errorf("meta %v parts %v", res.Meta, res.Message.GetParts())
	}
	res, err = p.parseChatResponse([]byte(`{"id":"chatcmpl-b","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","audio":"nope"},"finish_reason":"stop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Meta.GetExtended().AsMap()[extAudio]; ok || len(res.Meta.GetWarnings()) != 1 || !strings.Contains(res.Meta.GetWarnings()[0], "unrecognized shape") {
		t.Errorf("meta %v", res.Meta)
	}

	// Streamed in pieces, the transcript is joined.
	p2, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	s := streamFrom(p2, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"audio\":{\"id\":\"audio_2\",\"transcript\":\"Hel\"}}}]}\n\n"+
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"audio\":{\"transcript\":\"lo there\"}}}]}\n\n"+
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"audio\":{\"data\":\"AAAA\"}},\"finish_reason\":\"stop\"}]}\n\n"+
		"data: [DONE]\n\n")
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	f := accFold(t, evs)
	audio, _ = f.Meta.GetExtended().AsMap()[extAudio].(map[string]any)
	if audio["id"] != "audio_2" || audio["transcript"] != "Hello there" || len(audio) != 2 || len(f.Meta.GetWarnings()) != 1 {
		t.Errorf("audio %v warnings %v", audio, f.Meta.GetWarnings())
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
}
