package ollama

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound17EmbedNoSilentTruncation: /api/embed is asked with truncate
// false (Ollama's default, true, embeds the first num_ctx tokens of an
// over-long input as if it were the whole text). Ollama's EmbedHandler then
// answers the runner's refusal as a 400 {"error": "the input length
// exceeds the context length"}, the same body and status as /api/chat's
// (real_lcg_context_length_no_truncate, replayed here): a context-length
// error, not retried.
func TestRound17EmbedNoSilentTruncation(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_lcg_context_length_no_truncate.http"))
	_, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"a long text"}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindContextLength || pe.HTTPStatus != 400 || pe.Message != "the input length exceeds the context length" {
		t.Fatalf("err %v", err)
	}
	if pipeline.Retryable(err) {
		t.Errorf("a context-length error is retried")
	}
	if sent := sentBody(t, srv); string(sent["truncate"]) != "false" {
		t.Errorf("sent %s", srv.Last(t).Body)
	}
}

// TestRound17EmbedTruncateAsked: a caller who wants Ollama's truncation
// says so in extra_body; it replaces the adapter's false.
func TestRound17EmbedTruncateAsked(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("real_lcg_embed_nomic.http"))
	_, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{
		Model: "nomic-embed-text", Inputs: []string{"Hello, world!"},
		ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"truncate":true}`},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sent := sentBody(t, srv); string(sent["truncate"]) != "true" {
		t.Errorf("sent %s", srv.Last(t).Body)
	}
}

// TestRound17ChatTruncateShiftAsked: extra_body's truncate and shift
// replace the adapter's false on /api/chat too.
func TestRound17ChatTruncateShiftAsked(t *testing.T) {
	t.Parallel()
	b, err := buildChatRequest(&provider.Request{
		Model: "llama3", Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("hi"))},
		ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"shift":true,"options":{"num_ctx":4096,"num_predict":99}}`},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b.body); got != `{"model":"llama3","messages":[{"role":"user","content":"hi"}],"stream":false,"truncate":false,"shift":true,"options":{"num_ctx":4096,"num_predict":99}}` {
		t.Errorf("body %s", got)
	}
	// The window is read off the body sent, extra_body's options included.
	if b.window != (window{numCtx: 4096, numPredict: 99}) {
		t.Errorf("window %+v", b.window)
	}
}

// TestRound17ContextErrorMessages: every refusal Ollama words for an input
// that does not fit is a context-length error, whatever the status: the
// runner's (truncate false), the embed handler's when truncating cannot
// help (server/routes.go EmbedHandler), and the runner's when num_keep
// leaves nothing of the prompt.
func TestRound17ContextErrorMessages(t *testing.T) {
	t.Parallel()
	// An Ollama of 2024 answering an over-long embedding input with a 500
	// (the wording as users quote it): not retried.
	resp := &http.Response{StatusCode: 500, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Body: io.NopCloser(strings.NewReader(`{"error":"the input length exceeds the context length"}`))}
	if e := parseHTTPError(resp); e.Kind != provider.KindContextLength || pipeline.Retryable(e) {
		t.Errorf("500: kind %v retryable %v", e.Kind, pipeline.Retryable(e))
	}
	for _, m := range []string{
		"the input length exceeds the context length",
		"input exceeds maximum context length and cannot be truncated further",
		"input after truncation exceeds maximum context length",
		"entire prompt removed by truncation",
	} {
		for _, k := range []provider.Kind{provider.KindInvalidRequest, provider.KindUnknown, provider.KindUnavailable} {
			if got := refineKind(k, m); got != provider.KindContextLength {
				t.Errorf("%q (%v): %v", m, k, got)
			}
		}
	}
}

// TestRound17AnswerEndedByWindow: with shift false an answer that fills
// num_ctx ends with done_reason "length", which reads as max_tokens; the
// warning says the context window ended it when max_tokens did not (no
// num_predict, or fewer tokens than it). The bodies are written by hand
// in Ollama's shape; unary and streamed.
func TestRound17AnswerEndedByWindow(t *testing.T) {
	t.Parallel()
	const unary = `{"model":"llama3.2","created_at":"2026-11-20T09:14:03.5521Z","message":{"role":"assistant","content":"Once upon a time"},"done_reason":"length","done":true,"total_duration":812000000,"prompt_eval_count":40,"eval_count":24}`
	const streamed = `{"model":"llama3.2","created_at":"2026-11-20T09:14:03.1Z","message":{"role":"assistant","content":"Once upon a time"},"done":false}
{"model":"llama3.2","created_at":"2026-11-20T09:14:03.5521Z","message":{"role":"assistant","content":""},"done_reason":"length","done":true,"total_duration":812000000,"prompt_eval_count":40,"eval_count":24}
`
	const atWindow = "the answer ended at the context window, not at max_tokens (num_ctx 64): raise num_ctx for a longer answer"
	for _, tc := range []struct {
		name      string
		maxTokens *int32
		numCtx    *int32
		want      []string
	}{
		{"no max_tokens", nil, ptr(int32(64)), []string{atWindow}},
		{"max_tokens not reached", ptr(int32(100)), ptr(int32(64)), []string{atWindow}},
		{"max_tokens reached", ptr(int32(24)), ptr(int32(64)), nil},
		{"num_ctx unknown", nil, nil, []string{"the answer ended at the context window, not at max_tokens: raise num_ctx for a longer answer"}},
	} {
		req := func() *provider.Request {
			r := &provider.Request{Model: "llama3.2", Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Tell me a story"))},
				Options: &llmrelayv1.GenerationOptions{MaxTokens: tc.maxTokens}}
			if tc.numCtx != nil {
				r.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{NumCtx: tc.numCtx}}}
			}
			return r
		}
		h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: h, Body: []byte(unary)})
		res, err := newTestProvider(t, srv).Generate(context.Background(), req())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || !equalStrings(res.Meta.GetWarnings(), tc.want) {
			t.Errorf("%s unary: finish %v warnings %q", tc.name, res.Meta.GetFinishReason(), res.Meta.GetWarnings())
		}
		hs := http.Header{"Content-Type": {"application/x-ndjson"}}
		ssrv := providertest.Replay(t, providertest.Recording{Status: 200, Header: hs, Body: []byte(streamed)})
		st, err := newTestProvider(t, ssrv).Stream(context.Background(), req())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		evs, err := collect(st)
		if err != nil {
			t.Fatalf("%s: stream: %v", tc.name, err)
		}
		f := foldEvents(t, evs)
		if f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || !equalStrings(f.meta.GetWarnings(), tc.want) {
			t.Errorf("%s stream: finish %v warnings %q", tc.name, f.meta.GetFinishReason(), f.meta.GetWarnings())
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
