package extract

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// realWorldLog is every testdata body in one JSON array, as a log batch.
func realWorldLog(b *testing.B) []byte {
	b.Helper()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(data)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// longConversation is an OpenAI chat request with n turns of text, tool
// calls and tool results.
func longConversation(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"model":"gpt-4o","messages":[{"role":"system","content":"You are a helpful assistant."}`)
	for i := range n {
		fmt.Fprintf(&buf, `,{"role":"user","content":[{"type":"text","text":"Question %d: what is the weather in city number %d today?"}]}`, i, i)
		fmt.Fprintf(&buf, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"City %d\",\"unit\":\"celsius\"}"}}]}`, i, i)
		fmt.Fprintf(&buf, `,{"role":"tool","tool_call_id":"call_%d","content":"{\"temperature\":%d,\"condition\":\"cloudy\"}"}`, i, i%40)
		fmt.Fprintf(&buf, `,{"role":"assistant","content":"It is %d degrees and cloudy in City %d."}`, i%40, i)
	}
	buf.WriteString(`],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`)
	return buf.Bytes()
}

func BenchmarkExtract(b *testing.B) {
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"real_world_bodies", realWorldLog(b)},
		{"conversation_1k_turns", longConversation(1000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Extract(bc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
