package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func simpleRequest(model string) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("hi"))}, Options: &llmrelayv1.GenerationOptions{}}
}

var errorCases = []struct {
	name       string
	kind       kind
	wantKind   provider.Kind
	status     int
	code       string
	param      string
	retryAfter time.Duration
	msg        string // substring of Message
}{
	{"err_400", kOpenAI, provider.KindInvalidRequest, 400, "unsupported_parameter", "max_tokens", 0, "Use 'max_completion_tokens' instead."},
	{"err_context_length", kOpenAI, provider.KindContextLength, 400, "context_length_exceeded", "messages", 0, "maximum context length is 128000 tokens"},
	{"err_401", kOpenAI, provider.KindUnauthenticated, 401, "invalid_api_key", "", 0, "Incorrect API key provided: [REDACTED]."},
	{"err_403", kOpenAI, provider.KindPermissionDenied, 403, "unsupported_country_region_territory", "", 0, "Country, region, or territory not supported"},
	{"err_404", kOpenAI, provider.KindNotFound, 404, "model_not_found", "", 0, "does not exist or you do not have access to it"},
	{"err_429_rate_limit", kOpenAI, provider.KindRateLimited, 429, "rate_limit_exceeded", "", 214 * time.Millisecond, "Rate limit reached for gpt-4o-mini"},
	{"err_429_quota", kOpenAI, provider.KindRateLimited, 429, "insufficient_quota", "", 0, "You exceeded your current quota"},
	{"err_500", kOpenAI, provider.KindUnavailable, 500, "server_error", "", 0, "The server had an error"},
	{"err_503", kOpenAI, provider.KindUnavailable, 503, "server_error", "", 2 * time.Second, "currently overloaded"},
	{"err_502_html", kOpenAI, provider.KindUnavailable, 502, "", "", 0, "Bad Gateway"},
	{"azure_err_content_filter", kAzure, provider.KindContentFilter, 400, "content_filter", "prompt", 0, "content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766 (filtered: violence (high))"},
	{"azure_err_429", kAzure, provider.KindRateLimited, 429, "429", "", 6 * time.Second, "exceeded token rate limit"},
	{"azure_err_429_body_only", kAzure, provider.KindRateLimited, 429, "429", "", 12 * time.Second, "Please retry after 12 seconds"},
	{"azure_err_401", kAzure, provider.KindUnauthenticated, 401, "401", "", 0, "Access denied due to invalid subscription key"},
	// pydantic/pydantic-ai cassette (see testdata/README.md): no request id (the cassette does not keep it).
	{"real_pyd_openai_responses_model_http_error", kOpenAI, provider.KindInvalidRequest, 400, "decimal_below_min_value", "temperature", 0, "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead."},
	// real_pyd_together_500_on_tool_continuation_3 (Together via Hugging
	// Face's router) has its request id in the body:
	// TestRound22MgbTogetherBodyRequestID.
	// gpt-4o refusing web_search_options (pydantic-ai cassette): code null, so the type is the code.
	{"real_pyd_openai_web_search_tool_model_not_supported", kOpenAI, provider.KindInvalidRequest, 400, "invalid_request_error", "web_search_options", 0, "Web search options not supported with this model."},
	// OpenRouter (pydantic-ai cassette): the HTTP status as a numeric code, no type, a user_id beside the error.
	{"real_pyd_openrouter_errors_raised", kOpenAI, provider.KindNotFound, 404, "404", "", 0, "No endpoints found for google/gemini-2.5-flash:free."},
	// Groq (pydantic-ai cassette): a model that does not exist, code model_not_found, no request id.
	{"real_pyd_groq_tool_regular_error", kOpenAI, provider.KindNotFound, 404, "model_not_found", "", 0, "The model `non-existent` does not exist or you do not have access to it."},
	{"azure_err_404", kAzure, provider.KindNotFound, 404, "DeploymentNotFound", "", 0, "The API deployment for this resource does not exist"},
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range errorCases {
		for _, streaming := range []bool{false, true} {
			name := tc.name
			if streaming {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				srv := providertest.ReplayFile(t, td(tc.name+".http"))
				p := newTestProvider(t, tc.kind, srv.URL)
				var err error
				if streaming {
					var s provider.Stream
					s, err = p.Stream(context.Background(), simpleRequest("gpt-4o-prod"))
					if s != nil {
						t.Fatal("stream returned with an error status")
					}
				} else {
					_, err = p.Generate(context.Background(), simpleRequest("gpt-4o-prod"))
				}
				pe := providerError(t, err)
				wantRID := providertest.Load(t, td(tc.name+".http")).Header.Get(p.requestIDHeader())
				if pe.Kind != tc.wantKind || pe.HTTPStatus != tc.status || pe.Code != tc.code || pe.Param != tc.param ||
					pe.RetryAfter != tc.retryAfter || pe.RequestID != wantRID || pe.Provider != p.name {
					t.Errorf("got %s param=%q\nwant kind=%s http=%d code=%q param=%q retry_after=%s request_id=%s",
						renderErr(err), pe.Param, tc.wantKind, tc.status, tc.code, tc.param, tc.retryAfter, wantRID)
				}
				if !strings.Contains(pe.Message, tc.msg) {
					t.Errorf("message %q does not contain %q", pe.Message, tc.msg)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error text contains the API key: %v", err)
				}
				if p.azure && pe.Extended[extAzureDeployment] != "gpt-4o-prod" {
					t.Errorf("extended %v lacks the deployment", pe.Extended)
				}
			})
		}
	}
}

func TestAzureContentFilterErrorExtended(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("azure_err_content_filter.http"))
	p := newTestProvider(t, kAzure, srv.URL)
	_, err := p.Generate(context.Background(), simpleRequest("gpt-4o-prod"))
	pe := providerError(t, err)
	cfr, ok := pe.Extended[extContentFilterResult].(map[string]any)
	if !ok {
		t.Fatalf("extended %v", pe.Extended)
	}
	v, _ := cfr["violence"].(map[string]any)
	if v["filtered"] != true || v["severity"] != "high" {
		t.Errorf("violence verdict %v", v)
	}
	// The extended map must be representable in ResponseMeta.extended.
	meta := &llmrelayv1.ResponseMeta{}
	for k, val := range pe.Extended {
		provider.SetExtended(meta, k, val)
	}
	if meta.Extended.Fields[extContentFilterResult].GetStructValue() == nil {
		t.Errorf("content filter result not storable: %v", meta.Extended)
	}
}

func TestErrorBodyVariants(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, body string
		status     int
		wantKind   provider.Kind
		code, msg  string
	}{
		{"vllm style", `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`, 400, provider.KindContextLength, "400", "maximum context length is 4096"},
		{"string error", `{"error":"model 'llama9' not found"}`, 404, provider.KindNotFound, "", "model 'llama9' not found"},
		{"plain text: the words of what answered (round 26)", `not json`, 500, provider.KindUnavailable, "", "not json"},
		{"bytes that are not text", "\x1bW\x00`\x90", 500, provider.KindUnavailable, "", "Internal Server Error"},
		{"error object of wrong type", `{"error":{"message":["a"],"code":{"x":1}}}`, 400, provider.KindInvalidRequest, `{"x":1}`, `["a"]`},
		{"empty", ``, 429, provider.KindRateLimited, "", "Too Many Requests"},
		{"message echoes key", `{"error":{"message":"bad key test-key here","code":"invalid_api_key"}}`, 401, provider.KindUnauthenticated, "invalid_api_key", "bad key [REDACTED] here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{"X-Request-Id": {"req_1"}}, Body: http.NoBody}
			resp.Body = nopCloser{strings.NewReader(tc.body)}
			pe := p.httpError(resp, "m", secrets{testKey})
			if pe.Kind != tc.wantKind || pe.Code != tc.code || !strings.Contains(pe.Message, tc.msg) || pe.RequestID != "req_1" || pe.HTTPStatus != tc.status {
				t.Errorf("got %s", renderErr(pe))
			}
		})
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

func TestRetryDelayFromMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msg  string
		want time.Duration
	}{
		{"Please try again in 1.5s.", 1500 * time.Millisecond},
		{"Please try again in 214ms. Visit", 214 * time.Millisecond},
		{"Please try again in 6m0s.", 6 * time.Minute},
		{"Please try again in 1m30.5s.", 90*time.Second + 500*time.Millisecond},
		{"Please retry after 6 seconds.", 6 * time.Second},
		{"Please retry after 1 second.", time.Second},
		{"Rate limit reached.", 0},
		{"try again in a while", 0},
	}
	for _, tc := range cases {
		if got := retryDelayFromMessage(tc.msg); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.msg, got, tc.want)
		}
	}
}

func TestKindForCode(t *testing.T) {
	t.Parallel()
	cases := map[[2]string]provider.Kind{
		{"server_error", ""}: provider.KindUnavailable,
		{"invalid_request_error", "context_length_exceeded"}: provider.KindContextLength,
		{"", "content_filter"}:                               provider.KindContentFilter,
		{"tokens", "rate_limit_exceeded"}:                    provider.KindRateLimited,
		{"invalid_request_error", ""}:                        provider.KindInvalidRequest,
		{"something_new", ""}:                                provider.KindUnavailable,
	}
	for in, want := range cases {
		if got := kindForCode(in[0], in[1]); got != want {
			t.Errorf("kindForCode(%q, %q) = %s, want %s", in[0], in[1], got, want)
		}
	}
}

// FuzzErrorBody: any error body gives a *provider.Error with the status
// kept, without panicking or leaking the key.
func FuzzErrorBody(f *testing.F) {
	for _, tc := range errorCases {
		rec := providertest.Load(f, td(tc.name+".http"))
		f.Add(rec.Body, rec.Status)
	}
	f.Add([]byte(`{"error":{"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":[1]}}}`), 400)
	f.Add([]byte(`{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"code\":400,\"msg\":\"m\",\"request_id\":\"r\"}","provider_name":"P"}}}`), 400)
	for _, name := range []string{"real_maruel_groq_compound_mini_json_schema_err", "openai_err_400_strict_schema_required", "openai_err_400_json_object_unsupported"} {
		rec := providertest.Load(f, td(name+".http"))
		f.Add(rec.Body, rec.Status)
	}
	p, err := NewAzure(testKey, WithBaseURL("https://example.openai.azure.com"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		if status < 400 || status > 599 {
			status = 400 + (status%200+200)%200
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: nopCloser{strings.NewReader(string(body))}}
		pe := p.httpError(resp, "dep", secrets{testKey})
		if pe == nil || pe.HTTPStatus != status || pe.Provider != "azure" {
			t.Fatalf("got %+v", pe)
		}
		if strings.Contains(pe.Message, testKey) {
			t.Fatalf("message leaks the key: %q", pe.Message)
		}
		meta := &llmrelayv1.ResponseMeta{}
		for k, v := range pe.Extended {
			provider.SetExtended(meta, k, v)
		}
	})
}
