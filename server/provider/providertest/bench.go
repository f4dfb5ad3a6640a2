package providertest

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
)

// Transport answers every request with rec, in memory, so that adapter
// benchmarks measure encoding, decoding and stream parsing, not sockets.
func Transport(rec Recording) http.RoundTripper { return memTransport{rec} }

type memTransport struct{ rec Recording }

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return nil, err
		}
		if err := r.Body.Close(); err != nil {
			return nil, err
		}
	}
	return &http.Response{StatusCode: t.rec.Status, Header: t.rec.Header, Body: io.NopCloser(bytes.NewReader(t.rec.Body)),
		ContentLength: int64(len(t.rec.Body)), Request: r}, nil
}

// BenchRequest is the benchmarks' small chat: a system and a user message,
// max_tokens 64.
func BenchRequest(model, format string) *provider.Request {
	text := func(s string) []*llmrelayv1.Part { return []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: s}}} }
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Format: format,
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: text("You are a helpful assistant.")},
			{Role: llmrelayv1.Role_ROLE_USER, Parts: text("Say hello in one short sentence.")},
		},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(64)},
	}
}

// BenchGenerate measures one unary call: request encoding, the in-memory
// round trip, response decoding and meta.
func BenchGenerate(b *testing.B, p provider.Provider, req *provider.Request) {
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

// BenchStream opens a stream and reads all of it, reporting ns/event: the
// cost per normalized event (chunk parsing and conversion).
func BenchStream(b *testing.B, p provider.Provider, req *provider.Request) {
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
