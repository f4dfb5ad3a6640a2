package pipeline

import (
	"context"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Timing measures each attempt: it adds the attempt's duration to
// Record.RequestDuration and marks Record.AttemptStart. Place it inside
// Retry so that backoff waits are not counted.
func Timing(now func() time.Time) (Interceptor, StreamInterceptor) {
	unary := func(ctx context.Context, c *Call, next Handler) (*provider.Result, error) {
		start := now()
		c.Record.AttemptStart = start
		res, err := next(ctx, c)
		c.Record.RequestDuration += now().Sub(start)
		return res, err
	}
	stream := func(ctx context.Context, c *Call, next StreamHandler) (provider.Stream, error) {
		start := now()
		c.Record.AttemptStart = start
		s, err := next(ctx, c)
		if err != nil {
			c.Record.RequestDuration += now().Sub(start)
		}
		// A successful stream's reading time is added by the server when
		// the stream ends (Record.AttemptStart to the end).
		return s, err
	}
	return unary, stream
}
