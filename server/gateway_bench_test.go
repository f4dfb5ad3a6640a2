package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const benchYAML = `
server:
  log_level: warn
defaults:
  preserve_raw_data: false
providers:
  - name: oai
    type: openai
    base_url: {{URL}}
    api_key: sk-bench-test-key-0000000000
models:
  - name: m
    provider: oai
    upstream_model: gpt-4o-mini
    capabilities: {chat: {format: openai-chat}}
`

// benchServer runs the whole server over bufconn against an httptest
// upstream replaying a recorded OpenAI answer (written in one piece), so
// that the benchmarks measure the interceptor chain, validation, the
// pipeline, the adapter, metadata building and the relay. Only errors are
// logged (to stderr, so that a handler panic is visible). extra is
// appended to the configuration (telemetry).
func benchServer(b *testing.B, recording string, extra ...string) llmrelayv1.GatewayServiceClient {
	b.Helper()
	up := providertest.Replay(b, providertest.Load(b, "provider/openai/testdata/"+recording))
	up.Chunk = 1 << 20
	cfg, err := config.Parse([]byte(strings.ReplaceAll(benchYAML+strings.Join(extra, ""), "{{URL}}", up.URL)), "bench")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		b.Fatal(err)
	}
	conn := serveBufconn(b, srv)
	return llmrelayv1.NewGatewayServiceClient(conn)
}

func benchMessages() []*llmrelayv1.Message {
	return []*llmrelayv1.Message{
		{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "You are a helpful assistant."}}}},
		{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "Say hello in one short sentence."}}}},
	}
}

func benchChat(b *testing.B, raw bool, extra ...string) {
	c := benchServer(b, "chat_plain.http", extra...)
	req := &llmrelayv1.ChatRequest{Model: "m", Messages: benchMessages(), Call: &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(raw)}}
	ctx := context.Background()
	b.ReportAllocs()
	cpu := processCPU(b)
	defer reportCPU(b, cpu)
	for b.Loop() {
		resp, err := c.Chat(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if raw != (resp.GetMeta().GetRaw() != nil) {
			b.Fatalf("raw capture %v, meta.raw %v", raw, resp.GetMeta().GetRaw() != nil)
		}
	}
}

// BenchmarkChat: one unary Chat end to end (client and upstream included;
// compare with the adapter's own BenchmarkGenerate).
func BenchmarkChat(b *testing.B) { benchChat(b, false) }

// BenchmarkChatRawCapture: the same with raw capture on.
func BenchmarkChatRawCapture(b *testing.B) { benchChat(b, true) }

// BenchmarkChatParallel: concurrent Chat calls on one connection.
func BenchmarkChatParallel(b *testing.B) { benchChatParallel(b) }

// BenchmarkChatParallelTelemetry: the same with tracing (no-op exporter)
// and metrics on: the overhead under concurrency, where locks and the
// span processor's queue are shared.
func BenchmarkChatParallelTelemetry(b *testing.B) { benchChatParallel(b, benchTelemetryYAML) }

func benchChatParallel(b *testing.B, extra ...string) {
	c := benchServer(b, "chat_plain.http", extra...)
	req := &llmrelayv1.ChatRequest{Model: "m", Messages: benchMessages(), Call: &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(false)}}
	b.ReportAllocs()
	b.SetParallelism(8) // 16 callers on two cores, as the harness's c=16
	cpu := processCPU(b)
	defer reportCPU(b, cpu)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Chat(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkStreamChat: one StreamChat end to end; ns/chunk is per relayed
// text delta.
func BenchmarkStreamChat(b *testing.B) { benchStreamChat(b) }

func benchStreamChat(b *testing.B, extra ...string) {
	c := benchServer(b, "chat_plain_stream.http", extra...)
	req := &llmrelayv1.StreamChatRequest{Model: "m", Messages: benchMessages(), Call: &llmrelayv1.CallOptions{PreserveRaw: proto.Bool(false)}}
	ctx := context.Background()
	chunks := 0
	b.ReportAllocs()
	cpu := processCPU(b)
	defer reportCPU(b, cpu)
	for b.Loop() {
		s, err := c.StreamChat(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		ended := false
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if ev.GetTextDelta() != nil {
				chunks++
			}
			ended = ended || ev.GetEnd() != nil
		}
		if !ended {
			b.Fatal("stream without end event")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(chunks), "ns/chunk")
}

// benchTelemetryYAML turns tracing on with spans batched to a discarding
// exporter (every span made and processed, none sent) and metrics on.
const benchTelemetryYAML = `
telemetry:
  tracing: {enabled: true, exporter: none}
  metrics: {enabled: true, listen: "127.0.0.1:0"}
`

// BenchmarkChatTelemetry: BenchmarkChat with tracing (no-op exporter) and
// metrics on: the overhead of telemetry is the difference.
func BenchmarkChatTelemetry(b *testing.B) { benchChat(b, false, benchTelemetryYAML) }

// BenchmarkStreamChatTelemetry: BenchmarkStreamChat with tracing (no-op
// exporter) and metrics on.
func BenchmarkStreamChatTelemetry(b *testing.B) { benchStreamChat(b, benchTelemetryYAML) }

// reportCPU reports the process's CPU time per call since start: the
// server, the in-process client and the upstream together (on unix).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkChatTracing and BenchmarkChatMetrics split the telemetry
// overhead in two: tracing alone (no-op exporter), metrics alone.
func BenchmarkChatTracing(b *testing.B) {
	benchChat(b, false, "\ntelemetry:\n  tracing: {enabled: true, exporter: none}\n")
}

func BenchmarkChatMetrics(b *testing.B) {
	benchChat(b, false, "\ntelemetry:\n  metrics: {enabled: true, listen: \"127.0.0.1:0\"}\n")
}

// BenchmarkChatTracingUnsampled: tracing on with every new trace sampled
// out (sample_ratio 0): the cost of carrying the trace context without
// recording spans.
func BenchmarkChatTracingUnsampled(b *testing.B) {
	benchChat(b, false, "\ntelemetry:\n  tracing: {enabled: true, exporter: none, sample_ratio: 0}\n")
}
