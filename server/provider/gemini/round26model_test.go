package gemini

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "vertex26_error_publisher_model_not_allowed")
}

// TestRound26VertexPublisherModelNotAllowed: Vertex AI refuses a model
// the project may not use with a 400 FAILED_PRECONDITION, "Project `…` is
// not allowed to use Publisher Model `projects/…/publishers/google/models/
// gemini-1.5-pro-preview-0514`" (google/oss-fuzz-gen#369;
// testdata/vertex26_error_publisher_model_not_allowed.http). **Bug:** it
// was an invalid request (InvalidArgument), which a route never falls back
// on, while the same model's 404 "was not found or your project does not
// have access to it" falls back: another project or region may have the
// model. It is now permission denied, as the FAILED_PRECONDITIONs that
// refuse the project's location or billing are: never retried, worth a
// fallback; unary, streamed and as a 200 stream's error event alike.
func TestRound26VertexPublisherModelNotAllowed(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, what string, err error, status int) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v, want *provider.Error", what, err)
		}
		if pe.Kind != provider.KindPermissionDenied || pe.HTTPStatus != status || pe.Code != "FAILED_PRECONDITION" ||
			!strings.HasPrefix(pe.Message, "Project `oss-fuzz` is not allowed to use Publisher Model `projects/oss-fuzz/") {
			t.Errorf("%s: got kind %v, status %d, code %q, message %q", what, pe.Kind, pe.HTTPStatus, pe.Code, pe.Message)
		}
		if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
			t.Errorf("%s: retryable %v, fallback %v; want false, true", what, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
		}
	}
	vertexErrorEveryWay(t, "vertex26_error_publisher_model_not_allowed", check)

	// Other FAILED_PRECONDITIONs keep their kinds: the words are the
	// model's refusal to the project, not any precondition.
	for msg, want := range map[string]provider.Kind{
		"Project is not allowed to use Publisher Model `projects/oss-fuzz/locations/me-central1/publishers/google/models/gemini-1.5-pro-preview-0514`": provider.KindPermissionDenied,
		"User location is not supported for the API use.":                                          provider.KindPermissionDenied,
		"Precondition check failed.":                                                               provider.KindInvalidRequest,
		"Your request mentions that a project is not allowed to use Publisher Model `x` sometimes": provider.KindInvalidRequest,
	} {
		rec := providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
			Body: []byte(`{"error":{"code":400,"message":` + strconv.Quote(msg) + `,"status":"FAILED_PRECONDITION"}}`)}
		srv := providertest.Replay(t, rec)
		p3, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		_, err = p3.Generate(context.Background(), generateCases(t)["plain"])
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != want {
			t.Errorf("%q: err %v, want kind %v", msg, err, want)
		}
	}
}
