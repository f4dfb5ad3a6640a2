package provider

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryAfterHeaders20: the headers a delay is read from, in order:
// retry-after-ms, x-ms-retry-after-ms (Azure's services), retry-after
// in seconds or as an HTTP date counted from now (the answer's Date); a
// header that gives no positive delay gives way to the next.
func TestRetryAfterHeaders20(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 10, 14, 9, 30, 0, 0, time.UTC)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{h("retry-after-ms", "250", "x-ms-retry-after-ms", "900", "retry-after", "3"), 250 * time.Millisecond},
		{h("x-ms-retry-after-ms", "900", "retry-after", "3"), 900 * time.Millisecond},
		{h("retry-after-ms", "0", "x-ms-retry-after-ms", "-1", "retry-after", "3"), 3 * time.Second},
		{h("retry-after-ms", "NaN", "retry-after", "2.5"), 2500 * time.Millisecond},
		{h("retry-after", now.Add(7*time.Second).Format(http.TimeFormat)), 7 * time.Second},
		{h("retry-after", now.Add(-7*time.Second).Format(http.TimeFormat)), 0},
		{h("retry-after", "-3"), 0},
		{h("retry-after", "later"), 0},
		{h(), 0},
	} {
		if got := RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.h, got, tc.want)
		}
	}
}

// TestStatusMessage20: a status without a standard text says its number,
// and Cloudflare's own statuses its words for them.
func TestStatusMessage20(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]string{
		522: "HTTP 522 (Cloudflare: Connection timed out)",
		524: "HTTP 524 (Cloudflare: A timeout occurred)",
		529: "HTTP 529",
		503: "Service Unavailable",
	} {
		if got := statusMessage(&http.Response{StatusCode: status, Header: http.Header{}}); got != want {
			t.Errorf("%d: %q, want %q", status, got, want)
		}
	}
}

// TestProxyMessage20: a gateway's JSON error gives its words, the first
// of message, detail and error that is a non-empty string; anything else
// gives none.
func TestProxyMessage20(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"message":"API rate limit exceeded"}`:            "API rate limit exceeded",
		`{"detail":" Not Found "}`:                         "Not Found",
		`{"error":"Forbidden","message":""}`:               "Forbidden",
		`{"message":{"text":"x"},"detail":"the detail"}`:   "the detail",
		`{"error":{"message":"an object, not a gateway"}}`: "",
		`["message"]`:                     "",
		`message`:                         "",
		``:                                "",
		"{\"message\":\"bad \xff byte\"}": "bad \uFFFD byte",
	} {
		if got := ProxyMessage([]byte(body)); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}
