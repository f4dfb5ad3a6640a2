package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// failedMeta is the FailedCallMeta a client decodes from a status, or
// fails the test when the status has none.
func failedMeta(t *testing.T, err error) *llmrelayv1.ResponseMeta {
	t.Helper()
	st, _, _ := statusDetails(t, err)
	for _, d := range st.Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			return f.GetMeta()
		}
	}
	t.Fatalf("status %v has no FailedCallMeta", st)
	return nil
}

// streamErr reads a stream to its end and returns the status error and the
// text relayed before it.
func streamErr[T interface{ GetTextDelta() *llmrelayv1.TextDelta }](t *testing.T, recv func() (T, error)) (string, error) {
	t.Helper()
	var text strings.Builder
	for {
		ev, err := recv()
		if errors.Is(err, io.EOF) {
			t.Fatal("the stream ended without an error")
		}
		if err != nil {
			return text.String(), err
		}
		text.WriteString(ev.GetTextDelta().GetText())
	}
}

func ptr[T any](v T) *T { return &v }

// at is a recording's Date plus d, as the reset times are computed.
func at(t *testing.T, rec providertest.Recording, d time.Duration) *timestamppb.Timestamp {
	t.Helper()
	date, err := http.ParseTime(rec.Header.Get("Date"))
	if err != nil {
		t.Fatal(err)
	}
	return timestamppb.New(date.Add(d))
}

// noRetry is a defaults section that makes one attempt per call.
const noRetry = "defaults: {retry: {max_attempts: 1}}\n"

// TestRateLimitInFailedCallMeta: a 429 from every provider type carries its
// rate-limit state (and request id) into the FailedCallMeta of Chat, Tools,
// Embed, and of streams that fail at open, as a client decodes it.
func TestRateLimitInFailedCallMeta(t *testing.T) {
	t.Parallel()
	mustTime := func(s string) *timestamppb.Timestamp {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return timestamppb.New(tm)
	}
	type rlCase struct {
		name, provider, rec string
		// embed is the embeddings format, "" when the provider has none.
		chat, embed string
		extra       string
		want        func(providertest.Recording) *llmrelayv1.RateLimit
		requestID   string
		// window is the budget of a RateLimit.windows entry the headers
		// also fill, beyond requests and tokens.
		window string
	}
	cases := []rlCase{
		{"openai", "openai", "openai/testdata/err_429_rate_limit.http", "openai-chat", "openai-embeddings", "",
			func(r providertest.Recording) *llmrelayv1.RateLimit {
				return &llmrelayv1.RateLimit{RequestsLimit: ptr[int64](10000), RequestsRemaining: ptr[int64](9999), RequestsResetTime: at(t, r, 6*time.Millisecond),
					TokensLimit: ptr[int64](30000000), TokensRemaining: ptr[int64](29999962), TokensResetTime: at(t, r, 0)}
			}, "req_ab7f766288eb7eb9855cd2ca6eecfcbf", ""},
		{"azure", "azure", "openai/testdata/azure_err_429.http", "openai-chat", "openai-embeddings", "    api_version: \"2024-10-21\"\n",
			func(providertest.Recording) *llmrelayv1.RateLimit {
				return &llmrelayv1.RateLimit{RequestsLimit: ptr[int64](250), RequestsRemaining: ptr[int64](249),
					TokensLimit: ptr[int64](250000), TokensRemaining: ptr[int64](249103)}
			}, "d1ffe3cc-3540-4eae-81c9-3c29d1c8f317", ""},
		{"anthropic", "anthropic", "anthropic/testdata/error_429.http", "anthropic-messages", "", "",
			func(providertest.Recording) *llmrelayv1.RateLimit {
				return &llmrelayv1.RateLimit{RequestsLimit: ptr[int64](4000), RequestsRemaining: ptr[int64](3999), RequestsResetTime: mustTime("2025-10-14T09:30:00Z"),
					TokensLimit: ptr[int64](2400000), TokensRemaining: ptr[int64](2400000), TokensResetTime: mustTime("2025-10-14T09:30:00Z")}
			}, "req_011NHpbs0Bs5Fy0Fa5Ky6Gg1", "output_tokens"},
		{"gemini", "gemini", "gemini/testdata/error_429.http", "gemini", "gemini-embeddings", "",
			func(r providertest.Recording) *llmrelayv1.RateLimit {
				// QuotaFailure: the per-minute request quota of 10 is used
				// up until the RetryInfo delay (34s) has passed.
				return &llmrelayv1.RateLimit{RequestsLimit: ptr[int64](10), RequestsRemaining: ptr[int64](0), RequestsResetTime: at(t, r, 34*time.Second)}
			}, "", ""},
		{"ollama", "ollama", "ollama/testdata/error_429_proxy.http", "ollama", "ollama-embeddings", "",
			func(r providertest.Recording) *llmrelayv1.RateLimit {
				return &llmrelayv1.RateLimit{RequestsLimit: ptr[int64](120), RequestsRemaining: ptr[int64](0), RequestsResetTime: at(t, r, 12*time.Second),
					TokensLimit: ptr[int64](200000), TokensRemaining: ptr[int64](151230), TokensResetTime: at(t, r, time.Minute+4*time.Second)}
			}, "7b1e4c2a-90d3-4f6e-a8b5-3c9d2e1f0a74", ""},
		{"openai-compatible", "openai", "openai/testdata/compat_err_429.http", "openai-chat", "openai-embeddings", "",
			func(r providertest.Recording) *llmrelayv1.RateLimit {
				return &llmrelayv1.RateLimit{RequestsLimit: ptr[int64](14400), RequestsRemaining: ptr[int64](14371), RequestsResetTime: at(t, r, 2*time.Minute+59560*time.Millisecond),
					TokensLimit: ptr[int64](6000), TokensRemaining: ptr[int64](88), TokensResetTime: at(t, r, 7660*time.Millisecond)}
			}, "req_01k7f3qm2hfb8v6w4y9tzc1xnd", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := providertest.Load(t, "provider/"+tc.rec)
			up := providertest.Replay(t, rec)
			caps := "      chat: {format: " + tc.chat + "}\n      tools: {format: " + tc.chat + "}\n"
			if tc.embed != "" {
				caps += "      embeddings: {format: " + tc.embed + "}\n"
			}
			yaml := noRetry + `providers:
  - name: up
    type: ` + tc.provider + `
    base_url: {{URL}}
    api_key: sk-e2e-test-key-000000000000
` + tc.extra + `models:
  - name: m
    provider: up
    upstream_model: some-model
    capabilities:
` + caps
			c, _ := startWith(t, yaml, up.URL)
			ctx := context.Background()
			msgs := []*llmrelayv1.Message{user("What's the weather in Paris?")}
			tools := weatherTools(t)
			calls := map[string]func() error{
				"Chat": func() error {
					_, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m", Messages: msgs})
					return err
				},
				"Tools": func() error {
					_, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "m", Messages: msgs, Tools: tools})
					return err
				},
				"StreamChat": func() error {
					s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: msgs})
					if err != nil {
						return err
					}
					_, err = streamErr(t, s.Recv)
					return err
				},
				"StreamTools": func() error {
					s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "m", Messages: msgs, Tools: tools})
					if err != nil {
						return err
					}
					_, err = streamErr(t, s.Recv)
					return err
				},
			}
			if tc.embed != "" {
				calls["Embed"] = func() error {
					_, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "m", Inputs: []string{"a"}})
					return err
				}
			}
			want := tc.want(rec)
			for name, call := range calls {
				err := call()
				if err == nil {
					t.Fatalf("%s: no error", name)
				}
				st, info, _ := statusDetails(t, err)
				if st.Code() != codes.ResourceExhausted || info.GetReason() != "UPSTREAM_RATE_LIMITED" {
					t.Fatalf("%s: %v %s: %s", name, st.Code(), info.GetReason(), st.Message())
				}
				m := failedMeta(t, err)
				// The typed budgets; each is a window too (not Gemini's,
				// read from its QuotaFailure, not from headers).
				typed := proto.CloneOf(m.GetRateLimit())
				if typed != nil {
					typed.Windows = nil
				}
				if !proto.Equal(want, typed) {
					t.Errorf("%s: rate_limit = %v, want %v", name, m.GetRateLimit(), want)
				}
				windows := map[string]bool{}
				for _, w := range m.GetRateLimit().GetWindows() {
					windows[w.GetBudget()] = true
				}
				if tc.name != "gemini" && (want.RequestsRemaining != nil && !windows["requests"] || want.TokensRemaining != nil && !windows["tokens"]) {
					t.Errorf("%s: rate_limit windows %v, want the requests and tokens budgets among them", name, m.GetRateLimit().GetWindows())
				}
				if tc.window != "" && !windows[tc.window] {
					t.Errorf("%s: rate_limit windows %v, want one of %s", name, m.GetRateLimit().GetWindows(), tc.window)
				}
				if m.GetProviderRequestId() != tc.requestID {
					t.Errorf("%s: provider_request_id = %q, want %q", name, m.GetProviderRequestId(), tc.requestID)
				}
				if m.GetAttempts() != 1 {
					t.Errorf("%s: attempts = %d", name, m.GetAttempts())
				}
			}
		})
	}
}

// TestFailureKeepsWhatProviderReported: the resolved model, response id and
// usage a provider reported before failing reach FailedCallMeta instead of
// the configured model id.
func TestFailureKeepsWhatProviderReported(t *testing.T) {
	t.Parallel()
	ok := providertest.Load(t, "provider/anthropic/testdata/plain_stream.http")
	start := ok.Body[bytes.Index(ok.Body, []byte("event: message_start")):]
	start = start[:bytes.Index(start, []byte("\n\n"))+2]
	// Anthropic's in-band error right after message_start, before any
	// content reached the client.
	overloaded := providertest.Recording{Status: ok.Status, Header: ok.Header, Body: append(append([]byte{}, start...),
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"...)}

	cases := []struct {
		name, provider, format string
		rec                    providertest.Recording
		stream                 bool
		code                   codes.Code
		reason, text           string
		want                   *llmrelayv1.ResponseMeta
	}{
		{"responses stream failed before content", "openai", "openai-responses",
			providertest.Load(t, "provider/openai/testdata/responses_stream_failed.http"), true,
			codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", "",
			&llmrelayv1.ResponseMeta{ResponseId: "resp_68ee153407b00519e9bad3481d1c2ff937eb38db7633b530", ResolvedModel: "gpt-4o-mini-2024-07-18",
				ProviderRequestId: "req_6c4991ad9aab9fa3e7eca8f4b556d052"}},
		{"responses stream failed after content", "openai", "openai-responses",
			providertest.Load(t, "provider/openai/testdata/responses_stream_failed_partial.http"), true,
			codes.Unavailable, "UPSTREAM_UNAVAILABLE", "Paris is the",
			&llmrelayv1.ResponseMeta{ResponseId: "resp_0b7d2e94c1f3a5860b7d2e94c1f3a5860b7d2e94c1f3a586", ResolvedModel: "gpt-4o-mini-2024-07-18",
				ProviderRequestId: "req_5d1c8a0e9f7b43c2a6e4d1b0c9f8e7a6",
				Usage:             &llmrelayv1.Usage{InputTokens: 31, OutputTokens: 3, TotalTokens: 34}}},
		{"gemini blocked prompt", "gemini", "gemini",
			providertest.Load(t, "provider/gemini/testdata/blocked.http"), false,
			codes.InvalidArgument, "CONTENT_FILTERED", "",
			&llmrelayv1.ResponseMeta{ResponseId: "qOzqtZDeRq4z6WdNf_-ruOh", ResolvedModel: "gemini-2.5-flash",
				Usage: &llmrelayv1.Usage{InputTokens: 9, TotalTokens: 9}}},
		{"gemini blocked prompt stream", "gemini", "gemini",
			providertest.Load(t, "provider/gemini/testdata/stream_blocked.http"), true,
			codes.InvalidArgument, "CONTENT_FILTERED", "",
			&llmrelayv1.ResponseMeta{ResponseId: "bRlxnRMtDv8n6IcDl_-jpBg", ResolvedModel: "gemini-2.5-flash",
				Usage: &llmrelayv1.Usage{InputTokens: 9, TotalTokens: 9}}},
		{"anthropic error after message_start", "anthropic", "anthropic-messages", overloaded, true,
			codes.Unavailable, "UPSTREAM_UNAVAILABLE", "",
			&llmrelayv1.ResponseMeta{ResponseId: "msg_01SBYNNOAeAWSkmwoncRnIZC", ResolvedModel: "claude-sonnet-4-5-20250929",
				ProviderRequestId: "req_018TZty0FoQ2xBw5mC7nQi1G",
				Usage:             &llmrelayv1.Usage{InputTokens: 21 + 1843, OutputTokens: 1, TotalTokens: 21 + 1843 + 1, CachedInputTokens: 1843}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, tc.rec)
			yaml := noRetry + `providers:
  - name: up
    type: ` + tc.provider + `
    base_url: {{URL}}
    api_key: sk-e2e-test-key-000000000000
models:
  - name: m
    provider: up
    upstream_model: configured-model-id
    capabilities: {chat: {format: ` + tc.format + `}}
`
			c, _ := startWith(t, yaml, up.URL)
			ctx := context.Background()
			msgs := []*llmrelayv1.Message{user("Tell me about Paris.")}
			var (
				err  error
				text string
			)
			if tc.stream {
				s, serr := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: msgs})
				if serr != nil {
					t.Fatal(serr)
				}
				text, err = streamErr(t, s.Recv)
			} else {
				_, err = c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m", Messages: msgs})
			}
			if err == nil {
				t.Fatal("no error")
			}
			st, info, _ := statusDetails(t, err)
			if st.Code() != tc.code || info.GetReason() != tc.reason {
				t.Fatalf("%v %s: %s", st.Code(), info.GetReason(), st.Message())
			}
			if text != tc.text {
				t.Errorf("text before the failure = %q, want %q", text, tc.text)
			}
			m := failedMeta(t, err)
			got := &llmrelayv1.ResponseMeta{ResponseId: m.GetResponseId(), ResolvedModel: m.GetResolvedModel(),
				ProviderRequestId: m.GetProviderRequestId(), Usage: m.GetUsage()}
			if !proto.Equal(tc.want, got) {
				t.Errorf("failure meta = %v, want %v", got, tc.want)
			}
			if tc.provider != "gemini" && m.GetRateLimit() == nil {
				t.Errorf("the stream's rate-limit headers are missing: %v", m)
			}
		})
	}
}

// cutAfter is rec with its body cut right after the first occurrence of
// marker's event (the blank line that ends it).
func cutAfter(t *testing.T, rec providertest.Recording, marker string) providertest.Recording {
	t.Helper()
	i := bytes.Index(rec.Body, []byte(marker))
	if i < 0 {
		t.Fatalf("no %q in the recording", marker)
	}
	j := bytes.Index(rec.Body[i:], []byte("\n\n"))
	return providertest.Recording{Status: rec.Status, Header: rec.Header, Body: append([]byte{}, rec.Body[:i+j+2]...)}
}

// TestCutStreamRetriedBeforeFirstEvent: a stream cut before anything a
// client would see is retried (decisions.md: streams retry only before their
// first visible event), with the retry reason stream_cut.
func TestCutStreamRetriedBeforeFirstEvent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, provider, format, rec, marker, text string
	}{
		// The first chunk holds only the role.
		{"openai", "openai", "openai-chat", "openai/testdata/chat_plain_stream.http", `"role":"assistant"`, "The capital of France is Paris."},
		{"openai-responses", "openai", "openai-responses", "openai/testdata/responses_plain_stream.http", "event: response.created", "The capital of France is Paris."},
		{"anthropic", "anthropic", "anthropic-messages", "anthropic/testdata/plain_stream.http", "event: message_start", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok := providertest.Load(t, "provider/"+tc.rec)
			up := providertest.Replay(t, cutAfter(t, ok, tc.marker), ok)
			yaml := `defaults: {retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}
providers:
  - name: up
    type: ` + tc.provider + `
    base_url: {{URL}}
    api_key: sk-e2e-test-key-000000000000
models:
  - name: m
    provider: up
    upstream_model: some-model
    capabilities: {chat: {format: ` + tc.format + `}}
`
			c, _ := startWith(t, yaml, up.URL)
			s, err := c.StreamChat(context.Background(), &llmrelayv1.StreamChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			var end *llmrelayv1.StreamEnd
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("the stream cut before its first event was not retried: %v", err)
				}
				text.WriteString(ev.GetTextDelta().GetText())
				if e := ev.GetEnd(); e != nil {
					end = e
				}
			}
			m := end.GetMeta()
			if m.GetAttempts() != 2 || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetReason() != "stream_cut" || len(up.Requests()) != 2 {
				t.Errorf("attempts %d, reasons %v, upstream requests %d", m.GetAttempts(), m.GetRetryReasons(), len(up.Requests()))
			}
			if tc.text != "" && text.String() != tc.text {
				t.Errorf("text = %q, want %q", text.String(), tc.text)
			}
		})
	}
}

// TestProtocolBreakIsBadResponse: an argument fragment for a call the
// provider already ended is the provider's fault (UPSTREAM_BAD_RESPONSE with
// the failure meta), not the gateway's (Internal).
func TestProtocolBreakIsBadResponse(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t, providertest.Load(t, "provider/openai/testdata/tools_stream_fragment_after_end.http"))
	c, _ := startWith(t, noRetry+strings.TrimPrefix(caseNamed("openai").yaml, "\n"), up.URL)
	s, err := c.StreamTools(context.Background(), &llmrelayv1.StreamToolsRequest{Model: "m", Messages: []*llmrelayv1.Message{user("Weather in Oslo?")}, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	var done int
	for {
		ev, err := s.Recv()
		if err == nil {
			if ev.GetToolCallDone() != nil {
				done++
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			t.Fatal("the stream ended normally")
		}
		st, info, _ := statusDetails(t, err)
		if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_BAD_RESPONSE" {
			t.Fatalf("%v %s: %s", st.Code(), info.GetReason(), st.Message())
		}
		m := failedMeta(t, err)
		if m.GetResponseId() != "chatcmpl-Hx4Lq9TzW2cR7mVb1Ns8Kd3Yp6Fa0" || m.GetProviderRequestId() != "req_9e2b7c4d1a0f48e3b6c5d2a1f0e9d8c7" {
			t.Errorf("failure meta = %v", m)
		}
		break
	}
	if done != 1 {
		t.Errorf("%d tool_call_done events before the break, want 1", done)
	}
}

// TestFailureKeepsProviderDetails: the provider-specific details of an
// error (Azure's content filter verdicts, Gemini's block reason) reach
// FailedCallMeta.meta.extended.
func TestFailureKeepsProviderDetails(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, provider, format, extra, rec, key string
	}{
		{"azure content filter", "azure", "openai-chat", "    api_version: \"2024-10-21\"\n", "openai/testdata/azure_err_content_filter.http", "content_filter_result"},
		{"gemini blocked prompt", "gemini", "gemini", "", "gemini/testdata/blocked.http", "gemini.block_reason"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, providertest.Load(t, "provider/"+tc.rec))
			yaml := noRetry + `providers:
  - name: up
    type: ` + tc.provider + `
    base_url: {{URL}}
    api_key: sk-e2e-test-key-000000000000
` + tc.extra + `models:
  - name: m
    provider: up
    upstream_model: some-model
    capabilities: {chat: {format: ` + tc.format + `}}
`
			c, _ := startWith(t, yaml, up.URL)
			_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}})
			if err == nil {
				t.Fatal("no error")
			}
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.InvalidArgument || info.GetReason() != "CONTENT_FILTERED" {
				t.Fatalf("%v %s: %s", st.Code(), info.GetReason(), st.Message())
			}
			if _, ok := failedMeta(t, err).GetExtended().GetFields()[tc.key]; !ok {
				t.Errorf("extended = %v, want %s", failedMeta(t, err).GetExtended(), tc.key)
			}
		})
	}
}

// TestCutUnaryAnswerKeepsHeaders: a unary answer whose body is cut keeps
// what its head reported (request id, rate limits) in FailedCallMeta.
func TestCutUnaryAnswerKeepsHeaders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, provider, format, rec string
		rateLimit                   bool
	}{
		{"openai", "openai", "openai-chat", "openai/testdata/chat_plain.http", true},
		{"openai-responses", "openai", "openai-responses", "openai/testdata/responses_plain.http", true},
		{"anthropic", "anthropic", "anthropic-messages", "anthropic/testdata/plain.http", true},
		{"ollama", "ollama", "ollama", "ollama/testdata/chat_text.http", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := providertest.Load(t, "provider/"+tc.rec)
			wantID := rec.Header.Get("X-Request-Id") + rec.Header.Get("Request-Id")
			if tc.provider == "ollama" {
				// Ollama sends none; a proxy in front of it may.
				wantID = "9c2d4e6f-1a3b-4c5d-8e7f-0a1b2c3d4e5f"
			}
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				for k, vs := range rec.Header {
					w.Header()[k] = vs
				}
				if tc.provider == "ollama" {
					w.Header().Set("X-Request-Id", wantID)
				}
				// The declared length is the whole body; half of it arrives.
				w.Header().Set("Content-Length", strconv.Itoa(len(rec.Body)))
				w.WriteHeader(rec.Status)
				_, _ = w.Write(rec.Body[:len(rec.Body)/2])
			}))
			t.Cleanup(up.Close)
			yaml := noRetry + `providers:
  - name: up
    type: ` + tc.provider + `
    base_url: {{URL}}
    api_key: sk-e2e-test-key-000000000000
models:
  - name: m
    provider: up
    upstream_model: some-model
    capabilities: {chat: {format: ` + tc.format + `}}
`
			c, _ := startWith(t, yaml, up.URL)
			_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: []*llmrelayv1.Message{user("hi")}})
			if err == nil {
				t.Fatal("no error")
			}
			st, info, _ := statusDetails(t, err)
			if st.Code() != codes.Unavailable || info.GetReason() != "UPSTREAM_UNAVAILABLE" {
				t.Fatalf("%v %s: %s", st.Code(), info.GetReason(), st.Message())
			}
			m := failedMeta(t, err)
			if m.GetProviderRequestId() != wantID || info.GetMetadata()["upstreamRequestId"] != wantID {
				t.Errorf("request id: meta %q, ErrorInfo %q, want %q", m.GetProviderRequestId(), info.GetMetadata()["upstreamRequestId"], wantID)
			}
			if tc.rateLimit && m.GetRateLimit() == nil {
				t.Errorf("rate limit missing: %v", m)
			}
		})
	}
}
