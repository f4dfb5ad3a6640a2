package ollama

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24ImageRefused: Ollama's runner refuses an image it cannot use
// with a 500 "Failed to create new sequence: failed to process inputs: …"
// (runner/ollamarunner/runner.go: NewSequence wraps the model's
// EncodeMultimodal error, the completion handler answers it with
// http.Error 500, and the server passes the runner's status and words on,
// as it does the runner's 400 for an over-long input): "image: unknown
// format" (Go's image decoder, for a format Ollama cannot read: ollama/
// ollama#11320 quotes the line) and "this model is missing data required
// for image input" (model.ErrNoVisionModel, a model without a vision
// component). Both fail the same way on every attempt with that image and
// model; they were unavailable and retried. They are now invalid requests:
// not retried at a 500 (the route may still fall back to another model),
// nor as a stream's error line after a 200, which was retried too, and the
// message says what to change.
func TestRound24ImageRefused(t *testing.T) {
	t.Parallel()
	const recorded = "Failed to create new sequence: failed to process inputs: image: unknown format"
	srv := providertest.ReplayFile(t, td("error_500_image_unknown_format.http"))
	_, err := newTestProvider(t, srv).Generate(context.Background(), visionRequest(t))
	checkImageRefused(t, "unary 500", err, 500, recorded, provider.OllamaImageFormatAdvice)
	if !pipeline.FallbackWorthy(err) {
		t.Errorf("unary 500: not fallback-worthy")
	}

	const noVision = "Failed to create new sequence: failed to process inputs: this model is missing data required for image input"
	srv = providertest.Replay(t, providertest.Recording{Status: 500, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Body: []byte(`{"error":"` + noVision + `"}`)})
	_, err = newTestProvider(t, srv).Generate(context.Background(), visionRequest(t))
	checkImageRefused(t, "no vision", err, 500, noVision, provider.OllamaNoVisionAdvice)
	if !pipeline.FallbackWorthy(err) {
		t.Errorf("no vision: not fallback-worthy")
	}

	// After a 200 (a stream whose first line was written), the same words
	// as an error line.
	srv = providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}},
		Body: []byte(`{"error":"` + recorded + `"}` + "\n")})
	s, err := newTestProvider(t, srv).Stream(context.Background(), visionRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for err == nil {
		_, err = s.Recv()
	}
	if errors.Is(err, io.EOF) {
		t.Fatal("stream ended without its error")
	}
	checkImageRefused(t, "stream line", err, 200, recorded, provider.OllamaImageFormatAdvice)

	// Other 500s keep their kind.
	for _, msg := range []string{"llama runner process has terminated: exit status 2", "failed to process inputs: no input provided"} {
		if k := refineKind(provider.KindUnavailable, msg); k != provider.KindUnavailable {
			t.Errorf("refineKind(%q) = %v", msg, k)
		}
	}
}

func checkImageRefused(t *testing.T, what string, err error, status int, msg, advice string) {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error %v", what, err)
	}
	kind := provider.KindInvalidRequest
	if advice == provider.OllamaNoVisionAdvice {
		// Round 25: a model without vision lacks a capability
		// (KindCapability), as Ollama's own "… does not support vision".
		kind = provider.KindCapability
	}
	if pe.Kind != kind || pe.HTTPStatus != status || pe.Message != msg+advice {
		t.Errorf("%s: error %+v", what, pe)
	}
	if !strings.HasPrefix(pe.Message, msg) {
		t.Errorf("%s: message %q lost the provider's words", what, pe.Message)
	}
	if pipeline.Retryable(err) {
		t.Errorf("%s: retryable", what)
	}
}
