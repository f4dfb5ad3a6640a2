package openai

import (
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/framesize"
)

// TestSendFrame: send keeps a small frame (the request is built, and
// failures reported, in functions of their own; it took 512 bytes before):
// the request is written and its answer awaited below it (docs/decisions.md,
// "An open stream's goroutine stays within 8 KiB").
func TestSendFrame(t *testing.T) {
	name, size, err := framesize.Of((*Provider).send)
	if errors.Is(err, framesize.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if size > 160 {
		t.Errorf("%s takes %d bytes of stack, want at most 160", name, size)
	}
}
