package openai

import (
	"testing"

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
// model lacks, not the schema. Invalid request, not retried; the request
// id header of the first is read.
func TestRound26GroqJSONSchemaRefusedPerModel(t *testing.T) {
	t.Parallel()
	const msg = "This model does not support response format `json_schema`. See supported models at https://console.groq.com/docs/structured-outputs#supported-models"
	e, body := mgbErr(t, "real_maruel_groq_llama31_json_schema_stream_err", r22Groq, r26BananaReq("llama-3.1-8b-instant"), true)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_request_error" || e.Param != "response_format.type" ||
		e.Message != msg || e.RetryAfter != 0 || e.RequestID != "req_01k11s5fvreh8r9wfnsg6t06km" {
		t.Errorf("error %+v", e)
	}
	if !mgbJSONEqual(t, body["response_format"], `{"type":"json_schema","json_schema":{"name":"response","schema":`+r26BananaSchema+`}}`) || body["stream"] != true {
		t.Errorf("request %v", body)
	}
	e, _ = mgbErr(t, "real_maruel_groq_compound_mini_json_schema_err", r22Groq, r26BananaReq("groq/compound-mini"), false)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "invalid_request_error" || e.Param != "response_format.type" ||
		e.Message != msg || e.RetryAfter != 0 {
		t.Errorf("error %+v", e)
	}
}
