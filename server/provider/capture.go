package provider

import (
	"context"
	"sync"
)

// Capture collects the raw bytes of one provider call (the last attempt's
// request and response), capped at Limit bytes each. The server's call
// pipeline puts one in the call's context when raw capture is on; the HTTP
// transport (or an in-process provider) records into it.
type Capture struct {
	Limit int

	mu sync.Mutex
	d  CaptureData
	// redact, when set, removes secrets from the response body; slack is
	// the longest secret's length. The body is kept raw up to Limit+slack
	// and redacted whole when read, so that a secret split across two
	// reads, or across the cut at Limit, is still found.
	redact func([]byte) []byte
	slack  int
}

// CaptureData is what a Capture holds.
type CaptureData struct {
	Method, URL       string
	RequestHeaders    map[string]string
	ResponseHeaders   map[string]string
	Status            int
	Request, Response []byte
	RequestCut        bool
	ResponseCut       bool
}

type captureKey struct{}

// WithCapture returns a context carrying c.
func WithCapture(ctx context.Context, c *Capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

// CaptureFrom returns the context's capture, or nil when raw capture is off.
func CaptureFrom(ctx context.Context) *Capture {
	c, _ := ctx.Value(captureKey{}).(*Capture)
	return c
}

// StartRequest resets the capture for a new attempt and records its
// request (body cut at Limit). Headers must already be redacted.
func (c *Capture) StartRequest(method, url string, headers map[string]string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d = CaptureData{Method: method, URL: url, RequestHeaders: headers}
	c.d.Request, c.d.RequestCut = capBytes(nil, body, c.Limit)
}

// RedactResponse makes Snapshot remove secrets from the response body
// with redact; slack is the length of the longest secret.
func (c *Capture) RedactResponse(redact func([]byte) []byte, slack int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redact, c.slack = redact, slack
}

// StartResponse records the response status and (redacted) headers.
func (c *Capture) StartResponse(status int, headers map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d.Status, c.d.ResponseHeaders = status, headers
}

// AppendResponse records more response body bytes, up to Limit.
func (c *Capture) AppendResponse(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.d.ResponseCut {
		return
	}
	limit := c.Limit
	if limit > 0 {
		limit += c.slack
	}
	c.d.Response, c.d.ResponseCut = capBytes(c.d.Response, p, limit)
}

// Snapshot returns a copy of what was captured so far, the response body
// redacted and cut at Limit.
func (c *Capture) Snapshot() CaptureData {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.d
	d.Request = append([]byte(nil), c.d.Request...)
	resp := append([]byte(nil), c.d.Response...)
	if c.redact != nil {
		resp = c.redact(resp)
	}
	if c.Limit > 0 && len(resp) > c.Limit {
		resp, d.ResponseCut = resp[:c.Limit], true
	}
	d.Response = resp
	return d
}

func capBytes(dst, p []byte, limit int) ([]byte, bool) {
	if limit <= 0 {
		return append(dst, p...), false
	}
	room := limit - len(dst)
	if room <= 0 {
		return dst, len(p) > 0
	}
	if len(p) > room {
		return append(dst, p[:room]...), true
	}
	return append(dst, p...), false
}
