package pipeline

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestHTMLAnswer: a 2xx text/html body fails on the read that reaches its
// first non-blank byte when that byte opens markup, whatever the reads'
// sizes; a mislabelled JSON body reads whole, blanks and all.
func TestHTMLAnswer(t *testing.T) {
	for _, tc := range []struct {
		body string
		html bool
	}{
		{"<!DOCTYPE html><html></html>", true},
		{"\r\n\n  <html><body>Sign in</body></html>", true},
		{"\xEF\xBB\xBF<html></html>", true},
		{"  {\"id\":\"chatcmpl-1\"}", false},
		{"data: {\"x\":1}\n\n", false},
		{"", false},
	} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.body)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			h := &htmlAnswer{ReadCloser: io.NopCloser(r), status: 200}
			got, err := io.ReadAll(h)
			var pe *provider.Error
			if tc.html {
				if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || pe.HTTPStatus != 200 || !strings.Contains(pe.Message, "HTML page") {
					t.Errorf("%q (one byte %v): err %v", tc.body, oneByte, err)
				}
				if _, again := h.Read(make([]byte, 8)); again != err {
					t.Errorf("%q: a read after the failure says %v", tc.body, again)
				}
				continue
			}
			if err != nil || string(got) != tc.body {
				t.Errorf("%q (one byte %v): read %q, %v", tc.body, oneByte, got, err)
			}
		}
	}
}

func TestIsHTML(t *testing.T) {
	for ct, want := range map[string]bool{"text/html": true, "Text/HTML; charset=UTF-8": true, " text/html ;q=1": true,
		"text/event-stream": false, "application/json": false, "": false, "text/htmlx": false} {
		if isHTML(ct) != want {
			t.Errorf("isHTML(%q) = %v", ct, !want)
		}
	}
}

// TestSameOrigin: redirects are followed on the configured scheme and
// host only, ten at most.
func TestSameOrigin(t *testing.T) {
	req := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodPost, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	via := []*http.Request{req("https://api.example.com/v1/chat/completions")}
	for u, follow := range map[string]bool{
		"https://api.example.com/v1/chat/completions/": true,
		"https://API.example.com/v2":                   true,
		"http://api.example.com/v1":                    false,
		"https://api.example.com:8443/v1":              false,
		"https://evil.example.net/v1":                  false,
	} {
		if err := sameOrigin(req(u), via); (err == nil) != follow {
			t.Errorf("%s: %v", u, err)
		}
	}
	long := make([]*http.Request, 10)
	for i := range long {
		long[i] = via[0]
	}
	if err := sameOrigin(req("https://api.example.com/v1"), long); !errors.Is(err, http.ErrUseLastResponse) {
		t.Errorf("after ten redirects: %v", err)
	}
}

type reserving struct {
	io.ReadCloser
	reserved int64
}

func (r *reserving) Reserve(n int64) error { r.reserved += n; return nil }

// TestHTMLAnswerReserves: the wrapper keeps the memory budget's
// reservation of the body it wraps.
func TestHTMLAnswerReserves(t *testing.T) {
	inner := &reserving{ReadCloser: io.NopCloser(strings.NewReader("{}"))}
	var body io.ReadCloser = &htmlAnswer{ReadCloser: inner, status: 200}
	r, ok := body.(provider.Reserver)
	if !ok || r.Reserve(42) != nil || inner.reserved != 42 {
		t.Fatalf("reservation not passed on: %v %d", ok, inner.reserved)
	}
}
