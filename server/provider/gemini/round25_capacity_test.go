package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "capacity25_model_capacity_exhausted", "capacity25_vertex_paygo_429")
}

// TestRound25CapacityIsUnavailable: a 429 RESOURCE_EXHAUSTED that says
// the model's shared capacity is used up, not a quota of the caller's,
// is the provider being unavailable (retried, a route falls back on the
// 429), with no quota violation, unary and streamed: the Code Assist
// backend's MODEL_CAPACITY_EXHAUSTED as Gemini-API proxies relay it, and
// Vertex AI's pay-as-you-go "Resource exhausted. Please try again
// later." (testdata/README.md, "Round 25"). Both were rate limits of the
// caller's (RESOURCE_EXHAUSTED, UPSTREAM_RATE_LIMITED).
func TestRound25CapacityIsUnavailable(t *testing.T) {
	t.Parallel()
	const vertexMsg = "Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."
	for _, c := range []struct {
		name, model, code, msg string
	}{
		{"capacity25_model_capacity_exhausted", "gemini-3-flash-preview", "RESOURCE_EXHAUSTED/MODEL_CAPACITY_EXHAUSTED",
			"No capacity available for model gemini-3-flash-preview on the server"},
		{"capacity25_vertex_paygo_429", "gemini-3-pro-preview", "RESOURCE_EXHAUSTED", vertexMsg},
	} {
		for _, stream := range []bool{false, true} {
			p, _ := replay(t, c.name)
			req := r21User(c.model, "", msg(llmrelayv1.Role_ROLE_USER, text("hi")))
			var err error
			if stream {
				var s provider.Stream
				s, err = p.Stream(context.Background(), req)
				if s != nil {
					t.Fatalf("%s: a stream for a 429", c.name)
				}
			} else {
				_, err = p.Generate(context.Background(), req)
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s stream=%v: err %v", c.name, stream, err)
			}
			if pe.Kind != provider.KindUnavailable || pe.HTTPStatus != http.StatusTooManyRequests || pe.Code != c.code ||
				pe.Message != c.msg || len(pe.Quota) != 0 || pe.Meta.GetRateLimit() != nil || pe.ShouldRetry == provider.RetryDiscouraged {
				t.Errorf("%s stream=%v: kind=%s status=%d code=%q msg=%q quota=%v advice=%v", c.name, stream, pe.Kind, pe.HTTPStatus,
					pe.Code, pe.Message, pe.Quota, pe.ShouldRetry)
			}
			if !pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream=%v: retryable=%v fallback=%v", c.name, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}

	// The same words in a 200 stream's error chunk: no HTTP status to
	// retry by, the kind alone says it.
	rec := providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: []byte(`data: {"error": {"code": 429, "message": "` + vertexMsg + `", "status": "RESOURCE_EXHAUSTED"}}` + "\r\n\r\n")}
	srv := providertest.Replay(t, rec)
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), r21User("gemini-3-pro-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("hi"))))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	_, end := drain(t, s)
	var pe *provider.Error
	if errors.Is(end, io.EOF) || !errors.As(end, &pe) {
		t.Fatalf("stream ended with %v", end)
	}
	if pe.Kind != provider.KindUnavailable || pe.Code != "RESOURCE_EXHAUSTED" || pe.Message != vertexMsg || !pipeline.Retryable(end) {
		t.Errorf("in-stream: kind=%s code=%q msg=%q retryable=%v", pe.Kind, pe.Code, pe.Message, pipeline.Retryable(end))
	}
}
