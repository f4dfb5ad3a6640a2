package gemini

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// FuzzDecodeChunkFast: whatever the fast path accepts, encoding/json
// decodes to the same chunk, also when the storage is reused: two chunks
// are decoded in turn into one fastChunk that starts with another
// stream's state (a usage, a version and id, a text, scratch bytes).
func FuzzDecodeChunkFast(f *testing.F) {
	var seeds [][]byte
	for _, name := range []string{"stream_text.http", "stream_thinking_text.http", "stream_blocked.http", "surrogate19_split_stream.http"} {
		for _, line := range bytes.Split(providertest.Load(f, "testdata/"+name).Body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: ")); ok {
				seeds = append(seeds, d)
			}
		}
	}
	seeds = append(seeds,
		[]byte(`{"candidates": [{"content": {"parts": [{"text": "Hello "}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "mock1"}`),
		[]byte(`{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{},"modelVersion":"m","responseId":"r"}`),
		[]byte(`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokensDetails":[],"totalTokenCount":1,"totalTokenCount":2},"modelVersion":"m","responseId":"r"}`),
		[]byte(`{"candidates": [{"content": {"parts": [{"text": "a\\nb"}],"role": "model"},"index": 0}],"usageMetadata":  {"promptTokenCount": 12,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "mock1"}`),
	)
	for i, a := range seeds {
		f.Add(a, seeds[(i+1)%len(seeds)])
		f.Add(a, a)
	}
	f.Fuzz(func(t *testing.T, raw1, raw2 []byte) {
		fc := &fastChunk{
			usage:   &usageMetadata{PromptTokenCount: 12, TotalTokenCount: 12, Raw: json.RawMessage(`{"promptTokenCount": 12,"totalTokenCount": 12}`)},
			version: "gemini-2.5-flash", id: "mock1", text: "stale", scratch: []byte("stale"),
		}
		for _, raw := range [][]byte{raw1, raw2} {
			fast, ok := decodeChunkFast(raw, fc)
			if !ok {
				continue
			}
			var slow generateContentResponse
			if err := json.Unmarshal(raw, &slow); err != nil {
				t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
			}
			if !reflect.DeepEqual(*fast, slow) {
				t.Fatalf("%q:\nfast %+v\njson %+v", raw, *fast, slow)
			}
			fc.version, fc.id = fast.ModelVersion, fast.ResponseID
		}
	})
}

func TestDecodeChunkFastShapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"candidates": [{"content": {"parts": [{"text": "The capital of France"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 14,"totalTokenCount": 41,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 14}],"thoughtsTokenCount": 27},"modelVersion": "gemini-2.5-flash","responseId": "b2TuaPLfEsmd1MkP_ZKv0QQ"}`, true},
		{`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"index":0}],"usageMetadata":{"totalTokenCount":1,},"modelVersion":"m","responseId":"r"}`, false},
		{`{"candidates":[{"content":{"parts":[{"text":"x","thought":true}],"role":"model"},"index":0}],"usageMetadata":{},"modelVersion":"m","responseId":"r"}`, false},
		{`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"index":0}],"usageMetadata":{"other":1},"modelVersion":"m","responseId":"r"}`, false},
	} {
		if _, ok := decodeChunkFast([]byte(c.in), &fastChunk{}); ok != c.ok {
			t.Errorf("%q: ok=%v", c.in, ok)
		}
	}
}
