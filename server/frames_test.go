package server

import (
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/framesize"
)

// checkFrames fails when one of fns takes more than limit bytes of stack.
func checkFrames(t *testing.T, limit int, fns ...any) {
	t.Helper()
	for _, fn := range fns {
		name, size, err := framesize.Of(fn)
		if errors.Is(err, framesize.ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if size > limit {
			t.Errorf("%s takes %d bytes of stack, want at most %d", name, size, limit)
		}
	}
}

// TestStreamPathFrames: the functions between the gRPC handler and the
// provider's request keep small frames (their rare paths, and the relay's
// state, are in functions of their own): the request is written and its
// answer awaited below them, at the deepest point of the stream's
// goroutine, which must stay within 8 KiB (docs/decisions.md, "An open
// stream's goroutine stays within 8 KiB"). runStream, StreamChat and
// decode took 608, 376 and 392 bytes before the split, Chat 360. The
// codec and the decoding stream are used by pointer (their values' methods
// added a wrapper frame each, ~200 bytes, under the request's decoding,
// one of the deepest points). Unary calls run on gRPC's reused workers,
// which keep what they grew to.
func TestStreamPathFrames(t *testing.T) {
	checkFrames(t, 160, (*gateway).StreamChat, (*gateway).StreamTools, (*gateway).runStream, (*Server).decode,
		(*gateway).Chat, (*gateway).Tools, (*decodingStream).RecvMsg, (*codec).Unmarshal)
}
