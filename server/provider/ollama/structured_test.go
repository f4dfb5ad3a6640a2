package ollama

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

const citySchema = `{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}}, "required": ["reasoning", "answer"]}`

// TestStructuredOutput: a JSON schema is Ollama's format (the schema
// itself, key order kept), JSON_OBJECT is format "json"; the answer's text
// comes back verbatim, and an answer cut by num_predict has finish LENGTH
// (the server reports it as cut).
func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	schemaFormat := &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: citySchema}
	for _, tc := range []struct {
		name, recording string
		stream          bool
		rf              *llmrelayv1.ResponseFormat
		wire, want      string
		finish          llmrelayv1.FinishReason
	}{
		{"schema", "structured", false, schemaFormat,
			`"format":{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"]}`,
			`{ "reasoning": "Machu Picchu sits above the Urubamba valley in Peru.", "answer": "Peru" }`, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"schema streamed", "structured_stream", true, schemaFormat,
			`"format":{"type":"object","properties":{"reasoning":{"type":"string"},"answer":`,
			`{ "reasoning": "Petra was carved into the cliffs of southern Jordan.", "answer": "Jordan" }`, llmrelayv1.FinishReason_FINISH_REASON_STOP},
		{"cut by num_predict", "structured_length", false, &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT},
			`"format":"json"`,
			`{ "reasoning": "Angkor Wat is the largest religious monument, in`, llmrelayv1.FinishReason_FINISH_REASON_LENGTH},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.recording+".http"))
			p := newTestProvider(t, srv)
			req := &provider.Request{Model: "llama3.2", Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Where is it? Answer as JSON."))},
				Options: &llmrelayv1.GenerationOptions{ResponseFormat: tc.rf}}
			var got strings.Builder
			var finish llmrelayv1.FinishReason
			if tc.stream {
				s, err := p.Stream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				evs, err := collect(s)
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					switch ev.Kind {
					case provider.EventText:
						got.WriteString(ev.Text)
					case provider.EventMeta:
						if f := ev.Meta.GetFinishReason(); f != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
							finish = f
						}
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
				finish = res.Meta.GetFinishReason()
			}
			if got.String() != tc.want || finish != tc.finish {
				t.Errorf("answer %s (finish %v), want %s (%v)", got.String(), finish, tc.want, tc.finish)
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
