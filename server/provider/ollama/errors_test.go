package ollama

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file      string
		kind      provider.Kind
		status    int
		retry     time.Duration
		requestID string
		message   string
		embed     bool
	}{
		{"error_400_tools", provider.KindCapability, 400, 0, "", "registry.ollama.ai/library/gemma2:latest does not support tools", false},
		{"error_context_length", provider.KindContextLength, 400, 0, "", "the input length exceeds the context length", true},
		{"error_401", provider.KindUnauthenticated, 401, 0, "", "unauthorized", false},
		{"error_403", provider.KindPermissionDenied, 403, 0, "", "Forbidden", false},
		{"error_404", provider.KindNotFound, 404, 0, "", `model "llama3.2" not found, try pulling it first`, false},
		{"error_429", provider.KindRateLimited, 429, 30 * time.Second, "189d0fdb-370d-4f5e-977b-cead18f2d317", "too many requests", false},
		{"error_429_body", provider.KindRateLimited, 429, 90 * time.Second, "", "rate limit exceeded, please try again in 1m30s", false},
		{"error_500", provider.KindUnavailable, 500, 0, "", "llama runner process has terminated: exit status 2", false},
		{"error_502_html", provider.KindUnavailable, 502, 0, "", "Bad Gateway", false}, // a proxy's page: the status says it
		{"error_503", provider.KindUnavailable, 503, 0, "", "server busy, please try again.  maximum pending requests exceeded", false},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.file+".http"))
			p := newTestProvider(t, srv)
			var err error
			if tc.embed {
				_, err = p.Embed(context.Background(), &provider.EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"long text"}})
			} else {
				_, err = p.Generate(context.Background(), textRequest(t))
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *provider.Error", err)
			}
			if pe.Provider != "ollama" || pe.Kind != tc.kind || pe.HTTPStatus != tc.status || pe.RetryAfter != tc.retry || pe.RequestID != tc.requestID {
				t.Errorf("got provider=%s kind=%v status=%d retry=%v request_id=%q", pe.Provider, pe.Kind, pe.HTTPStatus, pe.RetryAfter, pe.RequestID)
			}
			if len(tc.message) > 0 && !startsWith(pe.Message, tc.message) {
				t.Errorf("message = %q, want prefix %q", pe.Message, tc.message)
			}
		})
	}
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func TestErrorDetails(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body, msg, code, param string
	}{
		{``, "", "", ""},
		{`{"error":"model is required"}`, "model is required", "", ""},
		{`{"error":null}`, "", "", ""},
		{`{"error":{"message":"bad","type":"invalid_request_error","param":"messages"}}`, "bad", "invalid_request_error", "messages"},
		{`{"error":{"message":"slow down","code":429}}`, "slow down", "429", ""},
		{`{"error":{"detail":"x"}}`, `{"detail":"x"}`, "", ""},
		{`{"error":42}`, "42", "", ""},
		{"upstream connect error\n  or disconnect", "upstream connect error or disconnect", "", ""},
		// A body in a coding the gateway did not decode (gzip bytes
		// without their header), control bytes, markup: no words
		// (provider.PlainTextMessage), the status's text; the bytes
		// were the message.
		{"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\x07\x00", "", "", ""},
		{"\x00\x01upstream\x02", "", "", ""},
		{"<html><body>502 Bad Gateway</body></html>", "", "", ""},
	}
	for _, tc := range cases {
		msg, code, param := errorDetails([]byte(tc.body))
		if msg != tc.msg || code != tc.code || param != tc.param {
			t.Errorf("errorDetails(%q) = %q %q %q, want %q %q %q", tc.body, msg, code, param, tc.msg, tc.code, tc.param)
		}
	}
}

func TestRetryDelayFromMessage(t *testing.T) {
	t.Parallel()
	cases := map[string]time.Duration{
		"please try again in 20s":          20 * time.Second,
		"Try again in 2 minutes":           2 * time.Minute,
		"retry after 500ms":                500 * time.Millisecond,
		"try again in 1.5 seconds":         1500 * time.Millisecond,
		"try again in 1 hour":              time.Hour,
		"server busy, please try again.":   0,
		"try again in 99999999 seconds":    0,
		"rate limited; try again in 1m30s": 90 * time.Second,
		"try again in 5 parsecs":           0,
	}
	for msg, want := range cases {
		if got := retryDelayFromMessage(msg); got != want {
			t.Errorf("retryDelayFromMessage(%q) = %v, want %v", msg, got, want)
		}
	}
}
