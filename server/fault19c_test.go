package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// openrouterChoiceError is OpenRouter's finish_reason "error" with the
// choice's own error object (its response schema's ErrorResponse: code,
// message, metadata), as its streaming and non-streaming choices carry it
// (hand-written from OpenRouter's API reference).
func openrouterChoiceError(code int) string {
	c := "502"
	if code == 429 {
		c = "429"
	}
	return `data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","provider":"OpenAI","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":"error","native_finish_reason":"error","error":{"code":` + c + `,"message":"Upstream provider Fireworks returned an error mid-answer","metadata":{"provider_name":"Fireworks"}}}],"usage":{"prompt_tokens":24,"completion_tokens":3,"total_tokens":27}}` + "\n\n"
}

// TestFault19cOpenRouterChoiceError: the choice-level error beside
// finish_reason "error" is read (its message was lost for a generic one,
// and the fast decoder skipped it): its message reaches the status, its
// code is read as the HTTP status it names (429 rate limited, 502
// unavailable); after content the stream is not retried, and a unary
// answer with a 429 choice error is a rate limit.
func TestFault19cOpenRouterChoiceError(t *testing.T) {
	t.Parallel()
	f := openaiChat
	t.Run("stream after content, 502", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+openrouterChoiceError(502)+"data: [DONE]\n\n"),
			respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.end != nil || got.text != "The capital" || up.requests() != 1 {
			t.Fatalf("end %v, text %q, upstream %d", got.end, got.text, up.requests())
		}
		st := status.Convert(got.err)
		if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "Upstream provider Fireworks returned an error mid-answer") {
			t.Errorf("status %v %q", st.Code(), st.Message())
		}
	})
	t.Run("unary, 429", func(t *testing.T) {
		t.Parallel()
		body := strings.Replace(f.okBody, `"finish_reason":"stop"`, `"finish_reason":"error","native_finish_reason":"error","error":{"code":429,"message":"Rate limit exceeded upstream","metadata":{"provider_name":"Together"}}`, 1)
		up := f13Serve(t, respond(200, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1)), body), f.okStep(2))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			t.Fatal(err)
		}
		m := resp.GetMeta()
		if m.GetAttempts() != 2 || len(m.GetRetryReasons()) == 0 || m.GetRetryReasons()[0].GetReason() != "rate_limited" ||
			!strings.Contains(m.GetRetryReasons()[0].GetMessage(), "Rate limit exceeded upstream") {
			t.Errorf("meta %v", m)
		}
	})
}
