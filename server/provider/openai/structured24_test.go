package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestDeepSeekRefusesJSONSchema: DeepSeek's Chat Completions API takes
// response_format text or json_object only and answers json_schema with a
// 400 naming no field (testdata/dialect_deepseek_err_400_json_schema.http).
// A JSON_SCHEMA request is refused before the call, naming
// options.response_format.type; JSON_OBJECT, another host, and a caller's
// own extra_body response_format go out.
func TestDeepSeekRefusesJSONSchema(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, "testdata/dialect_deepseek_err_400_json_schema.http")
	schemaFormat := &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		Schema: `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`}
	for _, tc := range []struct {
		name, baseURL, extra string
		format               *llmrelayv1.ResponseFormat
		wantSent             string // the request's response_format; "" when refused before the call
	}{
		{"deepseek json_schema", "https://api.deepseek.com", "", schemaFormat, ""},
		{"deepseek v1 json_schema", "https://api.deepseek.com/v1", "", schemaFormat, ""},
		{"deepseek json_object", "https://api.deepseek.com", "", &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}, `{"type":"json_object"}`},
		{"deepseek, the caller's extra_body", "https://api.deepseek.com", `{"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}}}`, schemaFormat, `{"type":"json_schema","json_schema":{"name":"x","schema":{}}}`},
		{"another host", "http://vllm.internal:8000/v1", "", schemaFormat, `{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			var sent []byte
			hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				hits.Add(1)
				sent, _ = io.ReadAll(r.Body)
				return &http.Response{StatusCode: rec.Status, Header: rec.Header, Body: io.NopCloser(bytes.NewReader(rec.Body)), Request: r}, nil
			})}
			p, err := New(testKey, WithBaseURL(tc.baseURL), WithHTTPClient(hc))
			if err != nil {
				t.Fatal(err)
			}
			req := &provider.Request{Model: "deepseek-v4-flash", Format: "openai-chat",
				Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "Name a fruit, as json."}}}}},
				Options:  &llmrelayv1.GenerationOptions{ResponseFormat: tc.format}}
			if tc.extra != "" {
				req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: tc.extra}
			}
			_, err = p.Generate(context.Background(), req)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest {
				t.Fatalf("err %v, want an invalid request", err)
			}
			if tc.wantSent == "" {
				if hits.Load() != 0 || pe.Param != "options.response_format.type" || !strings.Contains(pe.Message, "RESPONSE_FORMAT_TYPE_JSON_OBJECT") {
					t.Errorf("sent %d request(s); error param %q, message %q", hits.Load(), pe.Param, pe.Message)
				}
				return
			}
			// Sent: the recording's 400 comes back as DeepSeek wrote it.
			if hits.Load() != 1 || pe.Message != "This response_format type is unavailable now" {
				t.Errorf("sent %d request(s); error %q", hits.Load(), pe.Message)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(sent, &body); err != nil {
				t.Fatal(err)
			}
			if got := string(body["response_format"]); got != tc.wantSent {
				t.Errorf("response_format %s, want %s", got, tc.wantSent)
			}
		})
	}
}
