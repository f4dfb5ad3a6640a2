package openai

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func benchRequest() *provider.Request { return providertest.BenchRequest("gpt-4o-mini", "openai-chat") }

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
	p := benchProvider(b, "chat_plain.http")
	providertest.BenchGenerate(b, p, benchRequest())
}

// BenchmarkStream opens a stream and reads all of it; ns/event is the cost
// per normalized event (chunk parsing and conversion).
func BenchmarkStream(b *testing.B) {
	p := benchProvider(b, "chat_plain_stream.http")
	providertest.BenchStream(b, p, benchRequest())
}

func BenchmarkEncodeChatRequest(b *testing.B) {
	p := benchProvider(b, "chat_plain.http")
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.buildChatRequest(req, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseChatResponse(b *testing.B) {
	p := benchProvider(b, "chat_plain.http")
	raw := providertest.Load(b, "testdata/chat_plain.http").Body
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.parseChatResponse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamChunk is the handling of one content chunk as the mock
// upstream and OpenAI send it (SSE framing excluded).
func BenchmarkStreamChunk(b *testing.B) {
	p := benchProvider(b, "chat_plain_stream.http")
	chunk := []byte(`{"id":"chatcmpl-mock1","object":"chat.completion.chunk","created":1763000000,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp_mock","choices":[{"index":0,"delta":{"content":"Hello "},"logprobs":null,"finish_reason":null}],"usage":null}`)
	s := &chatStream{eventLoop: eventLoop{p: p, header: http.Header{}}}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		s.handle(chunk)
		if s.err != nil {
			b.Fatal(s.err)
		}
		s.queue, s.qpos = s.queue[:0], 0
	}
}

func BenchmarkEncodeEmbedRequest(b *testing.B) {
	p := benchProvider(b, "embeddings.http")
	req := &provider.EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"The food was delicious.", "The waiter was friendly."}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.buildEmbedRequest(req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestContentTextFastPath: the no-escape fast path gives what a full JSON
// decode gives, and anything else still takes the decode.
func TestContentTextFastPath(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"Hello "`, `""`, `"caf\u00e9 \"q\""`, `"tab\tx"`, "\"bad \xff utf8\"", `"日本"`, `"a\\b"`} {
		text, refusal, ok := contentText(json.RawMessage(in))
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			if ok {
				t.Errorf("%q: ok for invalid JSON", in)
			}
			continue
		}
		if !ok || text != want || refusal != "" {
			t.Errorf("%q: got %q/%q/%v, want %q", in, text, refusal, ok, want)
		}
	}
	if _, _, ok := contentText(json.RawMessage(`"`)); ok {
		t.Error(`a lone quote must not be read as text`)
	}
}

// BenchmarkStreamChunkResponses is the handling of one Responses API text
// delta as the mock upstream and OpenAI send it (SSE framing excluded).
func BenchmarkStreamChunkResponses(b *testing.B) {
	p := benchProvider(b, "responses_plain_stream.http")
	rec := providertest.Load(b, "testdata/responses_plain_stream.http")
	s := p.newResponsesStream(&http.Response{Header: rec.Header, Body: http.NoBody}, "gpt-4o-mini", nil, secrets{})
	s.handle([]byte("response.output_item.added"), []byte(`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`))
	s.handle([]byte("response.content_part.added"), []byte(`{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}`))
	chunk := []byte(`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello ","logprobs":[],"obfuscation":"X60"}`)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		s.handle([]byte("response.output_text.delta"), chunk)
		if s.err != nil {
			b.Fatal(s.err)
		}
		s.queue, s.qpos = s.queue[:0], 0
	}
}
