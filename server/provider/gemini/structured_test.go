package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// citySchema puts reasoning before answer; Gemini generates properties in
// the order of responseJsonSchema, so the order must reach it.
const citySchema = `{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}}, "required": ["reasoning", "answer"]}`

func structuredRequest(typ llmrelayv1.ResponseFormatType, schema string) *provider.Request {
	return &provider.Request{Model: "gemini-2.5-flash", Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Where is it? Answer as JSON."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: typ, Schema: schema}}}
}

func compactBody(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	return out.String()
}

// TestStructuredOutput: a JSON schema goes to responseJsonSchema (full JSON
// Schema; responseSchema takes an OpenAPI subset) with responseMimeType and
// its key order; JSON_OBJECT sends only the MIME type; the answer's text
// comes back verbatim, unary and streamed, valid or not (the server
// validates).
func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	schemaType := llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA
	for _, tc := range []struct {
		name, recording string
		stream          bool
		req             *provider.Request
		wire, want      string
	}{
		{"schema", "structured", false, structuredRequest(schemaType, citySchema),
			`"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"]}}`,
			`{"reasoning": "The Atacama Desert lies in northern Chile.", "answer": "Chile"}`},
		{"schema streamed", "structured_stream", true, structuredRequest(schemaType, citySchema),
			`"responseJsonSchema":{"type":"object","properties":{"reasoning":`,
			`{"reasoning": "Table Mountain overlooks Cape Town in South Africa.", "answer": "Cape Town"}`},
		{"answer not matching", "structured_invalid", false, structuredRequest(schemaType, citySchema),
			`"responseJsonSchema":{"type":"object"`,
			`{"reasoning": "Angel Falls is in Venezuela.", "answer": ["Venezuela"]}`},
		{"json object", "structured", false, structuredRequest(llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT, ""),
			`"generationConfig":{"responseMimeType":"application/json"}`,
			`{"reasoning": "The Atacama Desert lies in northern Chile.", "answer": "Chile"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, srv := replay(t, tc.recording)
			var got string
			if tc.stream {
				s, err := p.Stream(context.Background(), tc.req)
				if err != nil {
					t.Fatal(err)
				}
				evs, err := drain(t, s)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("stream ended with %v", err)
				}
				got = textOfMessage(foldMessage(t, evs))
			} else {
				res, err := p.Generate(context.Background(), tc.req)
				if err != nil {
					t.Fatal(err)
				}
				got = textOfMessage(res.Message)
			}
			if got != tc.want {
				t.Errorf("answer %s, want %s", got, tc.want)
			}
			body := compactBody(t, srv.Last(t).Body)
			if !strings.Contains(body, tc.wire) || strings.Contains(body, "responseSchema") {
				t.Errorf("request body %s, want it to contain %s", body, tc.wire)
			}
		})
	}
}

func textOfMessage(m *llmrelayv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		b.WriteString(p.GetText())
	}
	return b.String()
}
