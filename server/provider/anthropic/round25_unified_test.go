package anthropic

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// r25Want is what testdata/unified25_*.http's unified limit headers
// become: a window (budget "unified") per window name, its status as
// sent, its reset (Unix seconds) as a time, its utilization a fraction,
// its period from its name; the headers that are no window's in
// meta.extended.
type r25Want struct {
	windows  []*llmrelayv1.RateLimitWindow
	extended map[string]any
}

func r25Unified(status, fiveHourStatus string, fiveHourUsed, weekUsed float64) r25Want {
	at := func(unix int64) *timestamppb.Timestamp { return timestamppb.New(time.Unix(unix, 0)) }
	win := func(name string, period time.Duration, reset int64, used *float64, status string) *llmrelayv1.RateLimitWindow {
		w := &llmrelayv1.RateLimitWindow{Budget: "unified", Header: "anthropic-ratelimit-unified", Status: status, Utilization: used}
		if name != "" {
			w.Header += "-" + name
		}
		if period > 0 {
			w.Period = durationpb.New(period)
		}
		if reset > 0 {
			w.ResetTime = at(reset)
		}
		return w
	}
	return r25Want{
		windows: []*llmrelayv1.RateLimitWindow{
			win("", 0, 1789491600, nil, status), // 2026-09-15T17:00:00Z
			win("5h", 5*time.Hour, 1789491600, &fiveHourUsed, fiveHourStatus),
			win("7d", 7*24*time.Hour, 1789808400, &weekUsed, "allowed"), // 2026-09-19T09:00:00Z
			win("overage", 0, 0, nil, "rejected"),
		},
		extended: map[string]any{
			"ratelimit_unified_representative_claim":    "five_hour",
			"ratelimit_unified_fallback_percentage":     0.5,
			"ratelimit_unified_overage_disabled_reason": "org_level_disabled",
		},
	}
}

// r25CheckUnified fails unless meta's rate limit has exactly want's
// unified windows, in order, and meta.extended exactly want's
// ratelimit_unified_* keys with their values.
func r25CheckUnified(t *testing.T, what string, meta *llmrelayv1.ResponseMeta, want r25Want) {
	t.Helper()
	var windows []*llmrelayv1.RateLimitWindow
	for _, w := range meta.GetRateLimit().GetWindows() {
		if w.GetBudget() == "unified" {
			windows = append(windows, w)
		}
	}
	if len(windows) != len(want.windows) {
		t.Errorf("%s: unified windows %v, want %v", what, windows, want.windows)
	} else {
		for i := range windows {
			if !proto.Equal(windows[i], want.windows[i]) {
				t.Errorf("%s: unified window %d = %v, want %v", what, i, windows[i], want.windows[i])
			}
		}
	}
	got := map[string]*structpb.Value{}
	for k, v := range meta.GetExtended().GetFields() {
		if len(k) > len("ratelimit_unified_") && k[:len("ratelimit_unified_")] == "ratelimit_unified_" {
			got[k] = v
		}
	}
	if len(got) != len(want.extended) {
		t.Errorf("%s: %d unified keys %v, want %d", what, len(got), got, len(want.extended))
	}
	for k, w := range want.extended {
		wv, err := structpb.NewValue(w)
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := got[k]; !ok || g.String() != wv.String() {
			t.Errorf("%s: %s = %v, want %v", what, k, g, wv)
		}
	}
}

// TestRound25UnifiedLimits: a Claude subscription's answer (an OAuth
// token, or a relay in front of one) carries the unified limit headers
// instead of the requests and tokens ones: each window's status, reset
// (Unix seconds) and fraction used, the deciding claim, the overall
// status and reset. Each window is a RateLimit.windows entry (budget
// "unified"), the headers that are no window's are kept in meta.extended,
// unary and streamed; they were dropped. A 429 that says the deciding window is rejected
// keeps them too (the caller learns which window and until when), and,
// when it comes without a Retry-After, waits until that window's reset.
func TestRound25UnifiedLimits(t *testing.T) {
	t.Parallel()
	req := r21Request("claude-haiku-4-5", "quota", 1, 0)

	srv := providertest.ReplayFile(t, "testdata/unified25_subscription.http")
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, "testdata/unified25_subscription.golden", providertest.ProtoJSON(t, res.Meta))
	if m := res.Meta; m.GetProviderRequestId() != "req_011CCQknkKmEH39h0NV1UCLI" || m.GetRateLimit().RequestsLimit != nil || m.GetRateLimit().TokensLimit != nil ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r25CheckUnified(t, "unary", res.Meta, r25Unified("allowed", "allowed", 0.43, 0.09))

	// The same head on a stream: the head's meta event carries them.
	rec := providertest.Load(t, "testdata/unified25_subscription.http")
	rec.Header.Set("Content-Type", "text/event-stream")
	rec.Body = []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-haiku-4-5-20251001\",\"id\":\"msg_01ShHmL3leJJ5yQWTREyNqM0\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":8,\"output_tokens\":1}}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	s, err := newTestProvider(t, providertest.Replay(t, rec).URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	f := foldEvents(t, evs)
	r25CheckUnified(t, "stream", f.meta, r25Unified("allowed", "allowed", 0.43, 0.09))

	// The subscription's 5-hour window is spent: a rate limit with the
	// provider's Retry-After (4731 s, to 17:00), the headers kept.
	rejected := providertest.Load(t, "testdata/unified25_rejected_429.http")
	for _, withRetryAfter := range []bool{true, false} {
		rec := rejected
		rec.Header = rejected.Header.Clone()
		if !withRetryAfter {
			// Without it, the unified reset says the same wait.
			rec.Header.Del("Retry-After")
		}
		_, err := newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), req)
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("err %v", err)
		}
		const msg = "This request would exceed your account's rate limit. Please try again later."
		if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != http.StatusTooManyRequests || pe.Code != "rate_limit_error" ||
			pe.Message != msg || pe.RequestID != "req_011CKugRGG3e4lw2OwT98WcF" || pe.RetryAfter != 4731*time.Second ||
			len(pe.Quota) != 0 || !pipeline.FallbackWorthy(err) {
			t.Errorf("retry-after %v: kind=%s status=%d code=%q msg=%q rid=%q wait=%v quota=%v", withRetryAfter, pe.Kind,
				pe.HTTPStatus, pe.Code, pe.Message, pe.RequestID, pe.RetryAfter, pe.Quota)
		}
		r25CheckUnified(t, "429", pe.Meta, r25Unified("rejected", "rejected", 1, 0.31))
	}

	// Allowed, or a reset already past: no wait is read from them.
	h := http.Header{}
	h.Set("anthropic-ratelimit-unified-status", "allowed")
	h.Set("anthropic-ratelimit-unified-reset", "1789491600")
	date := time.Date(2026, 9, 15, 15, 41, 9, 0, time.UTC)
	if d := unifiedRejectedWait(h, date); d != 0 {
		t.Errorf("allowed: wait %v", d)
	}
	h.Set("anthropic-ratelimit-unified-status", "rejected")
	if d := unifiedRejectedWait(h, date.Add(2*time.Hour)); d != 0 {
		t.Errorf("past reset: wait %v", d)
	}
	h.Set("anthropic-ratelimit-unified-reset", "soon")
	if d := unifiedRejectedWait(h, date); d != 0 {
		t.Errorf("unreadable reset: wait %v", d)
	}
}

// TestRound25SpendCap: the 429 of an organization past its usage tier's
// monthly spend cap, as Anthropic's rate-limits documentation gives it
// (testdata/README.md, "Round 25"): type rate_limit_error, no
// retry-after, error.details.error_code enforced_spend_limit_reached;
// usage "pauses until 00:00 UTC on the first day of the next month".
// It was an ordinary rate limit, retried into the same refusal. Now a
// spent quota: not retried, no wait, a route falls back; the details are
// kept. Unary, streamed, as a stream's error event, and by its words
// alone; an ordinary rate limit with details null is still retried.
func TestRound25SpendCap(t *testing.T) {
	t.Parallel()
	const msg = "You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on 2026-09-01 at 00:00 UTC."
	req := r21Request("claude-sonnet-4-6", "hi", 64, 0)
	check := func(what string, err error, status int, details bool) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err %v", what, err)
		}
		if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != status || pe.Code != "rate_limit_error" || pe.Message != msg ||
			pe.ShouldRetry != provider.RetryDiscouraged || pe.RetryAfter != 0 || pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
			t.Errorf("%s: kind=%s status=%d code=%q advice=%v wait=%v retryable=%v msg=%q", what, pe.Kind, pe.HTTPStatus, pe.Code,
				pe.ShouldRetry, pe.RetryAfter, pipeline.Retryable(err), pe.Message)
		}
		got, _ := pe.Extended[extErrorDetails].(map[string]any)
		if details && (len(got) != 1 || got["error_code"] != "enforced_spend_limit_reached") {
			t.Errorf("%s: details %v", what, pe.Extended)
		}
	}

	srv := providertest.ReplayFile(t, "testdata/spendcap25_429.http")
	_, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	check("unary", err, http.StatusTooManyRequests, true)
	var pe *provider.Error
	if errors.As(err, &pe) && pe.RequestID != "req_018HmgIF0jb2Qi6EdEqVHTbq" {
		t.Errorf("request id %q", pe.RequestID)
	}
	srv = providertest.ReplayFile(t, "testdata/spendcap25_429.http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if s != nil {
		t.Fatal("a stream for a 429")
	}
	check("stream", err, http.StatusTooManyRequests, true)

	// The same error as a stream's error event (no status to go by).
	body := `{"type":"error","error":{"type":"rate_limit_error","message":"` + msg +
		`","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_018HmgIF0jb2Qi6EdEqVHTbq"}`
	rec := providertest.Recording{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: []byte("event: error\ndata: " + body + "\n\n")}
	s, err = newTestProvider(t, providertest.Replay(t, rec).URL).Stream(context.Background(), req)
	if err == nil {
		_, err = collect(s)
	}
	check("event", err, 0, true)

	// The words alone, as a proxy that kept only the message passes it on.
	rec = providertest.Load(t, "testdata/spendcap25_429.http")
	rec.Body = []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"` + msg + `"}}`)
	_, err = newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), req)
	check("message only", err, http.StatusTooManyRequests, false)

	// An ordinary rate limit whose details are null: retried as before.
	rec.Body = []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit","details":null}}`)
	_, err = newTestProvider(t, providertest.Replay(t, rec).URL).Generate(context.Background(), req)
	if !errors.As(err, &pe) || pe.Kind != provider.KindRateLimited || pe.ShouldRetry == provider.RetryDiscouraged ||
		!pipeline.Retryable(err) || pe.Extended[extErrorDetails] != nil {
		t.Errorf("ordinary 429: %+v", pe)
	}
}

// TestRound25WorkspaceSpendLimit: the spend limit set on a workspace is
// reached, a 400 invalid_request_error (anthropics/claude-code#1047):
// "You have reached your specified workspace API usage limits. You will
// regain access on 2025-06-01 at 00:00 UTC." It was an invalid request,
// no reason to fall back, where the organization's ("your specified API
// usage limits") was already a spent quota. Now the same: rate limited,
// not retried, a route falls back.
func TestRound25WorkspaceSpendLimit(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/spendcap25_workspace_400.http")
	_, err := newTestProvider(t, srv.URL).Generate(context.Background(), r21Request("claude-sonnet-4-5", "hi", 64, 0))
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err %v", err)
	}
	if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != http.StatusBadRequest || pe.Code != "invalid_request_error" ||
		pe.ShouldRetry != provider.RetryDiscouraged || pe.RetryAfter != 0 || pe.RequestID != "req_011Cq0IXl9J6BjNdd1xgmVvb" ||
		pipeline.Retryable(err) || !pipeline.FallbackWorthy(err) {
		t.Errorf("kind=%s status=%d code=%q advice=%v rid=%q fallback=%v", pe.Kind, pe.HTTPStatus, pe.Code, pe.ShouldRetry, pe.RequestID,
			pipeline.FallbackWorthy(err))
	}
}
