package pipeline

import (
	"context"
	"crypto/tls"
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

// TestConnectAside: NewHTTPClient's own transport dials and makes the TLS
// handshake on a goroutine of their own (their frames would otherwise
// grow the stream's goroutine past 8 KiB, the handshake's past 16), and a
// dial's error comes back whole.
func TestConnectAside(t *testing.T) {
	var dialer, handshaker string
	errDial := errors.New("refused")
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialer = goid()
		if addr == "bad:1" {
			return nil, errDial
		}
		return d.DialContext(ctx, network, addr)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	for _, tlsUp := range []bool{false, true} {
		dialer, handshaker = "", ""
		var up *httptest.Server
		if tlsUp {
			up = httptest.NewTLSServer(ok)
		} else {
			up = httptest.NewServer(ok)
		}
		st := newSplitTransport(DefaultTransportConfig, &http.Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}, dial)
		if tlsUp {
			st.h1.tls.RootCAs = up.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
			st.h1.tls.VerifyConnection = func(tls.ConnectionState) error {
				handshaker = goid()
				return nil
			}
		}
		resp, err := (&http.Client{Transport: st}).Get(up.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		st.CloseIdleConnections()
		up.Close()
		if dialer == "" || dialer == goid() {
			t.Errorf("tls %v: the transport dialed on goroutine %q, the caller's is %s", tlsUp, dialer, goid())
		}
		if tlsUp && (handshaker == "" || handshaker == goid()) {
			t.Errorf("the transport made the TLS handshake on goroutine %q, the caller's is %s", handshaker, goid())
		}
	}

	st := newSplitTransport(DefaultTransportConfig, &http.Transport{}, dial)
	p := &h1Pool{t: st.h1, addr: "bad:1", host: "bad"}
	if _, err := p.get(context.Background(), false); !errors.Is(err, errDial) {
		t.Errorf("dial error %v, want %v", err, errDial)
	}
}
