package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Timing measures each attempt: it adds the attempt's duration (for a
// stream, until the stream ends) to Record.RequestDuration and marks
// Record.AttemptStart. Place it inside Retry so that backoff waits are not
// counted.
func Timing(now func() time.Time) (Interceptor, StreamInterceptor) {
	unary := func(ctx context.Context, c *Call, next Handler) (*provider.Result, error) {
		start := now()
		c.Record.AttemptStart = start
		res, err := next(ctx, c)
		c.Record.RequestDuration += now().Sub(start)
		return res, err
	}
	stream := func(ctx context.Context, c *Call, next StreamHandler) (provider.Stream, error) {
		c.Record.AttemptStart = now()
		s, err := next(ctx, c)
		return timeStream(c, now, s, err)
	}
	return unary, stream
}

// timeStream is apart from the stream interceptor, which keeps a small
// frame: the request is written below it (docs/decisions.md, "An open
// stream's goroutine stays within 8 KiB").
//
//go:noinline
func timeStream(c *Call, now func() time.Time, s provider.Stream, err error) (provider.Stream, error) {
	start := c.Record.AttemptStart
	if err != nil {
		c.Record.RequestDuration += now().Sub(start)
		return nil, err
	}
	// The attempt lasts until its stream ends: the last event, an error (a
	// failed read-ahead that Retry moves past included), or Close.
	return &timedStream{Stream: s, end: func() { c.Record.RequestDuration += now().Sub(start) }}, nil
}

// timedStream calls end once, when the stream ends.
type timedStream struct {
	provider.Stream
	end  func()
	once sync.Once
}

func (t *timedStream) Recv() (*provider.Event, error) {
	ev, err := t.Stream.Recv()
	if err != nil {
		t.once.Do(t.end)
	}
	return ev, err
}

func (t *timedStream) Close() error {
	t.once.Do(t.end)
	return t.Stream.Close()
}
