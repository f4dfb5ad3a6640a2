package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// benchTransport answers every request with one recording, in memory: the
// benchmarks measure the adapter (encoding, decoding, stream parsing), not
// sockets.
type benchTransport struct{ rec providertest.Recording }

func (t benchTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return nil, err
		}
		if err := r.Body.Close(); err != nil {
			return nil, err
		}
	}
	return &http.Response{StatusCode: t.rec.Status, Header: t.rec.Header, Body: io.NopCloser(bytes.NewReader(t.rec.Body)), Request: r}, nil
}

// benchRequest is a small chat: a system and a user message, max_tokens 64.
func benchRequest() *provider.Request {
	text := func(s string) []*llmrelayv1.Part { return []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: s}}} }
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "claude-sonnet-4-5", Format: "anthropic-messages",
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: text("You are a helpful assistant.")},
			{Role: llmrelayv1.Role_ROLE_USER, Parts: text("Say hello in one short sentence.")},
		},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(64)},
	}
}

func benchProvider(b *testing.B, recording string) *Provider {
	b.Helper()
	rec := providertest.Load(b, "testdata/"+recording)
	p, err := New("test-key", WithBaseURL("http://bench.invalid"), WithHTTPClient(&http.Client{Transport: benchTransport{rec}}))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkGenerate is one unary call: request encoding, the in-memory
// round trip, response decoding and meta.
func BenchmarkGenerate(b *testing.B) {
	p := benchProvider(b, "plain.http")
	req := benchRequest()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := p.Generate(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Message.GetParts()) == 0 {
			b.Fatal("empty message")
		}
	}
}

// BenchmarkStream opens a stream and reads all of it; ns/event is the cost
// per normalized event (chunk parsing and conversion).
func BenchmarkStream(b *testing.B) {
	p := benchProvider(b, "plain_stream.http")
	req := benchRequest()
	ctx := context.Background()
	events := 0
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Stream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
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
