package anthropic

import (
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func benchRequest() *provider.Request {
	return providertest.BenchRequest("claude-sonnet-4-5", "anthropic-messages")
}

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
	p := benchProvider(b, "plain_stream.http")
	providertest.BenchStream(b, p, benchRequest())
}

func BenchmarkEncodeRequest(b *testing.B) {
	p := benchProvider(b, "plain.http")
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := p.buildRequest(req, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseResponse(b *testing.B) {
	rec := providertest.Load(b, "testdata/plain.http")
	b.SetBytes(int64(len(rec.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseResponse(rec.Body, rec.Header); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamChunk is the handling of one text chunk as the mock
// upstream and Anthropic send it (SSE framing excluded).
func BenchmarkStreamChunk(b *testing.B) {
	chunk := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello "}}`)
	s := &stream{blocks: map[int]*blockState{0: {typ: "text"}}}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.handle("content_block_delta", chunk); err != nil {
			b.Fatal(err)
		}
		clear(s.pending)
		s.pending = s.pending[:0]
	}
}
