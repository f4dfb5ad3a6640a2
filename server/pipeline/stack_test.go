package pipeline

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/framesize"
)

// TestRoundTripFrame: the transport's and the pipeline's functions above
// the request write keep small frames (what they do only with raw capture,
// tracing, a proxy or a public host, or on failure, is in functions of
// their own): the request is written and its answer awaited below them
// (docs/decisions.md, "An open stream's goroutine stays within 8 KiB").
// Before, roundTripper.RoundTrip took 472 bytes, splitTransport.RoundTrip
// 120 and Timing's stream interceptor 152.
func TestRoundTripFrame(t *testing.T) {
	_, timing := Timing(time.Now)
	for _, c := range []struct {
		fn    any
		limit int
	}{
		{(*roundTripper).RoundTrip, 96},
		{(*splitTransport).RoundTrip, 96},
		{timing, 96},
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

// goid is the current goroutine's id, from its stack trace's header.
func goid() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestDialAside: NewHTTPClient's own transport dials on a goroutine of its
// own (a dial's frames would otherwise grow the stream's goroutine past
// 8 KiB), and the dial's result and error come back whole.
func TestDialAside(t *testing.T) {
	var dialer string
	conn, _ := net.Pipe()
	errDial := errors.New("refused")
	dial := dialAside(func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialer = goid()
		if addr == "bad:1" {
			return nil, errDial
		}
		return conn, nil
	})
	c, err := dial(context.Background(), "tcp", "good:1")
	if err != nil || c != conn {
		t.Fatalf("dial: %v, %v", c, err)
	}
	if dialer == "" || dialer == goid() {
		t.Errorf("dialed on goroutine %q, the caller's is %s", dialer, goid())
	}
	if _, err := dial(context.Background(), "tcp", "bad:1"); !errors.Is(err, errDial) {
		t.Errorf("dial error %v, want %v", err, errDial)
	}

	// The client's own HTTP/1.1 transport uses it: a request made on this
	// goroutine dials on another.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	dialer = ""
	var d net.Dialer
	st := newSplitTransport(DefaultTransportConfig, &http.Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}, func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialer = goid()
		return d.DialContext(ctx, network, addr)
	})
	defer st.CloseIdleConnections()
	resp, err := (&http.Client{Transport: st}).Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if dialer == "" || dialer == goid() {
		t.Errorf("the transport dialed on goroutine %q, the caller's is %s", dialer, goid())
	}
}
