package telemetry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// recordingExporter keeps the names of the spans exported, batch by
// batch, and signals each batch; block holds exports until closed.
type recordingExporter struct {
	mu       sync.Mutex
	batches  [][]string
	exported chan int // the size of each batch
	block    chan struct{}
	shutdown bool
}

func newRecordingExporter() *recordingExporter {
	return &recordingExporter{exported: make(chan int, 100)}
}

func (e *recordingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.block != nil {
		select {
		case <-e.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name()
	}
	e.mu.Lock()
	e.batches = append(e.batches, names)
	e.mu.Unlock()
	e.exported <- len(spans)
	return nil
}

func (e *recordingExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.shutdown = true
	return nil
}

func (e *recordingExporter) names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, b := range e.batches {
		out = append(out, b...)
	}
	return out
}

// endSpans ends n spans of a tracer whose spans go to p.
func endSpans(p sdktrace.SpanProcessor, sampler sdktrace.Sampler, n int) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p), sdktrace.WithSampler(sampler))
	for i := range n {
		_, s := tp.Tracer("t").Start(context.Background(), string(rune('a'+i%26)))
		s.End()
	}
}

// A full batch is exported without waiting for the interval (an hour
// here); the rest on ForceFlush, in the order the spans ended.
func TestBatcherExportsFullBatches(t *testing.T) {
	t.Parallel()
	exp := newRecordingExporter()
	b := newBatcher(exp, batchOptions{maxBatch: 4, interval: time.Hour})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	endSpans(b, sdktrace.AlwaysSample(), 6)
	if n := <-exp.exported; n != 4 {
		t.Fatalf("first export of %d spans, want a full batch of 4", n)
	}
	if err := b.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := exp.names(); len(got) != 6 || got[0] != "a" || got[5] != "f" {
		t.Errorf("exported %v, want a to f in order", got)
	}
}

// Unsampled spans are not exported; spans past a full queue are dropped
// and counted; Shutdown exports what is queued, shuts the exporter down,
// and spans ending afterwards are dropped.
func TestBatcherQueueAndShutdown(t *testing.T) {
	t.Parallel()
	exp := newRecordingExporter()
	exp.block = make(chan struct{})
	b := newBatcher(exp, batchOptions{maxQueue: 3, maxBatch: 3, interval: time.Hour})
	endSpans(b, sdktrace.NeverSample(), 5)
	endSpans(b, sdktrace.AlwaysSample(), 3) // a full batch: its export blocks
	waitQueueEmpty(t, b)
	endSpans(b, sdktrace.AlwaysSample(), 5) // 3 queued, 2 dropped
	if d := b.Dropped(); d != 2 {
		t.Errorf("dropped %d, want 2", d)
	}
	close(exp.block)
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := exp.names(); len(got) != 6 || !exp.shutdown {
		t.Errorf("exported %v (exporter shut down: %v), want the 6 queued spans", got, exp.shutdown)
	}
	endSpans(b, sdktrace.AlwaysSample(), 1)
	if d := b.Dropped(); d != 3 {
		t.Errorf("dropped %d after shutdown, want 3", d)
	}
	if err := b.ForceFlush(context.Background()); err != nil {
		t.Errorf("ForceFlush after shutdown: %v", err)
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// waitQueueEmpty waits until the run goroutine has taken the queue.
func waitQueueEmpty(t *testing.T, b *batcher) {
	t.Helper()
	for {
		b.mu.Lock()
		n := len(b.queue)
		b.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("queue never taken")
		case <-time.After(time.Millisecond):
		}
	}
}

// ForceFlush and Shutdown give up when their context ends before the
// exporter does.
func TestBatcherContextEnds(t *testing.T) {
	t.Parallel()
	exp := newRecordingExporter()
	exp.block = make(chan struct{})
	defer close(exp.block)
	b := newBatcher(exp, batchOptions{interval: time.Hour})
	endSpans(b, sdktrace.AlwaysSample(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.ForceFlush(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("ForceFlush = %v, want context.Canceled", err)
	}
	if err := b.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
}

func TestBatchOptionsFromEnv(t *testing.T) {
	t.Parallel()
	o := batchOptionsFromEnv(env(map[string]string{
		"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "200",
		"OTEL_BSP_SCHEDULE_DELAY": "250", "OTEL_BSP_EXPORT_TIMEOUT": "x",
	}))
	if o != (batchOptions{maxQueue: 100, maxBatch: 200, interval: 250 * time.Millisecond}) {
		t.Errorf("options = %+v", o)
	}
	b := newBatcher(newRecordingExporter(), o)
	defer func() { _ = b.Shutdown(context.Background()) }()
	if b.maxBatch != 100 || b.timeout != 30*time.Second {
		t.Errorf("batch %d (want the queue's 100), timeout %v (want the default)", b.maxBatch, b.timeout)
	}
}
