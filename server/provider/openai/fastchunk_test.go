package openai

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// fastChunkSeeds are chunks as OpenAI, Azure and the mock upstream send
// them, plus shapes the fast path must hand over to encoding/json.
var fastChunkSeeds = []string{
	`{"id":"chatcmpl-mock1","object":"chat.completion.chunk","created":1763000000,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp_mock","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-mock1","object":"chat.completion.chunk","created":1763000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello "},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x7Q"}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"caf\u00e9 \"x\""}}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":""}}]}}]}`,
	`{"ID":"upper","choices":[{"Index":1,"Delta":{"Content":"x"}}]}`,
	`{"id":"a","id":"b"}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":null,"refusal":"no"},"finish_reason":"content_filter","content_filter_results":{}}]}`,
	`{"created":1.5,"choices":[{"index":-0}]}`,
	`{"ſervice_tier":"x","created":007}`,
	` {"id":"c"} `,
	`{"id":"c"} x`,
	`{"unknown":{"nested":1},"id":"c"}`,
	`{"unknown":true,"other":false,"n":-12,"z":null,"id":"c"}`,
	"{\"id\":\"bad \xff\"}",
	`{}`,
	`[]`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"think"},"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Okay"}}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"x","index":0}]}}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"Reasoning":"x"}}]}`,
	`{"id":"c","choices":[{"index":0,"message":{"content":"a","reasoning_content":null,"reasoning":"b"}}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning_content":"b"}}]}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":194,"completion_tokens":2,"total_tokens":196,"cost":0.95,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":100,"audio_tokens":0}}}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"Cache_Write_Tokens":1}}}`,
}

// FuzzDecodeChunkFast: whenever the fast path accepts a chunk, encoding/json
// accepts it too, without a warning, and decodes exactly the same struct.
func FuzzDecodeChunkFast(f *testing.F) {
	for _, s := range fastChunkSeeds {
		f.Add([]byte(s))
	}
	for _, name := range []string{"chat_plain.http", "chat_reasoning.http", "refusal.http", "tools_parallel.http", "azure_chat.http",
		"dialect_sglang_matched_stop.http"} {
		f.Add(providertest.Load(f, "testdata/"+name).Body)
	}
	f.Add([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1763000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_mock"}`))
	f.Add([]byte(`{"x":[1,-2.5e+3,{"a":"\u00e9\n"},[],{}],"y":0.0,"z":"\q"}`))
	for _, name := range []string{"chat_plain_stream.http", "tools_parallel_stream.http", "azure_chat_stream.http",
		"deepseek_reasoning_stream.http", "ollama_v1_reasoning_stream.http", "openrouter_reasoning_stream.http",
		"dialect_sglang_stop_str_stream.http", "dialect_vllm_stop_reason_stream.http", "surrogate19_chat_split_stream.http"} {
		body := providertest.Load(f, "testdata/"+name).Body
		for _, line := range bytes.Split(body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: ")); ok {
				f.Add(d)
			}
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast chatResponse
		prev := &chunkStrings{ID: "chatcmpl-mock1", Object: "chat.completion.chunk", Model: "gpt-4o-mini", ServiceTier: "default", SystemFingerprint: "fp_mock"}
		if !decodeChunkFast(raw, &fast, prev, nil) {
			return
		}
		var slow chatResponse
		warn, err := decodeLenient(raw, &slow)
		if err != nil || warn != "" {
			t.Fatalf("fast path accepted %q, encoding/json: %v %q", raw, err, warn)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\njson %+v", raw, fast, slow)
		}
		// As a stream decodes: a used decoder, and the previous chunk's
		// choices array reused. Only the nil-ness of an empty Choices may
		// differ.
		stale := []chatChoice{{Index: 7, Delta: &respMessage{Role: "stale"}}, {Index: 8}}
		reused := chatResponse{Choices: stale[:0]}
		dirty := &fastDecoder{b: []byte("junk"), i: 3, seen: 0xffff}
		if !decodeChunkFast(raw, &reused, prev, dirty) {
			t.Fatalf("%q: accepted fresh, refused with a reused decoder", raw)
		}
		if len(reused.Choices) == 0 && len(slow.Choices) == 0 {
			reused.Choices = slow.Choices
		}
		if !reflect.DeepEqual(reused, slow) {
			t.Fatalf("%q reused:\nfast %+v\njson %+v", raw, reused, slow)
		}
	})
}

// TestDecodeChunkFastCoverage: the common chunks take the fast path, the
// others do not.
func TestDecodeChunkFastCoverage(t *testing.T) {
	t.Parallel()
	for i, want := range []bool{true, true, true, true, true, false, false, false, false, false, false, true, false, true, true, false, true, false,
		true, true, false, false, true, false, true, false} {
		var c chatResponse
		if got := decodeChunkFast([]byte(fastChunkSeeds[i]), &c, nil, nil); got != want {
			t.Errorf("seed %d %q: fast=%v, want %v", i, fastChunkSeeds[i], got, want)
		}
	}
	// What bench/mockupstream (and OpenAI) answer: both take the fast path.
	for _, body := range []string{
		`{"id":"chatcmpl-mock1","object":"chat.completion","created":1795311409,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"This is a mock completion","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_mock"}`,
		`{"id":"chatcmpl-mock2","object":"chat.completion.chunk","created":1795311409,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp_mock","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
	} {
		var fast, slow chatResponse
		if !decodeChunkFast([]byte(body), &fast, nil, nil) {
			t.Errorf("not on the fast path: %s", body)
			continue
		}
		if _, err := decodeLenient([]byte(body), &slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Errorf("fast and encoding/json differ (%v): %+v vs %+v", err, fast, slow)
		}
	}
	for _, name := range []string{"chat_plain.http", "chat_reasoning.http", "ollama_v1_reasoning.http"} {
		var c chatResponse
		if !decodeChunkFast(providertest.Load(t, "testdata/"+name).Body, &c, nil, nil) {
			t.Errorf("%s: recorded OpenAI answer not on the fast path", name)
		}
	}
}
