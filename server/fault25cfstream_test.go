package server_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestFault25ContentFilterStreamFallsBack: a stream that ends with its
// content filter's stop before any content (Gemini's one chunk with
// finishReason SAFETY and an empty content: the body of the adapter's
// testdata/real_pyd_google_model_safety_settings.http sent as the stream's
// one event; Azure's stream whose only choice finishes content_filter, hand
// built in the shape of the f13 chunks) relayed nothing, so with
// content_filter_fallback it gives way to the next deployment as a
// non-streaming answer so stopped does: a failed attempt (content_filter,
// its provider request id), its usage added with a warning. It streamed
// the filtered end to the caller (the next deployment never asked). By
// default the filtered end is relayed as before.
func TestFault25ContentFilterStreamFallsBack(t *testing.T) {
	t.Parallel()
	var one bytes.Buffer
	if err := json.Compact(&one, providertest.Load(t, "provider/gemini/testdata/real_pyd_google_model_safety_settings.http").Body); err != nil {
		t.Fatal(err)
	}
	az := azureFormat()
	for _, tc := range []struct {
		f         f13Format
		filtered  string
		usage     int32 // the filtered stream's total tokens
		wantReqID string
	}{
		{geminiFormat, "data: " + one.String() + "\r\n\r\n", 14, ""},
		{az, az.head + openaiChunk(`{}`, `"content_filter"`) +
			`data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":24,"completion_tokens":0,"total_tokens":24}}` + "\n\n" +
			"data: [DONE]\n\n", 24, "req-f13-1"},
	} {
		f := tc.f
		for _, optIn := range []bool{false, true} {
			t.Run(f.name+"/"+map[bool]string{false: "default", true: "content_filter_fallback"}[optIn], func(t *testing.T) {
				t.Parallel()
				first := f13Serve(t, respond(200, f.streamHead(1), tc.filtered))
				second := f13Serve(t, respond(200, f.streamHead(2), f.complete()))
				yaml := f13Routed(f, 3)
				if optIn {
					yaml = strings.Replace(yaml, "{name: m,", "{name: m, content_filter_fallback: true,", 1)
				}
				got := readStream13(t, f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), first.URL, &f13Clock{}))
				if got.err != nil || got.end == nil {
					t.Fatalf("stream %+v", got)
				}
				m := got.end.GetMeta()
				if !optIn {
					if got.text != "" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER || m.GetProvider() != "first" ||
						m.GetAttempts() != 1 || len(m.GetRetryReasons()) != 0 || second.requests() != 0 {
						t.Errorf("text %q, meta %v, second saw %d", got.text, m, second.requests())
					}
					return
				}
				if got.text != okText || m.GetProvider() != "second" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || first.requests() != 1 {
					t.Fatalf("text %q, meta %v", got.text, m)
				}
				rr := m.GetRetryReasons()
				if m.GetAttempts() != 2 || len(rr) != 1 || rr[0].GetDeployment() != "first" || rr[0].GetReason() != "content_filter" ||
					rr[0].GetProviderRequestId() != tc.wantReqID || !slices.Equal(m.GetRouting().GetTried(), []string{"first"}) {
					t.Errorf("meta %v", m)
				}
				secondTotal := int32(32)
				if f.name == "gemini" {
					secondTotal = 21
				}
				if m.GetUsage().GetTotalTokens() != tc.usage+secondTotal {
					t.Errorf("usage %v, want %d tokens", m.GetUsage(), tc.usage+secondTotal)
				}
				if !slices.ContainsFunc(m.GetWarnings(), func(w string) bool {
					return strings.Contains(w, "the answer of first was stopped by its content filter")
				}) {
					t.Errorf("warnings %q", m.GetWarnings())
				}
			})
		}
	}
}

// TestFault25ContentFilterStreamThenFailure: the deployment after a
// stream discarded for its content filter's stop fails (a 400, neither
// retried nor fallen back from): the failure's meta still counts the
// discarded stream's usage, with the warning naming it.
func TestFault25ContentFilterStreamThenFailure(t *testing.T) {
	t.Parallel()
	f := azureFormat()
	filtered := f.head + openaiChunk(`{}`, `"content_filter"`) +
		`data: {"id":"chatcmpl-f13","object":"chat.completion.chunk","created":1760433201,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":24,"completion_tokens":0,"total_tokens":24}}` + "\n\n" +
		"data: [DONE]\n\n"
	first := f13Serve(t, respond(200, f.streamHead(1), filtered))
	second := f13Serve(t, f.errStep(2, 400, nil))
	yaml := strings.Replace(f13Routed(f, 3), "{name: m,", "{name: m, content_filter_fallback: true,", 1)
	got := readStream13(t, f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), first.URL, &f13Clock{}))
	if got.err == nil || got.started || second.requests() != 1 {
		t.Fatalf("stream %+v, second saw %d", got, second.requests())
	}
	m := failedMeta(t, got.err)
	if m.GetUsage().GetTotalTokens() != 24 || len(m.GetRetryReasons()) != 2 || m.GetRetryReasons()[0].GetReason() != "content_filter" ||
		!slices.ContainsFunc(m.GetWarnings(), func(w string) bool {
			return strings.Contains(w, "the answer of first was stopped by its content filter") && strings.Contains(w, "usage includes its 24 tokens")
		}) {
		t.Errorf("failed meta %v", m)
	}
}
