package pipeline

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestHeaderBoundsByCall: on llmrelay's HTTP/1.1 pool and on net/http's
// transport (http_version "2", which ResponseHeaderTimeout no longer
// bounds), a request made for a non-streaming call (withUnary) waits for
// its headers as long as UnaryFirstByteTimeout allows and reads its body
// whole; any other waits FirstByteTimeout and fails with a
// TransportTimeout naming first_byte_timeout, a timeout to
// provider.TransportError, not the caller's cancellation.
func TestHeaderBoundsByCall(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(300 * time.Millisecond):
			_, _ = io.WriteString(w, `{"ok":true}`)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	for _, version := range []string{"auto", "2"} {
		cfg := DefaultTransportConfig
		cfg.FirstByteTimeout, cfg.UnaryFirstByteTimeout, cfg.HTTPVersion = 50*time.Millisecond, 5*time.Second, version
		client := NewHTTPClient(cfg, nil)
		resp, err := post(t, client, withUnary(context.Background()), srv.URL, "x")
		if err != nil {
			t.Fatalf("%s: unary: %v", version, err)
		}
		if got := readAll(t, resp); got != `{"ok":true}` {
			t.Errorf("%s: unary body %q", version, got)
		}
		_, err = post(t, client, context.Background(), srv.URL, "x")
		var tt *TransportTimeout
		if !errors.As(err, &tt) || tt.Setting != "first_byte_timeout" || tt.Bound != 50*time.Millisecond {
			t.Fatalf("%s: stream: %v, want a TransportTimeout of first_byte_timeout", version, err)
		}
		if pe := provider.TransportError("x", err); pe.Kind != provider.KindTimeout || !Retryable(pe) {
			t.Errorf("%s: %v classified as %v", version, err, pe.Kind)
		}
		cfg.UnaryFirstByteTimeout = 60 * time.Millisecond
		_, err = post(t, NewHTTPClient(cfg, nil), withUnary(context.Background()), srv.URL, "x")
		if !errors.As(err, &tt) || tt.Setting != "unary_first_byte_timeout" {
			t.Errorf("%s: unary past its bound: %v", version, err)
		}
	}
}
