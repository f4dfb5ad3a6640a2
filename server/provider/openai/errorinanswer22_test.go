package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestErrorObjectWith200Unary: a 2xx body that is an error object (vLLM's
// {"object":"error",...,"code":404}, a FastAPI {"detail":...}) fails a
// unary call as it fails a stream (jsonInsteadOfStream reads the body the
// same way): the kind its code or detail says, its message kept. The
// unary call used to return an empty answer (the vLLM body) or a bad
// response (the detail), so the same server failure was retried on one
// path and not on the other.
func TestErrorObjectWith200Unary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		kind       provider.Kind
		message    string
	}{
		{"vllm model not found", `{"object":"error","message":"The model ` + "`gpt-x`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`,
			provider.KindNotFound, "The model `gpt-x` does not exist."},
		{"fastapi detail", `{"detail":"Service temporarily unavailable"}`, 0, "Service temporarily unavailable"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Request-Id", "req_eia22")
			_, _ = w.Write([]byte(tc.body))
		}))
		defer srv.Close()
		for _, format := range []string{"openai-chat", formatResponses} {
			p := newTestProvider(t, kOpenAI, srv.URL)
			req := simpleRequest("gpt-x")
			req.Format = format
			_, uerr := p.Generate(context.Background(), req)
			_, serr := p.Stream(context.Background(), req)
			var ue, se *provider.Error
			if !errors.As(uerr, &ue) || !errors.As(serr, &se) {
				t.Fatalf("%s %s: unary %v, stream %v", tc.name, format, uerr, serr)
			}
			if ue.Kind != se.Kind || ue.Message != se.Message || ue.Message != tc.message || ue.RequestID != "req_eia22" {
				t.Errorf("%s %s: unary %v %q (request id %q), stream %v %q, want the stream's, message %q", tc.name, format, ue.Kind, ue.Message, ue.RequestID, se.Kind, se.Message, tc.message)
			}
			if tc.kind != 0 && ue.Kind != tc.kind {
				t.Errorf("%s %s: kind %v, want %v", tc.name, format, ue.Kind, tc.kind)
			}
		}
	}
}
