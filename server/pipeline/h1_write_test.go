package pipeline

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestWriteRequestMatchesNetHTTP: what writeRequest writes is what
// net/http's Request.Write writes, for the requests it takes and for those
// it hands over.
func TestWriteRequestMatchesNetHTTP(t *testing.T) {
	t.Parallel()
	type mk func() *http.Request
	req := func(method, url, body string, h map[string][]string) mk {
		return func() *http.Request {
			var r io.Reader
			if body != "" {
				r = strings.NewReader(body)
			}
			q, err := http.NewRequest(method, url, r)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range h {
				q.Header[k] = v
			}
			return q
		}
	}
	cases := []struct {
		name   string
		make   mk
		simple bool
	}{
		{"post", req("POST", "http://127.0.0.1:8080/v1/chat/completions?x=1&y=%20", `{"a":1}`, map[string][]string{
			"Authorization": {"Bearer sk-1"}, "Content-Type": {"application/json"}, "X-Multi": {"a", "b"}, "Accept": {"text/event-stream"}}), true},
		{"get", req("GET", "http://example.com/v1/models", "", nil), true},
		{"empty post", req("POST", "http://example.com/x", "", nil), true},
		{"user agent", req("POST", "https://api.example.com/x", "b", map[string][]string{"User-Agent": {"llmrelay/1"}}), true},
		{"empty user agent", req("POST", "http://h/x", "b", map[string][]string{"User-Agent": {""}}), true},
		{"ignored headers", req("POST", "http://h/x", "b", map[string][]string{"Content-Length": {"99"}, "Host": {"other"}}), true},
		{"custom host", func() *http.Request {
			r := req("POST", "http://10.0.0.1/x", "b", nil)()
			r.Host = "vhost.example"
			return r
		}, true},
		{"ipv6", req("POST", "http://[::1]:11434/api/chat", "b", nil), true},
		{"close", func() *http.Request { r := req("POST", "http://h/x", "b", nil)(); r.Close = true; return r }, false},
		{"unknown length", func() *http.Request {
			r := req("POST", "http://h/x", "", nil)()
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("abc")), -1
			return r
		}, false},
		{"newline in value", req("POST", "http://h/x", "b", map[string][]string{"X-A": {"a\r\nb"}}), false},
		{"padded value", req("POST", "http://h/x", "b", map[string][]string{"X-A": {" a "}}), false},
		{"non-ascii host", req("POST", "http://bücher.example/x", "b", nil), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := simpleRequest(c.make()); got != c.simple {
				t.Errorf("simpleRequest = %v, want %v", got, c.simple)
			}
			var want, got bytes.Buffer
			werr := c.make().Write(&want)
			bw := bufio.NewWriter(&got)
			gerr := writeRequest(bw, c.make())
			if err := bw.Flush(); err != nil {
				t.Fatal(err)
			}
			if (werr == nil) != (gerr == nil) || got.String() != want.String() {
				t.Errorf("writeRequest:\n%q (%v)\nRequest.Write:\n%q (%v)", got.String(), gerr, want.String(), werr)
			}
		})
	}
}

// TestWriteRequestBodyLength: a body shorter or longer than its
// ContentLength is an error, as in net/http, and the body is closed.
func TestWriteRequestBodyLength(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"ab", "abcd"} {
		r, _ := http.NewRequest("POST", "http://h/x", nil)
		rc := &closeTracker{Reader: strings.NewReader(body)}
		r.Body, r.ContentLength = rc, 3
		if err := writeRequest(bufio.NewWriter(io.Discard), r); err == nil || !strings.Contains(err.Error(), "ContentLength=3") {
			t.Errorf("%q: err = %v", body, err)
		}
		if !rc.closed {
			t.Errorf("%q: body not closed", body)
		}
	}
}

type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }
