package ollama

import (
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func benchRequest() *provider.Request { return providertest.BenchRequest("llama3.2", "ollama") }

func benchProvider(b *testing.B, recording string) *Provider {
	b.Helper()
	rec := providertest.Load(b, "testdata/"+recording)
	p, err := New("test-key", WithBaseURL("http://bench.invalid"), WithHTTPClient(&http.Client{Transport: providertest.Transport(rec)}))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkGenerate is one unary call: request encoding, the in-memory
// round trip, response decoding and meta.
func BenchmarkGenerate(b *testing.B) {
	p := benchProvider(b, "chat_text.http")
	providertest.BenchGenerate(b, p, benchRequest())
}

// BenchmarkStream opens a stream and reads all of it; ns/event is the cost
// per normalized event (chunk parsing and conversion).
func BenchmarkStream(b *testing.B) {
	p := benchProvider(b, "stream_text.http")
	providertest.BenchStream(b, p, benchRequest())
}

func BenchmarkEncodeRequest(b *testing.B) {
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildChatRequest(req, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseChatResponse(b *testing.B) {
	raw := providertest.Load(b, "testdata/chat_text.http").Body
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseChatResponse(raw, "bench", window{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamChunk is the handling of one text line as the mock
// upstream and Ollama send it.
func BenchmarkStreamChunk(b *testing.B) {
	line := []byte(`{"model":"llama3.2","created_at":"2025-10-14T09:12:02.137111Z","message":{"role":"assistant","content":"Hello "},"done":false}`)
	s := &stream{seen: map[string]bool{}}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		s.handleLine(line)
		if s.err != nil {
			b.Fatal(s.err)
		}
		clear(s.queue)
		s.queue, s.head = s.queue[:0], 0
	}
}
