package openai

import (
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/internal/framesize"
)

// TestRequestPathFrames: the frames between the pipeline and the upstream
// call stay small, since the request is encoded, written and its answer
// awaited below them, at the deepest point of a stream's goroutine
// (docs/decisions.md, "An open stream's goroutine stays within 8 KiB").
// Before their split send took 512 bytes, Generate 328, buildChatRequest
// 920 and encodeMessages 1040.
func TestRequestPathFrames(t *testing.T) {
	for _, c := range []struct {
		fn    any
		limit int
	}{
		{(*Provider).send, 160},
		{(*Provider).Generate, 192},
		{(*Provider).buildChatRequest, 288},
		{(*Provider).encodeMessages, 160},
		{(*Provider).encodeMessage, 160},
	} {
		name, size, err := framesize.Of(c.fn)
		if errors.Is(err, framesize.ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if size > c.limit {
			t.Errorf("%s takes %d bytes of stack, want at most %d", name, size, c.limit)
		}
	}
}
