package ollama

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// FuzzDecodeLineFast: whatever the fast path accepts, encoding/json
// decodes to the same line.
func FuzzDecodeLineFast(f *testing.F) {
	for _, name := range []string{"stream_text.http", "stream_tools.http", "stream_thinking.http", "surrogate19_split_stream.http"} {
		for _, line := range bytes.Split(providertest.Load(f, "testdata/"+name).Body, []byte("\n")) {
			f.Add(bytes.TrimSpace(line))
		}
	}
	f.Add([]byte(` {"model" : "m", "created_at":"t","message":{"role":"assistant","content":"a\n\"b\" é"}, "done" : false } `))
	f.Add([]byte(`{"model":"m","created_at":"t","message":{"role":"assistant","content":"\u00e9"},"done":false}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast chatResponse
		var msg respMessage
		if !decodeLineFast(raw, &fast, &msg) {
			return
		}
		var slow chatResponse
		if err := json.Unmarshal(raw, &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v %+v\njson %+v %+v", raw, fast, *fast.Message, slow, slow.Message)
		}
	})
}

func TestDecodeLineFast(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"model":"llama3.2","created_at":"2025-10-14T09:12:02.1Z","message":{"role":"assistant","content":"The"},"done":false}`, true},
		{`{"model":"llama3.2","created_at":"x","message":{"role":"assistant","content":"The"},"done":true}`, false},
		{`{"model":"llama3.2","created_at":"x","message":{"role":"assistant","content":"","thinking":"hm"},"done":false}`, false},
		{`{"model":"llama3.2","created_at":"x","message":{"role":"assistant","content":["a"]},"done":false}`, false},
	} {
		var got chatResponse
		var msg respMessage
		if ok := decodeLineFast([]byte(c.in), &got, &msg); ok != c.ok {
			t.Errorf("%q: ok=%v", c.in, ok)
		} else if ok && string(got.Message.Content) != `"The"` {
			t.Errorf("%q: content %s", c.in, got.Message.Content)
		}
	}
}
