package telemetry

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// batcher is the span processor in front of the exporter: like the SDK's
// BatchSpanProcessor it queues ended spans (up to a bound, dropping past
// it) and exports them in batches from a goroutine of its own, off the
// call path. Unlike it, an ended span is appended to a slice under a
// mutex instead of being sent over a channel: the SDK's channel send woke
// its goroutine for every span, a goroutine switch and a scheduler round
// per span, two per call (docs/decisions.md). The goroutine is woken once
// per full batch, at each interval and on flush.
type batcher struct {
	exp      sdktrace.SpanExporter
	maxQueue int
	maxBatch int
	interval time.Duration
	timeout  time.Duration

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	stopped bool
	dropped uint64

	spare []sdktrace.ReadOnlySpan // the run goroutine's: the other queue
	kick  chan struct{}           // a full batch is waiting
	flush chan chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// batchOptions are the batcher's settings; the zero value of a field is
// its default, as the SDK's.
type batchOptions struct {
	maxQueue, maxBatch int
	interval, timeout  time.Duration
}

// batchOptionsFromEnv reads the standard OTEL_BSP_* variables the SDK's
// batch span processor reads (delays in milliseconds); unset or invalid
// values leave the default.
func batchOptionsFromEnv(getenv func(string) string) batchOptions {
	num := func(name string) int {
		n, err := strconv.Atoi(getenv(name))
		if err != nil || n <= 0 {
			return 0
		}
		return n
	}
	return batchOptions{
		maxQueue: num("OTEL_BSP_MAX_QUEUE_SIZE"),
		maxBatch: num("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
		interval: time.Duration(num("OTEL_BSP_SCHEDULE_DELAY")) * time.Millisecond,
		timeout:  time.Duration(num("OTEL_BSP_EXPORT_TIMEOUT")) * time.Millisecond,
	}
}

// newBatcher starts a batcher exporting to exp; the SDK's defaults: a
// queue of 2048 spans, batches of 512, every 5 s, 30 s per export.
func newBatcher(exp sdktrace.SpanExporter, o batchOptions) *batcher {
	b := &batcher{
		exp: exp, maxQueue: 2048, maxBatch: 512, interval: 5 * time.Second, timeout: 30 * time.Second,
		kick: make(chan struct{}, 1), flush: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if o.maxQueue > 0 {
		b.maxQueue = o.maxQueue
	}
	if o.maxBatch > 0 {
		b.maxBatch = o.maxBatch
	}
	b.maxBatch = min(b.maxBatch, b.maxQueue)
	if o.interval > 0 {
		b.interval = o.interval
	}
	if o.timeout > 0 {
		b.timeout = o.timeout
	}
	go b.run()
	return b
}

var _ sdktrace.SpanProcessor = (*batcher)(nil)

// OnStart does nothing: spans are queued when they end.
func (*batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span, or drops it when the queue is full.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.stopped || len(b.queue) >= b.maxQueue {
		b.dropped++
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, s)
	full := len(b.queue) == b.maxBatch
	b.mu.Unlock()
	if full {
		select {
		case b.kick <- struct{}{}:
		default: // already woken
		}
	}
}

// Dropped is the number of spans dropped so far (queue full, or ended
// after shutdown).
func (b *batcher) Dropped() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

func (b *batcher) run() {
	defer close(b.done)
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			b.exportQueued()
			return
		case <-tick.C:
			b.exportQueued()
		case <-b.kick:
			b.exportQueued()
		case ack := <-b.flush:
			b.exportQueued()
			close(ack)
		}
	}
}

// exportQueued exports every span queued so far, in batches of maxBatch;
// spans ending meanwhile go to the other slice. Export errors go to the
// OpenTelemetry error handler, as the SDK's processor reports them.
func (b *batcher) exportQueued() {
	b.mu.Lock()
	q := b.queue
	b.queue = b.spare[:0]
	b.mu.Unlock()
	for rest := q; len(rest) > 0; {
		n := min(len(rest), b.maxBatch)
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		if err := b.exp.ExportSpans(ctx, rest[:n]); err != nil {
			otel.Handle(err)
		}
		cancel()
		rest = rest[n:]
	}
	clear(q) // exporters do not keep the slice (the SDK's processor reuses its own too)
	b.spare = q[:0]
}

// ForceFlush exports the spans queued so far.
func (b *batcher) ForceFlush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case b.flush <- ack:
	case <-b.done:
		return nil // shut down: everything was exported
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown exports the spans queued so far and shuts the exporter down;
// spans ending afterwards are dropped.
func (b *batcher) Shutdown(ctx context.Context) error {
	var err error
	b.once.Do(func() {
		b.mu.Lock()
		b.stopped = true
		b.mu.Unlock()
		close(b.stop)
		select {
		case <-b.done:
		case <-ctx.Done():
			err = ctx.Err()
			return
		}
		err = b.exp.Shutdown(ctx)
	})
	return err
}
