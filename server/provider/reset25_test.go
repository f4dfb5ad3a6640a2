package provider

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
)

// TestBodyReadError: a connection failure while a body is read, after
// the provider's headers, is an answer cut in the middle (KindUnavailable,
// ErrBrokeMidAnswer, the transport's error still in the chain), never
// KindConnection, whose failures come before any response byte; what
// TransportError reads otherwise (a clean close inside the body, a
// timeout, the caller's cancellation, a gateway limit) is classified as
// TransportError classifies it, and the same error from a round trip
// (before the headers) stays KindConnection.
func TestBodyReadError(t *testing.T) {
	t.Parallel()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	e := BodyReadError("openai", reset)
	if e.Kind != KindUnavailable || !errors.Is(e, ErrBrokeMidAnswer) || !errors.Is(e, syscall.ECONNRESET) ||
		!strings.Contains(e.Message, "answered") || !strings.Contains(e.Message, "billed") || !strings.Contains(e.Message, "connection reset by peer") {
		t.Errorf("reset in the body: %v (kind %v)", e, e.Kind)
	}
	if e := TransportError("openai", reset); e.Kind != KindConnection || errors.Is(e, ErrBrokeMidAnswer) {
		t.Errorf("reset before the headers: kind %v", e.Kind)
	}
	if !CutAfterEnd(reset) {
		t.Error("a reset after a whole stream must still end it as complete")
	}
	for _, tc := range []struct {
		err  error
		kind Kind
		// broke: the answer ended inside its body (a clean close is a
		// break too: the provider answered, round 26), its message
		// TransportError's.
		broke bool
	}{
		{io.ErrUnexpectedEOF, KindUnavailable, true},
		{context.Canceled, KindCanceled, false},
		{&net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, KindTimeout, false},
		{&LimitError{Limit: "max_response_bytes", Msg: "over"}, KindResourceExhausted, false},
	} {
		e := BodyReadError("openai", tc.err)
		if e.Kind != tc.kind || errors.Is(e, ErrBrokeMidAnswer) != tc.broke || !errors.Is(e, tc.err) || e.Message != TransportError("openai", tc.err).Message {
			t.Errorf("%v: kind %v, message %q, broke %v", tc.err, e.Kind, e.Message, errors.Is(e, ErrBrokeMidAnswer))
		}
	}
}
