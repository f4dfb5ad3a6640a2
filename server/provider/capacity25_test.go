package provider

import "testing"

// TestGoogleCapacityExhausted: the shared capacity's words and reason are
// read, a quota's or a purchased throughput's are not.
func TestGoogleCapacityExhausted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, reason, msg string
		want                bool
	}{
		{"RESOURCE_EXHAUSTED", "", "Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.", true},
		{"RESOURCE_EXHAUSTED", "", "Resource exhausted, please try again later.", true},
		{"RESOURCE_EXHAUSTED", "MODEL_CAPACITY_EXHAUSTED", "No capacity available for model gemini-3-pro-preview on the server", true},
		{"RESOURCE_EXHAUSTED", "", "No capacity available for model gemini-3.1-flash-lite on the server", true},
		{"RESOURCE_EXHAUSTED", "MODEL_CAPACITY_EXHAUSTED", "", true},
		// Already UNAVAILABLE: the status says it.
		{"UNAVAILABLE", "MODEL_CAPACITY_EXHAUSTED", "No capacity available for model claude-opus-4-6-thinking on the server", false},
		{"RESOURCE_EXHAUSTED", "", "Resource has been exhausted (e.g. check quota).", false},
		{"RESOURCE_EXHAUSTED", "", "Too many requests. Exceeded the Provisioned Throughput.", false},
		{"RESOURCE_EXHAUSTED", "", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", false},
		{"RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", "Quota exceeded for quota metric 'Generate Content API requests per minute'.", false},
		{"RESOURCE_EXHAUSTED", "", "Your prepayment credits are depleted. Resource exhausted, please try again later.", false},
		{"INVALID_ARGUMENT", "", "Resource exhausted, please try again later.", false},
	} {
		if got := GoogleCapacityExhausted(c.status, c.reason, c.msg); got != c.want {
			t.Errorf("%s %s %q: %v, want %v", c.status, c.reason, c.msg, got, c.want)
		}
	}
}
