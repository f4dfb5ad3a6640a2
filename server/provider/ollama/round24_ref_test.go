package ollama

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24CloudErrorRef: ollama.com's errors name a reference of their
// own in the message, "(ref: <uuid>)", a new one for each failure, the only
// handle on it a user can give Ollama's support: its opaque 500 "Internal
// Server Error (ref: bddedf60-…)" (tinyhumansai/openhuman#4042, a cloud
// model through a local Ollama's /api/chat), its 503 "Server overloaded,
// please retry shortly (ref: …)" (ollama/ollama#15934) and its 403 for a
// model the plan does not include (xtekky/gpt4free#3436). A local Ollama passes the
// body on without a request-id header, so the error carried no request id
// at all; the reference is now its request id, unary and streamed, with the
// message whole. A header, when a proxy sets one, stays the request id.
func TestRound24CloudErrorRef(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file   string
		kind   provider.Kind
		status int
		ref    string
		msg    string
	}{
		{"error_500_cloud_ref", provider.KindUnavailable, 500, "bddedf60-d799-48d6-ad1f-6783dcfc8e9b",
			"Internal Server Error (ref: bddedf60-d799-48d6-ad1f-6783dcfc8e9b)"},
		{"error_503_cloud_overloaded", provider.KindUnavailable, 503, "aaa65c70-cfa0-446b-86f1-4ab0e2deb9e4",
			"Server overloaded, please retry shortly (ref: aaa65c70-cfa0-446b-86f1-4ab0e2deb9e4)"},
		{"error_403_cloud_subscription", provider.KindPermissionDenied, 403, "b7b9f6f9-5486-478e-8050-857feaa13152",
			"this model requires a subscription, upgrade for access: https://ollama.com/upgrade (ref: b7b9f6f9-5486-478e-8050-857feaa13152)"},
	}
	check := func(t *testing.T, err error, kind provider.Kind, status int, ref, msg string) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v", err)
		}
		if pe.Kind != kind || pe.HTTPStatus != status || pe.Message != msg || pe.RequestID != ref {
			t.Errorf("error %+v", pe)
		}
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.file+".http"))
			_, err := newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
			check(t, err, tc.kind, tc.status, tc.ref, tc.msg)
			srv = providertest.ReplayFile(t, td(tc.file+".http"))
			_, err = newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
			check(t, err, tc.kind, tc.status, tc.ref, tc.msg)
		})
	}

	t.Run("header wins", func(t *testing.T) {
		t.Parallel()
		srv := providertest.Replay(t, providertest.Recording{Status: 500, Header: http.Header{
			"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"12c1e93f-5416-4974-a879-d6b83c80e63e"}},
			Body: []byte(`{"error":"Internal Server Error (ref: d32041a5-f2ef-4b71-939c-7b0976a2931e)"}`)})
		_, err := newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
		check(t, err, provider.KindUnavailable, 500, "12c1e93f-5416-4974-a879-d6b83c80e63e",
			"Internal Server Error (ref: d32041a5-f2ef-4b71-939c-7b0976a2931e)")
	})

	// An answer that is an error alone in a 200 (unary): the ref without a
	// header, the header's id with one.
	for _, h := range []http.Header{
		{"Content-Type": {"application/json; charset=utf-8"}},
		{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"12c1e93f-5416-4974-a879-d6b83c80e63e"}},
	} {
		want := "d32041a5-f2ef-4b71-939c-7b0976a2931e"
		if h.Get("X-Request-Id") != "" {
			want = h.Get("X-Request-Id")
		}
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: h,
			Body: []byte(`{"error":"Internal Server Error (ref: d32041a5-f2ef-4b71-939c-7b0976a2931e)"}`)})
		_, err := newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
		check(t, err, provider.KindUnavailable, 200, want, "Internal Server Error (ref: d32041a5-f2ef-4b71-939c-7b0976a2931e)")
	}

	// The same error as a stream's line after the answer began (Ollama's
	// streamResponse writes {"error": …} once the status is sent).
	t.Run("in-band line", func(t *testing.T) {
		t.Parallel()
		body := `{"model":"minimax-m3:cloud","created_at":"2026-06-24T11:02:16.52Z","message":{"role":"assistant","content":"Sure"},"done":false}` + "\n" +
			`{"error":"Internal Server Error (ref: d32041a5-f2ef-4b71-939c-7b0976a2931e)"}` + "\n"
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: []byte(body)})
		s, err := newTestProvider(t, srv).Stream(context.Background(), textRequest(t))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for {
			_, err = s.Recv()
			if err != nil {
				break
			}
		}
		if errors.Is(err, io.EOF) {
			t.Fatal("stream ended without its error")
		}
		check(t, err, provider.KindUnavailable, 200, "d32041a5-f2ef-4b71-939c-7b0976a2931e",
			"Internal Server Error (ref: d32041a5-f2ef-4b71-939c-7b0976a2931e)")
	})
}

// TestRound24PaymentRequired: ollama.com answers a cloud model that draws
// only on "extra usage" with 402 Payment Required when that balance is
// empty ("this model uses extra usage only (not included plan usage) and
// your extra usage balance is empty, add extra usage or turn on auto…",
// ollama/ollama#17639, quoted up to there; Ollama's errors are
// {"error": message}, docs.ollama.com/api/errors). It read as an exhausted
// quota (KindRateLimited, by its status) without the code the adapters
// give a spent balance, insufficient_quota, which the OpenAI adapter gives
// the same 402 on /v1: now it has it, so the caller sees a spent quota, not
// a rate limit, and nothing retries it.
func TestRound24PaymentRequired(t *testing.T) {
	t.Parallel()
	const msg = "this model uses extra usage only (not included plan usage) and your extra usage balance is empty, add extra usage or turn on auto"
	srv := providertest.Replay(t, providertest.Recording{Status: 402, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Body: []byte(`{"error":"` + msg + `"}`)})
	_, err := newTestProvider(t, srv).Generate(context.Background(), textRequest(t))
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 402 || pe.Code != "insufficient_quota" || pe.Message != msg {
		t.Errorf("error %+v", pe)
	}
	if !provider.QuotaSpent(pe.Code) {
		t.Errorf("code %q is not a spent quota", pe.Code)
	}
}
