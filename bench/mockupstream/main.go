// Command mockupstream is the benchmark harness's upstream: a small, fast
// stdlib-only mock of the provider APIs llmrelay speaks, so that what is
// measured is the gateway, not a model. Answers are assembled from
// pre-rendered fragments; the per-request work is one small JSON decode of
// the request body and a few appends.
//
//	POST /v1/chat/completions               OpenAI chat: a chat.completion, or an SSE stream ("stream": true)
//	POST /v1/responses                      OpenAI Responses: an SSE stream ("stream": true)
//	POST /v1/messages                       Anthropic Messages: an SSE stream ("stream": true)
//	POST /v1beta/models/{m}:streamGenerateContent?alt=sse   Gemini: an SSE stream
//	POST /api/chat                          Ollama: an NDJSON stream ("stream": true, its default)
//	GET  /mock/stats                        request counters (JSON)
//	GET  /healthz                           "ok"
//
// Every stream carries one text chunk per word (-chunks, or X-Mock-Chunks
// per request), then the format's final events with usage. -tls serves
// HTTPS with a certificate generated at start (written to -cert-out, for
// the client's trust store); -http2=false offers only HTTP/1.1 over TLS.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	addr        string
	chunkDelay  time.Duration
	chunks      int
	maxLifetime time.Duration
	tls         bool
	http2       bool
	certOut     string
}

var (
	cfg    config
	reqSeq atomic.Uint64
	// Counters for /mock/stats: unary chat calls, and streams (all formats).
	statChat, statStream, statErr atomic.Uint64
)

// words are what the mock "generates": stream chunk i carries
// words[i%len(words)] followed by a space.
var words = strings.Fields("This is a mock completion served by a fast local upstream so that gateway " +
	"overhead can be measured without any network or model latency getting in the way of the numbers")

func main() {
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:18080", "listen address")
	flag.DurationVar(&cfg.chunkDelay, "chunk-delay", 0, "delay before each text chunk of a stream")
	flag.IntVar(&cfg.chunks, "chunks", 20, "text chunks per stream (per request: X-Mock-Chunks header)")
	flag.DurationVar(&cfg.maxLifetime, "max-lifetime", 0, "exit after this long (0: run until signalled)")
	flag.BoolVar(&cfg.tls, "tls", false, "serve HTTPS with a generated certificate for 127.0.0.1 and localhost")
	flag.BoolVar(&cfg.http2, "http2", true, "with -tls: offer HTTP/2 (false: HTTP/1.1 only)")
	flag.StringVar(&cfg.certOut, "cert-out", "", "with -tls: write the certificate (PEM) to this file")
	flag.Parse()
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(route),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	scheme := "http"
	if cfg.tls {
		cert, certPEM, err := selfSigned()
		if err != nil {
			return err
		}
		if cfg.certOut != "" {
			if err := os.WriteFile(cfg.certOut, certPEM, 0o644); err != nil {
				return err
			}
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
		if !cfg.http2 {
			srv.TLSConfig.NextProtos = []string{"http/1.1"}
			srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // no HTTP/2
		}
		scheme = "https"
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		var lifetime <-chan time.Time
		if cfg.maxLifetime > 0 {
			lifetime = time.After(cfg.maxLifetime)
		}
		select {
		case <-sig:
		case <-lifetime:
		}
		_ = srv.Close() // exiting: open connections are dropped
	}()
	log.Printf("mockupstream on %s://%s (http2=%v chunks=%d chunk-delay=%s)", scheme, ln.Addr(), cfg.tls && cfg.http2, cfg.chunks, cfg.chunkDelay)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1, ::1 and
// localhost, valid for a day.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "llmrelay bench mock"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return cert, certPEM, err
}

func route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/healthz":
		_, _ = io.WriteString(w, "ok\n")
	case p == "/mock/stats":
		w.Header().Set("Content-Type", "application/json")
		// chat_stream counts the streams of every format (the harness
		// waits on it for its idle streams).
		fmt.Fprintf(w, `{"chat":%d,"chat_stream":%d,"errors":%d}`+"\n", statChat.Load(), statStream.Load(), statErr.Load())
	case r.Method != http.MethodPost:
		writeError(w, http.StatusNotFound, "unknown path "+p)
	case strings.HasSuffix(p, "/chat/completions"):
		serve(w, r, openaiChat)
	case strings.HasSuffix(p, "/responses"):
		serve(w, r, openaiResponses)
	case strings.HasSuffix(p, "/v1/messages"):
		serve(w, r, anthropicFormat)
	case strings.HasSuffix(p, ":streamGenerateContent"):
		serve(w, r, geminiFormat)
	case p == "/api/chat":
		serve(w, r, ollamaFormat)
	default:
		writeError(w, http.StatusNotFound, "unknown path "+p)
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	statErr.Add(1)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// request is the part of every format's request body the mock reads.
type request struct {
	Model  string `json:"model"`
	Stream *bool  `json:"stream"`
}

// format renders one provider's answers. Each stream event is written and
// flushed on its own, as providers do.
type format struct {
	name        string
	contentType string
	streamOnly  bool // the path itself asks for a stream (Gemini)
	defStream   bool // "stream" absent means a stream (Ollama)
	unary       func(b []byte, model string, id uint64) []byte
	head        func(b []byte, model string, id uint64) []byte // events before the text
	chunk       func(b []byte, model string, id uint64, seq int, word []byte) []byte
	tail        func(b []byte, model string, id uint64, n int) []byte
}

func serve(w http.ResponseWriter, r *http.Request, f *format) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	if req.Model == "" {
		req.Model = "mock-model"
	}
	model, err := json.Marshal(req.Model)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := reqSeq.Add(1)
	h := w.Header()
	h.Set("X-Request-Id", "req_mock"+strconv.FormatUint(id, 10))
	h.Set("X-Ratelimit-Limit-Requests", "10000")
	h.Set("X-Ratelimit-Remaining-Requests", "9999")
	stream := f.streamOnly || (req.Stream == nil && f.defStream) || (req.Stream != nil && *req.Stream)
	if !stream {
		if f.unary == nil {
			writeError(w, http.StatusBadRequest, f.name+": the mock answers only streams")
			return
		}
		statChat.Add(1)
		out := f.unary(make([]byte, 0, 1024), string(model), id)
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
		return
	}
	statStream.Add(1)
	n := cfg.chunks
	if v := r.Header.Get("X-Mock-Chunks"); v != "" {
		if k, err := strconv.Atoi(v); err == nil && k >= 0 {
			n = k
		}
	}
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 0, 1024)
	emit := func() bool {
		_, err := w.Write(buf)
		buf = buf[:0]
		if err == nil && flusher != nil {
			flusher.Flush()
		}
		return err == nil
	}
	if buf = f.head(buf, string(model), id); len(buf) > 0 && !emit() {
		return
	}
	for i := range n {
		if cfg.chunkDelay > 0 {
			time.Sleep(cfg.chunkDelay)
		}
		if buf = f.chunk(buf, string(model), id, i, wordJSON[i%len(wordJSON)]); !emit() {
			return
		}
	}
	buf = f.tail(buf, string(model), id, n)
	emit()
}

// wordJSON holds each word and its trailing space as a JSON string.
var wordJSON = func() [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		out[i], _ = json.Marshal(w + " ")
	}
	return out
}()

func u(b []byte, id uint64) []byte { return strconv.AppendUint(b, id, 10) }

var openaiChat = &format{
	name:        "openai-chat",
	contentType: "text/event-stream; charset=utf-8",
	unary: func(b []byte, model string, id uint64) []byte {
		b = append(b, `{"id":"chatcmpl-mock`...)
		b = u(b, id)
		b = append(b, `","object":"chat.completion","created":1760433275,"model":`...)
		b = append(b, model...)
		b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":"This is a mock completion served by a fast local upstream so that gateway overhead can be measured without","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],`...)
		b = append(b, `"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_mock"}`...)
		return b
	},
	head: func(b []byte, model string, id uint64) []byte {
		b = chatPrefix(b, model, id)
		return append(b, `[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"...)
	},
	chunk: func(b []byte, model string, id uint64, _ int, word []byte) []byte {
		b = chatPrefix(b, model, id)
		b = append(b, `[{"index":0,"delta":{"content":`...)
		b = append(b, word...)
		return append(b, `},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"...)
	},
	tail: func(b []byte, model string, id uint64, n int) []byte {
		b = chatPrefix(b, model, id)
		b = append(b, `[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`+"\n\n"...)
		b = chatPrefix(b, model, id)
		b = append(b, `[],"usage":{"prompt_tokens":12,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(12+n), 10)
		return append(b, `,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`+"\n\ndata: [DONE]\n\n"...)
	},
}

func chatPrefix(b []byte, model string, id uint64) []byte {
	b = append(b, `data: {"id":"chatcmpl-mock`...)
	b = u(b, id)
	b = append(b, `","object":"chat.completion.chunk","created":1760433275,"model":`...)
	b = append(b, model...)
	return append(b, `,"service_tier":"default","system_fingerprint":"fp_mock","choices":`...)
}

var openaiResponses = &format{
	name:        "openai-responses",
	contentType: "text/event-stream; charset=utf-8",
	head: func(b []byte, model string, id uint64) []byte {
		b = append(b, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":"...)
		b = responseObject(b, model, id, "in_progress", "[]", "null")
		b = append(b, "}\n\nevent: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"msg_mock"...)
		b = u(b, id)
		b = append(b, "\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"}}\n\n"...)
		b = append(b, "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"sequence_number\":2,\"item_id\":\"msg_mock"...)
		b = u(b, id)
		return append(b, "\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"\"}}\n\n"...)
	},
	chunk: func(b []byte, _ string, id uint64, seq int, word []byte) []byte {
		b = append(b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":"...)
		b = strconv.AppendInt(b, int64(seq+3), 10)
		b = append(b, ",\"item_id\":\"msg_mock"...)
		b = u(b, id)
		b = append(b, "\",\"output_index\":0,\"content_index\":0,\"delta\":"...)
		b = append(b, word...)
		return append(b, ",\"logprobs\":[],\"obfuscation\":\"X60\"}\n\n"...)
	},
	tail: func(b []byte, model string, id uint64, n int) []byte {
		b = append(b, "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":"...)
		b = strconv.AppendInt(b, int64(n+3), 10)
		b = append(b, ",\"output_index\":0,\"item\":{\"id\":\"msg_mock"...)
		b = u(b, id)
		b = append(b, "\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"mock\"}],\"role\":\"assistant\"}}\n\n"...)
		b = append(b, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":"...)
		b = strconv.AppendInt(b, int64(n+4), 10)
		b = append(b, ",\"response\":"...)
		usage := `{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":` + strconv.Itoa(n) +
			`,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":` + strconv.Itoa(12+n) + `}`
		b = responseObject(b, model, id, "completed", `[{"id":"msg_mock`+strconv.FormatUint(id, 10)+
			`","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"mock"}],"role":"assistant"}]`, usage)
		return append(b, "}\n\n"...)
	},
}

func responseObject(b []byte, model string, id uint64, status, output, usage string) []byte {
	b = append(b, `{"id":"resp_mock`...)
	b = u(b, id)
	b = append(b, `","object":"response","created_at":1760433275,"status":"`...)
	b = append(b, status...)
	b = append(b, `","error":null,"incomplete_details":null,"max_output_tokens":64,"model":`...)
	b = append(b, model...)
	b = append(b, `,"output":`...)
	b = append(b, output...)
	b = append(b, `,"parallel_tool_calls":true,"service_tier":"default","store":false,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"usage":`...)
	b = append(b, usage...)
	return append(b, '}')
}

var anthropicFormat = &format{
	name:        "anthropic",
	contentType: "text/event-stream; charset=utf-8",
	head: func(b []byte, model string, id uint64) []byte {
		b = append(b, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":"...)
		b = append(b, model...)
		b = append(b, ",\"id\":\"msg_mock"...)
		b = u(b, id)
		b = append(b, "\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1,\"service_tier\":\"standard\"}}}\n\n"...)
		return append(b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"...)
	},
	chunk: func(b []byte, _ string, _ uint64, _ int, word []byte) []byte {
		b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"...)
		b = append(b, word...)
		return append(b, "}}\n\n"...)
	},
	tail: func(b []byte, _ string, _ uint64, n int) []byte {
		b = append(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"...)
		b = append(b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":12,\"output_tokens\":"...)
		b = strconv.AppendInt(b, int64(n), 10)
		return append(b, "}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	},
}

var geminiFormat = &format{
	name:        "gemini",
	contentType: "text/event-stream",
	streamOnly:  true,
	head:        func(b []byte, _ string, _ uint64) []byte { return b },
	chunk: func(b []byte, _ string, id uint64, _ int, word []byte) []byte {
		b = append(b, `data: {"candidates": [{"content": {"parts": [{"text": `...)
		b = append(b, word...)
		b = append(b, `}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "mock`...)
		b = u(b, id)
		return append(b, "\"}\r\n\r\n"...)
	},
	tail: func(b []byte, _ string, id uint64, n int) []byte {
		b = append(b, `data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": `...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, `,"totalTokenCount": `...)
		b = strconv.AppendInt(b, int64(12+n), 10)
		b = append(b, `},"modelVersion": "gemini-2.5-flash","responseId": "mock`...)
		b = u(b, id)
		return append(b, "\"}\r\n\r\n"...)
	},
}

var ollamaFormat = &format{
	name:        "ollama",
	contentType: "application/x-ndjson",
	defStream:   true,
	head:        func(b []byte, _ string, _ uint64) []byte { return b },
	chunk: func(b []byte, model string, _ uint64, _ int, word []byte) []byte {
		b = append(b, `{"model":`...)
		b = append(b, model...)
		b = append(b, `,"created_at":"2025-10-14T09:12:02.100000Z","message":{"role":"assistant","content":`...)
		b = append(b, word...)
		return append(b, "},\"done\":false}\n"...)
	},
	tail: func(b []byte, model string, _ uint64, n int) []byte {
		b = append(b, `{"model":`...)
		b = append(b, model...)
		b = append(b, `,"created_at":"2025-10-14T09:12:02.900000Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1000000,"load_duration":1000,"prompt_eval_count":12,"prompt_eval_duration":1000,"eval_count":`...)
		b = strconv.AppendInt(b, int64(n), 10)
		return append(b, ",\"eval_duration\":1000}\n"...)
	},
}
