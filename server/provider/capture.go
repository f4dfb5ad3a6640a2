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
	c.d.Response, c.d.ResponseCut = capBytes(c.d.Response, p, c.Limit)
}

// Snapshot returns a copy of what was captured so far.
func (c *Capture) Snapshot() CaptureData {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.d
	d.Request = append([]byte(nil), c.d.Request...)
	d.Response = append([]byte(nil), c.d.Response...)
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
