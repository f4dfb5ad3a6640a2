package pipeline

import (
	"net/http"
	"testing"
	"time"
)

// TestTransportTLSReplayKeepsGzip: a GET sent again after its pooled TLS
// connection turned out closed (the replay net/http also makes) still
// gets its gzip answer undone. The first pass had put Accept-Encoding on
// the request, so the replay took it for the caller's own and handed the
// compressed bytes over.
func TestTransportTLSReplayKeepsGzip(t *testing.T) {
	t.Parallel()
	srv, conns := tlsUpstream(t)
	client := NewHTTPClient(DefaultTransportConfig, nil)
	split := client.Transport.(*roundTripper).base
	split.h1.tls.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	split.h1.alive = func(*h1Conn) bool { return true } // the close is found only when used
	for i := range 3 {
		resp, err := client.Get(srv.URL + "/v1/models")
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got := readAll(t, resp); got != `{"ok":true}` {
			t.Fatalf("call %d: %q (Content-Encoding %q)", i, got, resp.Header.Get("Content-Encoding"))
		}
		srv.CloseClientConnections()
		time.Sleep(20 * time.Millisecond) // lets the close reach the client
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 calls with the server closing each, want 3", n)
	}
}
