package gemini

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPlainErrorBodyRedactedThenCut: a plain-text error body (a proxy's)
// is redacted before it is cut at 1024 bytes (a key cut at the limit left
// up to 13 of its characters, too few for the key pattern), cut at a
// character boundary, and a BOM before an HTML page does not let the page
// into the message.
func TestPlainErrorBodyRedactedThenCut(t *testing.T) {
	p := &Provider{}
	key := "AIzaSyA1234567890abcdefghijklmnopqrstuv"
	resp := func(body string) *http.Response {
		return &http.Response{StatusCode: 502, Status: "502 Bad Gateway", Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
	}
	// The key starts 8 bytes before the cut.
	e := p.httpError(resp(strings.Repeat("x", 1016) + key + " rest"))
	if strings.Contains(e.Message, key[:8]) {
		t.Errorf("a piece of the key is left: %q", e.Message[1000:])
	}
	// A three-byte rune across the cut.
	e = p.httpError(resp(strings.Repeat("x", 1023) + "€ tail"))
	if !utf8.ValidString(e.Message) {
		t.Errorf("message cut inside a character: %q", e.Message[1015:])
	}
	e = p.httpError(resp("\uFEFF\n<!DOCTYPE html><html><body>Bad gateway</body></html>"))
	if strings.Contains(e.Message, "<") {
		t.Errorf("an HTML page after a BOM reached the message: %q", e.Message)
	}
}
