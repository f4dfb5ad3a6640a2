package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadBodyCompleteThenBroken: a body that is one whole JSON object or
// array when the connection broke is the answer, with
// BodyCutAfterEndWarning; anything less (cut inside the JSON, a bare
// number that a longer one may continue), a longer body than declared,
// or a timeout, still fails.
func TestReadBodyCompleteThenBroken(t *testing.T) {
	t.Parallel()
	broken := func(body string, declared int64, err error) *http.Response {
		return &http.Response{Body: io.NopCloser(io.MultiReader(strings.NewReader(body), iotest.ErrReader(err))), ContentLength: declared}
	}
	for _, c := range []struct {
		name string
		resp *http.Response
		want string // "" when it must fail
	}{
		{"undeclared, reset", broken(` {"a":[1]} `+"\n", -1, errors.New("read: connection reset by peer")), ` {"a":[1]} ` + "\n"},
		{"undeclared, unexpected EOF", broken(`[{"a":1}]`, -1, io.ErrUnexpectedEOF), `[{"a":1}]`},
		{"declared, shorter", broken(`{"a":1}`, 9, io.ErrUnexpectedEOF), `{"a":1}`},
		{"cut inside", broken(`{"a":1`, -1, io.ErrUnexpectedEOF), ""},
		{"a number", broken(`12`, -1, io.ErrUnexpectedEOF), ""},
		{"two values", broken(`{"a":1}{"b":2}`, -1, io.ErrUnexpectedEOF), ""},
		{"a deadline", broken(`{"a":1}`, -1, context.DeadlineExceeded), ""},
		{"idle, cut inside", broken(`{"a":`, -1, ErrIdleTimeout), ""},
		{"longer than declared", &http.Response{Body: io.NopCloser(strings.NewReader(`{"a":1}xx`)), ContentLength: 7}, ""},
	} {
		body, warning, err := ReadBody("p", c.resp, 100)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: accepted %q", c.name, body)
			}
			continue
		}
		if err != nil || string(body) != c.want || warning != BodyCutAfterEndWarning {
			t.Errorf("%s: %q, %q, %v", c.name, body, warning, err)
		}
	}
	body, warning, err := ReadBody("p", broken(`{"a":1}`, -1, fmt.Errorf("wrapped: %w", ErrIdleTimeout)), 100)
	if err != nil || string(body) != `{"a":1}` || warning != BodyIdleAfterEndWarning {
		t.Errorf("idle after a whole body: %q, %q, %v", body, warning, err)
	}
	if _, warning, err := ReadBody("p", &http.Response{Body: io.NopCloser(strings.NewReader(`{"a":1}`)), ContentLength: -1}, 100); err != nil || warning != "" {
		t.Errorf("a clean body: %q, %v", warning, err)
	}
}
