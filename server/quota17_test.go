package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Quota facts of session 17: what the provider says about an exhausted
// quota reaches the client's status (see fault13_test.go for the harness).

func helpOf(st *status.Status) *errdetails.Help {
	for _, d := range st.Details() {
		if h, ok := d.(*errdetails.Help); ok {
			return h
		}
	}
	return nil
}

// TestQuota17GeminiQuotaFailure: Gemini's own QuotaFailure reaches the
// client as Gemini sent it (metric, id, dimensions, value), under the
// provider's subject, with the RetryInfo delay and the Help link (the
// gateway built a violation of the code instead, and dropped the link):
// the gemini adapter's fixture testdata/error_429.http.
func TestQuota17GeminiQuotaFailure(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, "provider/gemini/testdata/error_429.http")
	for _, stream := range []bool{false, true} {
		up := f13Serve(t, respond(rec.Status, rec.Header, string(rec.Body)))
		c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+geminiFormat.yaml, up.URL, &f13Clock{})
		var err error
		if stream {
			err = readStream13(t, c).err
		} else {
			_, err = c.Chat(context.Background(), chatReq13())
		}
		st, _ := f13Check(t, geminiFormat, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
		want := &errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
			Subject:         "provider:up",
			QuotaMetric:     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
			QuotaId:         "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
			QuotaDimensions: map[string]string{"location": "global", "model": "gemini-2.5-flash"},
			QuotaValue:      10,
		}}}
		if q := quotaFailure(st); !proto.Equal(q, want) {
			t.Errorf("stream %v: QuotaFailure %v, want %v", stream, q, want)
		}
		if r := retryInfo(st); r.GetRetryDelay().AsDuration() != 34*time.Second {
			t.Errorf("stream %v: RetryInfo %v", stream, r)
		}
		wantHelp := &errdetails.Help{Links: []*errdetails.Help_Link{{Description: "Learn more about Gemini API quotas", Url: "https://ai.google.dev/gemini-api/docs/rate-limits"}}}
		if h := helpOf(st); !proto.Equal(h, wantHelp) {
			t.Errorf("stream %v: Help %v, want %v", stream, h, wantHelp)
		}
	}
}

// TestQuota17GeminiHelpElsewhere: a Help link comes with the status of
// any code (Google links the console page that enables an API to its
// 403), and a 429 whose details name no quota gets the gateway's
// violation of the code.
func TestQuota17GeminiHelpElsewhere(t *testing.T) {
	t.Parallel()
	// gke-labs/gemini-for-kubernetes-development#1215: a spent daily
	// quota said by the message and a Help link only.
	body := "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \",\n    \"status\": \"RESOURCE_EXHAUSTED\",\n    \"details\": [\n      {\n        \"@type\": \"type.googleapis.com/google.rpc.Help\",\n        \"links\": [\n          {\n            \"description\": \"Learn more about Gemini API quotas\",\n            \"url\": \"https://ai.google.dev/gemini-api/docs/rate-limits\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	up := f13Serve(t, respond(429, hdr("Content-Type", "application/json; charset=UTF-8"), body))
	c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+geminiFormat.yaml, up.URL, &f13Clock{})
	_, err := c.Chat(context.Background(), chatReq13())
	st, _ := f13Check(t, geminiFormat, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
	if v := quotaFailure(st).GetViolations(); len(v) != 1 || v[0].GetSubject() != "provider:up" || v[0].GetQuotaId() != "RESOURCE_EXHAUSTED" ||
		!strings.HasPrefix(v[0].GetDescription(), "You exceeded your current quota") {
		t.Errorf("violations %v", v)
	}
	if h := helpOf(st); len(h.GetLinks()) != 1 || h.GetLinks()[0].GetUrl() != "https://ai.google.dev/gemini-api/docs/rate-limits" {
		t.Errorf("Help %v", h)
	}

	forbidden := `{"error":{"code":403,"message":"Generative Language API has not been used in project 1 before or it is disabled.","status":"PERMISSION_DENIED","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Google developers console API activation","url":"https://console.developers.google.com/apis/api/generativelanguage.googleapis.com/overview?project=1"}]}]}}`
	up = f13Serve(t, respond(403, hdr("Content-Type", "application/json; charset=UTF-8"), forbidden))
	c = f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+geminiFormat.yaml, up.URL, &f13Clock{})
	_, err = c.Chat(context.Background(), chatReq13())
	st = status.Convert(err)
	if st.Code() != codes.PermissionDenied || quotaFailure(st) != nil {
		t.Fatalf("%v: %v", st.Code(), st.Details())
	}
	if h := helpOf(st); len(h.GetLinks()) != 1 || h.GetLinks()[0].GetDescription() != "Google developers console API activation" {
		t.Errorf("Help %v", h)
	}
}

// TestQuota17AnthropicTokenKinds: an Anthropic 429 names which token limit
// is spent only in its input-tokens and output-tokens headers; the tokens
// headers (the most restrictive of the two) may show tokens left. The
// violation names the spent limit with its value (there was none: the
// gateway's violation of the code). Headers as a 429 of
// whoz-oss/coday#110 had them (input tokens spent, output tokens and
// requests not); the body is one quoted in anthropics/claude-code#71634.
func TestQuota17AnthropicTokenKinds(t *testing.T) {
	t.Parallel()
	const body = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."},"request_id":"req_011CcR9r7znh7DZb3RdjMUHy"}`
	coday := hdr("Content-Type", "application/json", "request-id", "req-f13-1", "x-should-retry", "true",
		"anthropic-ratelimit-input-tokens-limit", "200000", "anthropic-ratelimit-input-tokens-remaining", "0", "anthropic-ratelimit-input-tokens-reset", "2025-06-02T15:15:48Z",
		"anthropic-ratelimit-output-tokens-limit", "80000", "anthropic-ratelimit-output-tokens-remaining", "80000", "anthropic-ratelimit-output-tokens-reset", "2025-06-02T15:14:45Z",
		"anthropic-ratelimit-requests-limit", "4000", "anthropic-ratelimit-requests-remaining", "4000", "anthropic-ratelimit-requests-reset", "2025-06-02T15:14:45Z",
		"retry-after", "16",
		"anthropic-ratelimit-tokens-limit", "280000", "anthropic-ratelimit-tokens-remaining", "80000", "anthropic-ratelimit-tokens-reset", "2025-06-02T15:14:45Z")
	for _, tc := range []struct {
		name  string
		set   []string // headers replaced in coday's
		wants string   // metric:value of each violation
	}{
		{"input tokens spent (coday#110)", nil, "input_tokens:200000"},
		{"output tokens spent", []string{"anthropic-ratelimit-input-tokens-remaining", "150000", "anthropic-ratelimit-output-tokens-remaining", "0",
			"anthropic-ratelimit-tokens-remaining", "0"}, "output_tokens:80000"},
		{"requests and input tokens spent", []string{"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-tokens-remaining", "0"},
			"requests:4000 input_tokens:200000"},
		{"only the tokens headers say so", []string{"anthropic-ratelimit-input-tokens-remaining", "5", "anthropic-ratelimit-tokens-remaining", "0"}, "tokens:280000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := coday.Clone()
			for i := 0; i+1 < len(tc.set); i += 2 {
				h.Set(tc.set[i], tc.set[i+1])
			}
			up := f13Serve(t, respond(429, h, body))
			c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+anthropicFormat.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, anthropicFormat, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
			var got []string
			for _, v := range quotaFailure(st).GetViolations() {
				if v.GetSubject() != "provider:up" || v.GetDescription() != "This request would exceed your account's rate limit. Please try again later." {
					t.Errorf("violation %v", v)
				}
				got = append(got, v.GetQuotaMetric()+":"+strconv.FormatInt(v.GetQuotaValue(), 10))
			}
			if strings.Join(got, " ") != tc.wants {
				t.Errorf("violations %v, want %s", got, tc.wants)
			}
			if r := retryInfo(st); r.GetRetryDelay().AsDuration() != 16*time.Second {
				t.Errorf("RetryInfo %v", r)
			}
		})
	}
}

// billingHardLimit17 is OpenAI's 400 once an organization's spending limit
// is reached (see the openai adapter's quota17_test.go for its sources).
const billingHardLimit17 = "{\n  \"error\": {\n    \"code\": \"billing_hard_limit_reached\",\n    \"message\": \"Billing hard limit has been reached\",\n    \"param\": null,\n    \"type\": \"invalid_request_error\"\n  }\n}\n"

// TestQuota17BillingHardLimit: OpenAI's billing_hard_limit_reached 400 is
// a spent quota (it was InvalidArgument, INVALID_REQUEST, and never fell
// back): ResourceExhausted with its code and the QuotaFailure naming it,
// not retried, and a routed model falls back to its next deployment.
func TestQuota17BillingHardLimit(t *testing.T) {
	t.Parallel()
	for _, f := range []f13Format{openaiChat, openaiResponses, azureFormat()} {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			h := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1), f.rl(1))
			up := f13Serve(t, respond(http.StatusBadRequest, h, billingHardLimit17), f.okStep(2))
			c := f13Start(t, f17Defaults+f.yaml, up.URL, &f13Clock{})
			_, err := c.Chat(context.Background(), chatReq13())
			st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 400)
			if code := errorInfoOf(st).GetMetadata()["upstreamCode"]; code != "billing_hard_limit_reached" {
				t.Errorf("upstreamCode %q", code)
			}
			if v := quotaFailure(st).GetViolations(); len(v) != 1 || v[0].GetQuotaId() != "billing_hard_limit_reached" ||
				v[0].GetSubject() != "provider:up" || v[0].GetDescription() != "Billing hard limit has been reached" {
				t.Errorf("violations %v", v)
			}
			if up.requests() != 1 {
				t.Errorf("%d requests: a spent quota is not retried", up.requests())
			}
		})
		t.Run(f.name+"/falls back", func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, respond(http.StatusBadRequest, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), billingHardLimit17))
			second := f13Serve(t, f.okStep(11))
			c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
			resp, err := c.Chat(context.Background(), chatReq13())
			if err != nil {
				t.Fatal(err)
			}
			m := resp.GetMeta()
			if m.GetProvider() != "second" || len(m.GetRetryReasons()) != 1 || m.GetRetryReasons()[0].GetUpstreamStatus() != 400 ||
				first.requests() != 1 || second.requests() != 1 {
				t.Errorf("meta %v; first saw %d, second %d", m, first.requests(), second.requests())
			}
		})
	}
}

// TestQuota17GeminiCompat: Gemini behind its OpenAI-compatible endpoint (an
// openai provider) answers a quota's 429 with the same google.rpc.Status in
// an array: the client's status carries its violation, delay and link as
// for the gemini provider (it carried the gateway's violation of an empty
// code, "Too Many Requests", and no delay).
func TestQuota17GeminiCompat(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, "provider/gemini/testdata/error_429.http")
	body := "[" + strings.TrimSpace(string(rec.Body)) + "\n]"
	f := openaiChat
	up := f13Serve(t, respond(429, merged(hdr("Content-Type", "application/json; charset=UTF-8"), f.reqIDHeader(1)), body))
	c := f13Start(t, "defaults: {retry: {max_attempts: 1}}\n"+f.yaml, up.URL, &f13Clock{})
	_, err := c.Chat(context.Background(), chatReq13())
	st, _ := f13Check(t, f, err, codes.ResourceExhausted, "UPSTREAM_RATE_LIMITED", 1, 429)
	v := quotaFailure(st).GetViolations()
	if len(v) != 1 || v[0].GetSubject() != "provider:up" || v[0].GetQuotaId() != "GenerateRequestsPerMinutePerProjectPerModel-FreeTier" || v[0].GetQuotaValue() != 10 ||
		v[0].GetQuotaDimensions()["model"] != "gemini-2.5-flash" {
		t.Errorf("violations %v", v)
	}
	if r := retryInfo(st); r.GetRetryDelay().AsDuration() != 34*time.Second {
		t.Errorf("RetryInfo %v", r)
	}
	if len(helpOf(st).GetLinks()) != 1 || errorInfoOf(st).GetMetadata()["upstreamCode"] != "RESOURCE_EXHAUSTED" ||
		!strings.HasPrefix(st.Message(), "up: You exceeded your current quota") {
		t.Errorf("Help %v, ErrorInfo %v, message %q", helpOf(st), errorInfoOf(st), st.Message())
	}
}
