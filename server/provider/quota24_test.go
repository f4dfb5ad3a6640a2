package provider

import (
	"encoding/json"
	"testing"
	"time"
)

// TestQuota24ZeroQuotaWords: the words of a Google quota of 0, and near
// misses that are a pace limit still.
func TestQuota24ZeroQuotaWords(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		"* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro": true,
		"Quota exceeded for metric generate_content_free_tier_requests, limit: 0, model: gemini-3.1-pro-preview. Please retry in 10s.":        true,
		"* Quota exceeded for metric: m, limit: 0":                                                                    true,
		"* Quota exceeded for metric: m, limit: 0.":                                                                   true,
		"Gemini 2.5 Pro Preview doesn't have a free quota tier.":                                                      true,
		"Gemini 2.5 Pro Preview doesn’t have a free quota tier.":                                                      true,
		"* Quota exceeded for metric: m, limit: 10, model: x":                                                         false,
		"* Quota exceeded for metric: m, limit: 0.5, model: x":                                                        false,
		"* Quota exceeded for metric: m, limit: 05, model: x":                                                         false,
		"* Quota exceeded for metric: m, limit: 250\nlimit: 0 of x":                                                   false,
		"Resource has been exhausted (e.g. check quota).":                                                             false,
		"Quota exceeded for quota metric 'Generate Content API' and limit 'GenerateContent request limit per minute'": false,
	} {
		if got := GoogleCreditsSpent("RESOURCE_EXHAUSTED", 429, msg); got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
	if GoogleCreditsSpent("INVALID_ARGUMENT", 400, "* Quota exceeded for metric: m, limit: 0") {
		t.Error("not a RESOURCE_EXHAUSTED")
	}
}

// TestQuota24ZeroQuotaDetails: ApplyGoogleDetails marks a quota of 0 (an
// ErrorInfo's quota_limit_value "0", the message's limit: 0) as no
// retry and no delay, whatever RetryInfo says; a limit of 60 keeps both.
func TestQuota24ZeroQuotaDetails(t *testing.T) {
	t.Parallel()
	for value, zero := range map[string]bool{"0": true, "60": false} {
		body := `{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_limit":"q","quota_limit_value":"` +
			value + `"}},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}`
		var st GoogleStatus
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		e := &Error{}
		ApplyGoogleDetails(e, st.Details, same)
		if zero != (e.ShouldRetry == RetryDiscouraged) || zero != (e.RetryAfter == 0) || (!zero && e.RetryAfter != 1500*time.Millisecond) {
			t.Errorf("limit %s: should retry %v, retry after %v", value, e.ShouldRetry, e.RetryAfter)
		}
	}
	e := &Error{Message: "* Quota exceeded for metric: m, limit: 0, model: x\nPlease retry in 3s."}
	ApplyGoogleDetails(e, nil, same)
	if e.ShouldRetry != RetryDiscouraged {
		t.Errorf("message's limit 0: should retry %v", e.ShouldRetry)
	}
}
