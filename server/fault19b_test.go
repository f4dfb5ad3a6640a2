package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Fault sequences of session 19, second round (see fault13_test.go for
// the harness, fault19_test.go for the first round).

// TestFault19bUnaryCompleteThenBroken: a unary answer whose whole JSON
// body arrived, then a connection that broke instead of ending the body
// cleanly (a chunked body without its last chunk, a reset): the answer is
// complete and is the call's answer, with a warning that says what
// happened. It was discarded as a cut body and asked for again: paid
// twice. A body cut inside its JSON is still a cut, retried.
func TestFault19bUnaryCompleteThenBroken(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		head := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1))
		for _, how := range []string{"chunked cut", "reset"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				step := thenReset(head, f.okBody)
				if how == "chunked cut" {
					step = f19ChunkedCut(head, f.okBody)
				}
				up := f13Serve(t, step, f.okStep(2))
				c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatalf("err %v: a complete answer whose framing broke is the answer", err)
				}
				m := resp.GetMeta()
				if m.GetAttempts() != 1 || up.requests() != 1 || m.GetProviderRequestId() != f.wantReqID(1) {
					t.Errorf("attempts %d, upstream %d, request id %q: not asked (and paid) twice", m.GetAttempts(), up.requests(), m.GetProviderRequestId())
				}
				if got := resp.GetMessage().GetParts()[0].GetText(); got != okText {
					t.Errorf("text %q", got)
				}
				if !slices.Contains(m.GetWarnings(), provider.BodyCutAfterEndWarning) {
					t.Errorf("warnings %q", m.GetWarnings())
				}
			})
		}
		t.Run(f.name+"/chunked cut inside the JSON", func(t *testing.T) {
			t.Parallel()
			cut := f.okBody[:len(f.okBody)-1] // all but the last brace
			up := f13Serve(t, f19ChunkedCut(head, cut), f.okStep(2))
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMeta(); m.GetAttempts() != 2 || up.requests() != 2 || slices.Contains(m.GetWarnings(), provider.BodyCutAfterEndWarning) {
				t.Errorf("meta %v: a body cut inside its JSON is retried", m)
			}
		})
	}
}

// openrouterErrorFinish is the chunk OpenRouter ends a stream with when
// generation failed upstream: finish_reason "error" (native_finish_reason
// beside it), here without an error object, and the usage so far.
const openrouterErrorFinish = `data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","provider":"OpenAI","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":"error","native_finish_reason":"error"}],"usage":{"prompt_tokens":24,"completion_tokens":3,"total_tokens":27}}` + "\n\n"

// TestFault19bOpenRouterFinishError: OpenRouter's finish_reason "error"
// ("the model finishes the request with an error") without an error
// object is an upstream failure: after content, the stream ends
// Unavailable with the text relayed and the usage and response id in the
// failure's meta, not retried; before content it is retried; a unary
// answer that finished so is retried like any upstream failure. It ended
// as a success with FINISH_REASON_OTHER, the partial text passed off as
// the answer.
func TestFault19bOpenRouterFinishError(t *testing.T) {
	t.Parallel()
	f := openaiChat
	t.Run("stream after content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+openrouterErrorFinish+"data: [DONE]\n\n"),
			respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.end != nil || got.text != "The capital" || up.requests() != 1 {
			t.Fatalf("end %v, text %q, upstream %d", got.end, got.text, up.requests())
		}
		st, m := f13Check(t, f, got.err, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1, 0)
		if !strings.Contains(st.Message(), "finish_reason error") || errorInfoOf(st).GetMetadata()["upstreamCode"] != "error" {
			t.Errorf("status %q, ErrorInfo %v", st.Message(), errorInfoOf(st).GetMetadata())
		}
		if m.GetUsage().GetOutputTokens() != 3 || m.GetResponseId() != "chatcmpl-f13" {
			t.Errorf("partial meta %v", m)
		}
	})
	t.Run("stream before content", func(t *testing.T) {
		t.Parallel()
		up := f13Serve(t, respond(200, f.streamHead(1), f.head+openrouterErrorFinish+"data: [DONE]\n\n"),
			respond(200, f.streamHead(2), f.complete()))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		got := readStream13(t, c)
		if got.err != nil || got.text != okText || got.end.GetMeta().GetAttempts() != 2 {
			t.Fatalf("err %v, text %q, end %v", got.err, got.text, got.end)
		}
	})
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		body := strings.Replace(f.okBody, `"finish_reason":"stop"`, `"finish_reason":"error","native_finish_reason":"error"`, 1)
		up := f13Serve(t, respond(200, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1)), body), f.okStep(2))
		c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
		resp, err := c.Chat(context.Background(), chatReq13())
		if err != nil {
			t.Fatal(err)
		}
		if m := resp.GetMeta(); m.GetAttempts() != 2 || m.GetProviderFinishReason() != "stop" || m.GetRetryReasons()[0].GetReason() != "unavailable" {
			t.Errorf("meta %v", m)
		}
	})
}
