package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDoAsClientDo: Do answers as client.Do: plain answers, redirects
// followed (307/308 with the body again, 301-303 as GET), the client's
// CheckRedirect obeyed, transport errors wrapped the same way, clients
// with a timeout or a jar left to client.Do.
func TestDoAsClientDo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/307", "/308", "/301", "/302", "/303":
			code := map[string]int{"/307": 307, "/308": 308, "/301": 301, "/302": 302, "/303": 303}[r.URL.Path]
			w.Header().Set("Location", "/final")
			w.WriteHeader(code)
		case "/nolocation":
			w.WriteHeader(307)
		default:
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body)
		}
	}))
	t.Cleanup(srv.Close)
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	clients := map[string]*http.Client{
		"plain":     {Transport: srv.Client().Transport},
		"no follow": {Transport: srv.Client().Transport, CheckRedirect: noFollow},
		"timeout":   {Transport: srv.Client().Transport, Timeout: time.Minute},
	}
	for name, c := range clients {
		for _, path := range []string{"/ok", "/307", "/308", "/301", "/302", "/303", "/nolocation"} {
			do := func(f func(*http.Client, *http.Request) (*http.Response, error)) string {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+path, strings.NewReader("body"))
				resp, err := f(c, req)
				if err != nil {
					return "error " + err.Error()
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return fmt.Sprintf("%d %s %s", resp.StatusCode, b, resp.Request.URL.Path)
			}
			got, want := do(Do), do((*http.Client).Do)
			if got != want {
				t.Errorf("%s %s: Do %q, client.Do %q", name, path, got, want)
			}
		}
	}
	// Transport errors: the same *url.Error.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c := &http.Client{Transport: &http.Transport{}}
	errOf := func(f func(*http.Client, *http.Request) (*http.Response, error), u string) error {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("x"))
		_, err := f(c, req)
		return err
	}
	for _, u := range []string{"http://" + addr + "/x", "ftp://h/x"} {
		e1, e2 := errOf(Do, u), errOf((*http.Client).Do, u)
		if e1 == nil || e2 == nil || e1.Error() != e2.Error() || fmt.Sprintf("%T", e1) != fmt.Sprintf("%T", e2) {
			t.Errorf("%s: Do %v, client.Do %v", u, e1, e2)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("x"))
	if _, err := Do(srv.Client(), req); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
