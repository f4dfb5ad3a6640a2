package gemini

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func benchRequest() *provider.Request { return providertest.BenchRequest("gemini-2.5-flash", "gemini") }

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
	p := benchProvider(b, "plain.http")
	providertest.BenchGenerate(b, p, benchRequest())
}

// BenchmarkStream opens a stream and reads all of it; ns/event is the cost
// per normalized event (chunk parsing and conversion).
func BenchmarkStream(b *testing.B) {
	p := benchProvider(b, "stream_text.http")
	providertest.BenchStream(b, p, benchRequest())
}

func BenchmarkEncodeRequest(b *testing.B) {
	p := benchProvider(b, "plain.http")
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.encodeRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamChunk is the decoding and handling of one text chunk as
// the mock upstream and Gemini send it (SSE framing excluded), the work
// Recv does per chunk.
func BenchmarkStreamChunk(b *testing.B) {
	chunk := []byte(`{"candidates": [{"content": {"parts": [{"text": "Hello "}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "mock1"}`)
	p := benchProvider(b, "stream_text.http")
	s := &stream{p: p}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		w, ok := decodeChunkFast(chunk, &s.fast)
		if !ok {
			w = new(generateContentResponse)
			if err := json.Unmarshal(chunk, w); err != nil {
				b.Fatal(err)
			}
		}
		s.handle(w)
		s.fast.version, s.fast.id = w.ModelVersion, w.ResponseID
		if s.err != nil {
			b.Fatal(s.err)
		}
		clear(s.queue)
		s.queue = s.queue[:0]
	}
}
