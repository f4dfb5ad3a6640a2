package pipeline

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/llmrelay/llmrelay/server/provider"
)

// goAwayServer speaks HTTP/2 over TLS and ends every connection with a
// GOAWAY (NO_ERROR, the graceful shutdown a provider's front end sends
// when it drains or restarts): after the head and part of the body
// (lastStreamID the request's own: it was being answered), or before any
// answer (lastStreamID 0: the request was never taken up). It counts the
// connections.
type goAwayServer struct {
	ln          net.Listener
	afterHead   bool
	mu          sync.Mutex
	connections int
}

func newGoAwayServer(t *testing.T, afterHead bool) (*goAwayServer, *tls.Config) {
	t.Helper()
	// httptest's certificate, and a client configuration that trusts it.
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	cert := ts.TLS.Certificates[0]
	roots := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ts.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &goAwayServer{ln: ln, afterHead: afterHead}
	go s.serve()
	t.Cleanup(func() { _ = ln.Close() })
	return s, &tls.Config{RootCAs: roots}
}

func (s *goAwayServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.connections++
		s.mu.Unlock()
		go s.answer(c)
	}
}

func (s *goAwayServer) answer(c net.Conn) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	var stream uint32
	for stream == 0 {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			stream = f.StreamID
		}
	}
	if !s.afterHead {
		_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		return
	}
	var head bytes.Buffer
	enc := hpack.NewEncoder(&head)
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/event-stream"})
	_ = enc.WriteField(hpack.HeaderField{Name: "x-request-id", Value: "req_goaway_25"})
	if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: head.Bytes(), EndHeaders: true}) != nil {
		return
	}
	_ = fr.WriteData(stream, false, []byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"))
	_ = fr.WriteGoAway(stream, http2.ErrCodeNo, nil)
}

func (s *goAwayServer) conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections
}

// TestHTTP2GoAway: a provider's front end that goes away (HTTP/2 GOAWAY,
// then the connection closed) fails the attempt as a connection failure
// the retry policy retries, never as the caller's cancellation or a bad
// answer: before its answer, once net/http has tried the request on
// maxStdConns new connections (it tried without end, golang/go#52459); in
// the middle of a body, on the body's read (what was read stays read).
// http_version "2", the transport that speaks it.
func TestHTTP2GoAway(t *testing.T) {
	t.Parallel()
	for _, afterHead := range []bool{false, true} {
		srv, tlsCfg := newGoAwayServer(t, afterHead)
		cfg := DefaultTransportConfig
		cfg.HTTPVersion = "2"
		client := NewHTTPClient(cfg, nil)
		client.Transport.(*roundTripper).base.std.TLSClientConfig = tlsCfg
		req, err := http.NewRequest(http.MethodPost, "https://"+srv.ln.Addr().String()+"/v1/chat/completions", strings.NewReader(`{"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if afterHead {
			if err != nil {
				t.Fatalf("after the head: %v", err)
			}
			if resp.ProtoMajor != 2 || resp.Header.Get("X-Request-Id") != "req_goaway_25" {
				t.Errorf("proto %d, header %v", resp.ProtoMajor, resp.Header)
			}
			var body []byte
			body, err = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if !strings.Contains(string(body), `"Hel"`) {
				t.Errorf("body read %q", body)
			}
		}
		if err == nil {
			t.Fatalf("afterHead %v: no error", afterHead)
		}
		pe := provider.TransportError("p", err)
		if !Retryable(pe) || pe.Kind == provider.KindCanceled || pe.Kind == provider.KindBadResponse || errors.Is(pe, provider.ErrStreamCut) {
			t.Errorf("afterHead %v: %v (kind %v) is not a retryable connection failure", afterHead, pe, pe.Kind)
		}
		// Before the answer net/http tried new connections without end
		// (golang/go#52459: 22,528 in the minute this test once took).
		if want := map[bool]int{false: maxStdConns, true: 1}[afterHead]; srv.conns() != want {
			t.Errorf("afterHead %v: %d connections, want %d", afterHead, srv.conns(), want)
		}
	}
}
