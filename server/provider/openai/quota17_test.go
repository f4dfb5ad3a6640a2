package openai

import (
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// billingHardLimit is OpenAI's answer once an organization's spending
// limit is reached: HTTP 400 with this body, as dfinke/PowerShellAI#127
// quotes it (the keys in this order); pretty-printed with two spaces and
// a final newline it is 172 bytes, the Content-Length the headers quoted
// in all-in-aigc/aiwallpaper#2 and Decryptu/DecryptGPT#1 give for it.
const billingHardLimit = "{\n  \"error\": {\n    \"code\": \"billing_hard_limit_reached\",\n    \"message\": \"Billing hard limit has been reached\",\n    \"param\": null,\n    \"type\": \"invalid_request_error\"\n  }\n}\n"

// TestQuota17BillingHardLimit: billing_hard_limit_reached is a spent
// quota, not an invalid request (it was KindInvalidRequest by its 400 and
// its type): KindRateLimited, its code kept (provider.QuotaSpent: never
// retried), for unary calls and streams alike.
func TestQuota17BillingHardLimit(t *testing.T) {
	t.Parallel()
	if len(billingHardLimit) != 172 {
		t.Fatalf("body is %d bytes", len(billingHardLimit))
	}
	for _, streaming := range []bool{false, true} {
		srv := providertest.Replay(t, providertest.Recording{Status: http.StatusBadRequest,
			Header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_billing"}}, Body: []byte(billingHardLimit)})
		p := newTestProvider(t, kOpenAI, srv.URL)
		var err error
		if streaming {
			_, err = p.Stream(context.Background(), simpleRequest("dall-e-3"))
		} else {
			_, err = p.Generate(context.Background(), simpleRequest("dall-e-3"))
		}
		pe := providerError(t, err)
		if pe.Kind != provider.KindRateLimited || pe.Code != "billing_hard_limit_reached" || pe.HTTPStatus != http.StatusBadRequest ||
			pe.Message != "Billing hard limit has been reached" || pe.RequestID != "req_billing" || !provider.QuotaSpent(pe.Code) {
			t.Errorf("stream %v: got %s", streaming, renderErr(err))
		}
	}
	// The other types it comes with (image_generation_user_error,
	// insufficient_quota, as quoted in public threads) read alike; the
	// code is the more precise and stays.
	for _, typ := range []string{"image_generation_user_error", "insufficient_quota"} {
		body := `{"error":{"message":"Billing hard limit has been reached","type":"` + typ + `","param":null,"code":"billing_hard_limit_reached"}}`
		srv := providertest.Replay(t, providertest.Recording{Status: http.StatusBadRequest, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("gpt-image-1"))
		if pe := providerError(t, err); pe.Kind != provider.KindRateLimited || pe.Code != "billing_hard_limit_reached" {
			t.Errorf("type %s: got %s", typ, renderErr(err))
		}
	}
}

// TestQuota17GoogleStatus: Gemini's OpenAI-compatible endpoint answers an
// error with a google.rpc.Status alone in an array, which read as no error
// object at all (the message "Too Many Requests", no code, every detail
// lost): now its message, status and details, as the gemini adapter reads
// them.
// quota17Date is the Date of TestQuota17GoogleStatus's answers.
var quota17Date = time.Date(2025, 10, 14, 9, 12, 31, 0, time.UTC)

func TestQuota17GoogleStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		status     int
		kind       provider.Kind
		code, msg  string
		retry      time.Duration
		quota      []*errdetails.QuotaFailure_Violation
		help       []*errdetails.Help_Link
		windows    []*llmrelayv1.RateLimitWindow // each violation a window (provider.GoogleQuotaWindows)
	}{
		// n4ze3m/page-assist#406: v1beta/openai/chat/completions, as quoted.
		{name: "page-assist#406", status: 429, body: "[{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n]",
			kind: provider.KindRateLimited, code: "RESOURCE_EXHAUSTED", msg: "Resource has been exhausted (e.g. check quota)."},
		// Vertex AI's pay-as-you-go 429 (its error-code-429 page: the
		// shared pool had no resources; gemini-cli#14831 quotes the
		// body): the provider's capacity, Unavailable, as the gemini
		// adapter reads it (provider.GoogleCapacityExhausted).
		{name: "vertex pay-as-you-go", status: 429, body: "[{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n]",
			kind: provider.KindUnavailable, code: "RESOURCE_EXHAUSTED", msg: "Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."},
		// The details Gemini sends with a quota's 429 (the gemini
		// adapter's testdata/error_429.http) in the compatible endpoint's
		// array (docbrain-ai/docbrain#22 quotes such an answer, cut
		// inside its message).
		{name: "quota details", status: 429, body: `[{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"10"}]},` +
			`{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},` +
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34s"}]}}]`,
			kind: provider.KindRateLimited, code: "RESOURCE_EXHAUSTED", msg: "You exceeded your current quota.", retry: 34 * time.Second,
			quota: []*errdetails.QuotaFailure_Violation{{QuotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				QuotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", QuotaDimensions: map[string]string{"location": "global", "model": "gemini-2.5-flash"}, QuotaValue: 10}},
			help: []*errdetails.Help_Link{{Description: "Learn more about Gemini API quotas", Url: "https://ai.google.dev/gemini-api/docs/rate-limits"}},
			windows: []*llmrelayv1.RateLimitWindow{{Budget: "requests", Header: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", Period: durationpb.New(time.Minute),
				Limit: proto.Int64(10), Remaining: proto.Int64(0), ResetTime: timestamppb.New(quota17Date.Add(34 * time.Second))}}},
		// continuedev/continue#10290: Gemini's rejected key, a 400 whose
		// ErrorInfo says API_KEY_INVALID, as an object (not in an array).
		{name: "rejected key", status: 400, body: "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"API key not valid. Please pass a valid API key.\",\n    \"status\": \"INVALID_ARGUMENT\",\n    \"details\": [\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.ErrorInfo\",\n        \"reason\": \"API_KEY_INVALID\",\n        \"domain\": \"googleapis.com\",\n        \"metadata\": {\n          \"service\": \"generativelanguage.googleapis.com\"\n        }\n      },\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.LocalizedMessage\",\n        \"locale\": \"en-US\",\n        \"message\": \"API key not valid. Please pass a valid API key.\"\n      }\n    ]\n  }\n}\n",
			kind: provider.KindUnauthenticated, code: "INVALID_ARGUMENT/API_KEY_INVALID", msg: "API key not valid. Please pass a valid API key."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.Replay(t, providertest.Recording{Status: tc.status, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"},
				"Date": {quota17Date.Format(http.TimeFormat)}}, Body: []byte(tc.body)})
			_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("gemini-2.5-flash"))
			pe := providerError(t, err)
			if pe.Kind != tc.kind || pe.Code != tc.code || pe.Message != tc.msg || pe.RetryAfter != tc.retry || pe.HTTPStatus != tc.status {
				t.Errorf("got %s", renderErr(err))
			}
			if len(pe.Quota) != len(tc.quota) || len(pe.Help) != len(tc.help) {
				t.Fatalf("quota %v, help %v", pe.Quota, pe.Help)
			}
			for i := range tc.quota {
				if !proto.Equal(pe.Quota[i], tc.quota[i]) {
					t.Errorf("violation %v, want %v", pe.Quota[i], tc.quota[i])
				}
			}
			for i := range tc.help {
				if !proto.Equal(pe.Help[i], tc.help[i]) {
					t.Errorf("help %v, want %v", pe.Help[i], tc.help[i])
				}
			}
			if got := pe.Meta.GetRateLimit().GetWindows(); len(got) != len(tc.windows) {
				t.Errorf("windows %v, want %v", got, tc.windows)
			} else {
				for i := range got {
					if !proto.Equal(got[i], tc.windows[i]) {
						t.Errorf("window %v, want %v", got[i], tc.windows[i])
					}
				}
			}
		})
	}
	// OpenAI's own error objects are not read as statuses: a "code" that
	// is not a number, or no status name.
	for _, body := range []string{
		`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded","status":"RESOURCE_EXHAUSTED"}}`,
		`{"error":{"message":"upstream said 429","code":429,"status":"Too Many Requests"}}`,
	} {
		srv := providertest.Replay(t, providertest.Recording{Status: 429, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), simpleRequest("m"))
		if pe := providerError(t, err); pe.Code == "RESOURCE_EXHAUSTED" || pe.Code == "Too Many Requests" {
			t.Errorf("%s: read as a Google status: %s", body, renderErr(err))
		}
	}
}
