package pipeline

import (
	"context"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// seenRequests records the DropSignatures of every request it is given
// and fails with the scripted errors.
type seenRequests struct {
	scripted
	drops []bool
}

func (s *seenRequests) Generate(ctx context.Context, r *provider.Request) (*provider.Result, error) {
	s.drops = append(s.drops, r.DropSignatures)
	return s.scripted.Generate(ctx, r)
}

func (s *seenRequests) Stream(ctx context.Context, r *provider.Request) (provider.Stream, error) {
	s.drops = append(s.drops, r.DropSignatures)
	return s.scripted.Stream(ctx, r)
}

func sigRefused() error {
	return &provider.Error{Provider: "fake", Kind: provider.KindInvalidRequest, HTTPStatus: 400, Message: "Corrupted thought signature.", SignatureRefused: true}
}

func signedConversation() []*llmrelayv1.Message {
	return []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "c1", Name: "f", Signature: "sig"}}}}}}
}

// TestSig25SignatureRetry: a refusal of the conversation's reasoning
// state (provider.Error.SignatureRefused) is followed at once by the same
// request with DropSignatures, even where retries are off, once (a
// second refusal ends the call), on a copy of the request; a refusal of
// a conversation without such state, and a repaired request's, is not
// repaired again; streams alike.
func TestSig25SignatureRetry(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		for _, c := range []struct {
			name     string
			errs     []error
			msgs     []*llmrelayv1.Message
			attempts int
			wantOK   bool
			drops    []bool
			reasons  []string
		}{
			{"repaired", []error{sigRefused()}, signedConversation(), 1, true, []bool{false, true}, []string{SignatureRetryReason}},
			{"refused twice", []error{sigRefused(), sigRefused()}, signedConversation(), 3, false, []bool{false, true}, []string{SignatureRetryReason, SignatureRetryReason}},
			{"then transient", []error{sigRefused(), httpErr(503, 0)}, signedConversation(), 3, true, []bool{false, true, true}, []string{SignatureRetryReason, "http_503"}},
			{"no state", []error{sigRefused()}, []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER}}, 3, false, []bool{false}, []string{SignatureRetryReason}},
		} {
			clock := &fakeClock{}
			p := newTestPipeline(clock, c.attempts)
			fake := &seenRequests{scripted: scripted{errs: c.errs}}
			req := &provider.Request{Model: "m", Messages: c.msgs}
			call := &Call{Op: OpGenerate, Provider: fake, Request: req}
			var err error
			if stream {
				var s provider.Stream
				if s, err = p.Stream(context.Background(), call); s != nil {
					_ = s.Close()
				}
			} else {
				_, err = p.Unary(context.Background(), call)
			}
			if (err == nil) != c.wantOK {
				t.Errorf("%s stream=%v: err %v", c.name, stream, err)
			}
			if len(fake.drops) != len(c.drops) {
				t.Fatalf("%s stream=%v: requests %v, want %v", c.name, stream, fake.drops, c.drops)
			}
			for i := range c.drops {
				if fake.drops[i] != c.drops[i] {
					t.Errorf("%s stream=%v: requests %v, want %v", c.name, stream, fake.drops, c.drops)
				}
			}
			if req.DropSignatures {
				t.Errorf("%s: the caller's request was changed", c.name)
			}
			rr := call.Record.RetryReasons
			if len(rr) != len(c.reasons) {
				t.Fatalf("%s stream=%v: reasons %v", c.name, stream, rr)
			}
			for i, r := range rr {
				if r.GetReason() != c.reasons[i] {
					t.Errorf("%s stream=%v: reason %d %q, want %q", c.name, stream, i, r.GetReason(), c.reasons[i])
				}
			}
			if rr[0].GetDelay() != nil && c.reasons[0] == SignatureRetryReason && len(rr) > 1 {
				t.Errorf("%s: the repair waited %v", c.name, rr[0].GetDelay())
			}
		}
	}
}
