package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// citySchema puts reasoning before answer: strict structured output
// generates fields in schema order, so the order must reach OpenAI.
const citySchema = `{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}}, "required": ["reasoning", "answer"], "additionalProperties": false}`

const citySchemaCompact = `{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"],"additionalProperties":false}`

func structuredRequest(format string, rf *llmrelayv1.ResponseFormat) *provider.Request {
	return &provider.Request{Model: "gpt-4o", Format: format,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "Where is it? Answer as JSON."}}}}},
		Options:  &llmrelayv1.GenerationOptions{ResponseFormat: rf}}
}

// TestStructuredOutput: Chat Completions sends response_format.json_schema
// {name, schema, strict}, the Responses API text.format {type, name,
// schema, strict}, both with the schema's key order and strict as the
// caller set it (absent when unset); the answer's text comes back verbatim
// (the server validates it).
func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	strict := true
	schemaFormat := &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, SchemaName: "city_answer", Schema: citySchema, Strict: &strict}
	loose := &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: citySchema}
	object := &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}
	for _, tc := range []struct {
		name, recording, format string
		k                       kind
		stream                  bool
		rf                      *llmrelayv1.ResponseFormat
		wire, want              string
	}{
		{"chat", "structured_chat", "openai-chat", kOpenAI, false, schemaFormat,
			`"response_format":{"type":"json_schema","json_schema":{"name":"city_answer","schema":` + citySchemaCompact + `,"strict":true}}`,
			`{"reasoning":"The Louvre is on the right bank of the Seine in Paris, the capital of France.","answer":"Paris"}`},
		{"chat streamed", "structured_chat_stream", "openai-chat", kOpenAI, true, schemaFormat,
			`"response_format":{"type":"json_schema","json_schema":{"name":"city_answer","schema":` + citySchemaCompact + `,"strict":true}}`,
			`{"reasoning":"Mount Fuji lies on Honshu, southwest of Tokyo.","answer":"Honshu"}`},
		{"chat, default name, strict unset", "structured_chat_invalid", "openai-chat", kAzure, false, loose,
			`"response_format":{"type":"json_schema","json_schema":{"name":"response","schema":` + citySchemaCompact + `}}`,
			`{"reasoning":"The question names no city, so there is nothing to answer."}`},
		{"chat json object", "structured_chat", "openai-chat", kOpenAI, false, object,
			`"response_format":{"type":"json_object"}`,
			`{"reasoning":"The Louvre is on the right bank of the Seine in Paris, the capital of France.","answer":"Paris"}`},
		{"responses", "structured_responses", "openai-responses", kOpenAI, false, schemaFormat,
			`"text":{"format":{"type":"json_schema","name":"city_answer","schema":` + citySchemaCompact + `,"strict":true}}`,
			`{"reasoning":"Lake Baikal is in Siberia, Russia; Irkutsk is the nearest large city.","answer":"Irkutsk"}`},
		{"responses streamed", "structured_responses_stream", "openai-responses", kOpenAI, true, schemaFormat,
			`"text":{"format":{"type":"json_schema","name":"city_answer","schema":` + citySchemaCompact + `,"strict":true}}`,
			`{"reasoning":"The Danube flows through four capitals; Vienna is the first from its source.","answer":"Vienna"}`},
		{"responses, answer not matching", "structured_responses_invalid", "openai-responses", kOpenAI, false, loose,
			`"text":{"format":{"type":"json_schema","name":"response","schema":` + citySchemaCompact + `}}`,
			`{"answer":"Reykjavik","reasoning":3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.recording+".http"))
			p := newTestProvider(t, tc.k, srv.URL)
			req := structuredRequest(tc.format, tc.rf)
			var got strings.Builder
			if tc.stream {
				s, err := p.Stream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				evs, _, err := collect(t, s)
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					if ev.Kind == provider.EventText {
						got.WriteString(ev.Text)
					}
				}
			} else {
				res, err := p.Generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				for _, part := range res.Message.GetParts() {
					got.WriteString(part.GetText())
				}
			}
			if got.String() != tc.want {
				t.Errorf("answer %s, want %s", got.String(), tc.want)
			}
			var body bytes.Buffer
			if err := json.Compact(&body, srv.Last(t).Body); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(body.String(), tc.wire) {
				t.Errorf("request body %s, want it to contain %s", body.String(), tc.wire)
			}
		})
	}
}
