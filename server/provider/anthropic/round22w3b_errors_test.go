package anthropic

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// TestRound22w3bMaruelErrors: maruel/genai's errors cassettes (February
// 2026), unary and streamed, each with its own request id, which the
// cassettes keep only in the body's request_id (maruel/genai's recorder
// drops the request-id header): a bad key, 401 authentication_error
// "invalid x-api-key" (KindUnauthenticated), and a bad model, 404
// not_found_error "model: bad model" (KindNotFound); x-should-retry: false
// on all four, no rate-limit header; the bad model's message blames the
// model field (Param "model"). A stream gets the error before any
// event. The requests are the recorded ones (rmgSame).
func TestRound22w3bMaruelErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, model string
		maxTokens   int32
		streaming   bool
		kind        provider.Kind
		status      int
		code, msg   string
		requestID   string
	}{
		{"real_maruel_bad_key", "claude-3-haiku-20240307", 4096, false, provider.KindUnauthenticated, 401, "authentication_error", "invalid x-api-key", "req_011CXtrhKkzZ6tTYqoKB67G8"},
		{"real_maruel_bad_key_stream", "claude-3-haiku-20240307", 4096, true, provider.KindUnauthenticated, 401, "authentication_error", "invalid x-api-key", "req_011CXtrhKydjvSnjbWWZm6BB"},
		{"real_maruel_bad_model", "bad model", 64000, false, provider.KindNotFound, 404, "not_found_error", "model: bad model", "req_011CXtrhLZ7agybPxEHj1Z4Q"},
		{"real_maruel_bad_model_stream", "bad model", 64000, true, provider.KindNotFound, 404, "not_found_error", "model: bad model", "req_011CXtrhMH1yT9mEiyH1nj3A"},
	} {
		srv := providertest.ReplayFile(t, "testdata/"+tc.file+".http")
		p := newTestProvider(t, srv.URL)
		req := r21Request(tc.model, "Tell a short joke.", tc.maxTokens, 0)
		var err error
		if tc.streaming {
			var s provider.Stream
			s, err = p.Stream(context.Background(), req)
			if s != nil {
				t.Fatalf("%s: Stream returned a stream with an error status", tc.file)
			}
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %T %v is not a *provider.Error", tc.file, err, err)
		}
		if pe.Provider != "anthropic" || pe.Kind != tc.kind || pe.HTTPStatus != tc.status || pe.Code != tc.code ||
			pe.Message != tc.msg || pe.RetryAfter != 0 || pe.ShouldRetry != provider.RetryDiscouraged || pe.RequestID != tc.requestID {
			t.Errorf("%s: got kind=%v status=%d code=%q msg=%q param=%q retry=%v advice=%v rid=%q", tc.file,
				pe.Kind, pe.HTTPStatus, pe.Code, pe.Message, pe.Param, pe.RetryAfter, pe.ShouldRetry, pe.RequestID)
		}
		// "model: bad model" names the field the API blamed.
		if want := map[bool]string{true: "model"}[tc.kind == provider.KindNotFound]; pe.Param != want {
			t.Errorf("%s: param %q, want %q", tc.file, pe.Param, want)
		}
		// No header said anything (no request-id, no rate limit): no meta;
		// the server takes the failure's provider request id from RequestID.
		if proto.Size(pe.Meta) != 0 {
			t.Errorf("%s: meta %v, want none", tc.file, pe.Meta)
		}
		r22SameRequest(t, srv.Last(t).Body, tc.file, rmgSame)
	}
}
