package gemini

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

func init() {
	round17Recordings = append(round17Recordings, "real_pyd_google_instructions_only_with_tool_calls_1",
		"real_pyd_google_dict_additional_properties_native_output_gemini_2_0", "real_pyd_google_prefix_items_native_output_gemini_2_0")
}

// TestRound22InstructionsOnly: pydantic-ai asked gemini-3-flash-preview
// with instructions alone ("Tell three jokes. Generate topics with the
// generate_topic tool.") and two tools, a call required; it sent the
// instructions as systemInstruction and one user turn of empty text, and
// the API answered: three parallel generate_topic({}) calls without ids,
// only the first signed (1069 bytes), STOP with finishMessage; 83 in, 30 +
// 292 thought tokens. **Bug:** ours sent no contents at all for a request
// of instructions alone (or whose messages are all empty), which the API
// refuses ("GenerateContentRequest.contents: contents is not specified");
// it now sends the one empty user turn the API took, with a warning.
func TestRound22InstructionsOnly(t *testing.T) {
	t.Parallel()
	const sys = "Tell three jokes. Generate topics with the generate_topic tool."
	for _, withEmptyUser := range []bool{false, true} {
		req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3-flash-preview",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_SYSTEM, text(sys))},
			Tools: []*llmrelayv1.Tool{{Name: "generate_topic", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`},
				{Name: "final_result", Description: "The final response which ends this conversation",
					Parameters: `{"properties":{"response":{"items":{"type":"string"},"type":"array"}},"required":["response"],"type":"object"}`}},
			Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}
		if withEmptyUser {
			req.Messages = append(req.Messages, msg(llmrelayv1.Role_ROLE_USER, text("")))
		}
		var res *provider.Result
		var srv *providertest.Server
		if withEmptyUser {
			// The golden is the instructions-only request's.
			var p *Provider
			p, srv = replay(t, "real_pyd_google_instructions_only_with_tool_calls_1")
			var err error
			if res, err = p.Generate(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		} else {
			res, srv = r21Unary(t, "real_pyd_google_instructions_only_with_tool_calls_1", req)
		}
		sent := r17JSON(t, srv.Last(t).Body)
		if got, want := sent["contents"], r19Decode(t, `[{"role":"user","parts":[{"text":""}]}]`); !jsonEqual(got, want) {
			t.Errorf("contents %v, recorded %v", got, want)
		}
		if got, want := sent["systemInstruction"], r19Decode(t, `{"parts":[{"text":"`+sys+`"}]}`); !jsonEqual(got, want) {
			t.Errorf("systemInstruction %v", got)
		}
		if w := strings.Join(res.Meta.GetWarnings(), "\n"); !strings.Contains(w, "one user turn of empty text sent") {
			t.Errorf("warnings %q", w)
		}
		var calls []*llmrelayv1.ToolCall
		for _, p := range res.Message.GetParts() {
			if c := p.GetToolCall(); c != nil {
				calls = append(calls, c)
			}
		}
		if len(calls) != 3 || len(res.Message.GetParts()) != 3 {
			t.Fatalf("message %v", res.Message)
		}
		for i, c := range calls {
			signed := strings.HasPrefix(c.Signature, "EqoICqcIAXLI2nzcOyNtSiJhND+bU4eI7ZVnOTaxeFLUMDAk") && strings.HasSuffix(c.Signature, "6wP7qKug==") && len(c.Signature) == 1428
			if c.Name != "generate_topic" || c.Arguments != "{}" || c.CallId != generatedID("1CeCacWzHryxqtsPxIGRyAI", i, "", "") || signed != (i == 0) || (i > 0 && c.Signature != "") {
				t.Errorf("call %d: %v", i, c)
			}
		}
		m := res.Meta
		r21Meta(t, m, "1CeCacWzHryxqtsPxIGRyAI", "gemini-3-flash-preview", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
			&llmrelayv1.Usage{InputTokens: 83, OutputTokens: 322, TotalTokens: 405, ReasoningTokens: 292})
		if m.GetToolCallCount() != 3 || r21Ext(t, m, extFinishMessage) != `"Model generated function call(s)."` {
			t.Errorf("meta %v", m)
		}
		if !proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 83, OutputTokens: 322, TotalTokens: 405, ReasoningTokens: 292}) {
			t.Errorf("usage %v", m.GetUsage())
		}
	}
}

// TestRound22MapSchemaGemini20: gemini-2.0-flash (March 2026) with native
// output whose schema has a title, a description and a map-typed property
// (additionalProperties a schema): the API took the schema as
// responseJsonSchema, as recorded, and ours sends it the same, untouched.
// The answer: the object pretty-printed in one text part, avgLogprobs
// (kept), 22 in, 40 out by modality.
func TestRound22MapSchemaGemini20(t *testing.T) {
	t.Parallel()
	const schema = `{"description":"A response with configuration metadata.","properties":{"metadata":{"additionalProperties":{"type":"string"},"type":"object"},"name":{"type":"string"}},"required":["name","metadata"],"title":"ConfigResponse","type":"object"}`
	const q = `Create a config named "api-config" with metadata author="Alice" and version="1.0"`
	req := r21User("gemini-2.0-flash", "", msg(llmrelayv1.Role_ROLE_USER, text(q)))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		SchemaName: "ConfigResponse", Schema: schema}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, "real_pyd_google_dict_additional_properties_native_output_gemini_2_0", req)
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.0-flash:generateContent",
		`{"contents":[{"parts":[{"text":"Create a config named \"api-config\" with metadata author=\"Alice\" and version=\"1.0\""}],"role":"user"}],`+
			`"generationConfig":{"responseJsonSchema":`+schema+`,"responseMimeType":"application/json","responseModalities":["TEXT"]}}`)
	const answer = "{\n  \"name\": \"api-config\",\n  \"metadata\": {\n    \"author\": \"Alice\",\n    \"version\": \"1.0\"\n  }\n}"
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(answer)); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	r21Meta(t, m, "8pMcab_EMqWd28oP46bOiAk", "gemini-2.0-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 22, OutputTokens: 40, TotalTokens: 62})
	if got := r21Ext(t, m, extAvgLogprobs); got != "-0.000014634492981713265" || len(m.GetWarnings()) != 0 {
		t.Errorf("avgLogprobs %s, warnings %q", got, m.GetWarnings())
	}
}

// TestRound22TupleSchemaGemini20: the same with a tuple (prefixItems, two
// numbers, minItems = maxItems = 2): the API took it as sent, and ours
// sends it untouched. The answer keeps the model's "-74.0060" as written.
func TestRound22TupleSchemaGemini20(t *testing.T) {
	t.Parallel()
	const schema = `{"description":"A 2D coordinate with latitude and longitude.","properties":{"point":{"maxItems":2,"minItems":2,"prefixItems":[{"type":"number"},{"type":"number"}],"type":"array"}},"required":["point"],"title":"Coordinate","type":"object"}`
	const q = "Give me coordinates for New York City: latitude 40.7128, longitude -74.0060"
	req := r21User("gemini-2.0-flash", "", msg(llmrelayv1.Role_ROLE_USER, text(q)))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
		SchemaName: "Coordinate", Schema: schema}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, "real_pyd_google_prefix_items_native_output_gemini_2_0", req)
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.0-flash:generateContent",
		`{"contents":[{"parts":[{"text":"`+q+`"}],"role":"user"}],`+
			`"generationConfig":{"responseJsonSchema":`+schema+`,"responseMimeType":"application/json","responseModalities":["TEXT"]}}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("{\n  \"point\": [\n    40.7128,\n    -74.0060\n  ]\n}")); !proto.Equal(res.Message, want) {
		t.Errorf("message %v", res.Message)
	}
	r21Meta(t, res.Meta, "CpQcaZeFELrrkdUP_f6z-QI", "gemini-2.0-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 27, OutputTokens: 32, TotalTokens: 59})
	if got := r21Ext(t, res.Meta, extAvgLogprobs); got != "-0.0006413730443455279" || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("avgLogprobs %s, warnings %q", got, res.Meta.GetWarnings())
	}
}
