package pipeline

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestEncodedAnswer: a body in a coding the gateway cannot read fails its
// first read with a KindBadResponse error naming the coding and the
// status, and every read after; an empty one reads as empty.
func TestEncodedAnswer(t *testing.T) {
	a := &encodedAnswer{ReadCloser: io.NopCloser(strings.NewReader("\x1bW\x00`")), status: 200, encoding: "br"}
	_, err := io.ReadAll(a)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || pe.HTTPStatus != 200 || !errors.Is(err, provider.ErrNotAnAnswer) ||
		!strings.Contains(pe.Message, "Content-Encoding br") {
		t.Fatalf("err %v", err)
	}
	if n, again := a.Read(make([]byte, 8)); n != 0 || again != err {
		t.Errorf("a read after the failure: %d, %v", n, again)
	}
	empty := &encodedAnswer{ReadCloser: io.NopCloser(strings.NewReader("")), status: 503, encoding: "br"}
	if got, err := io.ReadAll(empty); err != nil || len(got) != 0 {
		t.Errorf("empty body: %q, %v", got, err)
	}
}

func TestUnreadEncoding(t *testing.T) {
	for v, want := range map[string]string{"": "", "identity": "", "gzip": "", "X-Gzip": "", "br": "br", " zstd ": "zstd", "deflate": "deflate", "gzip, br": "gzip, br"} {
		h := http.Header{}
		if v != "" {
			h.Set("Content-Encoding", v)
		}
		if got := provider.UnreadEncoding(h); got != want {
			t.Errorf("UnreadEncoding(%q) = %q, want %q", v, got, want)
		}
	}
}
