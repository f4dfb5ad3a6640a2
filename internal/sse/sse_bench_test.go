package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// chunkStream is n OpenAI-style chat.completion.chunk events, as the mock
// upstream sends them.
func chunkStream(n int, eol string) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString(`data: {"id":"chatcmpl-mock1","object":"chat.completion.chunk","created":1763000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello "},"logprobs":null,"finish_reason":null}],"usage":null}` + eol + eol)
	}
	b.WriteString("data: [DONE]" + eol + eol)
	return b.Bytes()
}

// TestReaderLinesAcrossBuffer: lines longer than the read buffer, and
// terminators at every position relative to the buffer boundary, read the
// same as with one byte per read.
func TestReaderLinesAcrossBuffer(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 10<<10)
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		for _, pad := range []int{0, 1, 4093, 4094, 4095, 4096} {
			in := "data: " + strings.Repeat("p", pad) + eol + eol + "data: " + long + eol + "data: y" + eol + eol
			whole, err := readAll(t, strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			split, err := readAll(t, iotest.OneByteReader(strings.NewReader(in)))
			if err != nil {
				t.Fatal(err)
			}
			want := []ev{{data: strings.Repeat("p", pad)}, {data: long + "\ny"}}
			if len(whole) != 2 || whole[0] != want[0] || whole[1] != want[1] || len(split) != 2 || split[0] != want[0] || split[1] != want[1] {
				t.Fatalf("eol %q pad %d: got %d/%d events", eol, pad, len(whole), len(split))
			}
		}
	}
}

func BenchmarkReader(b *testing.B) {
	for _, eol := range []string{"\n", "\r\n"} {
		name := map[string]string{"\n": "LF", "\r\n": "CRLF"}[eol]
		b.Run(name, func(b *testing.B) {
			in := chunkStream(20, eol)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				r := NewReader(bytes.NewReader(in))
				for {
					_, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					events++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}
