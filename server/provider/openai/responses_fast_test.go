package openai

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// FuzzDecodeRespTextDeltaFast: whatever the fast path accepts,
// decodeLenient decodes to the same event, without a warning, and the
// text is deltaText's. The fast path accepts only an empty logprobs list,
// which the stream reads as none (respLogprobs.delta): the event's
// logprobs are checked to be one and left out of the comparison.
func FuzzDecodeRespTextDeltaFast(f *testing.F) {
	for _, name := range []string{"responses_plain_stream.http", "responses_reasoning_tools_stream.http", "surrogate19_responses_split_stream.http"} {
		for _, line := range bytes.Split(providertest.Load(f, "testdata/"+name).Body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: ")); ok {
				f.Add(d)
			}
		}
	}
	f.Add([]byte(`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"a\n\"b\"","logprobs":[]}`))
	f.Add([]byte(` { "type" : "response.output_text.delta" , "sequence_number" : 3 , "item_id" : "msg_1" , "output_index" : 0 , "content_index" : 0 , "delta" : "é" , "logprobs" : [ ] , "obfuscation" : "x" } `))
	f.Fuzz(func(t *testing.T, raw []byte) {
		sc := respDeltaScratch{buf: []byte("stale"), itemID: "msg_1", delta: json.RawMessage(`"stale"`)}
		text, ok := decodeRespTextDeltaFast(raw, &sc)
		if !ok {
			return
		}
		fast := respEvent{Type: "response.output_text.delta", SequenceNumber: &sc.seq, ItemID: sc.itemID, OutputIndex: &sc.output, ContentIndex: &sc.content, Delta: sc.delta}
		var slow respEvent
		warn, err := decodeLenient(raw, &slow)
		if err != nil || warn != "" {
			t.Fatalf("fast path accepted %q, encoding/json: %v %q", raw, err, warn)
		}
		var lps []json.RawMessage
		if json.Unmarshal(slow.Logprobs, &lps) != nil || lps == nil || len(lps) != 0 {
			t.Fatalf("fast path accepted %q with logprobs %q", raw, slow.Logprobs)
		}
		slow.Logprobs = nil
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\njson %+v", raw, fast, slow)
		}
		if want := deltaText(slow.Delta); text != want {
			t.Fatalf("%q: text %q, deltaText %q", raw, text, want)
		}
	})
}
