package anthropic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func TestDecodeTextDeltaFast(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, text string
		idx      int
		ok       bool
	}{
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`, "Hello", 0, true},
		{` { "type" : "content_block_delta" , "index" : 12 , "delta" : { "type" : "text_delta" , "text" : "a\n\"b\"\\/\tc" } } ` + "\n", "a\n\"b\"\\/\tc", 12, true},
		{`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"héllo ☃"}}`, "héllo ☃", 1, true},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\u00e9"}}`, "", 0, false},
		{`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`, "", 0, false},
		{`{"type":"content_block_delta","index":1.0,"delta":{"type":"text_delta","text":"x"}}`, "", 0, false},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`, "", 0, false},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","extra":1}}`, "", 0, false},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}x`, "", 0, false},
		{"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xff\"}}", "", 0, false},
		{"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\x01\"}}", "", 0, false},
	}
	for _, c := range cases {
		var ev streamEvent
		var idx int
		var d streamDelta
		var scratch []byte
		ok := decodeTextDeltaFast([]byte(c.in), &ev, &idx, &d, &scratch)
		if ok != c.ok {
			t.Errorf("%q: ok=%v, want %v", c.in, ok, c.ok)
			continue
		}
		if ok && (ev.Delta.Text != c.text || *ev.Index != c.idx || ev.Type != "content_block_delta" || ev.Delta.Type != "text_delta") {
			t.Errorf("%q: %+v %+v", c.in, ev, *ev.Delta)
		}
	}
}

// FuzzDecodeTextDeltaFast: whatever the fast path accepts, encoding/json
// decodes to the same event.
func FuzzDecodeTextDeltaFast(f *testing.F) {
	for _, name := range []string{"plain_stream.http", "tools_stream.http", "thinking_stream.http", "surrogate19_split_stream.http"} {
		for _, line := range bytes.Split(providertest.Load(f, "testdata/"+name).Body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: ")); ok {
				f.Add(d)
			}
		}
	}
	f.Add([]byte(`{"type":"content_block_delta","index":-3,"delta":{"type":"text_delta","text":"a\\b\/c\"d\b\f\r"}}`))
	f.Add([]byte(`{"type":"content_block_delta","index":123456789,"delta":{"type":"text_delta","text":"é"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast streamEvent
		var idx int
		var d streamDelta
		scratch := []byte("stale scratch")
		if !decodeTextDeltaFast(raw, &fast, &idx, &d, &scratch) {
			return
		}
		var slow streamEvent
		if err := json.Unmarshal(raw, &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v %+v\njson %+v %+v", raw, fast, *fast.Delta, slow, slow.Delta)
		}
	})
}
