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

	mu                sync.Mutex
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
	c.Method, c.URL, c.RequestHeaders = method, url, headers
	c.Request, c.RequestCut = capBytes(nil, body, c.Limit)
	c.Response, c.ResponseCut, c.ResponseHeaders, c.Status = nil, false, nil, 0
}

// StartResponse records the response status and (redacted) headers.
func (c *Capture) StartResponse(status int, headers map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Status, c.ResponseHeaders = status, headers
}

// AppendResponse records more response body bytes, up to Limit.
func (c *Capture) AppendResponse(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ResponseCut {
		return
	}
	c.Response, c.ResponseCut = capBytes(c.Response, p, c.Limit)
}

// Snapshot returns a copy of what was captured so far.
func (c *Capture) Snapshot() Capture {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Capture{
		Limit: c.Limit, Method: c.Method, URL: c.URL, RequestHeaders: c.RequestHeaders,
		ResponseHeaders: c.ResponseHeaders, Status: c.Status,
		Request: append([]byte(nil), c.Request...), Response: append([]byte(nil), c.Response...),
		RequestCut: c.RequestCut, ResponseCut: c.ResponseCut,
	}
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
