package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

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
// violations kept whole; no violation has a quotaValue, so the typed
// rate-limit fields stay unset, but each violation is a window of the
// rate limit: its budget (input_tokens, requests), its period from the
// quota id, nothing remaining, no limit (none sent) and no reset (the
// 3 s are no day's, and the retry delay is dropped for the day's quota).
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
		pe.ShouldRetry != provider.RetryDiscouraged || pe.RetryAfter != 0 {
		t.Errorf("got %+v", pe)
	}
	zero := proto.Int64(0)
	wantRL := &llmrelayv1.RateLimit{Windows: []*llmrelayv1.RateLimitWindow{
		{Budget: "input_tokens", Header: "GenerateContentPaidTierInputTokensPerModelPerMinute", Period: durationpb.New(time.Minute), Remaining: zero},
		{Budget: "requests", Header: "GenerateRequestsPerMinutePerProjectPerModel", Period: durationpb.New(time.Minute), Remaining: zero},
		{Budget: "requests", Header: "GenerateRequestsPerDayPerProjectPerModel", Period: durationpb.New(24 * time.Hour), Remaining: zero},
	}}
	if got := pe.Meta.GetRateLimit(); !proto.Equal(got, wantRL) {
		t.Errorf("rate limit %v, want %v", got, wantRL)
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

// TestW3CImageMimeParameters: the API refuses a media type with parameters
// (real_maruel_gemini25_flash_mime_parameter_error), and a file's was
// already sent bare; an image's mime_type went out as the client gave it,
// so an image whose type was forwarded from an HTTP Content-Type
// ("image/jpeg; charset=binary") drew that 400. Bytes, data URLs and
// http(s) URLs now send the bare type; an unparsable one is sent as it is.
func TestW3CImageMimeParameters(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	cases := []struct {
		name string
		img  *llmrelayv1.Image
		want string
	}{
		{"bytes", &llmrelayv1.Image{MimeType: "image/jpeg; charset=binary", Source: &llmrelayv1.Image_Data{Data: png}}, `{"inlineData":{"mimeType":"image/jpeg","data":"iVBORw0KGgoAAAANSUhEUg=="}}`},
		{"data URL", &llmrelayv1.Image{MimeType: "Image/PNG;name=x.png", Source: &llmrelayv1.Image_Url{Url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}}, `{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgoAAAANSUhEUg=="}}`},
		{"url", &llmrelayv1.Image{MimeType: "image/webp; q=1", Source: &llmrelayv1.Image_Url{Url: "https://example.com/a"}}, `{"fileData":{"mimeType":"image/webp","fileUri":"https://example.com/a"}}`},
		{"unparsable", &llmrelayv1.Image{MimeType: "image/png;;", Source: &llmrelayv1.Image_Data{Data: png}}, `{"inlineData":{"mimeType":"image/png;;","data":"iVBORw0KGgoAAAANSUhEUg=="}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := imagePart(tc.img)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(r19Decode(t, string(b)), r19Decode(t, tc.want)) {
				t.Errorf("part %s, want %s", b, tc.want)
			}
		})
	}
}
