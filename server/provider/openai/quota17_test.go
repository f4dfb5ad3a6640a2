package openai

import (
	"context"
	"net/http"
	"testing"

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
