package ollama

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25ModelLoadFailed: Ollama's 500 when its runner exits while
// loading the model, with the loader's error (ollama/ollama llm/server.go:
// "llama runner process has terminated: %w", newer servers "llama-server
// process has terminated: <exit status>: <last error line>"). Both fixtures
// are hand-built from the messages users quote: a GPU without the memory
// for the model's buffers (ollama/ollama#11359, Ollama 0.9.6: "status code
// 500: llama runner process has terminated: error loading model: unable to
// allocate CUDA0 buffer"), an architecture the runner does not know
// (meta-llama/llama-models#496: "500 Internal Server Error: llama-server
// process has terminated: exit status 1: error loading model: unknown model
// architecture: 'mllama'"). They were retried as any 500, each attempt
// loading the model again to fail the same way; they stay unavailable (a
// route falls back to another deployment) but are not retried, and the
// unknown architecture says that a newer Ollama may run the model. A runner
// that exits without a loader error (error_500: "exit status 2") is still
// retried. Unary and streamed (the 500 comes before any line).
func TestRound25ModelLoadFailed(t *testing.T) {
	t.Parallel()
	const archAdvice = " (this Ollama's runner does not know the model's architecture: a newer Ollama may run it; loading it again here fails the same way)"
	for _, tc := range []struct {
		file   string
		advice provider.RetryAdvice
		msg    string
	}{
		{"error_500_load_cuda_buffer", provider.RetryDiscouraged, "llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer"},
		{"error_500_load_unknown_arch", provider.RetryDiscouraged, "llama-server process has terminated: exit status 1: error loading model: unknown model architecture: 'mllama'" + archAdvice},
		{"error_500", provider.RetryUnsaid, "llama runner process has terminated: exit status 2"},
	} {
		for _, stream := range []bool{false, true} {
			srv := providertest.ReplayFile(t, td(tc.file+".http"))
			p := newTestProvider(t, srv)
			var err error
			if stream {
				_, err = p.Stream(context.Background(), textRequest(t))
			} else {
				_, err = p.Generate(context.Background(), textRequest(t))
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s stream %v: error %v", tc.file, stream, err)
			}
			if pe.Kind != provider.KindUnavailable || pe.HTTPStatus != 500 || pe.Message != tc.msg || pe.ShouldRetry != tc.advice {
				t.Errorf("%s stream %v: error %+v", tc.file, stream, pe)
			}
			if pipeline.Retryable(err) != (tc.advice != provider.RetryDiscouraged) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream %v: retryable %v, fallback-worthy %v", tc.file, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
	for msg, want := range map[string]bool{
		"llama runner process has terminated: error loading model: unable to allocate backend buffer":                   true,
		"llama-server process has terminated: exit status 1: error loading model: unknown model architecture: 'mllama'": true,
		"llama runner process has terminated: exit status 0xc0000409":                                                   false,
		"llama runner process has terminated: signal: killed":                                                           false,
		"error loading model": false,
	} {
		if provider.OllamaLoadFailed(msg) != want {
			t.Errorf("OllamaLoadFailed(%q) = %v", msg, !want)
		}
	}
}

// TestRound25CapabilityRefused: Ollama's refusals of what the model cannot
// do, as its source words them (ollama/ollama server/routes.go @
// 00188139f12f1dff0920b6be98a4e7097232cf9f and Model.CheckCapabilities): a
// model without tools ("<full name> does not support tools", 400 from
// handleScheduleError: real_lcg_tool_call_unsupported, error_400_tools),
// think asked of a model without thinking ("\"gemma3:1b\" does not support
// thinking", 400 from the handler, which the adapter sends when
// reasoning_effort asks for thinking), an embedding model asked to chat
// ("\"all-minilm\" does not support chat", 400). They were invalid requests,
// which never fall back; they are the deployment's model, not the request
// (a model that has it serves the same request): a capability the request
// needs is KindCapability (the gateway's FailedPrecondition
// CAPABILITY_NOT_SUPPORTED, what its own capability check answers), an
// operation the model does not do KindUnsupported (as Azure's
// OperationNotSupported): not retried, a reason to fall back
// (docs/decisions.md, "What the deployment's model cannot do falls back").
// Unary and streamed (the 400 comes before any line). A 400 that is the
// request's ("invalid character"...) stays an invalid request.
func TestRound25CapabilityRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg  string
		kind provider.Kind
	}{
		{"registry.ollama.ai/library/gemma3:1b does not support tools", provider.KindCapability},
		{`"gemma3:1b" does not support thinking`, provider.KindCapability},
		{`"all-minilm" does not support chat`, provider.KindUnsupported},
		{"hf.co/unsloth/gemma-3-1b-it-GGUF:Q4_K_M does not support tools\ninsert", provider.KindCapability},
		{"invalid character 'x' looking for beginning of value", provider.KindInvalidRequest},
		{"the tools field does not support strings", provider.KindInvalidRequest},
	} {
		body := providertest.MustJSON(map[string]string{"error": tc.msg})
		for _, stream := range []bool{false, true} {
			srv := providertest.Replay(t, providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: []byte(body)})
			p := newTestProvider(t, srv)
			var err error
			if stream {
				_, err = p.Stream(context.Background(), textRequest(t))
			} else {
				_, err = p.Generate(context.Background(), textRequest(t))
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q stream %v: error %v", tc.msg, stream, err)
			}
			if pe.Kind != tc.kind || pe.HTTPStatus != 400 || pe.Message != tc.msg {
				t.Errorf("%q stream %v: error %+v", tc.msg, stream, pe)
			}
			if pipeline.Retryable(err) || pipeline.FallbackWorthy(err) != (tc.kind != provider.KindInvalidRequest) {
				t.Errorf("%q stream %v: retryable %v, fallback-worthy %v", tc.msg, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
}
