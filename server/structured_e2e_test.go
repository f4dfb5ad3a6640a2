package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// citySchema puts reasoning before answer: strict structured output
// generates fields in schema order, so the provider must get this order.
const citySchema = `{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}}, "required": ["reasoning", "answer"], "additionalProperties": false}`

const citySchemaCompact = `{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"}},"required":["reasoning","answer"],"additionalProperties":false}`

// citySchemaStricter also requires a confidence the recorded answers lack.
const citySchemaStricter = `{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "string"}, "confidence": {"type": "number"}}, "required": ["reasoning", "answer", "confidence"]}`

// structuredCase is one provider type's structured-output traffic: a valid
// unary answer, a valid stream, and an answer that fails validation.
type structuredCase struct {
	name string
	yaml string
	// unary, stream and invalid are recordings under server/provider.
	unary, stream, invalid string
	// wire is what the request body must contain (compacted): the
	// provider's native field with the schema's key order intact.
	wire string
	// path is the request path the provider must see.
	path string
	// wantUnary and wantStream are the answers' text, verbatim.
	wantUnary, wantStream string
	// invalidText is the failing answer; invalidError a substring of the
	// violations reported for it.
	invalidText, invalidError string
}

func chatModelYAML(providers, format, upstream, extra string) string {
	return providers + `
models:
  - name: m
    provider: p
    upstream_model: ` + upstream + extra + `
    capabilities: {chat: {format: ` + format + `}}
`
}

var structuredCases = []structuredCase{
	{
		name: "openai-chat",
		yaml: chatModelYAML(`
providers:
  - name: p
    type: openai`+keyYAML, "openai-chat", "gpt-4o", ""),
		unary: "openai/testdata/structured_chat.http", stream: "openai/testdata/structured_chat_stream.http", invalid: "openai/testdata/structured_chat_invalid.http",
		wire:         `"response_format":{"type":"json_schema","json_schema":{"name":"city_answer","schema":` + citySchemaCompact + `,"strict":true}}`,
		path:         "/chat/completions",
		wantUnary:    `{"reasoning":"The Louvre is on the right bank of the Seine in Paris, the capital of France.","answer":"Paris"}`,
		wantStream:   `{"reasoning":"Mount Fuji lies on Honshu, southwest of Tokyo.","answer":"Honshu"}`,
		invalidText:  `{"reasoning":"The question names no city, so there is nothing to answer."}`,
		invalidError: "/: missing property 'answer'",
	},
	{
		name: "openai-responses",
		yaml: chatModelYAML(`
providers:
  - name: p
    type: openai`+keyYAML, "openai-responses", "gpt-4.1", ""),
		unary: "openai/testdata/structured_responses.http", stream: "openai/testdata/structured_responses_stream.http", invalid: "openai/testdata/structured_responses_invalid.http",
		wire:         `"text":{"format":{"type":"json_schema","name":"city_answer","schema":` + citySchemaCompact + `,"strict":true}}`,
		path:         "/responses",
		wantUnary:    `{"reasoning":"Lake Baikal is in Siberia, Russia; Irkutsk is the nearest large city.","answer":"Irkutsk"}`,
		wantStream:   `{"reasoning":"The Danube flows through four capitals; Vienna is the first from its source.","answer":"Vienna"}`,
		invalidText:  `{"answer":"Reykjavik","reasoning":3}`,
		invalidError: "/reasoning: got number, want string",
	},
	{
		name: "azure",
		yaml: chatModelYAML(`
providers:
  - name: p
    type: azure
    api_version: "2024-10-21"`+keyYAML, "openai-chat", "gpt-4o-deployment", ""),
		unary: "openai/testdata/structured_chat.http", stream: "openai/testdata/structured_chat_stream.http", invalid: "openai/testdata/structured_chat_invalid.http",
		wire:         `"response_format":{"type":"json_schema","json_schema":{"name":"city_answer","schema":` + citySchemaCompact + `,"strict":true}}`,
		path:         "/openai/deployments/gpt-4o-deployment/chat/completions",
		wantUnary:    `{"reasoning":"The Louvre is on the right bank of the Seine in Paris, the capital of France.","answer":"Paris"}`,
		wantStream:   `{"reasoning":"Mount Fuji lies on Honshu, southwest of Tokyo.","answer":"Honshu"}`,
		invalidText:  `{"reasoning":"The question names no city, so there is nothing to answer."}`,
		invalidError: "/: missing property 'answer'",
	},
	{
		name: "anthropic-native",
		yaml: chatModelYAML(`
providers:
  - name: p
    type: anthropic`+keyYAML, "anthropic-messages", "claude-sonnet-4-5", "\n    structured_output: native"),
		unary: "anthropic/testdata/structured_native.http", stream: "anthropic/testdata/structured_native_stream.http", invalid: "anthropic/testdata/structured_tool_invalid.http",
		wire:       `"output_config":{"format":{"type":"json_schema","schema":` + citySchemaCompact + `}}`,
		path:       "/v1/messages",
		wantUnary:  `{"reasoning":"The Acropolis overlooks Athens, the capital of Greece.","answer":"Athens"}`,
		wantStream: `{"reasoning":"Hagia Sophia stands in Istanbul, on the European side of the Bosphorus.","answer":"Istanbul"}`,
		// A native model answering with the tool is not a real exchange:
		// the invalid case of this provider type is the forced tool's.
	},
	{
		name: "anthropic-tool",
		yaml: chatModelYAML(`
providers:
  - name: p
    type: anthropic`+keyYAML, "anthropic-messages", "claude-3-5-haiku-latest", ""),
		unary: "anthropic/testdata/structured_tool.http", stream: "anthropic/testdata/structured_tool_stream.http", invalid: "anthropic/testdata/structured_tool_invalid.http",
		wire:         `"tools":[{"name":"json_response","description":"Give your final answer by calling this tool: its input is the answer, in the required JSON format.","input_schema":` + citySchemaCompact + `}],"tool_choice":{"type":"tool","name":"json_response"}`,
		path:         "/v1/messages",
		wantUnary:    `{"reasoning":"The Alhambra is a palace complex in Granada, in Andalusia.","answer":"Granada"}`,
		wantStream:   `{"reasoning": "Neuschwanstein Castle is in Bavaria, near Füssen.", "answer": "Füssen"}`,
		invalidText:  `{"reasoning":"I could not tell which city the photo shows."}`,
		invalidError: "/: missing property 'answer'",
	},
	{
		name: "gemini",
		yaml: chatModelYAML(`
providers:
  - name: p
    type: gemini`+keyYAML, "gemini", "gemini-2.5-flash", ""),
		unary: "gemini/testdata/structured.http", stream: "gemini/testdata/structured_stream.http", invalid: "gemini/testdata/structured_invalid.http",
		wire:         `"responseMimeType":"application/json","responseJsonSchema":` + citySchemaCompact,
		path:         "/models/gemini-2.5-flash:generateContent",
		wantUnary:    `{"reasoning": "The Atacama Desert lies in northern Chile.", "answer": "Chile"}`,
		wantStream:   `{"reasoning": "Table Mountain overlooks Cape Town in South Africa.", "answer": "Cape Town"}`,
		invalidText:  `{"reasoning": "Angel Falls is in Venezuela.", "answer": ["Venezuela"]}`,
		invalidError: "/answer: got array, want string",
	},
	{
		name: "ollama",
		yaml: chatModelYAML(`
providers:
  - name: p
    type: ollama
    base_url: {{URL}}`, "ollama", "llama3.2", ""),
		unary: "ollama/testdata/structured.http", stream: "ollama/testdata/structured_stream.http", invalid: "ollama/testdata/structured_length.http",
		wire:         `"format":` + citySchemaCompact,
		path:         "/api/chat",
		wantUnary:    `{ "reasoning": "Machu Picchu sits above the Urubamba valley in Peru.", "answer": "Peru" }`,
		wantStream:   `{ "reasoning": "Petra was carved into the cliffs of southern Jordan.", "answer": "Jordan" }`,
		invalidText:  `{ "reasoning": "Angkor Wat is the largest religious monument, in`,
		invalidError: "cut at max_tokens",
	},
}

func cityFormat(schema string, mode llmrelayv1.OutputValidationMode) *llmrelayv1.GenerationOptions {
	strict := true
	return &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
		Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, SchemaName: "city_answer", Schema: schema, Strict: &strict, Validation: mode}}
}

var cityQuestion = []*llmrelayv1.Message{user("Which city is the landmark in? Answer as JSON.")}

// readStream collects a StreamChat: the text deltas, the end event and
// the error that ended it (nil after end).
func readStream(s llmrelayv1.GatewayService_StreamChatClient) (string, *llmrelayv1.StreamEnd, error) {
	var text strings.Builder
	var end *llmrelayv1.StreamEnd
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return text.String(), end, nil
		}
		if err != nil {
			return text.String(), end, err
		}
		text.WriteString(ev.GetTextDelta().GetText())
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
}

// TestStructuredOutputEveryProvider: for every provider type, the schema
// reaches the provider's native field with its key order, the answer comes
// back verbatim and valid (unary and streamed), an answer that fails
// validation is FailedPrecondition with the answer and the violations in
// FailedCallMeta, and a stream whose answer fails ends with that status
// after its text deltas instead of the end event.
func TestStructuredOutputEveryProvider(t *testing.T) {
	t.Parallel()
	for _, sc := range structuredCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t,
				providertest.Load(t, "provider/"+sc.unary), providertest.Load(t, "provider/"+sc.stream),
				providertest.Load(t, "provider/"+sc.stream), providertest.Load(t, "provider/"+sc.invalid))
			c, _ := startWith(t, sc.yaml, up.URL)
			ctx := context.Background()

			resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m", Messages: cityQuestion, Options: cityFormat(citySchema, 0)})
			if err != nil {
				t.Fatal(err)
			}
			sent := up.Last(t)
			if body := compactArgs(string(sent.Body)); !strings.Contains(body, sc.wire) {
				t.Errorf("request body lacks %s:\n%s", sc.wire, body)
			}
			if sent.Path != sc.path {
				t.Errorf("path = %s, want %s", sent.Path, sc.path)
			}
			parts := resp.GetMessage().GetParts()
			if len(parts) != 1 || parts[0].GetText() != sc.wantUnary {
				t.Errorf("answer = %v, want the text %s", parts, sc.wantUnary)
			}
			m := resp.GetMeta()
			if v := m.GetOutputValidation(); !v.GetValid() || len(v.GetErrors()) != 0 {
				t.Errorf("output_validation = %v", v)
			}
			if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetToolCallCount() != 0 {
				t.Errorf("finish %v, tool calls %d", m.GetFinishReason(), m.GetToolCallCount())
			}

			s, err := c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: cityQuestion, Options: cityFormat(citySchema, 0)})
			if err != nil {
				t.Fatal(err)
			}
			text, end, err := readStream(s)
			if err != nil {
				t.Fatal(err)
			}
			if text != sc.wantStream || !end.GetMeta().GetOutputValidation().GetValid() || end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
				t.Errorf("stream text %s, end %v", text, end)
			}
			if body := compactArgs(string(up.Last(t).Body)); !strings.Contains(body, sc.wire) {
				t.Errorf("stream request body lacks %s:\n%s", sc.wire, body)
			}

			// The same stream against a schema it does not meet.
			s, err = c.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: "m", Messages: cityQuestion, Options: cityFormat(citySchemaStricter, 0)})
			if err != nil {
				t.Fatal(err)
			}
			text, end, err = readStream(s)
			if end != nil || text != sc.wantStream {
				t.Fatalf("invalid stream: text %s, end %v", text, end)
			}
			st, reason, fcm := failedCall(t, err)
			if st.Code() != codes.FailedPrecondition || reason != "OUTPUT_VALIDATION_FAILED" || !strings.Contains(st.Message(), "confidence") ||
				textOf(fcm.GetMessage()) != sc.wantStream || fcm.GetMeta().GetOutputValidation().GetValid() || fcm.GetMeta().GetUsage() == nil {
				t.Errorf("invalid stream: status %v (%s), failed call %v", st, reason, fcm)
			}

			if sc.invalidText == "" {
				return
			}
			_, err = c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "m", Messages: cityQuestion, Options: cityFormat(citySchema, 0)})
			st, reason, fcm = failedCall(t, err)
			if st.Code() != codes.FailedPrecondition || reason != "OUTPUT_VALIDATION_FAILED" || !strings.Contains(st.Message(), sc.invalidError) {
				t.Errorf("status %v (%s), want FailedPrecondition naming %q", st, reason, sc.invalidError)
			}
			v := fcm.GetMeta().GetOutputValidation()
			if textOf(fcm.GetMessage()) != sc.invalidText || v.GetValid() || !strings.Contains(strings.Join(v.GetErrors(), "\n"), sc.invalidError) {
				t.Errorf("failed call: answer %q, validation %v", textOf(fcm.GetMessage()), v)
			}
			if fcm.GetMeta().GetAttempts() != 1 || fcm.GetMeta().GetProviderRequestId() == "" && sc.name != "ollama" && sc.name != "gemini" {
				t.Errorf("failed call meta incomplete: %v", fcm.GetMeta())
			}
		})
	}
}
