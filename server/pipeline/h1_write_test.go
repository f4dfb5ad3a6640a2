package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
)

// writeBoth writes req with writeRequest and with req.Write (on a copy
// with a fresh body) and returns both outputs and errors.
func writeBoth(t testing.TB, mk func() *http.Request) (fast, std string, ferr, serr error) {
	t.Helper()
	var a, b bytes.Buffer
	bw := bufio.NewWriterSize(&a, 64) // small: the body crosses flushes
	ferr = writeRequest(bw, mk())
	if ferr == nil {
		ferr = bw.Flush()
	}
	serr = mk().Write(&b)
	if ferr != nil || serr != nil {
		return "", "", ferr, serr // what was buffered before the error is never flushed
	}
	return a.String(), b.String(), ferr, serr
}

type closeCounter struct {
	io.Reader
	closed *int
	err    error
}

func (c closeCounter) Close() error { *c.closed++; return c.err }

func TestWriteRequestFast(t *testing.T) {
	t.Parallel()
	post := func(url, body string, h map[string][]string) func() *http.Request {
		return func() *http.Request {
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range h {
				req.Header[k] = v
			}
			return req
		}
	}
	cases := []struct {
		name string
		mk   func() *http.Request
		fast bool
	}{
		{"adapter post", post("https://api.openai.com/v1/chat/completions", `{"model":"m"}`, map[string][]string{
			"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Authorization": {"Bearer sk-x"},
			"Openai-Organization": {"org"}, "X-Multi": {"a", "b"}, "api-key": {"lower"}, "Empty": {""}, "None": {}}), true},
		{"query", post("http://127.0.0.1:8080/openai/deployments/d%2Fx/chat/completions?api-version=2024-10-21", "x", nil), true},
		{"force query", post("http://h/p?", "x", nil), true},
		{"user agent", post("http://h/", "x", map[string][]string{"User-Agent": {"llmrelay/1", "second"}}), true},
		{"blank user agent", post("http://h/", "x", map[string][]string{"User-Agent": {""}}), true},
		{"no user agent values", post("http://h/", "x", map[string][]string{"User-Agent": {}}), true},
		{"excluded", post("http://h/", "x", map[string][]string{"Host": {"other"}, "Content-Length": {"99"}, "Transfer-Encoding": {"gzip"}}), true},
		{"get", func() *http.Request { r, _ := http.NewRequest(http.MethodGet, "http://[::1]:9/models", nil); return r }, true},
		{"empty path", post("http://h", "x", nil), true},
		{"big body", post("http://h/", strings.Repeat("b", 10000), nil), true},
		{"line break in value", post("http://h/", "x", map[string][]string{"X": {"a\r\nInjected: 1"}}), false},
		{"blank around value", post("http://h/", "x", map[string][]string{"X": {" a "}}), false},
		{"invalid name", post("http://h/", "x", map[string][]string{"X Y": {"a"}, "Z": {"b"}}), false},
		{"host override", func() *http.Request { r := post("http://h/", "x", nil)(); r.Host = "other:81"; return r }, true},
		{"no host", func() *http.Request { r := post("http://h/", "x", nil)(); r.Host = ""; return r }, true},
		{"invalid host", func() *http.Request { r := post("http://h/", "x", nil)(); r.Host = "a b"; return r }, false},
		{"non-ascii host", post("http://bücher.example/", "x", nil), false},
		{"zone", post("http://[fe80::1%25eth0]:80/", "x", nil), false},
		{"close", func() *http.Request { r := post("http://h/", "x", nil)(); r.Close = true; return r }, false},
		{"unknown length", func() *http.Request { r := post("http://h/", "x", nil)(); r.ContentLength = -1; return r }, false},
		{"empty post", post("http://h/", "", nil), false},
		{"chunked", func() *http.Request {
			r := post("http://h/", "x", nil)()
			r.TransferEncoding = []string{"chunked"}
			return r
		}, false},
		{"trailer", func() *http.Request {
			r := post("http://h/", "x", nil)()
			r.ContentLength, r.Trailer = -1, http.Header{"T": nil}
			return r
		}, false},
		{"short body", func() *http.Request { r := post("http://h/", "xy", nil)(); r.ContentLength = 5; return r }, true},
		{"long body", func() *http.Request { r := post("http://h/", "xyz", nil)(); r.ContentLength = 2; return r }, true},
		{"body without GetBody", func() *http.Request {
			r := post("http://h/", "x", nil)()
			r.Body, r.GetBody = io.NopCloser(io.MultiReader(strings.NewReader("ab"), strings.NewReader("c"))), nil
			r.ContentLength = 3
			return r
		}, true},
		{"trace", func() *http.Request {
			r := post("http://h/", "x", nil)()
			return r.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{}))
		}, false},
	}
	for _, c := range cases {
		if got := fastWritable(c.mk()); got != c.fast {
			t.Errorf("%s: fastWritable %v, want %v", c.name, got, c.fast)
		}
		fast, std, ferr, serr := writeBoth(t, c.mk)
		if fast != std || (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
			t.Errorf("%s:\nfast %q (%v)\nstd  %q (%v)", c.name, fast, ferr, std, serr)
		}
	}
	// A body's Close error is the write's, as req.Write reports it.
	{
		n := 0
		mk := func() *http.Request {
			req, _ := http.NewRequest(http.MethodPost, "http://h/", nil)
			req.Body, req.ContentLength = closeCounter{strings.NewReader("abc"), &n, errors.New("close failed")}, 3
			req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("unused") }
			return req
		}
		if _, _, ferr, serr := writeBoth(t, mk); ferr == nil || serr == nil || ferr.Error() != serr.Error() {
			t.Errorf("close error: fast %v, std %v", ferr, serr)
		}
	}
	// The body is closed once, on success and on error.
	for _, body := range []string{"abc", "ab", "abcd"} {
		n := 0
		req, _ := http.NewRequest(http.MethodPost, "http://h/", nil)
		req.Body, req.ContentLength = closeCounter{strings.NewReader(body), &n, nil}, 3
		req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("unused") }
		err := writeRequest(bufio.NewWriter(io.Discard), req)
		if (err == nil) != (body == "abc") || n != 1 {
			t.Errorf("body %q: err %v, closed %d times", body, err, n)
		}
	}
}

// FuzzWriteRequestFast: whatever request the fast writer accepts, it writes
// the bytes req.Write writes.
func FuzzWriteRequestFast(f *testing.F) {
	f.Add("POST", "http://api.example.com/v1/chat/completions?x=1", "Content-Type", "application/json", "Authorization", "Bearer k", `{"a":1}`, int64(7))
	f.Add("GET", "http://[::1]:8/a%20b", "User-Agent", "", "X", "a\tb", "", int64(0))
	f.Add("PUT", "https://h/", "user-agent", "x", "Host", "y", "body", int64(2))
	f.Fuzz(func(t *testing.T, method, url, k1, v1, k2, v2, body string, n int64) {
		mk := func() *http.Request {
			req, err := http.NewRequest(method, url, strings.NewReader(body))
			if err != nil {
				return nil
			}
			if body == "" {
				req.Body, req.GetBody = nil, nil
			}
			req.ContentLength = n
			req.Header[k1] = []string{v1}
			req.Header.Add(k2, v2)
			return req
		}
		if mk() == nil || !fastWritable(mk()) {
			return
		}
		fast, std, ferr, serr := writeBoth(t, mk)
		if fast != std || (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
			t.Fatalf("fast %q (%v)\nstd  %q (%v)", fast, ferr, std, serr)
		}
	})
}
