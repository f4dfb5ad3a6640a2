package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// openObject reports the first object schema of a JSON Schema without
// "additionalProperties": false: what Anthropic's structured outputs
// refuse (testdata/error_400_output_config_additional_properties.http).
func openObject(v any) bool {
	switch n := v.(type) {
	case map[string]any:
		if n["type"] == "object" && n["additionalProperties"] != false {
			return true
		}
		for k, sub := range n {
			if k == "enum" || k == "const" || k == "default" {
				continue
			}
			if openObject(sub) {
				return true
			}
		}
	case []any:
		for _, sub := range n {
			if openObject(sub) {
				return true
			}
		}
	}
	return false
}

// TestNativeStructuredOutputClosesObjects: a plain schema (pydantic's and
// Zod's leave additionalProperties out) went to output_config.format as
// written, and Anthropic refused it with a 400; the adapter closes every
// object as Anthropic's SDKs do, keeping the caller's key order, and warns
// when it replaces an open value. The server validates the answer against
// the caller's schema.
func TestNativeStructuredOutputClosesObjects(t *testing.T) {
	t.Parallel()
	refusal := providertest.Load(t, "testdata/error_400_output_config_additional_properties.http")
	constraint := providertest.Load(t, "testdata/error_400_output_config_minimum.http")
	answer := providertest.Load(t, "testdata/real_oi_messages_parse.http")
	for _, tc := range []struct {
		name, schema, sent string
		warnings           []string
	}{
		{"plain", `{"type":"object","properties":{"city":{"type":"string"},"where":{"type":"object","properties":{"country":{"type":"string"}}}},"required":["city"]}`,
			`{"type":"object","properties":{"city":{"type":"string"},"where":{"type":"object","properties":{"country":{"type":"string"}},"additionalProperties":false}},"required":["city"],"additionalProperties":false}`, nil},
		{"open map", `{"type":"object","properties":{"city":{"type":"string"},"extra":{"type":"object","additionalProperties":{"type":"string"}}},"additionalProperties":false}`,
			`{"type":"object","properties":{"city":{"type":"string"},"extra":{"type":"object","additionalProperties":false}},"additionalProperties":false}`,
			[]string{"options.response_format.schema: 1 additionalProperties value(s) other than false sent as false: Anthropic's structured outputs take closed objects only (no properties beyond those listed)"}},
		// Constraints structured outputs refuse go into the
		// descriptions, as Anthropic's SDKs put them; pattern, minItems
		// 1 and the listed formats stay.
		{"constraints", `{"type":"object","properties":{"age":{"type":"integer","minimum":0,"maximum":150,"description":"Age in years"},` +
			`"code":{"type":"string","pattern":"^[A-Z]+$","maxLength":8,"format":"email"},"tags":{"type":"array","items":{"type":"string","format":"color"},"minItems":1,"maxItems":5}},"additionalProperties":false}`,
			`{"type":"object","properties":{"age":{"type":"integer","description":"Age in years\n\n{minimum: 0, maximum: 150}"},` +
				`"code":{"type":"string","pattern":"^[A-Z]+$","format":"email","description":"{maxLength: 8}"},"tags":{"type":"array","items":{"type":"string","description":"{format: \"color\"}"},"minItems":1,"description":"{maxItems: 5}"}},"additionalProperties":false}`,
			[]string{"options.response_format.schema: minimum, maximum, maxLength, format, maxItems not supported by Anthropic's structured outputs: moved into the descriptions (the model is told, not held; the server still checks the answer against them)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sent json.RawMessage
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var req struct {
					OutputConfig struct {
						Format struct {
							Schema json.RawMessage `json:"schema"`
						} `json:"format"`
					} `json:"output_config"`
				}
				if err := json.Unmarshal(body, &req); err != nil {
					t.Errorf("request: %v", err)
				}
				sent = req.OutputConfig.Format.Schema
				var schema any
				_ = json.Unmarshal(sent, &schema)
				rec := answer
				switch {
				case openObject(schema):
					rec = refusal
				case strings.Contains(string(sent), `"minimum"`) || strings.Contains(string(sent), `"maxLength"`) || strings.Contains(string(sent), `"maxItems"`):
					rec = constraint
				}
				for k, vs := range rec.Header {
					if !strings.EqualFold(k, "Content-Length") {
						w.Header()[k] = vs
					}
				}
				w.WriteHeader(rec.Status)
				_, _ = w.Write(rec.Body)
			}))
			defer srv.Close()
			p := newTestProvider(t, srv.URL)
			req := rec13User("claude-sonnet-4-6", "What is the capital of France? Respond with the city and country.", 256)
			req.NativeStructuredOutput = true
			req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: tc.schema}
			res, err := p.Generate(context.Background(), req)
			if err != nil {
				var pe *provider.Error
				if errors.As(err, &pe) {
					t.Fatalf("Generate: %v (param %q)", err, pe.Param)
				}
				t.Fatalf("Generate: %v", err)
			}
			if string(sent) != tc.sent {
				t.Errorf("sent schema %s\nwant %s", sent, tc.sent)
			}
			if got := res.Meta.GetWarnings(); strings.Join(got, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings %q, want %q", got, tc.warnings)
			}
		})
	}
}

// TestStrictToolSchemaClosed: strict tool use shares structured outputs'
// schema rules, so a strict tool's objects are closed as the native
// format's are; a tool without strict is sent as written.
func TestStrictToolSchemaClosed(t *testing.T) {
	t.Parallel()
	strict := true
	params := `{"type":"object","properties":{"q":{"type":"string"},"filters":{"type":"object","additionalProperties":true}}}`
	got, warnings, err := convertTools([]*llmrelayv1.Tool{
		{Name: "search", Parameters: params, Strict: &strict},
		{Name: "loose", Parameters: params},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s, want := string(got[0].InputSchema), `{"type":"object","properties":{"q":{"type":"string"},"filters":{"type":"object","additionalProperties":false}},"additionalProperties":false}`; s != want {
		t.Errorf("strict tool sent as %s, want %s", s, want)
	}
	if s := string(got[1].InputSchema); s != params {
		t.Errorf("tool without strict sent as %s", s)
	}
	want := "tools[0].parameters: 1 additionalProperties value(s) other than false sent as false: Anthropic's structured outputs take closed objects only (no properties beyond those listed)"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q", warnings)
	}
}
