package anthropic

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestBedrock26InvokeHeaders: Claude's answer through Amazon Bedrock
// (InvokeModel, or a relay in front of it) has no request-id, but Bedrock's
// x-amzn-RequestId and its x-amzn-bedrock-* headers: the invocation's
// latency in milliseconds, its input, output and cache token counts, the
// performance configuration (testdata/bedrock26_invoke_claude.http).
// **Bug:** the request id was empty and the headers dropped. Now the
// request id is the answer's provider_request_id (the error's request id
// too: bedrock26_error_403_model_access), each x-amzn-bedrock-* header a
// meta.extended key bedrock_<name>, counts as numbers.
func TestBedrock26InvokeHeaders(t *testing.T) {
	t.Parallel()
	resp, err := newTestProvider(t, providertest.ReplayFile(t, "testdata/bedrock26_invoke_claude.http").URL).Generate(context.Background(), plainRequest())
	if err != nil {
		t.Fatal(err)
	}
	meta := resp.Meta
	if got := meta.GetProviderRequestId(); got != "640df578-afbf-4618-a2e2-de04a746cdb6" {
		t.Errorf("provider_request_id %q", got)
	}
	if meta.GetResponseId() != "msg_bdrk_01J5QmyWxjSDPX3ZkUcsmh6Y" {
		t.Errorf("response id %q", meta.GetResponseId())
	}
	ext := meta.GetExtended().GetFields()
	for key, want := range map[string]float64{"bedrock_invocation_latency": 3187, "bedrock_input_token_count": 13, "bedrock_output_token_count": 153,
		"bedrock_cache_read_input_token_count": 0, "bedrock_cache_write_input_token_count": 0} {
		if v, ok := ext[key]; !ok || v.GetNumberValue() != want {
			t.Errorf("extended[%s] = %v, want %v", key, v, want)
		}
	}
	if got := ext["bedrock_performanceconfig_latency"].GetStringValue(); got != "standard" {
		t.Errorf("extended[bedrock_performanceconfig_latency] = %q", got)
	}
	// Anthropic's own request-id wins where both are sent.
	if got := headerRequestID(map[string][]string{"Request-Id": {"req_011CUmine"}, "X-Amzn-Requestid": {"640df578"}}); got != "req_011CUmine" {
		t.Errorf("request id %q", got)
	}

	_, err = newTestProvider(t, providertest.ReplayFile(t, "testdata/bedrock26_error_403_model_access.http").URL).Generate(context.Background(), plainRequest())
	var e *provider.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v, want a provider error", err)
	}
	if e.RequestID != "5d0c3b8e-91f2-4a7e-b6d4-2c8f1e07a9d3" || e.Meta.GetProviderRequestId() != e.RequestID {
		t.Errorf("error request id %q, meta %q", e.RequestID, e.Meta.GetProviderRequestId())
	}
}
