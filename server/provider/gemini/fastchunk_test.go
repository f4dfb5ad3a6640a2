package gemini

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// FuzzDecodeChunkFast: whatever the fast path accepts, encoding/json
// decodes to the same chunk.
func FuzzDecodeChunkFast(f *testing.F) {
	for _, name := range []string{"stream_text.http", "stream_thinking_text.http", "stream_blocked.http"} {
		for _, line := range bytes.Split(providertest.Load(f, "testdata/"+name).Body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: ")); ok {
				f.Add(d)
			}
		}
	}
	f.Add([]byte(`{"candidates": [{"content": {"parts": [{"text": "Hello "}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "mock1"}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{},"modelVersion":"m","responseId":"r"}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokensDetails":[],"totalTokenCount":1,"totalTokenCount":2},"modelVersion":"m","responseId":"r"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast generateContentResponse
		scratch := []byte("stale")
		prev := &generateContentResponse{ModelVersion: "gemini-2.5-flash", ResponseID: "mock1"}
		if !decodeChunkFast(raw, &fast, prev, &scratch) {
			return
		}
		var slow generateContentResponse
		if err := json.Unmarshal(raw, &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\njson %+v", raw, fast, slow)
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
		var w generateContentResponse
		var scratch []byte
		if ok := decodeChunkFast([]byte(c.in), &w, nil, &scratch); ok != c.ok {
			t.Errorf("%q: ok=%v", c.in, ok)
		}
	}
}
