package server_test

import "testing"

func BenchmarkChatTracingOnly(b *testing.B) {
	benchChat(b, false, "\ntelemetry:\n  tracing: {enabled: true, exporter: none}\n")
}
func BenchmarkChatMetricsOnly(b *testing.B) {
	benchChat(b, false, "\ntelemetry:\n  metrics: {enabled: true, listen: \"127.0.0.1:0\"}\n")
}
