package pipeline

import (
	"context"

	"github.com/llmrelay/llmrelay/server/provider"
)

// RawCapture puts a provider.Capture in the context of calls that preserve
// raw data; the HTTP transport (or an in-process provider) records the
// last attempt's bytes into it, capped at limit bytes per body.
func RawCapture(limit int) (Interceptor, StreamInterceptor) {
	unary := func(ctx context.Context, c *Call, next Handler) (*provider.Result, error) {
		if !c.PreserveRaw {
			return next(ctx, c)
		}
		if c.Record.Capture == nil {
			c.Record.Capture = &provider.Capture{Limit: limit}
		}
		return next(provider.WithCapture(ctx, c.Record.Capture), c)
	}
	stream := func(ctx context.Context, c *Call, next StreamHandler) (provider.Stream, error) {
		if !c.PreserveRaw {
			return next(ctx, c)
		}
		if c.Record.Capture == nil {
			c.Record.Capture = &provider.Capture{Limit: limit}
		}
		return next(provider.WithCapture(ctx, c.Record.Capture), c)
	}
	return unary, stream
}
