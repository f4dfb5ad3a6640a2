package provider

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestCheckFileURLScheme: a URL's scheme is case-insensitive (request
// validation accepts HTTPS://), so the formats that take http(s) file URLs
// take it in any case, and refuse other schemes.
func TestCheckFileURLScheme(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, url string
		ok          bool
	}{
		{"openai-responses", "HTTPS://example.com/a.pdf", true},
		{"openai-responses", "http://example.com/a.pdf", true},
		{"openai-responses", "gs://bucket/a.pdf", false},
		{"openai-responses", "httpx://example.com/a.pdf", false},
		{"anthropic-messages", "Https://example.com/a.pdf", true},
		{"anthropic-messages", "ftp://example.com/a.pdf", false},
	} {
		f := &llmrelayv1.File{Source: &llmrelayv1.File_Url{Url: tc.url}, MimeType: "application/pdf"}
		field, reason := CheckFile(tc.format, f)
		if (field == "") != tc.ok {
			t.Errorf("%s %s: field %q reason %q, want ok %v", tc.format, tc.url, field, reason, tc.ok)
		}
	}
}
