package anthropic

import (
	"context"
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// rsdkOrdersRequest is anthropic-sdk-python's TestAsyncStream
// test_stream_with_raw_schema request: an array of integers as native
// structured output, max_tokens 1024.
func rsdkOrdersRequest() *provider.Request {
	req := r21Request("claude-sonnet-4-5", "Extract order IDs from the following text:\n\nOrder 12345\nOrder 67890", 1024, 0)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"type":"array","items":{"type":"integer"}}`}
	req.NativeStructuredOutput = true
	return req
}

// TestRound23SDKPythonPromptBytes: anthropic-sdk-python's live recording
// of a stream request (claude-sonnet-4-5, February 2026) answered twice
// with a 429 rate_limit_error for the organization's hourly limit of
// "20,000,000 prompt bytes per hour" (x-should-retry: true, no
// retry-after, no request-id header: the id only in the body), then, on
// the SDK's second retry, by the stream. Each 429 is a rate limit the
// provider says to retry, with the body's request id, and the limit it
// names as its quota violation (it had none: only token and request
// limits per minute or day were read). The third attempt's stream is the
// answer, [12345,67890], end_turn, 135 in, 10 out, with
// inference_geo kept in the usage details; the request is the recorded
// one.
func TestRound23SDKPythonPromptBytes(t *testing.T) {
	t.Parallel()
	first := providertest.Load(t, "testdata/real_sdkpy_429_prompt_bytes_1.http")
	second := providertest.Load(t, "testdata/real_sdkpy_429_prompt_bytes_2.http")
	answer := providertest.Load(t, "testdata/real_sdkpy_json_array_stream.http")
	srv := providertest.Replay(t, first, second, answer)
	p := newTestProvider(t, srv.URL)
	const msg = "This request would exceed your organization's rate limit of 20,000,000 prompt bytes per hour (org: 5576611f-a1ee-427c-9800-298d9579899c, model: claude-sonnet-4-5-20250929). For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."
	for _, rid := range []string{"req_011CYK5n67SytMUxm8WMZUWY", "req_011CYK5n94JW2KDxvEjTDLeR"} {
		s, err := p.Stream(context.Background(), rsdkOrdersRequest())
		if s != nil {
			t.Fatal("Stream returned a stream for a 429")
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %T %v", err, err)
		}
		if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 429 || pe.Code != "rate_limit_error" || pe.Message != msg ||
			pe.RequestID != rid || pe.ShouldRetry != provider.RetryAdvised || pe.RetryAfter != 0 || !pipeline.Retryable(err) {
			t.Errorf("%s: kind=%v status=%d code=%q rid=%q advice=%v retry-after=%v msg=%q", rid, pe.Kind, pe.HTTPStatus, pe.Code,
				pe.RequestID, pe.ShouldRetry, pe.RetryAfter, pe.Message)
		}
		if len(pe.Quota) != 1 || pe.Quota[0].GetQuotaMetric() != "prompt_bytes" || pe.Quota[0].GetQuotaValue() != 20000000 ||
			pe.Quota[0].GetQuotaId() != "prompt_bytes_per_hour" || pe.Quota[0].GetDescription() != msg {
			t.Errorf("%s: quota %v, want prompt_bytes 20000000 prompt_bytes_per_hour", rid, pe.Quota)
		}
	}
	const name = "real_sdkpy_json_array_stream"
	s, err := p.Stream(context.Background(), rsdkOrdersRequest())
	if err != nil {
		t.Fatalf("third attempt: %v", err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("stream error: %v", err)
	}
	f := foldEvents(t, evs)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, nil))
	checkLLMWant(t, name, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text("[12345,67890]")},
		responseID: "msg_013nnniYDrJDocdy5nrMU7cH", model: "claude-sonnet-4-5-20250929",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:    usageOf(135, 10, 0, 0, 0),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
	})
	r22SameRequest(t, srv.Last(t).Body, name, nil)
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}
