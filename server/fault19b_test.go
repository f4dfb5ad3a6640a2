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

var _ = strings.Contains
var _ = codes.OK
