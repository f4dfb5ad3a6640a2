package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// Fault sequences through the real gateway and adapters: what a client
// sees (status, details, meta) when the upstream misbehaves, for every
// provider format. Retry delays are recorded by a clock whose Sleep returns
// at once (server.WithRetryClock), so a provider's Retry-After of seconds
// costs nothing.

// f13Clock is the wall clock's Now with a Sleep that records the delay and
// returns at once; with block it waits until the call's context ends
// instead (a deadline reached while backing off).
type f13Clock struct {
	mu     sync.Mutex
	sleeps []time.Duration
	block  bool
}

func (c *f13Clock) Now() time.Time { return time.Now() }

func (c *f13Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	block := c.block
	c.mu.Unlock()
	if block {
		<-ctx.Done()
	}
	return ctx.Err()
}

func (c *f13Clock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// f13Start serves yaml ({{URL}}: url) with the retry clock.
func f13Start(t *testing.T, yaml, url string, clock *f13Clock) llmrelayv1.GatewayServiceClient {
	t.Helper()
	cfg, err := config.Parse([]byte(strings.ReplaceAll(yaml, "{{URL}}", url)), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), server.WithRetryClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return llmrelayv1.NewGatewayServiceClient(serveBufconn(t, srv))
}

// f13Step answers one upstream request.
type f13Step func(w http.ResponseWriter, r *http.Request)

// f13Upstream answers its requests with the steps in order (the last one
// repeats) and counts them.
type f13Upstream struct {
	*httptest.Server
	mu sync.Mutex
	n  int
}

func (u *f13Upstream) requests() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n
}

func f13Serve(t *testing.T, steps ...f13Step) *f13Upstream {
	t.Helper()
	u := &f13Upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		step := steps[min(u.n, len(steps)-1)]
		u.n++
		u.mu.Unlock()
		step(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// respond writes status, headers and body, flushed in pieces so that
// events arrive in several reads.
func respond(status int, h http.Header, body string) f13Step {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		fl, _ := w.(http.Flusher)
		for b := body; len(b) > 0; {
			k := min(64, len(b))
			if _, err := io.WriteString(w, b[:k]); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			b = b[k:]
		}
	}
}

// thenReset writes the head of a 200 answer and body, then resets the
// connection (a TCP RST in the middle of the body).
func thenReset(h http.Header, body string) f13Step {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
}

// thenHang writes the head of a 200 answer and body, then says nothing
// until the gateway goes away.
func thenHang(h http.Header, body string) f13Step {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func merged(hs ...http.Header) http.Header {
	out := http.Header{}
	for _, h := range hs {
		for k, vs := range h {
			out[k] = append(out[k], vs...)
		}
	}
	return out
}

// f13Format is one provider format: its configuration and the shapes of
// its answers, errors and streams.
type f13Format struct {
	name string
	// yaml configures provider "up" and model "m" (chat), without the
	// defaults section.
	yaml string
	// reqID is the header the adapter reads the provider request id from
	// ("" for Gemini, which sends none).
	reqID string
	// rl are rate-limit headers for attempt n, and wantRL the state the
	// meta then carries (nil: the format reads none from a success).
	rl     func(n int) http.Header
	wantRL func(n int) int64
	// okBody is a complete unary answer saying okText.
	okBody string
	// errBody is the provider's error body for an HTTP status.
	errBody func(status int) string
	// contentType of its streams.
	streamType string
	// head: the events before the first content; text: one content
	// event; tail: the end of a complete stream (finish, usage,
	// terminator); errEvent: an in-stream error (overloaded, server error).
	head     string
	text     func(s string) string
	tail     string
	errEvent string
	// errCode and errReason are what errEvent maps to.
	errCode   codes.Code
	errReason string
}

const okText = "The capital of France is Paris."

const f13Key = "sk-e2e-test-key-000000000000"

func openaiRL(n int) http.Header {
	return hdr("x-ratelimit-limit-requests", "10000", "x-ratelimit-remaining-requests", strconv.Itoa(9000+n),
		"x-ratelimit-reset-requests", "1m30s", "x-ratelimit-limit-tokens", "30000", "x-ratelimit-remaining-tokens", "29000", "x-ratelimit-reset-tokens", "6ms")
}

func anthropicRL(n int) http.Header {
	return hdr("anthropic-ratelimit-requests-limit", "4000", "anthropic-ratelimit-requests-remaining", strconv.Itoa(3000+n),
		"anthropic-ratelimit-requests-reset", "2025-10-14T09:30:00Z")
}

func openaiErr(status int) string {
	typ := map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 403: "invalid_request_error", 404: "invalid_request_error",
		422: "invalid_request_error", 429: "requests", 500: "server_error", 503: "server_error"}[status]
	if typ == "" {
		typ = "server_error"
	}
	code := "null"
	if status == 429 {
		code = `"rate_limit_exceeded"`
	}
	return fmt.Sprintf(`{"error":{"message":"upstream said %d","type":%q,"param":null,"code":%s}}`, status, typ, code)
}

func openaiChunk(delta, finish string) string {
	return `data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null}` + "\n\n"
}

var openaiChat = f13Format{
	name: "openai-chat",
	yaml: `providers:
  - name: up
    type: openai
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: gpt-4o-mini, capabilities: {chat: {format: openai-chat}}}
`,
	reqID: "x-request-id", rl: openaiRL, wantRL: func(n int) int64 { return int64(9000 + n) },
	okBody: `{"id":"chatcmpl-f13","object":"chat.completion","created":1760433164,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		okText + `","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32}}`,
	errBody:    openaiErr,
	streamType: "text/event-stream",
	head:       openaiChunk(`{"role":"assistant","content":"","refusal":null}`, "null"),
	text:       func(s string) string { return openaiChunk(`{"content":`+strconv.Quote(s)+`}`, "null") },
	tail: openaiChunk(`{}`, `"stop"`) +
		`data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32}}` + "\n\n" +
		"data: [DONE]\n\n",
	errEvent:  `data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}` + "\n\n",
	errCode:   codes.Unavailable,
	errReason: "UPSTREAM_UNAVAILABLE",
}

func responsesEvent(typ, body string) string {
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + body + "}\n\n"
}

const responsesObj = `"id":"resp_f13","object":"response","created_at":1760433275,"model":"gpt-4.1-2025-04-14","output":[]`

var openaiResponses = f13Format{
	name: "openai-responses",
	yaml: `providers:
  - name: up
    type: openai
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: gpt-4.1, capabilities: {chat: {format: openai-responses}}}
`,
	reqID: "x-request-id", rl: openaiRL, wantRL: func(n int) int64 { return int64(9000 + n) },
	okBody: `{"id":"resp_f13","object":"response","created_at":1760433275,"status":"completed","model":"gpt-4.1-2025-04-14","output":[{"id":"msg_f13","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"` +
		okText + `"}],"role":"assistant"}],"usage":{"input_tokens":24,"input_tokens_details":{"cached_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":32}}`,
	errBody:    openaiErr,
	streamType: "text/event-stream",
	head: responsesEvent("response.created", `"sequence_number":0,"response":{`+responsesObj+`,"status":"in_progress","usage":null}`) +
		responsesEvent("response.output_item.added", `"sequence_number":1,"output_index":0,"item":{"id":"msg_f13","type":"message","status":"in_progress","content":[],"role":"assistant"}`) +
		responsesEvent("response.content_part.added", `"sequence_number":2,"item_id":"msg_f13","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`),
	text: func(s string) string {
		return responsesEvent("response.output_text.delta", `"sequence_number":3,"item_id":"msg_f13","output_index":0,"content_index":0,"delta":`+strconv.Quote(s))
	},
	tail: responsesEvent("response.output_item.done", `"sequence_number":5,"output_index":0,"item":{"id":"msg_f13","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"`+okText+`"}],"role":"assistant"}`) +
		responsesEvent("response.completed", `"sequence_number":6,"response":{"id":"resp_f13","object":"response","created_at":1760433275,"model":"gpt-4.1-2025-04-14","status":"completed","output":[{"id":"msg_f13","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"`+okText+`"}],"role":"assistant"}],"usage":{"input_tokens":24,"input_tokens_details":{"cached_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":32}}`),
	errEvent:  responsesEvent("response.failed", `"sequence_number":4,"response":{`+responsesObj+`,"status":"failed","error":{"code":"server_error","message":"The server had an error while processing your request. Sorry about that!"},"usage":null}`),
	errCode:   codes.Unavailable,
	errReason: "UPSTREAM_UNAVAILABLE",
}

func azureFormat() f13Format {
	f := openaiChat
	f.name = "azure"
	f.yaml = `providers:
  - name: up
    type: azure
    api_version: "2024-10-21"
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: gpt-4o-deployment, capabilities: {chat: {format: openai-chat}}}
`
	f.reqID = "apim-request-id"
	return f
}

func anthropicErr(status int) string {
	typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
		413: "request_too_large", 422: "invalid_request_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[status]
	if typ == "" {
		typ = "api_error"
	}
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":"upstream said %d"}}`, typ, status)
}

func anthropicEvent(typ, body string) string {
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + body + "}\n\n"
}

var anthropicFormat = f13Format{
	name: "anthropic",
	yaml: `providers:
  - name: up
    type: anthropic
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: claude-sonnet-4-5, capabilities: {chat: {format: anthropic-messages}}}
`,
	reqID: "request-id", rl: anthropicRL, wantRL: func(n int) int64 { return int64(3000 + n) },
	okBody: `{"model":"claude-sonnet-4-5-20250929","id":"msg_f13","type":"message","role":"assistant","content":[{"type":"text","text":"` + okText +
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":10}}`,
	errBody:    anthropicErr,
	streamType: "text/event-stream",
	head: anthropicEvent("message_start", `"message":{"model":"claude-sonnet-4-5-20250929","id":"msg_f13","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":1}}`) +
		anthropicEvent("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`),
	text: func(s string) string {
		return anthropicEvent("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":`+strconv.Quote(s)+`}`)
	},
	tail: anthropicEvent("content_block_stop", `"index":0`) +
		anthropicEvent("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":10}`) +
		anthropicEvent("message_stop", `"x":0`),
	errEvent:  anthropicEvent("error", `"error":{"type":"overloaded_error","message":"Overloaded"}`),
	errCode:   codes.Unavailable,
	errReason: "UPSTREAM_UNAVAILABLE",
}

func geminiErr(status int) string {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 408: "DEADLINE_EXCEEDED",
		409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}[status]
	if st == "" {
		st = "UNKNOWN"
	}
	return fmt.Sprintf(`{"error":{"code":%d,"message":"upstream said %d","status":%q}}`, status, status, st)
}

func geminiChunk(text, finish, usage string) string {
	c := `{"content":{"parts":[{"text":` + strconv.Quote(text) + `}],"role":"model"},"index":0` + finish + `}`
	return `data: {"candidates":[` + c + `],"usageMetadata":` + usage + `,"modelVersion":"gemini-2.5-flash","responseId":"gem_f13"}` + "\r\n\r\n"
}

var geminiFormat = f13Format{
	name: "gemini",
	yaml: `providers:
  - name: up
    type: gemini
    base_url: {{URL}}
    api_key: ` + f13Key + `
models:
  - {name: m, provider: up, upstream_model: gemini-2.5-flash, capabilities: {chat: {format: gemini}}}
`,
	rl:         func(int) http.Header { return http.Header{} },
	okBody:     `{"candidates":[{"content":{"parts":[{"text":"` + okText + `"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":14,"candidatesTokenCount":7,"totalTokenCount":21},"modelVersion":"gemini-2.5-flash","responseId":"gem_f13"}`,
	errBody:    geminiErr,
	streamType: "text/event-stream",
	text: func(s string) string {
		return geminiChunk(s, "", `{"promptTokenCount":14,"totalTokenCount":14}`)
	},
	tail:      geminiChunk("", `,"finishReason":"STOP"`, `{"promptTokenCount":14,"candidatesTokenCount":7,"totalTokenCount":21}`),
	errEvent:  `data: {"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}` + "\r\n\r\n",
	errCode:   codes.Unavailable,
	errReason: "UPSTREAM_UNAVAILABLE",
}

func ollamaLine(content string, done bool) string {
	if done {
		return `{"model":"llama3.2","created_at":"2025-10-14T09:12:03.5Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"prompt_eval_count":31,"eval_count":29}` + "\n"
	}
	return `{"model":"llama3.2","created_at":"2025-10-14T09:12:02.1Z","message":{"role":"assistant","content":` + strconv.Quote(content) + `},"done":false}` + "\n"
}

var ollamaFormat = f13Format{
	name: "ollama",
	yaml: `providers:
  - name: up
    type: ollama
    base_url: {{URL}}
models:
  - {name: m, provider: up, upstream_model: llama3.2, capabilities: {chat: {format: ollama}}}
`,
	reqID:      "x-request-id",
	rl:         func(int) http.Header { return http.Header{} },
	okBody:     `{"model":"llama3.2","created_at":"2025-10-14T09:12:03.5Z","message":{"role":"assistant","content":"` + okText + `"},"done_reason":"stop","done":true,"prompt_eval_count":31,"eval_count":29}`,
	errBody:    func(status int) string { return fmt.Sprintf(`{"error":"upstream said %d"}`, status) },
	streamType: "application/x-ndjson",
	text:       func(s string) string { return ollamaLine(s, false) },
	tail:       ollamaLine("", true),
	errEvent:   `{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n",
	errCode:    codes.Unavailable,
	errReason:  "UPSTREAM_UNAVAILABLE",
}

func f13Formats() []f13Format {
	return []f13Format{openaiChat, openaiResponses, azureFormat(), anthropicFormat, geminiFormat, ollamaFormat}
}

// f13Defaults: three attempts, millisecond backoff (recorded, not slept).
const f13Defaults = "defaults: {retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\n"

// reqIDHeader is the format's request-id header for attempt n.
func (f f13Format) reqIDHeader(n int) http.Header {
	if f.reqID == "" {
		return http.Header{}
	}
	return hdr(f.reqID, "req-f13-"+strconv.Itoa(n))
}

func (f f13Format) wantReqID(n int) string {
	if f.reqID == "" {
		return ""
	}
	return "req-f13-" + strconv.Itoa(n)
}

// okStep is a successful unary answer as attempt n (its request id and
// rate-limit state).
func (f f13Format) okStep(n int) f13Step {
	return respond(200, merged(hdr("Content-Type", "application/json", "Date", time.Now().UTC().Format(http.TimeFormat)), f.reqIDHeader(n), f.rl(n)), f.okBody)
}

// errStep is an error answer as attempt n, with extra headers (replacing
// the attempt's own of the same name).
func (f f13Format) errStep(n, status int, extra http.Header) f13Step {
	h := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(n), f.rl(n))
	for k, vs := range extra {
		h[k] = vs
	}
	return respond(status, h, f.errBody(status))
}

func (f f13Format) streamHead(n int) http.Header {
	return merged(hdr("Content-Type", f.streamType), f.reqIDHeader(n), f.rl(n))
}

func chatReq13() *llmrelayv1.ChatRequest {
	return &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("What is the capital of France?")}}
}

func retryInfo(st *status.Status) *errdetails.RetryInfo {
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			return r
		}
	}
	return nil
}

// TestFault13RetryDelayThenSuccess: a 429 naming its delay (Retry-After in
// seconds or as an HTTP date, retry-after-ms, Gemini's RetryInfo in the
// body), then a 200: retried once after exactly that delay, attempts 2,
// the 429 in retry_reasons with its delay; the meta is the successful
// answer's (request id, rate-limit state), not the 429's. Without a
// delay, reset headers (x-ratelimit-reset-*, anthropic-ratelimit-*-reset)
// give one only for a limit with nothing remaining (no attempt succeeds
// before it resets); the reset of a limit with something left says nothing
// about this 429, and the policy's backoff applies.
func TestFault13RetryDelayThenSuccess(t *testing.T) {
	t.Parallel()
	date := time.Now().UTC().Truncate(time.Second)
	type delayCase struct {
		name  string
		extra http.Header
		// want: the exact delay; -1: the policy's jittered backoff (<
		// max_delay); -d: until a reset d after the response (d less the
		// time since, at most 2s: reset times have second precision).
		want time.Duration
		only string // format names, "" for every one
		// extraAt are headers made when the subtest runs (absolute times).
		extraAt func(now time.Time) http.Header
		body    string // replaces the error body
	}
	cases := []delayCase{
		{name: "retry-after seconds", extra: hdr("Retry-After", "2"), want: 2 * time.Second},
		{name: "retry-after http-date", extra: hdr("Date", date.Format(http.TimeFormat), "Retry-After", date.Add(3*time.Second).Format(http.TimeFormat)), want: 3 * time.Second},
		{name: "retry-after-ms", extra: hdr("retry-after-ms", "1500", "Retry-After", "9"), want: 1500 * time.Millisecond},
		{name: "x-ratelimit reset of a limit not exhausted", extra: hdr("x-ratelimit-reset-requests", "1m30s", "x-ratelimit-remaining-requests", "5"), want: -1},
		{name: "x-ratelimit reset of an exhausted limit", extra: hdr("x-ratelimit-reset-requests", "20s", "x-ratelimit-remaining-requests", "0"), want: -20 * time.Second, only: "openai-chat openai-responses azure ollama"},
		{name: "x-ratelimit resets of two exhausted limits", extra: hdr("x-ratelimit-reset-requests", "20s", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-tokens", "25s", "x-ratelimit-remaining-tokens", "0"), want: -25 * time.Second, only: "openai-chat openai-responses azure ollama"},
		{name: "anthropic reset of a limit not exhausted", extra: hdr("anthropic-ratelimit-requests-remaining", "7", "anthropic-ratelimit-requests-reset", date.Add(time.Minute).Format(time.RFC3339)), want: -1, only: "anthropic"},
		{name: "anthropic reset of an exhausted limit", want: -20 * time.Second, only: "anthropic", extraAt: func(now time.Time) http.Header {
			return hdr("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", now.Add(20*time.Second).Format(time.RFC3339))
		}},
		{name: "gemini RetryInfo", want: 37 * time.Second, only: "gemini",
			body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`},
	}
	for _, f := range f13Formats() {
		for _, tc := range cases {
			if tc.only != "" && !slices.Contains(strings.Fields(tc.only), f.name) {
				continue
			}
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				extra := tc.extra
				if tc.extraAt != nil {
					extra = tc.extraAt(time.Now())
				}
				fail := f.errStep(1, 429, extra)
				if tc.body != "" {
					fail = respond(429, merged(hdr("Content-Type", "application/json"), extra), tc.body)
				}
				up := f13Serve(t, fail, f.okStep(2))
				clock := &f13Clock{}
				c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.GetMessage().GetParts()[0].GetText(); got != okText {
					t.Errorf("text = %q", got)
				}
				m := resp.GetMeta()
				if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || up.requests() != 2 {
					t.Fatalf("attempts %d, reasons %v, upstream requests %d", m.GetAttempts(), m.GetRetryReasons(), up.requests())
				}
				rr := m.GetRetryReasons()[0]
				if rr.GetReason() != "http_429" || rr.GetUpstreamStatus() != 429 || rr.GetAttempt() != 1 || rr.GetDeployment() == "" {
					t.Errorf("retry reason = %v", rr)
				}
				sleeps := clock.slept()
				if len(sleeps) != 1 {
					t.Fatalf("sleeps = %v", sleeps)
				}
				if tc.want >= 0 && (sleeps[0] != tc.want || rr.GetDelay().AsDuration() != tc.want) {
					t.Errorf("slept %v (recorded delay %v), want the provider's %v", sleeps[0], rr.GetDelay().AsDuration(), tc.want)
				}
				if tc.want == -1 && (sleeps[0] >= 2*time.Millisecond || rr.GetDelay().AsDuration() != sleeps[0]) {
					t.Errorf("slept %v (recorded delay %v), want the policy's backoff below max_delay", sleeps[0], rr.GetDelay().AsDuration())
				}
				if reset := -tc.want; tc.want < -1 && (sleeps[0] > reset || sleeps[0] < reset-2*time.Second || rr.GetDelay().AsDuration() != sleeps[0]) {
					t.Errorf("slept %v (recorded delay %v), want until the exhausted limit's reset, %v after the 429", sleeps[0], rr.GetDelay().AsDuration(), reset)
				}
				if m.GetProviderRequestId() != f.wantReqID(2) {
					t.Errorf("provider_request_id = %q, want the successful attempt's %q", m.GetProviderRequestId(), f.wantReqID(2))
				}
				if f.wantRL != nil {
					if got := m.GetRateLimit().GetRequestsRemaining(); got != f.wantRL(2) {
						t.Errorf("rate_limit = %v, want the successful answer's (remaining %d)", m.GetRateLimit(), f.wantRL(2))
					}
				} else if m.GetRateLimit() != nil {
					t.Errorf("rate_limit = %v: the success reported none; the 429's state must not stay", m.GetRateLimit())
				}
			})
		}
	}
}

// f13Check asserts what every failed call's status carries: the code and
// reason, ErrorInfo's domain and metadata (provider, model, upstream status
// and request id of the last attempt), and a FailedCallMeta with the
// attempts, one retry reason per failed attempt and the last attempt's
// request id and rate-limit state.
func f13Check(t *testing.T, f f13Format, err error, code codes.Code, reason string, attempts, upstreamStatus int) (*status.Status, *llmrelayv1.ResponseMeta) {
	t.Helper()
	st, info, _ := statusDetails(t, err)
	if st.Code() != code || info.GetReason() != reason {
		t.Fatalf("got %v %s (%s), want %v %s", st.Code(), info.GetReason(), st.Message(), code, reason)
	}
	md := info.GetMetadata()
	if md["provider"] != "up" || md["model"] != "m" {
		t.Errorf("ErrorInfo metadata = %v", md)
	}
	if upstreamStatus != 0 && md["upstreamStatus"] != strconv.Itoa(upstreamStatus) {
		t.Errorf("upstreamStatus = %q, want %d", md["upstreamStatus"], upstreamStatus)
	}
	if md["upstreamRequestId"] != f.wantReqID(attempts) {
		t.Errorf("upstreamRequestId = %q, want the last attempt's %q", md["upstreamRequestId"], f.wantReqID(attempts))
	}
	if !strings.HasPrefix(st.Message(), "up: ") {
		t.Errorf("message %q does not name the provider", st.Message())
	}
	m := failedMeta(t, err)
	if m.GetAttempts() != int32(attempts) || len(m.GetRetryReasons()) != attempts {
		t.Errorf("attempts %d, retry reasons %v, want %d", m.GetAttempts(), m.GetRetryReasons(), attempts)
	}
	for i, rr := range m.GetRetryReasons() {
		if rr.GetAttempt() != int32(i+1) || (upstreamStatus != 0 && rr.GetUpstreamStatus() != int32(upstreamStatus)) {
			t.Errorf("retry reason %d = %v", i, rr)
		}
		if (i < attempts-1) != (rr.GetDelay() != nil) {
			t.Errorf("retry reason %d: delay %v (only attempts followed by another wait)", i, rr.GetDelay())
		}
	}
	if m.GetProviderRequestId() != f.wantReqID(attempts) {
		t.Errorf("provider_request_id = %q, want the last attempt's %q", m.GetProviderRequestId(), f.wantReqID(attempts))
	}
	if m.GetProvider() != "up" || m.GetRequestedModel() != "m" || m.GetRequestId() == "" || m.GetResolvedModel() == "" ||
		m.GetRequestDuration() == nil || m.GetTotalDuration() == nil || m.GetTotalDuration().AsDuration() < m.GetRequestDuration().AsDuration() {
		t.Errorf("meta = %v", m)
	}
	return st, m
}

// TestFault13HTTPStatuses: every status the retry policy and the error
// table name, for every format: which are retried (408, 409, 429 and 5xx
// but 501), which never are (400, 401, 403, 404, 422, 501), x-should-retry
// overriding the status either way, and the code, reason and details the
// client gets once the gateway gives up.
func TestFault13HTTPStatuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status   int
		extra    http.Header
		code     codes.Code
		reason   string
		attempts int
	}{
		{500, nil, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{502, nil, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{503, nil, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{529, nil, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
		{504, nil, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 3},
		{408, nil, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 3},
		{409, nil, codes.Aborted, "UPSTREAM_UNAVAILABLE", 3},
		{501, nil, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1},
		{400, nil, codes.InvalidArgument, "INVALID_REQUEST", 1},
		{401, nil, codes.Unauthenticated, "UPSTREAM_UNAUTHENTICATED", 1},
		{403, nil, codes.PermissionDenied, "UPSTREAM_PERMISSION_DENIED", 1},
		{404, nil, codes.NotFound, "MODEL_NOT_FOUND", 1},
		{422, nil, codes.InvalidArgument, "INVALID_REQUEST", 1},
		{400, hdr("x-should-retry", "true"), codes.InvalidArgument, "INVALID_REQUEST", 3},
		{503, hdr("x-should-retry", "false"), codes.Unavailable, "UPSTREAM_UNAVAILABLE", 1},
		{429, hdr("x-should-retry", "false"), codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
		{529, hdr("x-should-retry", "maybe"), codes.Unavailable, "UPSTREAM_UNAVAILABLE", 3},
	}
	for _, f := range f13Formats() {
		for _, tc := range cases {
			name := f.name + "/" + strconv.Itoa(tc.status)
			if v := tc.extra.Get("x-should-retry"); v != "" {
				name += "/x-should-retry=" + v
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, f.errStep(1, tc.status, tc.extra), f.errStep(2, tc.status, tc.extra), f.errStep(3, tc.status, tc.extra), f.okStep(4))
				clock := &f13Clock{}
				c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
				_, err := c.Chat(context.Background(), chatReq13())
				st, m := f13Check(t, f, err, tc.code, tc.reason, tc.attempts, tc.status)
				if up.requests() != tc.attempts || len(clock.slept()) != tc.attempts-1 {
					t.Errorf("upstream saw %d requests, %d backoffs; want %d attempts", up.requests(), len(clock.slept()), tc.attempts)
				}
				if ri := retryInfo(st); ri != nil {
					t.Errorf("RetryInfo %v without a provider delay", ri)
				}
				if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(tc.attempts) {
					t.Errorf("rate_limit = %v, want the last attempt's (remaining %d)", m.GetRateLimit(), f.wantRL(tc.attempts))
				}
			})
		}
	}
}

// TestFault13RateLimitExhausted: 429 on every attempt, each with its own
// Retry-After, request id and rate-limit state: ResourceExhausted with
// RetryInfo, ErrorInfo and FailedCallMeta of the LAST attempt; a
// Retry-After beyond max_retry_after or beyond the caller's deadline ends
// the call at once, before the deadline, with the provider's delay.
func TestFault13RateLimitExhausted(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name+"/every attempt", func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 3; n++ {
				steps = append(steps, f.errStep(n, 429, hdr("Retry-After", strconv.Itoa(n))))
			}
			up := f13Serve(t, append(steps, f.okStep(4))...)
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
			_, err := c.Chat(context.Background(), chatReq13())
			st, m := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3, 429)
			if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 3*time.Second {
				t.Errorf("RetryInfo = %v, want the last attempt's 3s", ri)
			}
			if s := clock.slept(); len(s) != 2 || s[0] != time.Second || s[1] != 2*time.Second {
				t.Errorf("sleeps = %v, want [1s 2s]", s)
			}
			if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(3) {
				t.Errorf("rate_limit = %v, want the last attempt's", m.GetRateLimit())
			}
			if up.requests() != 3 {
				t.Errorf("upstream saw %d requests", up.requests())
			}
		})
		t.Run(f.name+"/beyond max_retry_after", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 429, hdr("Retry-After", "120")), f.okStep(2))
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
			if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 2*time.Minute {
				t.Errorf("RetryInfo = %v, want 2m", ri)
			}
			if !strings.Contains(st.Message(), "max_retry_after") || len(clock.slept()) != 0 || up.requests() != 1 {
				t.Errorf("message %q, sleeps %v, requests %d", st.Message(), clock.slept(), up.requests())
			}
		})
		if f.name != "anthropic" && f.name != "gemini" {
			t.Run(f.name+"/exhausted limit resets beyond max_retry_after", func(t *testing.T) {
				t.Parallel()
				reset := hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m30s")
				up := f13Serve(t, f.errStep(1, 429, reset), f.okStep(2))
				clock := &f13Clock{}
				c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
				_, err := c.Chat(context.Background(), chatReq13())
				st, m := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
				if d := retryInfo(st).GetRetryDelay().AsDuration(); d > 90*time.Second || d < 88*time.Second {
					t.Errorf("RetryInfo = %v, want until the reset, ~90s", retryInfo(st))
				}
				if m.GetRateLimit().GetRequestsRemaining() != 0 || m.GetRateLimit().GetRequestsResetTime() == nil {
					t.Errorf("rate limit = %v", m.GetRateLimit())
				}
				if len(clock.slept()) != 0 || up.requests() != 1 {
					t.Errorf("sleeps %v, requests %d", clock.slept(), up.requests())
				}
			})
		}
		t.Run(f.name+"/beyond the deadline", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 429, hdr("Retry-After", "30")), f.okStep(2))
			clock := &f13Clock{}
			c := f13Start(t, f13Defaults+f.yaml, up.URL, clock)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := c.Chat(ctx, chatReq13())
			st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
			if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 30*time.Second {
				t.Errorf("RetryInfo = %v, want 30s", ri)
			}
			if !strings.Contains(st.Message(), "deadline") || len(clock.slept()) != 0 || up.requests() != 1 || ctx.Err() != nil {
				t.Errorf("message %q, sleeps %v, requests %d, ctx %v", st.Message(), clock.slept(), up.requests(), ctx.Err())
			}
		})
	}
}

// f13Stream is what a StreamChat client saw.
type f13Stream struct {
	started bool
	text    string
	usage   *llmrelayv1.Usage
	end     *llmrelayv1.StreamEnd
	err     error
}

func readStream13(t *testing.T, c llmrelayv1.GatewayServiceClient) f13Stream {
	t.Helper()
	s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("What is the capital of France?")}})
	if err != nil {
		t.Fatal(err)
	}
	var out f13Stream
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			out.err = err
			return out
		}
		if out.end != nil {
			t.Fatalf("an event after end: %v", ev)
		}
		switch {
		case ev.GetStart() != nil:
			out.started = true
		case ev.GetTextDelta() != nil:
			if !out.started {
				t.Error("a text delta before start")
			}
			out.text += ev.GetTextDelta().GetText()
		case ev.GetUsage() != nil:
			out.usage = ev.GetUsage()
		case ev.GetEnd() != nil:
			out.end = ev.GetEnd()
		}
	}
}

// complete is a whole stream saying okText in two deltas.
func (f f13Format) complete() string {
	return f.head + f.text("The capital of France") + f.text(" is Paris.") + f.tail
}

// TestFault13Streams: a stream fails before its first content event
// (status, error event, cut, reset, silence): nothing reached the client,
// so it is retried and the client gets one clean stream whose meta is the
// second attempt's. It fails after content: never retried; the client
// keeps the deltas it got, then the status with the partial meta (request
// id, response id, usage seen so far) and no end event; a stream cut
// without its terminator is never reported as a complete answer.
func TestFault13Streams(t *testing.T) {
	t.Parallel()
	type streamCase struct {
		name string
		// first answers attempt 1; the second attempt gets the complete
		// stream (retried cases) or nothing (the rest).
		first   func(f f13Format) f13Step
		retry   bool
		reason  string // the retry reason, or the failure's code/reason below
		code    codes.Code
		ereason string
		skip    func(f f13Format) bool
	}
	early := func(f f13Format) bool { return f.head == "" }
	cases := []streamCase{
		{name: "503 before the first byte", first: func(f f13Format) f13Step { return f.errStep(1, 503, nil) }, retry: true, reason: "http_503"},
		{name: "529 before the first byte", first: func(f f13Format) f13Step { return f.errStep(1, 529, nil) }, retry: true, reason: "http_529"},
		{name: "error event before content", first: func(f f13Format) f13Step {
			return respond(200, f.streamHead(1), f.head+f.errEvent)
		}, retry: true},
		{name: "cut before content", first: func(f f13Format) f13Step {
			return respond(200, f.streamHead(1), f.head)
		}, retry: true, reason: "stream_cut"},
		{name: "reset before content", first: func(f f13Format) f13Step {
			return thenReset(f.streamHead(1), f.head)
		}, retry: true, skip: early},
		{name: "idle before content", first: func(f f13Format) f13Step {
			return thenHang(f.streamHead(1), f.head)
		}, retry: true, reason: "timeout"},
		{name: "error event after content", first: func(f f13Format) f13Step {
			return respond(200, f.streamHead(1), f.head+f.text("The capital")+f.errEvent)
		}, code: codes.Unavailable, ereason: "UPSTREAM_UNAVAILABLE"},
		{name: "cut after content", first: func(f f13Format) f13Step {
			return respond(200, f.streamHead(1), f.head+f.text("The capital"))
		}, code: codes.Unavailable, ereason: "UPSTREAM_BAD_RESPONSE"},
		{name: "reset after content", first: func(f f13Format) f13Step {
			return thenReset(f.streamHead(1), f.head+f.text("The capital"))
		}, code: codes.Unavailable, ereason: "UPSTREAM_UNAVAILABLE"},
		{name: "idle after content", first: func(f f13Format) f13Step {
			return thenHang(f.streamHead(1), f.head+f.text("The capital"))
		}, code: codes.DeadlineExceeded, ereason: "UPSTREAM_TIMEOUT"},
	}
	for _, f := range f13Formats() {
		for _, tc := range cases {
			if tc.skip != nil && tc.skip(f) {
				continue
			}
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				second := respond(200, f.streamHead(2), f.complete())
				up := f13Serve(t, tc.first(f), second)
				clock := &f13Clock{}
				yaml := "defaults: {idle_timeout: 150ms, retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}}\n" + f.yaml
				c := f13Start(t, yaml, up.URL, clock)
				got := readStream13(t, c)
				if tc.retry {
					if got.err != nil {
						t.Fatalf("not retried: %v (after %q)", got.err, got.text)
					}
					if got.text != okText || got.end == nil {
						t.Fatalf("text %q, end %v", got.text, got.end)
					}
					m := got.end.GetMeta()
					if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || up.requests() != 2 {
						t.Fatalf("attempts %d, reasons %v, upstream %d", m.GetAttempts(), m.GetRetryReasons(), up.requests())
					}
					if tc.reason != "" && m.GetRetryReasons()[0].GetReason() != tc.reason {
						t.Errorf("retry reason = %v, want %s", m.GetRetryReasons()[0], tc.reason)
					}
					if m.GetProviderRequestId() != f.wantReqID(2) || (f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(2)) {
						t.Errorf("meta request id %q rate limit %v: want the second attempt's", m.GetProviderRequestId(), m.GetRateLimit())
					}
					if got.end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetUsage().GetOutputTokens() == 0 {
						t.Errorf("end = %v", got.end)
					}
					return
				}
				if got.end != nil || got.err == nil {
					t.Fatalf("a failed stream ended with %v, err %v: it must not look complete", got.end, got.err)
				}
				if got.text != "The capital" || !got.started {
					t.Errorf("the client got %q before the error, want the relayed delta", got.text)
				}
				if up.requests() != 1 {
					t.Errorf("upstream saw %d requests: nothing is retried after content", up.requests())
				}
				_, m := f13Check(t, f, got.err, tc.code, tc.ereason, 1, 0)
				if m.GetTimeToFirstToken() == nil {
					t.Errorf("partial meta lost time_to_first_token: %v", m)
				}
				if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(1) {
					t.Errorf("partial meta rate limit = %v", m.GetRateLimit())
				}
				if f.name != "ollama" && m.GetResponseId() == "" {
					t.Errorf("partial meta lost the response id: %v", m)
				}
				if (f.name == "anthropic" || f.name == "gemini") && m.GetUsage().GetInputTokens() == 0 {
					t.Errorf("partial meta lost the usage seen so far: %v", m)
				}
			})
		}
	}
}

// TestFault13DeadlineDuringBackoff: the call's deadline (the caller's
// call.timeout, the gateway's max_call_duration, the client's own
// deadline) ends while the gateway waits to retry a 503: DeadlineExceeded
// UPSTREAM_TIMEOUT, no further attempt, and the 503 stays in the
// FailedCallMeta as the failed attempt.
func TestFault13DeadlineDuringBackoff(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, how := range []string{"call.timeout", "max_call_duration", "client deadline"} {
			t.Run(f.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, f.errStep(1, 503, nil), f.okStep(2))
				clock := &f13Clock{block: true}
				defaults := "defaults: {retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}"
				if how == "max_call_duration" {
					defaults += ", max_call_duration: 1s"
				}
				c := f13Start(t, defaults+"}\n"+f.yaml, up.URL, clock)
				req := chatReq13()
				ctx := context.Background()
				switch how {
				case "call.timeout":
					req.Call = &llmrelayv1.CallOptions{Timeout: durationpb.New(time.Second)}
				case "client deadline":
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, time.Second)
					defer cancel()
				}
				_, err := c.Chat(ctx, req)
				if up.requests() != 1 || len(clock.slept()) != 1 {
					t.Errorf("upstream saw %d requests after %d backoffs, want 1 and 1", up.requests(), len(clock.slept()))
				}
				if how == "client deadline" {
					// The client's own deadline: its library ends the call.
					if status.Code(err) != codes.DeadlineExceeded {
						t.Fatalf("err = %v", err)
					}
					return
				}
				st, m := f13Check(t, f, err, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 1, 503)
				if how == "max_call_duration" {
					if info := errorInfoOf(st); info.GetMetadata()["maxCallDuration"] != "1s" || !strings.Contains(st.Message(), "max_call_duration") {
						t.Errorf("status %q, ErrorInfo %v: want the bound named", st.Message(), info.GetMetadata())
					}
				}
				if !strings.Contains(st.Message(), "waiting to retry after: upstream said 503") {
					t.Errorf("message %q does not say the call ended while waiting to retry the 503", st.Message())
				}
				if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != "http_503" {
					t.Errorf("retry reasons = %v", rr)
				}
			})
		}
	}
}

// TestFault13CancelDuringBackoff: the client cancels while the gateway
// waits to retry a 503: no further attempt, and the call is logged (and
// counted) as Canceled, not as the 503 it was about to retry.
func TestFault13CancelDuringBackoff(t *testing.T) {
	t.Parallel()
	f := openaiChat
	up := f13Serve(t, f.errStep(1, 503, nil), f.okStep(2))
	clock := &f13Clock{block: true}
	cfg, err := config.Parse([]byte(strings.ReplaceAll(f13Defaults+f.yaml, "{{URL}}", up.URL)), "test")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)), server.WithRetryClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	c := llmrelayv1.NewGatewayServiceClient(serveBufconn(t, srv))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(clock.slept()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := c.Chat(ctx, chatReq13()); status.Code(err) != codes.Canceled {
		t.Fatalf("err = %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "msg=rpc") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if l := logs.String(); !strings.Contains(l, "code=Canceled") {
		t.Errorf("the server logged the call as: %s", l)
	}
	if up.requests() != 1 {
		t.Errorf("upstream saw %d requests", up.requests())
	}
}

func errorInfoOf(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			return i
		}
	}
	return nil
}

// f13Routed routes model m to deployments "first" ({{URL}}) and "second"
// ({{URL2}}) of the format: the same provider type, two accounts.
func f13Routed(f f13Format, attempts int) string {
	i := strings.Index(f.yaml, "models:")
	prov := strings.TrimPrefix(f.yaml[:i], "providers:\n")
	first := strings.Replace(prov, "name: up", "name: first", 1)
	second := strings.Replace(strings.Replace(prov, "name: up", "name: second", 1), "{{URL}}", "{{URL2}}", 1)
	model := f13Deployments.ReplaceAllString(f.yaml[i:], "deployments: [{provider: first, upstream_model: $1}, {provider: second, upstream_model: $1}],")
	return fmt.Sprintf("defaults: {retry: {max_attempts: %d, base_delay: 1ms, max_delay: 2ms, max_retry_after: 60s}}\nproviders:\n%s%s%s",
		attempts, first, second, model)
}

var f13Deployments = regexp.MustCompile(`provider: up, upstream_model: ([^,]+),`)

// f13StartRouted serves f13Routed with the two upstreams.
func f13StartRouted(t *testing.T, f f13Format, attempts int, first, second *f13Upstream, clock *f13Clock) llmrelayv1.GatewayServiceClient {
	t.Helper()
	return f13Start(t, strings.ReplaceAll(f13Routed(f, attempts), "{{URL2}}", second.URL), first.URL, clock)
}

// TestFault13Fallback: a routed model's first deployment fails with a
// fallback-worthy error (retries exhausted on a 503; at once on its own
// faults: a rate limit, whatever delay it asks for, or a rejected key, as
// the README's routing paragraph says), the second
// answers: the meta says which answered and which were tried, counts the
// attempts of both and names each failed attempt's deployment. A 400 never
// falls back; when both fail, the status is the last deployment's.
func TestFault13Fallback(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		for _, tc := range []struct {
			name     string
			status   int
			extra    http.Header
			attempts int // of the first deployment
		}{
			{"503 retried then fallback", 503, nil, 3},
			{"429 beyond max_retry_after", 429, hdr("Retry-After", "120"), 1},
			{"429 with a short Retry-After", 429, hdr("Retry-After", "1"), 1},
			{"429 without a delay", 429, nil, 1},
			{"429 with x-should-retry true", 429, hdr("x-should-retry", "true"), 1},
			{"401", 401, nil, 1},
			{"404", 404, nil, 1},
		} {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				first := f13Serve(t, f.errStep(1, tc.status, tc.extra), f.errStep(2, tc.status, tc.extra), f.errStep(3, tc.status, tc.extra))
				second := f13Serve(t, f.okStep(11))
				clock := &f13Clock{}
				c := f13StartRouted(t, f, 3, first, second, clock)
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				if n := len(clock.slept()); n != tc.attempts-1 {
					t.Errorf("%d backoffs on the first deployment, want %d", n, tc.attempts-1)
				}
				m := resp.GetMeta()
				if r := m.GetRouting(); r.GetDeployment() == "" || len(r.GetTried()) != 1 || m.GetProvider() != "second" {
					t.Errorf("routing = %v, provider %s", r, m.GetProvider())
				}
				if m.GetAttempts() != int32(tc.attempts+1) || len(m.GetRetryReasons()) != tc.attempts {
					t.Fatalf("attempts %d, reasons %v", m.GetAttempts(), m.GetRetryReasons())
				}
				for i, rr := range m.GetRetryReasons() {
					if rr.GetDeployment() != m.GetRouting().GetTried()[0] || rr.GetUpstreamStatus() != int32(tc.status) || rr.GetAttempt() != int32(i+1) {
						t.Errorf("retry reason %d = %v", i, rr)
					}
				}
				if m.GetProviderRequestId() != f.wantReqID(11) || (f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(11)) {
					t.Errorf("request id %q, rate limit %v: want the second deployment's", m.GetProviderRequestId(), m.GetRateLimit())
				}
				if first.requests() != tc.attempts || second.requests() != 1 {
					t.Errorf("first saw %d, second %d", first.requests(), second.requests())
				}
			})
		}
		t.Run(f.name+"/400 does not fall back", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, f.errStep(1, 400, nil))
			second := f13Serve(t, f.okStep(11))
			c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			if status.Code(err) != codes.InvalidArgument || first.requests() != 1 || second.requests() != 0 {
				t.Errorf("err %v, first %d, second %d", err, first.requests(), second.requests())
			}
		})
		t.Run(f.name+"/both fail", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, f.errStep(1, 503, nil), f.errStep(2, 503, nil))
			second := f13Serve(t, f.errStep(11, 429, hdr("Retry-After", "1")), f.errStep(12, 429, hdr("Retry-After", "2")))
			c := f13StartRouted(t, f, 2, first, second, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.ResourceExhausted || info.GetReason() != "UPSTREAM_RATE_LIMITED" || info.GetMetadata()["provider"] != "second" ||
				info.GetMetadata()["upstreamRequestId"] != f.wantReqID(12) {
				t.Fatalf("%v %s %v: %s", st.Code(), info.GetReason(), info.GetMetadata(), st.Message())
			}
			if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 2*time.Second {
				t.Errorf("RetryInfo = %v, want the last attempt's 2s", ri)
			}
			m := failedMeta(t, err)
			var deps []string
			for _, rr := range m.GetRetryReasons() {
				deps = append(deps, rr.GetDeployment()+":"+rr.GetReason())
			}
			want := []string{"first:http_503", "first:http_503", "second:http_429", "second:http_429"}
			if m.GetAttempts() != 4 || fmt.Sprint(deps) != fmt.Sprint(want) {
				t.Errorf("attempts %d, reasons %v, want %v", m.GetAttempts(), deps, want)
			}
			if r := m.GetRouting(); len(r.GetTried()) != 1 || r.GetTried()[0] != "first" || m.GetProviderRequestId() != f.wantReqID(12) {
				t.Errorf("routing %v, request id %q", r, m.GetProviderRequestId())
			}
		})
		t.Run(f.name+"/stream error before content falls back", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, respond(200, f.streamHead(1), f.head+f.errEvent))
			second := f13Serve(t, respond(200, f.streamHead(11), f.complete()))
			c := f13StartRouted(t, f, 1, first, second, &f13Clock{})
			got := readStream13(t, c)
			if got.err != nil || got.text != okText {
				t.Fatalf("err %v, text %q", got.err, got.text)
			}
			m := got.end.GetMeta()
			if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRouting().GetDeployment() == "" || len(m.GetRouting().GetTried()) != 1 ||
				m.GetProvider() != "second" || m.GetProviderRequestId() != f.wantReqID(11) {
				t.Errorf("meta = %v", m)
			}
		})
		t.Run(f.name+"/stream error after content does not fall back", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, respond(200, f.streamHead(1), f.head+f.text("The capital")+f.errEvent))
			second := f13Serve(t, respond(200, f.streamHead(11), f.complete()))
			c := f13StartRouted(t, f, 1, first, second, &f13Clock{})
			got := readStream13(t, c)
			if got.err == nil || got.text != "The capital" || second.requests() != 0 {
				t.Fatalf("err %v, text %q, second saw %d", got.err, got.text, second.requests())
			}
		})
	}
}

// TestFault13TerminatorMissing: a stream whose finish arrived but whose
// terminator did not (Anthropic's message_stop, the Responses API's
// response.completed; on the chat format, the usage chunk and [DONE]
// after the finish chunk) ended on a closed connection: it is not reported
// as a complete answer. (A chat stream with its finish and its usage but
// no [DONE] is complete: Cerebras ends that way, docs/decisions.md "A chat
// stream may end without [DONE]".)
func TestFault13TerminatorMissing(t *testing.T) {
	t.Parallel()
	chatTerm := openaiChat.tail[strings.Index(openaiChat.tail, "data: {\"id\":\"chatcmpl-f13\",\"object\":\"chat.completion.chunk\",\"created\":1760433201,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],"):]
	for _, tc := range []struct {
		f    f13Format
		term string
	}{
		{openaiChat, chatTerm},
		{azureFormat(), chatTerm},
		{anthropicFormat, anthropicEvent("message_stop", `"x":0`)},
		{openaiResponses, openaiResponses.tail[strings.Index(openaiResponses.tail, "event: response.completed"):]},
	} {
		t.Run(tc.f.name, func(t *testing.T) {
			t.Parallel()
			body := strings.TrimSuffix(tc.f.complete(), tc.term)
			if body == tc.f.complete() {
				t.Fatal("the terminator is not at the end")
			}
			up := f13Serve(t, respond(200, tc.f.streamHead(1), body))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.end != nil || got.err == nil {
				t.Fatalf("a stream without its terminator ended as complete: %v", got.end)
			}
			f13Check(t, tc.f, got.err, codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 1, 0)
		})
	}
}

// TestFault13ChatStreamWithoutDone: the documented exception: a chat
// stream that sent its finish and its usage and then ended cleanly is a
// complete answer (Cerebras sends no [DONE]).
func TestFault13ChatStreamWithoutDone(t *testing.T) {
	t.Parallel()
	up := f13Serve(t, respond(200, openaiChat.streamHead(1), strings.TrimSuffix(openaiChat.complete(), "data: [DONE]\n\n")))
	c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+openaiChat.yaml, up.URL, &f13Clock{})
	got := readStream13(t, c)
	if got.err != nil || got.end == nil || got.text != okText || got.end.GetMeta().GetUsage().GetTotalTokens() != 32 {
		t.Fatalf("err %v, end %v, text %q", got.err, got.end, got.text)
	}
}

// hangBeforeHeaders says nothing at all until the gateway goes away.
func hangBeforeHeaders(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// cutBody declares a longer body than it sends, then closes.
func cutBody(h http.Header, body string) f13Step {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)+100))
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	}
}

// TestFault13UnaryTransport: transport faults of unary calls for every
// format: a reset before the headers, a body cut short (declared length
// not reached), silence before the headers (unary_first_byte_timeout: a
// unary answer's headers come when it is whole, so first_byte_timeout,
// the stream's bound, does not apply; round 24) or in the body
// (idle_timeout) are retried, and end in the mapped status once the
// attempts are used up, the message naming the setting that ran out; a
// complete 200 whose JSON does not parse is not retried (it would only
// fail again).
func TestFault13UnaryTransport(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		okHead := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1))
		for _, tc := range []struct {
			name     string
			step     f13Step
			code     codes.Code
			reason   string
			attempts int
			retry    string
		}{
			{"reset before headers", func(w http.ResponseWriter, _ *http.Request) {
				c, _, _ := w.(http.Hijacker).Hijack()
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				_ = c.Close()
			}, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2, "connection_error"},
			{"body cut short", cutBody(okHead, f.okBody[:len(f.okBody)/2]), codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2, ""},
			{"reset mid-body", thenReset(okHead, f.okBody[:len(f.okBody)/2]), codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2, ""},
			{"silent before headers", hangBeforeHeaders, codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 2, "timeout"},
			{"silent mid-body", thenHang(okHead, f.okBody[:len(f.okBody)/2]), codes.DeadlineExceeded, "UPSTREAM_TIMEOUT", 2, "timeout"},
			{"truncated JSON", respond(200, okHead, f.okBody[:len(f.okBody)/2]), codes.Unavailable, "UPSTREAM_BAD_RESPONSE", 1, "bad_response"},
		} {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, tc.step, tc.step, f.okStep(3))
				yaml := "defaults: {unary_first_byte_timeout: 150ms, idle_timeout: 150ms, retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n" + f.yaml
				c := f13Start(t, yaml, up.URL, &f13Clock{})
				_, err := c.Chat(context.Background(), chatReq13())
				st, info, _ := statusDetails(t, err)
				if st.Code() != tc.code || info.GetReason() != tc.reason {
					t.Fatalf("got %v %s (%s), want %v %s", st.Code(), info.GetReason(), st.Message(), tc.code, tc.reason)
				}
				m := failedMeta(t, err)
				if m.GetAttempts() != int32(tc.attempts) || len(m.GetRetryReasons()) != tc.attempts || up.requests() != tc.attempts {
					t.Fatalf("attempts %d, reasons %v, upstream %d", m.GetAttempts(), m.GetRetryReasons(), up.requests())
				}
				if tc.retry != "" && m.GetRetryReasons()[0].GetReason() != tc.retry {
					t.Errorf("retry reason = %v, want %s", m.GetRetryReasons()[0], tc.retry)
				}
				if want := map[string]string{"silent before headers": "unary_first_byte_timeout (150ms)", "silent mid-body": "idle_timeout (150ms)"}[tc.name]; want != "" &&
					(!strings.Contains(st.Message(), want) || !strings.Contains(m.GetRetryReasons()[0].GetMessage(), want)) {
					t.Errorf("message %q, retry reason %q: want the setting named, %s", st.Message(), m.GetRetryReasons()[0].GetMessage(), want)
				}
			})
		}
	}
}

// TestFault13StreamRateLimits: a stream refused with 429 on every
// attempt carries the last attempt's RetryInfo, request id and rate-limit
// state like a unary call; a rate-limit error event after content ends
// the stream with ResourceExhausted (and RetryInfo when the event names a
// delay), the deltas already sent kept.
func TestFault13StreamRateLimits(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name+"/429 at open", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, f.errStep(1, 429, hdr("Retry-After", "1")), f.errStep(2, 429, hdr("Retry-After", "4")))
			clock := &f13Clock{}
			c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+f.yaml, up.URL, clock)
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v, err %v", got.started, got.err)
			}
			st, m := f13Check(t, f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 2, 429)
			if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != 4*time.Second {
				t.Errorf("RetryInfo = %v, want 4s", ri)
			}
			if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(2) {
				t.Errorf("rate limit = %v", m.GetRateLimit())
			}
			if s := clock.slept(); len(s) != 1 || s[0] != time.Second {
				t.Errorf("sleeps = %v", s)
			}
		})
	}
	for _, tc := range []struct {
		f     f13Format
		event string
		delay time.Duration
	}{
		{openaiResponses, responsesEvent("response.failed", `"sequence_number":4,"response":{`+responsesObj+`,"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used 29688, Requested 1040. Please try again in 218ms."},"usage":null}`), 218 * time.Millisecond},
		{anthropicFormat, anthropicEvent("error", `"error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}`), 0},
		{openaiChat, `data: {"error":{"message":"Rate limit reached for gpt-4o-mini. Please try again in 1.5s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}` + "\n\n", 1500 * time.Millisecond},
		{geminiFormat, `data: {"error": {"code": 429,"message": "Resource has been exhausted (e.g. check quota).","status": "RESOURCE_EXHAUSTED"}}` + "\r\n\r\n", 0},
	} {
		t.Run(tc.f.name+"/rate limit event after content", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.f.head+tc.f.text("The capital")+tc.event))
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.text != "The capital" || got.end != nil {
				t.Fatalf("text %q, end %v", got.text, got.end)
			}
			st, _ := f13Check(t, tc.f, got.err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 0)
			if ri := retryInfo(st); ri.GetRetryDelay().AsDuration() != tc.delay {
				t.Errorf("RetryInfo = %v, want %v", ri, tc.delay)
			}
		})
	}
}

// TestFault13ErrorIn200: an error object in a 200 answer (OpenAI's
// server_error and exhausted quota, Ollama's error line) is classified by
// its content: a server error is retried, then Unavailable; an exhausted
// quota is not retried (it would fail the same way) and is
// ResourceExhausted.
func TestFault13ErrorIn200(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f        f13Format
		body     string
		code     codes.Code
		reason   string
		attempts int
	}{
		{openaiChat, `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2},
		{azureFormat(), `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2},
		{openaiChat, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1},
		{ollamaFormat, `{"error":"an error was encountered while running the model: unexpected EOF"}`, codes.Unavailable, "UPSTREAM_UNAVAILABLE", 2},
	} {
		t.Run(tc.f.name+"/"+tc.reason, func(t *testing.T) {
			t.Parallel()
			h := merged(hdr("Content-Type", "application/json"), tc.f.rl(1))
			var steps []f13Step
			for n := 1; n <= 2; n++ {
				steps = append(steps, respond(200, merged(h, tc.f.reqIDHeader(n)), tc.body))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, "defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n"+tc.f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			f13Check(t, tc.f, err, tc.code, tc.reason, tc.attempts, 0)
			if up.requests() != tc.attempts {
				t.Errorf("upstream saw %d", up.requests())
			}
		})
	}
}

// TestFault13MidStreamFailureMetrics: a stream that fails after content
// counts as a failed attempt (llmrelay_upstream_errors_total), not as a
// retry: nothing followed it.
func TestFault13MidStreamFailureMetrics(t *testing.T) {
	t.Parallel()
	f := anthropicFormat
	up := f13Serve(t, f.errStep(1, 529, nil), respond(200, f.streamHead(2), f.head+f.text("The capital")+f.errEvent))
	yaml := "telemetry:\n  metrics: {enabled: true, listen: \"127.0.0.1:0\"}\n" + f13Defaults + f.yaml
	c, _, srv := startObserved(t, yaml, up.URL)
	got := readStream13(t, c)
	if got.err == nil || got.text != "The capital" {
		t.Fatalf("err %v, text %q", got.err, got.text)
	}
	m := failedMeta(t, got.err)
	if rr := m.GetRetryReasons(); m.GetAttempts() != 2 || len(rr) != 2 || rr[0].GetReason() != "http_529" || rr[1].GetReason() != "unavailable" ||
		rr[1].GetAttempt() != 2 || rr[1].GetDelay() != nil || rr[1].GetDuration() == nil {
		t.Fatalf("attempts %d, reasons %v", m.GetAttempts(), rr)
	}
	text := scrape(t, srv)
	for _, want := range []string{
		`llmrelay_upstream_errors_total{provider="up",status="529"} 1`,
		`llmrelay_upstream_errors_total{provider="up",status="unavailable"} 1`,
		`llmrelay_retries_total{provider="up",reason="http_529"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `llmrelay_retries_total{provider="up",reason="unavailable"}`) {
		t.Error("the mid-stream failure counted as a retry")
	}
}

// TestFault13ToolCallCutMidway: a StreamTools stream fails while a tool
// call's arguments are arriving: the client got the call's deltas, never
// a tool_call_done for the unfinished call (a client runs done calls),
// then the status.
func TestFault13ToolCallCutMidway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    f13Format
		body string
	}{
		{openaiChat, openaiChat.head +
			openaiChunk(`{"tool_calls":[{"index":0,"id":"call_f13","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "null") +
			openaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Par"}}]}`, "null")},
		{anthropicFormat, anthropicEvent("message_start", `"message":{"model":"claude-sonnet-4-5-20250929","id":"msg_f13","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":21,"output_tokens":1}}`) +
			anthropicEvent("content_block_start", `"index":0,"content_block":{"type":"tool_use","id":"toolu_f13","name":"get_weather","input":{}}`) +
			anthropicEvent("content_block_delta", `"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}`) +
			anthropicFormat.errEvent},
	} {
		t.Run(tc.f.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.body))
			yaml := strings.Replace(tc.f.yaml, "capabilities: {chat:", "capabilities: {tools:", 1)
			c := f13Start(t, f13Defaults+yaml, up.URL, &f13Clock{})
			s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("Paris?")}, Tools: weatherTools(t)})
			if err != nil {
				t.Fatal(err)
			}
			var deltas, done int
			for {
				ev, err := s.Recv()
				if err == nil {
					if ev.GetToolCallDelta() != nil {
						if ev.GetToolCallDelta().GetCallId() == "" {
							t.Error("a delta without its call_id")
						}
						deltas++
					}
					if ev.GetToolCallDone() != nil || ev.GetEnd() != nil {
						done++
					}
					continue
				}
				if errors.Is(err, io.EOF) {
					t.Fatal("the stream ended without an error")
				}
				if st := status.Convert(err); st.Code() != codes.Unavailable {
					t.Errorf("status %v", st)
				}
				break
			}
			if deltas == 0 || done != 0 {
				t.Errorf("%d deltas, %d done/end events: want the deltas and no done call", deltas, done)
			}
			if up.requests() != 1 {
				t.Errorf("retried after a relayed delta: %d requests", up.requests())
			}
		})
	}
}

// TestFault13ErrorEventKinds: in-stream error events before any content
// are retried only when their kind is transient (overloaded, server
// error, rate limit), and the rest end the call at once with their mapped
// status.
func TestFault13ErrorEventKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		f       f13Format
		event   string
		retried bool
		code    codes.Code
		reason  string
	}{
		{"responses error event", openaiResponses, responsesEvent("error", `"code":"server_error","message":"The server had an error while processing your request.","param":null,"sequence_number":1`), true, 0, ""},
		{"responses failed invalid prompt", openaiResponses, responsesEvent("response.failed", `"sequence_number":4,"response":{`+responsesObj+`,"status":"failed","error":{"code":"invalid_prompt","message":"Invalid prompt: your prompt was flagged."},"usage":null}`), false, codes.InvalidArgument, ""},
		{"responses failed rate limit", openaiResponses, responsesEvent("response.failed", `"sequence_number":4,"response":{`+responsesObj+`,"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 5ms."},"usage":null}`), true, 0, ""},
		{"anthropic api_error", anthropicFormat, anthropicEvent("error", `"error":{"type":"api_error","message":"Internal server error"}`), true, 0, ""},
		{"anthropic invalid_request_error", anthropicFormat, anthropicEvent("error", `"error":{"type":"invalid_request_error","message":"bad"}`), false, codes.InvalidArgument, "INVALID_REQUEST"},
		{"gemini 500", geminiFormat, `data: {"error": {"code": 500,"message": "An internal error has occurred.","status": "INTERNAL"}}` + "\r\n\r\n", true, 0, ""},
		{"gemini 400", geminiFormat, `data: {"error": {"code": 400,"message": "Request contains an invalid argument.","status": "INVALID_ARGUMENT"}}` + "\r\n\r\n", false, codes.InvalidArgument, "INVALID_REQUEST"},
		{"openai chat server_error", openaiChat, openaiChat.errEvent, true, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, respond(200, tc.f.streamHead(1), tc.f.head+tc.event), respond(200, tc.f.streamHead(2), tc.f.complete()))
			c := f13Start(t, f13Defaults+tc.f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if tc.retried {
				if got.err != nil || got.text != okText || got.end.GetMeta().GetAttempts() != 2 {
					t.Fatalf("not retried: err %v, text %q, end %v", got.err, got.text, got.end)
				}
				return
			}
			if got.err == nil || got.started || up.requests() != 1 {
				t.Fatalf("err %v, started %v, upstream %d: want one attempt and its status", got.err, got.started, up.requests())
			}
			st, info, _ := statusDetails(t, got.err)
			if st.Code() != tc.code || (tc.reason != "" && info.GetReason() != tc.reason) {
				t.Errorf("got %v %s: %s", st.Code(), info.GetReason(), st.Message())
			}
		})
	}
}

// TestFault13Embed: Embed goes through the same retry policy and error
// mapping: a 503 then an answer is retried (attempts 2); 429 on every
// attempt ends with the last attempt's RetryInfo, request id and
// rate-limit state.
func TestFault13Embed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f          f13Format
		embedFmt   string
		okBody     string
		wantVector int
	}{
		{openaiChat, "openai-embeddings", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.0232,-0.0091]},{"object":"embedding","index":1,"embedding":[-0.0114,0.0262]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2}}`, 2},
		{ollamaFormat, "ollama-embeddings", `{"model":"nomic-embed-text","embeddings":[[0.01,-0.0017],[-0.0098,0.04]],"prompt_eval_count":8}`, 2},
		{geminiFormat, "gemini-embeddings", `{"embeddings":[{"values":[0.013,-0.0087]},{"values":[-0.021,0.0029]}]}`, 2},
	} {
		yaml := regexp.MustCompile(`capabilities: \{chat: \{format: [a-z-]+\}\}`).ReplaceAllString(tc.f.yaml, "capabilities: {embeddings: {format: "+tc.embedFmt+"}}")
		if yaml == tc.f.yaml {
			t.Fatalf("%s: no chat capability to replace", tc.f.name)
		}
		req := &llmrelayv1.EmbedRequest{Model: "m", Inputs: []string{"a", "b"}}
		t.Run(tc.f.name+"/503 then answer", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, tc.f.errStep(1, 503, nil), respond(200, merged(hdr("Content-Type", "application/json"), tc.f.reqIDHeader(2), tc.f.rl(2)), tc.okBody))
			c := f13Start(t, f13Defaults+yaml, up.URL, &f13Clock{})
			resp, err := c.Embed(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			if len(resp.GetEmbeddings()) != tc.wantVector || m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "http_503" ||
				m.GetProviderRequestId() != tc.f.wantReqID(2) {
				t.Errorf("embeddings %d, meta %v", len(resp.GetEmbeddings()), m)
			}
		})
		t.Run(tc.f.name+"/429 every attempt", func(t *testing.T) {
			t.Parallel()
			up := f13Serve(t, tc.f.errStep(1, 429, hdr("Retry-After", "1")), tc.f.errStep(2, 429, hdr("Retry-After", "1")), tc.f.errStep(3, 429, hdr("Retry-After", "3")))
			c := f13Start(t, f13Defaults+yaml, up.URL, &f13Clock{})
			_, err := c.Embed(context.Background(), req)
			st, m := f13Check(t, tc.f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 3, 429)
			if retryInfo(st).GetRetryDelay().AsDuration() != 3*time.Second {
				t.Errorf("RetryInfo = %v", retryInfo(st))
			}
			if tc.f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != tc.f.wantRL(3) {
				t.Errorf("rate limit = %v", m.GetRateLimit())
			}
		})
	}
}

// TestFault13StreamErrorEventEveryAttempt: every attempt's stream fails
// with an error event before content: the client gets no event, then the
// status with the last attempt's request id and rate-limit state (read
// from its headers) and what its events reported before the error.
func TestFault13StreamErrorEventEveryAttempt(t *testing.T) {
	t.Parallel()
	for _, f := range f13Formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var steps []f13Step
			for n := 1; n <= 3; n++ {
				steps = append(steps, respond(200, f.streamHead(n), f.head+f.errEvent))
			}
			up := f13Serve(t, steps...)
			c := f13Start(t, f13Defaults+f.yaml, up.URL, &f13Clock{})
			got := readStream13(t, c)
			if got.started || got.err == nil {
				t.Fatalf("started %v, err %v", got.started, got.err)
			}
			_, m := f13Check(t, f, got.err, f.errCode, f.errReason, 3, 0)
			if f.wantRL != nil && m.GetRateLimit().GetRequestsRemaining() != f.wantRL(3) {
				t.Errorf("rate limit = %v, want the last attempt's", m.GetRateLimit())
			}
			if (f.name == "anthropic" || f.name == "openai-responses") && m.GetResponseId() == "" {
				t.Errorf("the response id its events reported is lost: %v", m)
			}
			if up.requests() != 3 {
				t.Errorf("upstream saw %d", up.requests())
			}
		})
	}
}
