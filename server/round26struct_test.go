package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound26StrictSchemaRefusalField: OpenAI's strict-mode refusal of a
// schema ("Invalid schema for response_format 'AISectionResponse': In
// context=(), 'required' is required …", "param": "response_format") is
// InvalidArgument on options.response_format.schema, the caller's field
// to fix, with OpenAI's words (and its schema path) in the message; it
// named options.response_format.
func TestRound26StrictSchemaRefusalField(t *testing.T) {
	t.Parallel()
	const yaml = `
defaults:
  retry: {max_attempts: 1}
providers:
  - {name: oai, type: openai, base_url: "{{URL}}/v1", api_key: sk-test-r26struct-0000}
models:
  - name: m
    provider: oai
    upstream_model: gpt-4o-2024-08-06
    capabilities: {chat: {format: openai-chat}}
`
	up := providertest.Replay(t, providertest.Load(t, "provider/openai/testdata/openai_err_400_strict_schema_required.http"))
	c, _ := startWith(t, yaml, up.URL)
	_, err := c.Chat(context.Background(), &llmrelayv1.ChatRequest{Model: "m", Messages: cityQuestion,
		Options: cityFormat(`{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`, 0)})
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br == nil || len(br.GetFieldViolations()) != 1 ||
		br.GetFieldViolations()[0].GetField() != "options.response_format.schema" {
		t.Fatalf("%v %v, want InvalidArgument on options.response_format.schema", st.Code(), br)
	}
	if !strings.Contains(st.Message(), "In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'id'.") {
		t.Errorf("message %q lost OpenAI's words", st.Message())
	}
}
