package gemini

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "error_400_function_calling_not_enabled")
}

// TestRound25bCapabilityRefused: the Gemini API's 400 INVALID_ARGUMENT for
// a capability the model lacks: "Function calling is not enabled for
// models/gemma-3-12b-it" (agno-agi/agno#3505;
// testdata/error_400_function_calling_not_enabled.http), "Developer
// instruction is not enabled for models/gemma-3-27b-it" (no system
// instruction: testdata/gemma24_developer_instruction_error.http, which the
// adapter avoids for Gemma 3 by sending the instructions as a user turn, but
// which other models answer too: "… for models/gemini-pro",
// google-gemini/deprecated-generative-ai-python#278) and "Json mode is not
// enabled for models/gemini-pro" (#137 of the same repository). They were
// invalid requests, which never fall back; a model that has the capability
// serves the same request: KindCapability, never retried, a reason to fall
// back, unary, before a stream and as a stream's error event, with the
// provider's status as code. Another INVALID_ARGUMENT ("Function calling
// config is set without function_declarations.", the request's own) stays
// an invalid request.
func TestRound25bCapabilityRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, msg string }{
		{"error_400_function_calling_not_enabled", "Function calling is not enabled for models/gemma-3-12b-it"},
		{"gemma24_developer_instruction_error", "Developer instruction is not enabled for models/gemma-3-27b-it"},
	} {
		for _, stream := range []bool{false, true} {
			p, _ := replay(t, tc.file)
			var err error
			if stream {
				_, err = p.Stream(context.Background(), generateCases(t)["plain"])
			} else {
				_, err = p.Generate(context.Background(), generateCases(t)["plain"])
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s stream %v: error %v", tc.file, stream, err)
			}
			if pe.Kind != provider.KindCapability || pe.HTTPStatus != 400 || pe.Message != tc.msg || pe.Code != "INVALID_ARGUMENT" {
				t.Errorf("%s stream %v: kind %v status %d message %q code %q", tc.file, stream, pe.Kind, pe.HTTPStatus, pe.Message, pe.Code)
			}
			if pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
				t.Errorf("%s stream %v: retryable %v, fallback-worthy %v", tc.file, stream, pipeline.Retryable(err), pipeline.FallbackWorthy(err))
			}
		}
	}
	for _, tc := range []struct {
		msg  string
		kind provider.Kind
	}{
		{"Json mode is not enabled for models/gemini-pro", provider.KindCapability},
		{"Developer instruction is not enabled for models/gemini-pro", provider.KindCapability},
		{"Function calling config is set without function_declarations.", provider.KindInvalidRequest},
		{"Function calling mode `ANY` is not enabled for api version v1beta", provider.KindInvalidRequest},
	} {
		body := providertest.MustJSON(map[string]any{"error": map[string]any{"code": 400, "message": tc.msg, "status": "INVALID_ARGUMENT"}})
		for _, stream := range []bool{false, true} {
			var srv *providertest.Server
			if stream {
				// The same status as a stream's error event (a 200 answer).
				srv = providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte("data: " + body + "\r\n\r\n")})
			} else {
				srv = providertest.Replay(t, providertest.Recording{Status: 400, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: []byte(body)})
			}
			p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
			if err != nil {
				t.Fatal(err)
			}
			if stream {
				var s provider.Stream
				if s, err = p.Stream(context.Background(), generateCases(t)["plain"]); err == nil {
					for err == nil {
						_, err = s.Recv()
					}
					s.Close()
				}
			} else {
				_, err = p.Generate(context.Background(), generateCases(t)["plain"])
			}
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind || pe.Message != tc.msg {
				t.Errorf("%q stream %v: error %+v", tc.msg, stream, err)
			}
		}
	}
}
