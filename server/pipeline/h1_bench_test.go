package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

// benchAnswer is a chat completion as the bench mock sends it, with the
// headers of a typical provider.
var benchAnswer = func() []byte {
	body := `{"id":"chatcmpl-mock1","object":"chat.completion","created":1763000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"mock answer","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32},"service_tier":"default","system_fingerprint":"fp_mock"}`
	return []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Tue, 24 Nov 2026 00:00:00 GMT\r\nX-Request-Id: req_0123456789abcdef\r\nOpenai-Processing-Ms: 12\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// serveBench answers every request on c with benchAnswer, reading the
// request with as little work (and no allocation per request) as it can so
// that the benchmark measures the client.
func serveBench(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 16<<10)
	for {
		n := int64(-1)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 {
				break
			}
			if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
				n, _ = strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			}
		}
		if n < 0 {
			return
		}
		if _, err := br.Discard(int(n)); err != nil {
			return
		}
		if _, err := c.Write(benchAnswer); err != nil {
			return
		}
	}
}

// BenchmarkRoundTrip is one unary exchange through the provider client
// (NewHTTPClient: h1 transport over a kept-alive local connection) as the
// OpenAI adapter makes it: a JSON POST with its headers, the answer read to
// its end. Allocations include the (allocation-free) server's.
func BenchmarkRoundTrip(b *testing.B) { benchRoundTrip(b, (*http.Client).Do) }

// BenchmarkRoundTripDirect is BenchmarkRoundTrip as the adapters send:
// provider.Do instead of Client.Do.
func BenchmarkRoundTripDirect(b *testing.B) { benchRoundTrip(b, provider.Do) }

func benchRoundTrip(b *testing.B, do func(*http.Client, *http.Request) (*http.Response, error)) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveBench(c)
		}
	}()
	cfg := DefaultTransportConfig
	cfg.HTTPVersion = "1.1"
	client := NewHTTPClient(cfg, NewRedactor("sk-bench-secret"))
	defer client.CloseIdleConnections()
	url := "http://" + ln.Addr().String() + "/v1/chat/completions"
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence, please."}],"max_completion_tokens":64,"temperature":0.2}`)
	buf := make([]byte, 4<<10)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer sk-bench-secret")
		resp, err := do(client, req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := resp.Body.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

// BenchmarkReadResponseHead parses benchAnswer's head and reads its body:
// readResponseFast against http.ReadResponse.
func BenchmarkReadResponseHead(b *testing.B) {
	req, _ := http.NewRequest(http.MethodPost, "http://h/", nil)
	rd := bytes.NewReader(benchAnswer)
	br := bufio.NewReaderSize(rd, 4<<10)
	buf := make([]byte, 1024)
	for _, fast := range []bool{true, false} {
		b.Run(map[bool]string{true: "fast", false: "net-http"}[fast], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(benchAnswer)
				br.Reset(rd)
				br.Peek(1)
				var resp *http.Response
				var err error
				ok := false
				if fast {
					resp, ok = readResponseFast(br, req)
				}
				if !ok {
					if fast {
						b.Fatal("not taken")
					}
					if resp, err = http.ReadResponse(br, req); err != nil {
						b.Fatal(err)
					}
				}
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						break
					}
				}
			}
		})
	}
}
