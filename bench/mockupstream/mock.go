package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// words are the streamed "tokens", cycled.
var words = strings.Fields("Hello there! This is the benchmark mock answering with a short, steady stream of words " +
	"so that every chunk costs the gateway the same work.")

type mock struct {
	chunks            int
	delay, chunkDelay time.Duration
	quiet             bool
	seq               atomic.Int64
	chat, chatStream  atomic.Int64
}

func newMock(chunks int, delay, chunkDelay time.Duration, quiet bool) *mock {
	return &mock{chunks: chunks, delay: delay, chunkDelay: chunkDelay, quiet: quiet}
}

// chatRequest is the part of a request the mock reads.
type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (m *mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case path == "/chat/completions" && r.Method == http.MethodPost:
		m.completions(w, r)
	case r.URL.Path == "/mock/stats":
		w.Header().Set("Content-Type", "application/json")
		// A failed write means the client went away: nothing to do.
		_, _ = fmt.Fprintf(w, `{"chat":%d,"chat_stream":%d}`, m.chat.Load(), m.chatStream.Load())
	case r.URL.Path == "/healthz":
		_, _ = io.WriteString(w, "ok")
	default:
		if !m.quiet {
			log.Printf("mockupstream: no route %s %s", r.Method, r.URL.Path)
		}
		apiError(w, http.StatusNotFound, "not_found", "unknown path "+r.URL.Path)
	}
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":%q}}`, msg, code)
}

func (m *mock) completions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_json", "the body is not valid JSON: "+err.Error())
		return
	}
	if req.Model == "" {
		apiError(w, http.StatusBadRequest, "missing_model", "model is required")
		return
	}
	n := m.chunks
	if v := r.Header.Get("X-Mock-Chunks"); v != "" {
		c, err := strconv.Atoi(v)
		if err != nil || c < 1 || c > 100000 {
			apiError(w, http.StatusBadRequest, "invalid_chunks", "X-Mock-Chunks must be 1..100000")
			return
		}
		n = c
	}
	if m.delay > 0 {
		time.Sleep(m.delay)
	}
	id := "chatcmpl-mock" + strconv.FormatInt(m.seq.Add(1), 10)
	created := time.Now().Unix()
	h := w.Header()
	h.Set("x-request-id", "req_mock"+strconv.FormatInt(m.seq.Load(), 10))
	h.Set("openai-processing-ms", "1")
	h.Set("x-ratelimit-limit-requests", "10000")
	h.Set("x-ratelimit-remaining-requests", "9999")
	h.Set("x-ratelimit-reset-requests", "6ms")
	model, _ := json.Marshal(req.Model)
	usage := fmt.Sprintf(`{"prompt_tokens":19,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`, n, 19+n)
	if !req.Stream {
		m.chat.Add(1)
		text, _ := json.Marshal(answer(n))
		h.Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"id":%q,"object":"chat.completion","created":%d,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":%s,"system_fingerprint":"fp_mock"}`,
			id, created, model, text, usage)
		return
	}
	m.chatStream.Add(1)
	withUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	nullUsage := ""
	if withUsage {
		nullUsage = `,"usage":null`
	}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	head := fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":%d,"model":%s,"system_fingerprint":"fp_mock","choices":[`, id, created, model)
	send := func(choices, tail string) bool {
		if _, err := io.WriteString(w, head+choices+"]"+tail+"}\n\n"); err != nil {
			return false // the client went away
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	if !send(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`, nullUsage) {
		return
	}
	for i := range n {
		if m.chunkDelay > 0 {
			select {
			case <-time.After(m.chunkDelay):
			case <-r.Context().Done():
				return
			}
		}
		word, _ := json.Marshal(words[i%len(words)] + " ")
		if !send(`{"index":0,"delta":{"content":`+string(word)+`},"logprobs":null,"finish_reason":null}`, nullUsage) {
			return
		}
	}
	if !send(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`, nullUsage) {
		return
	}
	if withUsage && !send("", `,"usage":`+usage) {
		return
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// answer is the unary reply: the first n words.
func answer(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
	}
	return b.String()
}
