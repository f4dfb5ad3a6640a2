package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// Fault sequences of round 24 on the pipeline's bounds and fallbacks (the
// harness is fault13_test.go's; the bodies are its hand-built ones).

// after answers with step once d has passed, or not at all when the
// gateway gave up first.
func after(d time.Duration, step f13Step) f13Step {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
			step(w, r)
		case <-r.Context().Done():
		}
	}
}

// TestFault24UnaryHeadersWaitForTheAnswer: a non-streaming answer's
// headers come only once it is generated (a reasoning model: minutes), a
// stream's at once. With first_byte_timeout shorter than the generation,
// the unary call waits for its answer (unary_first_byte_timeout, unset:
// max_call_duration) and succeeds in one attempt, on llmrelay's HTTP/1.1
// pool and on net/http's transport (http_version "2") alike; a stream
// whose headers do not come within first_byte_timeout is still cut and
// retried, the status naming the setting. The unary call was cut at
// first_byte_timeout (120 s by default, as the OpenAI and Anthropic SDKs
// wait 600 s) and sent again, each attempt billed, and failed.
func TestFault24UnaryHeadersWaitForTheAnswer(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"auto", "2"} {
		for _, f := range []f13Format{openaiChat, openaiResponses, anthropicFormat, geminiFormat, ollamaFormat} {
			yaml := "defaults: {first_byte_timeout: 100ms, http_version: \"" + version + "\", retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n" + f.yaml
			t.Run(version+"/"+f.name+"/unary", func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, after(400*time.Millisecond, f.okStep(1)))
				c := f13Start(t, yaml, up.URL, &f13Clock{})
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatalf("a unary answer slower than first_byte_timeout failed: %v", err)
				}
				if up.requests() != 1 || resp.GetMeta().GetAttempts() != 1 {
					t.Errorf("upstream saw %d requests, attempts %d, want 1", up.requests(), resp.GetMeta().GetAttempts())
				}
			})
			t.Run(version+"/"+f.name+"/stream", func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, after(2*time.Second, respond(200, f.streamHead(1), f.complete())))
				c := f13Start(t, yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.started || got.err == nil {
					t.Fatalf("started %v, err %v", got.started, got.err)
				}
				st, info, _ := statusDetails(t, got.err)
				if st.Code() != codes.DeadlineExceeded || info.GetReason() != "UPSTREAM_TIMEOUT" || !strings.Contains(st.Message(), "first_byte_timeout (100ms)") {
					t.Fatalf("got %v %s (%s), want DeadlineExceeded UPSTREAM_TIMEOUT naming first_byte_timeout", st.Code(), info.GetReason(), st.Message())
				}
				if m := failedMeta(t, got.err); m.GetAttempts() != 2 || up.requests() != 2 {
					t.Errorf("attempts %d, upstream %d, want 2", m.GetAttempts(), up.requests())
				}
			})
		}
	}
}
