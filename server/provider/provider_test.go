package provider

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func TestKindForStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]Kind{400: KindInvalidRequest, 422: KindInvalidRequest, 401: KindUnauthenticated, 403: KindPermissionDenied,
		404: KindNotFound, 408: KindTimeout, 429: KindRateLimited, 500: KindUnavailable, 502: KindUnavailable, 503: KindUnavailable,
		504: KindTimeout, 529: KindUnavailable, 418: KindInvalidRequest, 302: KindUnknown} {
		if got := KindForStatus(status); got != want {
			t.Errorf("KindForStatus(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestTransportError(t *testing.T) {
	t.Parallel()
	key := "sk-in-url-12345"
	urlErr := &url.Error{Op: "Post", URL: "https://x/v1?key=" + key, Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}
	cases := []struct {
		err  error
		want Kind
	}{
		{context.Canceled, KindCanceled},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), KindTimeout},
		{&url.Error{Op: "Post", URL: "u", Err: timeoutErr{}}, KindTimeout},
		{urlErr, KindConnection},
		{fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), KindUnavailable}, // an answer cut short
		// A body labelled gzip that is not, or whose gzip is corrupt:
		// the answer's fault, not the connection's.
		{gzip.ErrHeader, KindBadResponse},
		{&url.Error{Op: "Post", URL: "u", Err: gzip.ErrChecksum}, KindBadResponse},
		{flate.CorruptInputError(12), KindBadResponse},
	}
	for _, tc := range cases {
		e := TransportError("p", tc.err)
		if e.Kind != tc.want || !errors.Is(e, tc.err) {
			t.Errorf("%v: kind %v", tc.err, e.Kind)
		}
		if strings.Contains(e.Message, key) {
			t.Errorf("URL with key in message: %q", e.Message)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestOpenAIRateLimit(t *testing.T) {
	t.Parallel()
	date := time.Date(2025, 10, 14, 9, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Date", date.Format(http.TimeFormat))
	h.Set("X-Ratelimit-Limit-Requests", "10000")
	h.Set("X-Ratelimit-Remaining-Requests", "9999")
	h.Set("X-Ratelimit-Reset-Requests", "6m0s")
	h.Set("X-Ratelimit-Remaining-Tokens", "29999910")
	h.Set("X-Ratelimit-Reset-Tokens", "20ms")
	rl := OpenAIRateLimit(h)
	if rl.GetRequestsLimit() != 10000 || rl.GetRequestsRemaining() != 9999 || rl.GetTokensRemaining() != 29999910 || rl.TokensLimit != nil ||
		!rl.GetRequestsResetTime().AsTime().Equal(date.Add(6*time.Minute)) || !rl.GetTokensResetTime().AsTime().Equal(date.Add(20*time.Millisecond)) {
		t.Errorf("rate limit = %v", rl)
	}
	if OpenAIRateLimit(http.Header{}) != nil {
		t.Error("no headers must give nil")
	}
}

func TestSetExtended(t *testing.T) {
	t.Parallel()
	m := &llmrelayv1.ResponseMeta{}
	SetExtended(m, "n", 3)
	SetExtended(m, "obj", map[string]any{"a": []any{1, "x"}})
	SetExtended(m, "odd", struct{}{})
	f := m.GetExtended().GetFields()
	if f["n"].GetNumberValue() != 3 || f["obj"].GetStructValue().GetFields()["a"].GetListValue().GetValues()[1].GetStringValue() != "x" || f["odd"].GetStringValue() == "" {
		t.Errorf("extended = %v", m.GetExtended())
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{"https://api.openai.com/v1/": "https://api.openai.com/v1", " http://127.0.0.1:11434 ": "http://127.0.0.1:11434"} {
		if got, err := BaseURL(raw); err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v", raw, got, err)
		}
	}
	for _, bad := range []string{"ftp://x", "https://", "https://x/v1?key=sk-secret-1", "https://x#f", "::",
		"https://user:sk-secret-1@x/v1", "ftp://user:sk-secret-1@x/?key=sk-secret-1"} {
		_, err := BaseURL(bad)
		if err == nil {
			t.Errorf("BaseURL(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("BaseURL(%q): the error shows the credential: %v", bad, err)
		}
	}
}

func TestUsageTotal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ reported, in, out, want int32 }{
		{0, 3, 4, 7},                         // missing total
		{7, 3, 4, 7},                         // consistent
		{9, 3, 4, 9},                         // provider counts more (Gemini tool-use prompt)
		{13, 82, 0, 82},                      // less than its parts (found by FuzzParseChatResponse)
		{0, math.MaxInt32, 1, math.MaxInt32}, // clamped
	} {
		if got := UsageTotal(c.reported, c.in, c.out); got != c.want {
			t.Errorf("UsageTotal(%d, %d, %d) = %d, want %d", c.reported, c.in, c.out, got, c.want)
		}
	}
}

func TestReadBody(t *testing.T) {
	t.Parallel()
	resp := func(body string, declared int64) *http.Response {
		return &http.Response{Body: io.NopCloser(strings.NewReader(body)), ContentLength: declared}
	}
	for _, c := range []struct {
		name     string
		resp     *http.Response
		want     string
		wantKind Kind
	}{
		{"declared", resp(`{"a":1}`, 7), `{"a":1}`, KindUnknown},
		{"undeclared", resp(`{"a":1}`, -1), `{"a":1}`, KindUnknown},
		{"empty", resp(``, 0), ``, KindUnavailable},
		{"empty, undeclared", resp(``, -1), ``, KindUnavailable},
		{"declared over the limit", resp(`0123456789a`, 11), ``, KindBadResponse},
		{"undeclared over the limit", resp(`0123456789a`, -1), ``, KindBadResponse},
		{"shorter than declared", resp(`{"a"`, 7), ``, KindUnavailable},
		{"longer than declared", resp(`{"a":1}xx`, 7), ``, KindConnection},
		// A read that fails after the headers: the answer broke mid-way
		// (BodyReadError), not a connection that never answered.
		{"read error", &http.Response{Body: io.NopCloser(iotest.ErrReader(errors.New("reset"))), ContentLength: -1}, ``, KindUnavailable},
	} {
		body, _, err := ReadBody("p", c.resp, 10)
		if c.wantKind == KindUnknown {
			if err != nil || string(body) != c.want {
				t.Errorf("%s: %q, %v", c.name, body, err)
			}
			continue
		}
		if err == nil || err.Kind != c.wantKind {
			t.Errorf("%s: err %v, want kind %v", c.name, err, c.wantKind)
		}
	}
}

func TestArgumentsText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ raw, ifNull, want string }{
		{``, "{}", "{}"},
		{` null `, "", ""},
		{`{"b": 1, "a": [1, 2]}`, "{}", `{"b":1,"a":[1,2]}`},   // compact, key order kept
		{`"{\"city\":\"Paris\"}"`, "", `{"city":"Paris"}`},     // a string's value
		{`"{\"city\":"`, "", `{"city":`},                       // a string holding malformed JSON, verbatim
		{`{"city": "Par`, "{}", `{"city": "Par`},               // not JSON: verbatim
		{"{\"city\":\"\xff\"}", "{}", "{\"city\":\"\uFFFD\"}"}, // invalid UTF-8 in raw JSON
		{"\"\xff\"", "", "\uFFFD"},                             // and inside a string
		{"{\"a\":\xfe", "{}", "{\"a\":\uFFFD"},                 // and in text that is not JSON
	} {
		got := ArgumentsText(json.RawMessage(c.raw), c.ifNull)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("ArgumentsText(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]int32{-5: 0, 0: 0, 42: 42, math.MaxInt32: math.MaxInt32, math.MaxInt64: math.MaxInt32} {
		if got := Count(in); got != want {
			t.Errorf("Count(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestSetExtendedFillsTypedFields(t *testing.T) {
	t.Parallel()
	meta := &llmrelayv1.ResponseMeta{}
	SetExtended(meta, "stop_sequence", "\n\nHuman:")
	SetExtended(meta, "service_tier", "priority")
	SetExtended(meta, "system_fingerprint", "fp_x1")
	if meta.GetStopSequence() != "\n\nHuman:" || meta.GetServiceTier() != "priority" {
		t.Errorf("typed fields: stop_sequence %q, service_tier %q", meta.GetStopSequence(), meta.GetServiceTier())
	}
	if len(meta.GetExtended().GetFields()) != 3 {
		t.Errorf("extended = %v, want all three keys kept", meta.GetExtended())
	}
}

func TestToolCallsFinish(t *testing.T) {
	t.Parallel()
	const (
		stop   = llmrelayv1.FinishReason_FINISH_REASON_STOP
		length = llmrelayv1.FinishReason_FINISH_REASON_LENGTH
		filter = llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
		other  = llmrelayv1.FinishReason_FINISH_REASON_OTHER
		none   = llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED
		tools  = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS
	)
	for _, tc := range []struct {
		in    llmrelayv1.FinishReason
		calls int
		want  llmrelayv1.FinishReason
	}{
		{stop, 0, stop}, {stop, 2, tools}, {none, 1, tools}, {none, 0, none},
		{length, 1, length}, {filter, 1, filter}, {other, 1, other}, {tools, 0, tools},
	} {
		if got := ToolCallsFinish(tc.in, tc.calls); got != tc.want {
			t.Errorf("ToolCallsFinish(%v, %d) = %v, want %v", tc.in, tc.calls, got, tc.want)
		}
	}
}

// TestRetryAdvice: NewHTTPError reads x-should-retry as the official SDKs
// do: exactly "true" or "false"; anything else says nothing.
func TestRetryAdvice(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]RetryAdvice{"true": RetryAdvised, "false": RetryDiscouraged, "": RetryUnsaid, "yes": RetryUnsaid, "True": RetryUnsaid} {
		h := http.Header{}
		if v != "" {
			h.Set("x-should-retry", v)
		}
		if got := NewHTTPError("p", &http.Response{StatusCode: 503, Header: h}, "").ShouldRetry; got != want {
			t.Errorf("x-should-retry %q: %v, want %v", v, got, want)
		}
	}
}
