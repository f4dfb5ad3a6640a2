package openai

import (
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// r26BananaSchema is maruel/genai's scoreboard schema for "Is a banana a
// fruit?", as its cassettes sent it.
const r26BananaSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"is_fruit":{"type":"boolean"}},"additionalProperties":false,"type":"object","required":["is_fruit"]}`

func r26BananaReq(model string) *provider.Request {
	req := r22Ask(model, "Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON.")
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: r26BananaSchema}
	return req
}

// TestRound26GroqJSONSchemaRefusedPerModel: Groq takes json_schema on some
// models only and refuses it on the others with 400 invalid_request_error,
// no code, "This model does not support response format `json_schema`.
// See supported models at …": in July 2025 without a param
// (llama-3.1-8b-instant, streamed), in December 2025 with "param":
// "response_format" (groq/compound-mini). **Bug:** the first blamed no
// field, the second the whole format; both now name response_format.type
// (the server's options.response_format.type), since the type is what the
// model lacks, not the schema. **Bug:** both were invalid requests; the
// model lacks a capability another model has, so they are
// KindCapability (never retried, a reason to fall back), as OpenAI's
// json_object refusal already was. The request id header of the first is
// read.
func TestRound26GroqJSONSchemaRefusedPerModel(t *testing.T) {
	t.Parallel()
	const msg = "This model does not support response format `json_schema`. See supported models at https://console.groq.com/docs/structured-outputs#supported-models"
	e, body := mgbErr(t, "real_maruel_groq_llama31_json_schema_stream_err", r22Groq, r26BananaReq("llama-3.1-8b-instant"), true)
	if e.Kind != provider.KindCapability || e.HTTPStatus != 400 || e.Code != "invalid_request_error" || e.Param != "response_format.type" ||
		e.Message != msg || e.RetryAfter != 0 || e.RequestID != "req_01k11s5fvreh8r9wfnsg6t06km" {
		t.Errorf("error %+v", e)
	}
	if !mgbJSONEqual(t, body["response_format"], `{"type":"json_schema","json_schema":{"name":"response","schema":`+r26BananaSchema+`}}`) || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	e, _ = mgbErr(t, "real_maruel_groq_compound_mini_json_schema_err", r22Groq, r26BananaReq("groq/compound-mini"), false)
	if e.Kind != provider.KindCapability || e.HTTPStatus != 400 || e.Code != "invalid_request_error" || e.Param != "response_format.type" ||
		e.Message != msg || e.RetryAfter != 0 {
		t.Errorf("error %+v", e)
	}
}

// TestRound26OpenAIResponseFormatRefusals: OpenAI names the whole
// response_format in "param" when it refuses a part of it (code null), as
// ReedGraff/schemic's README quotes the bodies: a strict schema missing a
// property in "required" ("Invalid schema for response_format
// 'AISectionResponse': In context=(), 'required' is required to be
// supplied and to be an array including every key in properties. Missing
// 'id'.") and json_object on a model without JSON mode ("Invalid
// parameter: 'response_format' of type 'json_object' is not supported
// with this model."). **Bug:** both blamed options.response_format; the
// schema refusal names response_format.json_schema.schema
// (options.response_format.schema), the type refusal response_format.type
// (options.response_format.type). The message, with OpenAI's schema path
// (context=(…)), is kept whole. A param naming something else is left
// alone.
func TestRound26OpenAIResponseFormatRefusals(t *testing.T) {
	t.Parallel()
	req := r26BananaReq("gpt-4o-2024-08-06")
	req.Options.ResponseFormat.Strict = proto.Bool(true)
	e := r22Err(t, "openai_err_400_strict_schema_required", "", req)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_request_error" || e.Param != "response_format.json_schema.schema" ||
		e.Message != "Invalid schema for response_format 'AISectionResponse': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'id'." ||
		e.RequestID != "req_7f3b0c5e2a9d4e61b8c0d94a1e6f2b37" {
		t.Errorf("error %+v", e)
	}
	req = r22Ask("gpt-4", "Is a banana a fruit? Reply as JSON.")
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}
	e = r22Err(t, "openai_err_400_json_object_unsupported", "", req)
	if e.Kind != provider.KindCapability || e.Param != "response_format.type" ||
		e.Message != "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model." {
		t.Errorf("error %+v", e)
	}
	for _, tc := range []struct{ param, msg, want string }{
		{"response_format.json_schema.name", "Invalid schema for response_format 'a b': …", ""},
		{"", "Invalid schema for response_format 'x': …", ""},
		{"response_format", "Missing required parameter: 'response_format.json_schema'.", ""},
		{"response_format", "This model does not support response format `json_object`.", "response_format.type"},
	} {
		if got := responseFormatParam(tc.param, tc.msg); got != tc.want {
			t.Errorf("responseFormatParam(%q, %q) = %q, want %q", tc.param, tc.msg, got, tc.want)
		}
	}
}

// TestRound26GroqCompoundJSONObject: groq/compound-mini in JSON mode
// (json_object, December 2025) ran Python to build its answer: the
// content {"is_fruit": true} (a space after the colon, kept as sent: the
// answer's text is the model's, byte for byte), the tool run in
// "reasoning" as Groq writes it (<tool>…</tool><output>…</output>), the
// run itself in executed_tools (warned, not kept). No bug.
func TestRound26GroqCompoundJSONObject(t *testing.T) {
	t.Parallel()
	req := r22Ask("groq/compound-mini", `Is a banana a fruit? Do not include an explanation. Reply ONLY as JSON according to the provided schema: {"is_fruit": bool}.`)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT}
	res, body := mgbUnary(t, "real_maruel_groq_compound_mini_json_object", r22Groq, "Sat, 13 Dec 2025 15:36:51 GMT", req)
	if !mgbJSONEqual(t, body["response_format"], `{"type":"json_object"}`) {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "<tool>python(print({\"is_fruit\": True}))</tool>\n<output>{'is_fruit': True}\n</output>" ||
		parts[1].GetText() != `{"is_fruit": true}` {
		t.Fatalf("parts %v", parts)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != warnExecutedTools {
		t.Errorf("warnings %v", w)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
}
