package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/server/provider"
)

func int64p(n int64) *int64 { return &n }

// quota17Bodies are 429 bodies as Google sent them, quoted from public
// issue threads (each body's source beside it), with what the error must
// carry: the QuotaFailure's violations exactly (every field, in order),
// the Help links and the RetryInfo delay.
var quota17Bodies = []struct {
	name  string
	body  string
	quota []*errdetails.QuotaFailure_Violation
	help  []*errdetails.Help_Link
	retry time.Duration
}{
	{
		// google-gemini/gemini-cli-action#36: a paid model's input-token
		// quota with its limit, a Help link (its URL ends in a period,
		// as sent). The thread's quote ends after the Help link: the
		// closing brackets are added, nothing else.
		name: "input tokens per minute",
		body: `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count",
            "quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier",
            "quotaDimensions": {
              "location": "global",
              "model": "gemini-2.5-pro"
            },
            "quotaValue": "250000"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [
          {
            "description": "Google developers documentation.",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits."
          }
        ]
      }
    ]
  }
}`,
		quota: []*errdetails.QuotaFailure_Violation{{
			QuotaMetric:     "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count",
			QuotaId:         "GenerateContentInputTokensPerModelPerMinute-FreeTier",
			QuotaDimensions: map[string]string{"location": "global", "model": "gemini-2.5-pro"}, QuotaValue: 250000,
		}},
		help: []*errdetails.Help_Link{{Description: "Google developers documentation.", Url: "https://ai.google.dev/gemini-api/docs/rate-limits."}},
	},
	{
		// google-gemini/gemini-cli#8437 (quoted there as a Python dict,
		// written back as the JSON it was): three free-tier quotas of
		// limit 0, which proto3 JSON leaves out (no quotaValue), the
		// dimensions in both orders. The thread's quote is cut inside
		// its Help detail, left out here.
		name: "three quotas of limit 0",
		body: `{"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", "quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier", "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash-preview-image"}}, {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash-preview-image"}}, {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "quotaDimensions": {"model": "gemini-2.5-flash-preview-image", "location": "global"}}]}]}}`,
		quota: []*errdetails.QuotaFailure_Violation{
			{QuotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", QuotaId: "GenerateContentInputTokensPerModelPerMinute-FreeTier",
				QuotaDimensions: map[string]string{"location": "global", "model": "gemini-2.5-flash-preview-image"}},
			{QuotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", QuotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
				QuotaDimensions: map[string]string{"location": "global", "model": "gemini-2.5-flash-preview-image"}},
			{QuotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", QuotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
				QuotaDimensions: map[string]string{"location": "global", "model": "gemini-2.5-flash-preview-image"}},
		},
	},
	{
		// gke-labs/gemini-for-kubernetes-development#1215: a daily quota
		// spent, said only by the message and a Help link (no
		// QuotaFailure, no RetryInfo).
		name: "help only",
		body: "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \",\n    \"status\": \"RESOURCE_EXHAUSTED\",\n    \"details\": [\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.Help\",\n        \"links\": [\n          {\n            \"description\": \"Learn more about Gemini API quotas\",\n            \"url\": \"https://ai.google.dev/gemini-api/docs/rate-limits\"\n          }\n        ]\n      }\n    ]\n  }\n}\n",
		help: []*errdetails.Help_Link{{Description: "Learn more about Gemini API quotas", Url: "https://ai.google.dev/gemini-api/docs/rate-limits"}},
	},
	{
		// google-gemini/gemini-cli#10925: Google's API front end names
		// the quota in a RATE_LIMIT_EXCEEDED ErrorInfo's metadata, no
		// QuotaFailure (the thread's quote is cut inside the Help link,
		// left out here). The violation is built from the metadata.
		name:  "ErrorInfo quota metadata",
		body:  `{"error": {"code": 429, "message": "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com' for consumer 'project_number:681255809395'.", "errors": [{"message": "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com' for consumer 'project_number:681255809395'.", "domain": "global", "reason": "rateLimitExceeded"}], "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED", "domain": "googleapis.com", "metadata": {"quota_metric": "cloudcode-pa.googleapis.com/gemini_2_5_pro_requests", "quota_limit": "Gemini25ProRequestsPerDay"}}]}}`,
		quota: []*errdetails.QuotaFailure_Violation{{QuotaMetric: "cloudcode-pa.googleapis.com/gemini_2_5_pro_requests", QuotaId: "Gemini25ProRequestsPerDay"}},
	},
}

// TestQuota17GoogleDetails: the provider's QuotaFailure violations and
// Help links land on the error as sent (they were dropped: only the first
// request and token quotas' limits reached the rate-limit state, and a
// quota of limit 0 not even that), for an error answer and for the same
// status inside a 200 stream alike.
func TestQuota17GoogleDetails(t *testing.T) {
	t.Parallel()
	p := &Provider{apiKey: testKey}
	for _, tc := range quota17Bodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const date = "Tue, 14 Oct 2025 09:12:31 GMT"
			resp := &http.Response{StatusCode: 429, Header: http.Header{"Date": {date}}, Body: io.NopCloser(strings.NewReader(tc.body))}
			st := parseStatusBody([]byte(tc.body))
			if st == nil {
				t.Fatal("body does not parse")
			}
			errs := map[string]*provider.Error{"http": p.httpError(resp), "stream": p.streamError(st, provider.ResponseDate(resp.Header))}
			if rl := errs["http"].Meta.GetRateLimit(); !proto.Equal(errs["stream"].Meta.GetRateLimit(), rl) {
				t.Errorf("stream rate limit %v, want the answer's %v", errs["stream"].Meta.GetRateLimit(), rl)
			}
			for name, e := range errs {
				if e.Kind != provider.KindRateLimited || !strings.HasPrefix(e.Code, "RESOURCE_EXHAUSTED") {
					t.Errorf("%s: kind %s, code %q", name, e.Kind, e.Code)
				}
				checkQuota17(t, name, e, tc.quota, tc.help)
				if e.RetryAfter != tc.retry {
					t.Errorf("%s: retry after %v, want %v", name, e.RetryAfter, tc.retry)
				}
			}
		})
	}
}

func checkQuota17(t *testing.T, name string, e *provider.Error, quota []*errdetails.QuotaFailure_Violation, help []*errdetails.Help_Link) {
	t.Helper()
	if len(e.Quota) != len(quota) {
		t.Fatalf("%s: quota %v, want %v", name, e.Quota, quota)
	}
	for i := range quota {
		if !proto.Equal(e.Quota[i], quota[i]) {
			t.Errorf("%s: violation %d = %v, want %v", name, i, e.Quota[i], quota[i])
		}
	}
	if len(e.Help) != len(help) {
		t.Fatalf("%s: help %v, want %v", name, e.Help, help)
	}
	for i := range help {
		if !proto.Equal(e.Help[i], help[i]) {
			t.Errorf("%s: help link %d = %v, want %v", name, i, e.Help[i], help[i])
		}
	}
}

// TestQuota17Recording: testdata/error_429.http through the adapter: its
// violation with every field, its Help link and its RetryInfo delay.
func TestQuota17Recording(t *testing.T) {
	t.Parallel()
	p, _ := replay(t, "error_429")
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	checkQuota17(t, "error_429", pe, []*errdetails.QuotaFailure_Violation{{
		QuotaMetric:     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
		QuotaId:         "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
		QuotaDimensions: map[string]string{"location": "global", "model": "gemini-2.5-flash"}, QuotaValue: 10,
	}}, []*errdetails.Help_Link{{Description: "Learn more about Gemini API quotas", Url: "https://ai.google.dev/gemini-api/docs/rate-limits"}})
	if pe.RetryAfter != 34*time.Second || pe.Meta.GetRateLimit().GetRequestsLimit() != 10 {
		t.Errorf("retry after %v, rate limit %v", pe.RetryAfter, pe.Meta.GetRateLimit())
	}
}

// TestQuota17ViolationFields: every field of google.rpc.QuotaFailure's
// Violation is read, the int64s as strings or numbers, a
// futureQuotaValue kept with its presence; an odd value loses only
// itself; key material Google echoes (a consumer's api_key) is redacted
// from every text.
func TestQuota17ViolationFields(t *testing.T) {
	t.Parallel()
	p := &Provider{apiKey: testKey}
	body := `{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[` +
		`{"subject":"api_key:` + testKey + `","description":"Daily Limit for read operations exceeded","apiService":"aiplatform.googleapis.com","quotaMetric":"m1","quotaId":"q1","quotaDimensions":{"region":"us-central1"},"quotaValue":"10","futureQuotaValue":"20"},` +
		`{"quotaId":"q2","quotaValue":15,"futureQuotaValue":"0"},` +
		`{"quotaId":"q3","quotaValue":"many","futureQuotaValue":null}]}]}}`
	e := p.httpError(&http.Response{StatusCode: 429, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))})
	checkQuota17(t, "fields", e, []*errdetails.QuotaFailure_Violation{
		{Subject: "api_key:[REDACTED]", Description: "Daily Limit for read operations exceeded", ApiService: "aiplatform.googleapis.com",
			QuotaMetric: "m1", QuotaId: "q1", QuotaDimensions: map[string]string{"region": "us-central1"}, QuotaValue: 10, FutureQuotaValue: int64p(20)},
		{QuotaId: "q2", QuotaValue: 15, FutureQuotaValue: int64p(0)},
		{QuotaId: "q3"},
	}, nil)
	if e.Message != "m" {
		t.Errorf("message %q", e.Message)
	}
}
