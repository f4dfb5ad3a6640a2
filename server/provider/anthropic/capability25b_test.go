package anthropic

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25bCapabilityRefused: a capability the model lacks, in the
// provider's words, a 400 invalid_request_error: Anthropic's
// "'claude-3-5-sonnet-20241022' does not support thinking."
// (anthropics/claude-code#2245; testdata/error_400_thinking_unsupported.http)
// and Ollama's Anthropic-compatible /v1/messages passing ollama.com's "this
// model does not support image input (ref: …)" (ollama/ollama#17301;
// testdata/ollama_400_image_unsupported.http) and its own "<model> does not
// support tools" (the ollama package's real_lcg_tool_call_unsupported words,
// in the shape Ollama's anthropic.NewError writes). They were invalid
// requests, which never fall back; a model that has the capability serves
// the same request: KindCapability, never retried, a reason to fall back,
// unary, before a stream, and as a stream's error event. Another 400 that
// names thinking ("\"thinking.type.enabled\" is not supported for this
// model. …", the request's form, which the caller or adapter fixes) stays
// an invalid request.
func TestRound25bCapabilityRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, msg, requestID string
	}{
		{"error_400_thinking_unsupported", "'claude-3-5-sonnet-20241022' does not support thinking.", "req_011CQGk4vN8sTq2Yb7Xe3RwJ"},
		{"ollama_400_image_unsupported", "this model does not support image input (ref: b8bd630e-4a39-4b57-82af-9158ee9d5703)", "req_6f1d2a9e0c8b4735"},
	} {
		for _, streaming := range []bool{false, true} {
			srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
			p := newTestProvider(t, srv.URL)
			var err error
			if streaming {
				_, err = p.Stream(context.Background(), plainRequest())
			} else {
				_, err = p.Generate(context.Background(), plainRequest())
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s stream=%v: error %v", tc.file, streaming, err)
			}
			if pe.Kind != provider.KindCapability || pe.HTTPStatus != 400 || pe.Message != tc.msg || pe.RequestID != tc.requestID || pe.Code != "invalid_request_error" {
				t.Errorf("%s stream=%v: kind %v status %d message %q request id %q code %q", tc.file, streaming, pe.Kind, pe.HTTPStatus, pe.Message, pe.RequestID, pe.Code)
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream=%v: retryable %v, fallback-worthy %v", tc.file, streaming, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
	for _, tc := range []struct {
		msg  string
		kind provider.Kind
	}{
		{"registry.ollama.ai/library/gemma3:1b does not support tools", provider.KindCapability},
		{`"all-minilm" does not support chat`, provider.KindUnsupported},
		{`"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`, provider.KindInvalidRequest},
		{"max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20241022", provider.KindInvalidRequest},
	} {
		body := providertest.MustJSON(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": tc.msg}, "request_id": "req_c25b0a7e3d914f68"})
		srv := providertest.Replay(t, providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(body)})
		_, err := newTestProvider(t, srv.URL).Generate(context.Background(), plainRequest())
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != tc.kind || pe.Message != tc.msg {
			t.Errorf("%q: error %+v", tc.msg, err)
		}
		// The same words as a stream's error event (no status).
		event := "event: error\ndata: " + providertest.MustJSON(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": tc.msg}}) + "\n\n"
		srv = providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(event)})
		s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
		if err == nil {
			for err == nil {
				_, err = s.Recv()
			}
			s.Close()
		}
		if !errors.As(err, &pe) || pe.Kind != tc.kind {
			t.Errorf("%q event: error %+v", tc.msg, err)
		}
	}
}
