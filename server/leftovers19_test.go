package server_test

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestLeftovers19OllamaContextOverflow: Ollama refuses an input longer
// than its context with the same words at any status (the runner's
// errorInputTooLong: 400 from the versions that tell it apart, 500 from
// older ones), natively ({"error": "…"}) and behind its OpenAI-compatible
// endpoint (openai.NewError: invalid_request_error for a 400, api_error
// otherwise) and its Anthropic-compatible one (anthropic.NewError, the
// same types). Each is one answer: InvalidArgument, reason
// CONTEXT_LENGTH_EXCEEDED, not retried (the same input fails again).
// Through the compatible endpoints the 400 was INVALID_REQUEST and the
// 500 UNAVAILABLE, retried three times.
func TestLeftovers19OllamaContextOverflow(t *testing.T) {
	t.Parallel()
	const msg = "the input length exceeds the context length" // testdata/real_lcg_context_length_no_truncate.http
	cases := []struct {
		name   string
		f      f13Format
		status int
		body   string
	}{
		{"native 400", ollamaFormat, http.StatusBadRequest, `{"error":"` + msg + `"}`},
		{"native 500", ollamaFormat, http.StatusInternalServerError, `{"error":"` + msg + `"}`},
		{"v1 400", openaiChat, http.StatusBadRequest, `{"error":{"message":"` + msg + `","type":"invalid_request_error","param":null,"code":null}}`},
		{"v1 500", openaiChat, http.StatusInternalServerError, `{"error":{"message":"` + msg + `","type":"api_error","param":null,"code":null}}`},
		{"anthropic 400", anthropicFormat, http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"` + msg + `"},"request_id":"req_1"}`},
		{"anthropic 500", anthropicFormat, http.StatusInternalServerError, `{"type":"error","error":{"type":"api_error","message":"` + msg + `"},"request_id":"req_1"}`},
		{"v1 500 embed handler", openaiChat, http.StatusInternalServerError, `{"error":{"message":"input exceeds maximum context length and cannot be truncated further","type":"api_error","param":null,"code":null}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(tc.status, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, tc.body))
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.InvalidArgument || info.GetReason() != "CONTEXT_LENGTH_EXCEEDED" {
				t.Errorf("status %v, reason %s", st, info.GetReason())
			}
			if n := up.requests(); n != 1 {
				t.Errorf("%d upstream requests: a context overflow is not retried", n)
			}
		})
	}
}
