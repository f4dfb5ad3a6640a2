package gemini

import (
	"context"
	"errors"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func init() {
	round17Recordings = append(round17Recordings, "real_maruel_gemini_exp_1206_quota_per_day", "real_maruel_gemini25_flash_mime_parameter_error")
}

// TestW3CQuotaPerDay: gemini-exp-1206 (April 2025) answered 429
// RESOURCE_EXHAUSTED "You exceeded your current quota. …" with a
// QuotaFailure of three violations (input tokens per minute and requests
// per minute for gemini-2.0-pro-exp, and requests per day), a Help link
// and RetryInfo "3s". One violation is a per-day quota
// (GenerateRequestsPerDayPerProjectPerModel), so waiting 3 s does not
// help: a rate-limited error, retry discouraged and no delay, the three
// violations kept whole; no violation has a quotaValue, so no rate-limit
// state is invented.
func TestW3CQuotaPerDay(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, "real_maruel_gemini_exp_1206_quota_per_day")
	_, err := p.Generate(context.Background(), r21User("gemini-exp-1206", "", msg(llmrelayv1.Role_ROLE_USER, text("Say hello. Do not emit other words."))))
	if srv.Last(t).Path != "/v1beta/models/gemini-exp-1206:generateContent" {
		t.Errorf("path %s", srv.Last(t).Path)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *provider.Error", err)
	}
	const want = "You exceeded your current quota. Please migrate to Gemini 2.5 Pro Preview (models/gemini-2.5-pro-preview-03-25) for higher quota limits. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
	if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 429 || pe.Code != "RESOURCE_EXHAUSTED" || pe.Message != want ||
		pe.ShouldRetry != provider.RetryDiscouraged || pe.RetryAfter != 0 || pe.Meta.GetRateLimit() != nil {
		t.Errorf("got %+v", pe)
	}
	type violation struct{ metric, id, model string }
	wantQ := []violation{
		{"generativelanguage.googleapis.com/generate_content_paid_tier_input_token_count", "GenerateContentPaidTierInputTokensPerModelPerMinute", "gemini-2.0-pro-exp"},
		{"generativelanguage.googleapis.com/generate_requests_per_model", "GenerateRequestsPerMinutePerProjectPerModel", "gemini-2.0-pro-exp"},
		{"generativelanguage.googleapis.com/generate_requests_per_model_per_day", "GenerateRequestsPerDayPerProjectPerModel", ""},
	}
	if len(pe.Quota) != len(wantQ) {
		t.Fatalf("quota %v", pe.Quota)
	}
	for i, v := range pe.Quota {
		if got := (violation{v.GetQuotaMetric(), v.GetQuotaId(), v.GetQuotaDimensions()["model"]}); got != wantQ[i] {
			t.Errorf("violation %d: %+v, recorded %+v", i, got, wantQ[i])
		}
	}
}

// TestW3CMimeParameterRefused: maruel/genai sent a text document inline
// with the mime type "text/plain; charset=utf-8"; gemini-2.5-flash
// (August 2025) refused it: 400 INVALID_ARGUMENT "Unsupported MIME type:
// text/plain; charset=utf-8". Ours sends the same document as "text/plain"
// (the media type without its parameters), so the refusal the recording
// shows is not one our request would get; replayed, the refusal is an
// invalid request with the message whole.
func TestW3CMimeParameterRefused(t *testing.T) {
	t.Parallel()
	p, srv := replay(t, "real_maruel_gemini25_flash_mime_parameter_error")
	doc := []byte("The capital of Quackiland is Quack. The Big Canard Statue is located in Quack.")
	req := r21User("gemini-2.5-flash", "", msg(llmrelayv1.Role_ROLE_USER,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{MimeType: "text/plain; charset=utf-8", Source: &llmrelayv1.File_Data{Data: doc}}}},
		text("What is the capital of Quackiland?")))
	_, err := p.Generate(context.Background(), req)
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *provider.Error", err)
	}
	if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Code != "INVALID_ARGUMENT" ||
		pe.Message != "Unsupported MIME type: text/plain; charset=utf-8" || pe.RetryAfter != 0 {
		t.Errorf("got %+v", pe)
	}
	// The recorded request's inlineData, but for the media type.
	want := r19Decode(t, `[{"role":"user","parts":[{"inlineData":{"mimeType":"text/plain","data":"VGhlIGNhcGl0YWwgb2YgUXVhY2tpbGFuZCBpcyBRdWFjay4gVGhlIEJpZyBDYW5hcmQgU3RhdHVlIGlzIGxvY2F0ZWQgaW4gUXVhY2su"}},{"text":"What is the capital of Quackiland?"}]}]`)
	if got := r17JSON(t, srv.Last(t).Body)["contents"]; !jsonEqual(got, want) {
		t.Errorf("contents %v, want %v", got, want)
	}
}
