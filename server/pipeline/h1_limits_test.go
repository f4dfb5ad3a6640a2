package pipeline

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestH1ResponseHeaderLimit: a response head larger than the bound is
// refused with net/http's message, the bound counting each head (1xx
// included) on its own; a head within it passes. The default bound is
// net/http's (10 MiB).
func TestH1ResponseHeaderLimit(t *testing.T) {
	t.Parallel()
	big := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 4096) + "\r\nContent-Length: 2\r\n\r\nok"
	small := "HTTP/1.1 103 Early Hints\r\nX-Hint: " + strings.Repeat("h", 600) + "\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nX-Fine: " + strings.Repeat("b", 600) + "\r\nContent-Length: 2\r\n\r\nok"
	cases := []struct {
		name, resp string
		limit      int64
		wantErr    string
	}{
		{"over the bound", big, 1024, "server response headers exceeded 1024 bytes; aborted"},
		{"each head within the bound", small, 1024, ""},
		{"over the default bound", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 11<<20) + "\r\nContent-Length: 2\r\n\r\nok", 0,
			"server response headers exceeded 10485760 bytes; aborted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, answerOnce(c.resp))
			h1 := newH1Transport(DefaultTransportConfig, (&net.Dialer{}).DialContext)
			if c.limit > 0 {
				h1.maxHeaderBytes = c.limit
			}
			resp, err := post(t, &http.Client{Transport: h1}, context.Background(), srv.URL(), "x")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, resp); got != "ok" {
				t.Errorf("body %q", got)
			}
		})
	}
}

// TestH1ReplayWithoutPeek is the path taken where the liveness peek does
// not exist (not unix): a pooled connection the server closed is found
// closed only when used. A GET is sent again on a fresh connection; a
// POST that went out whole is not (the pipeline's retry policy decides),
// as net/http does.
func TestH1ReplayWithoutPeek(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := newRawServer(t, func(_ int32, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err == nil {
			requests.Add(1)
			io.WriteString(c, okResponse) // keep-alive promised, then closed
		}
	})
	h1 := newH1Transport(DefaultTransportConfig, (&net.Dialer{}).DialContext)
	h1.alive = func(*h1Conn) bool { return true }
	client := &http.Client{Transport: h1}
	get := func() error {
		resp, err := client.Get(srv.URL())
		if err == nil {
			readAll(t, resp)
		}
		return err
	}
	for i := range 3 {
		if err := get(); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
		time.Sleep(5 * time.Millisecond) // lets the close reach the client
	}
	if n, r := srv.conns.Load(), requests.Load(); n != 3 || r != 3 {
		t.Errorf("GETs: %d connections, %d requests, want 3 and 3", n, r)
	}
	_, err := post(t, client, context.Background(), srv.URL(), "x")
	if !errors.Is(err, errServerClosedIdle) {
		t.Errorf("POST on a closed pooled connection: %v, want errServerClosedIdle", err)
	}
}

// tlsUpstream is an HTTPS test server offering HTTP/2 and HTTP/1.1,
// gzipping its answer when asked, and counting connections.
func tlsUpstream(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Proto", r.Proto)
		if r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, `{"ok":true}`)
			zw.Close()
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// TestTransportTLSVersions: over TLS, "auto" and "1.1" speak HTTP/1.1 on
// the own pool (one kept-alive connection for sequential calls, gzip
// asked for and undone as net/http does); "2" speaks HTTP/2 through
// net/http.
func TestTransportTLSVersions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ version, proto string }{{"", "HTTP/1.1"}, {"auto", "HTTP/1.1"}, {"1.1", "HTTP/1.1"}, {"2", "HTTP/2.0"}} {
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			srv, conns := tlsUpstream(t)
			cfg := DefaultTransportConfig
			cfg.HTTPVersion = c.version
			client := NewHTTPClient(cfg, nil)
			split := client.Transport.(*roundTripper).base
			split.h1.tls.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
			split.std.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
			for i := range 3 {
				resp, err := post(t, client, context.Background(), srv.URL+"/v1/x", `{"n":1}`)
				if err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, resp); got != `{"ok":true}` || resp.Header.Get("X-Proto") != c.proto || !resp.Uncompressed {
					t.Errorf("call %d: %q via %s (uncompressed %v), want %s", i, got, resp.Header.Get("X-Proto"), resp.Uncompressed, c.proto)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections for 3 sequential calls, want 1", n)
			}
		})
	}
}

// publicConn claims a public peer address.
type publicConn struct{ net.Conn }

func (publicConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 80} }

// TestSplitTransportPublicCleartext: with "auto", a cleartext upstream
// whose address is not loopback or private is left to net/http (its first
// dial through the own pool is closed unused, and the host remembered);
// "1.1" keeps it on the own pool.
func TestSplitTransportPublicCleartext(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, answerEach(okResponse))
	for _, c := range []struct {
		version     string
		ownRequests int
	}{{"auto", 0}, {"1.1", 3}} {
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			var ownDials, stdDials atomic.Int32
			d := &net.Dialer{}
			h1 := newH1Transport(DefaultTransportConfig, func(ctx context.Context, network, addr string) (net.Conn, error) {
				ownDials.Add(1)
				conn, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return publicConn{conn}, nil
			})
			std := &http.Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil },
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					stdDials.Add(1)
					return d.DialContext(ctx, network, addr)
				}}
			client := &http.Client{Transport: &splitTransport{h1: h1, std: std, version: c.version}}
			for i := range 3 {
				resp, err := post(t, client, context.Background(), srv.URL(), `{"n":1}`)
				if err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, resp); got != `{"ok":true}` {
					t.Fatalf("call %d: %q", i, got)
				}
			}
			wantOwn, wantStd := int32(1), int32(1) // auto: one refused dial, then net/http
			if c.ownRequests > 0 {
				wantOwn, wantStd = 1, 0
			}
			if ownDials.Load() != wantOwn || stdDials.Load() != wantStd {
				t.Errorf("dials: own %d, net/http %d; want %d and %d", ownDials.Load(), stdDials.Load(), wantOwn, wantStd)
			}
		})
	}
}

// TestTransportTLSServerClosedIdle: a pooled TLS connection the server
// closed while it sat idle is dropped before reuse (the peek sees the
// close on the TCP socket), and the next call goes out on a fresh one.
func TestTransportTLSServerClosedIdle(t *testing.T) {
	t.Parallel()
	if !alivePeeks {
		t.Skip("no liveness peek on this system: TestH1ReplayWithoutPeek covers it")
	}
	srv, conns := tlsUpstream(t)
	client := NewHTTPClient(DefaultTransportConfig, nil)
	split := client.Transport.(*roundTripper).base
	split.h1.tls.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for i := range 3 {
		resp, err := post(t, client, context.Background(), srv.URL+"/v1/x", `{"n":1}`)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got := readAll(t, resp); got != `{"ok":true}` {
			t.Fatalf("call %d: %q", i, got)
		}
		srv.CloseClientConnections()
		time.Sleep(20 * time.Millisecond) // lets the close reach the client
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 calls with the server closing each, want 3", n)
	}
}
