package gemini

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
)

func TestHTTPErrorBodies(t *testing.T) {
	t.Parallel()
	p := &Provider{apiKey: testKey}
	cases := []struct {
		name   string
		status int
		body   string
		kind   provider.Kind
		msg    string
		retry  time.Duration
	}{
		{"array envelope", 429, `[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}]`,
			provider.KindRateLimited, "Resource has been exhausted", 1500 * time.Millisecond},
		{"html from the front end", 502, "<!DOCTYPE html>\n<html lang=en><title>Error 502 (Server Error)!!1</title></html>", provider.KindUnavailable, "Bad Gateway", 0},
		{"plain text", 500, "upstream connect error", provider.KindUnavailable, "upstream connect error", 0},
		{"empty", 504, "", provider.KindTimeout, "Gateway Timeout", 0},
		{"expired key", 400, `{"error":{"code":400,"message":"API key expired. Please renew the API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_EXPIRED","domain":"googleapis.com"}]}}`,
			provider.KindUnauthenticated, "API key expired", 0},
		{"key echoed in text", 403, "key test-key rejected", provider.KindPermissionDenied, "key [REDACTED] rejected", 0},
		// A body in a coding the gateway did not decode (gzip's magic
		// and deflate bytes a proxy sent without its header): not
		// words, the status's text (provider.IsPlainText; the bytes were
		// the message).
		{"compressed bytes", 503, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\x07\x00\x86\xa6\x10\x36\x05\x00\x00\x00", provider.KindUnavailable, "Service Unavailable", 0},
		{"control bytes", 502, "\x00\x01upstream\x02", provider.KindUnavailable, "Bad Gateway", 0},
		// Redacted before it is cut at 1024, past PlainTextMessage's 300:
		// Gemini's order kept.
		{"key past 300 bytes", 400, strings.Repeat("word ", 70) + "key=test-key rejected", provider.KindInvalidRequest, strings.Repeat("word ", 70) + "key=[REDACTED] rejected", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))}
			e := p.httpError(resp)
			if e.Kind != tc.kind || e.Message != tc.msg && !strings.Contains(e.Message, tc.msg) || e.RetryAfter != tc.retry || e.HTTPStatus != tc.status {
				t.Errorf("got %+v", e)
			}
		})
	}
}

func TestStreamErrorKinds(t *testing.T) {
	t.Parallel()
	p := &Provider{apiKey: testKey}
	for status, want := range map[string]provider.Kind{
		"UNAVAILABLE": provider.KindUnavailable, "INTERNAL": provider.KindUnavailable, "RESOURCE_EXHAUSTED": provider.KindRateLimited,
		"INVALID_ARGUMENT": provider.KindInvalidRequest, "DEADLINE_EXCEEDED": provider.KindTimeout, "PERMISSION_DENIED": provider.KindPermissionDenied,
	} {
		e := p.streamError(&statusError{Code: 0, Status: status, Message: "m"}, time.Now())
		if e.Kind != want {
			t.Errorf("%s: kind %s, want %s", status, e.Kind, want)
		}
	}
	if e := p.streamError(&statusError{Code: 404}, time.Now()); e.Kind != provider.KindNotFound {
		t.Errorf("code 404: %s", e.Kind)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	p := &Provider{apiKey: "my-secret-key"}
	in := "bad my-secret-key and AIzaSyA1234567890abcdefghij and api_key:xyz'"
	got := p.redact(in)
	for _, leak := range []string{"my-secret-key", "AIzaSy", "xyz"} {
		if strings.Contains(got, leak) {
			t.Errorf("redact(%q) = %q", in, got)
		}
	}
}
