// Package interceptor holds the gRPC server interceptors, one per file:
// request id, timing, logging and recovery. They share one per-call Info
// kept in the context.
package interceptor

import (
	"context"
	"sync"
	"time"
)

// Info is what the interceptors and the handler learn about one RPC.
type Info struct {
	RequestID string
	Start     time.Time

	mu       sync.Mutex
	model    string
	provider string
	labels   map[string]string
	caller   string
}

type infoKey struct{}

// WithInfo returns ctx carrying info.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// InfoFrom returns the call's Info, or nil outside an RPC.
func InfoFrom(ctx context.Context) *Info {
	i, _ := ctx.Value(infoKey{}).(*Info)
	return i
}

// SetTarget records the model and provider a call resolved to (for the log
// line).
func (i *Info) SetTarget(model, provider string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.model, i.provider = model, provider
}

// Target returns the recorded model and provider.
func (i *Info) Target() (model, provider string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.model, i.provider
}

func ensureInfo(ctx context.Context) (context.Context, *Info) {
	if i := InfoFrom(ctx); i != nil {
		return ctx, i
	}
	i := &Info{}
	return WithInfo(ctx, i), i
}

// SetLabels records the caller's labels (call.labels) for the log line.
func (i *Info) SetLabels(labels map[string]string) {
	if i == nil || len(labels) == 0 {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.labels = labels
}

// SetCaller records the authenticated caller's name (for the log line).
func (i *Info) SetCaller(name string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.caller = name
}

// Caller returns the authenticated caller's name ("" without auth).
func (i *Info) Caller() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.caller
}

// Labels returns the recorded labels.
func (i *Info) Labels() map[string]string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.labels
}
