package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// orderedSchema lists its properties in an order no map would keep
// (reasoning before answer; strict structured output generates fields in
// schema order, so the order is part of the meaning).
const orderedSchema = `{"type":"object","properties":{"reasoning":{"type":"string"},"answer":{"type":"string"},"city":{"type":"string"}},"required":["reasoning","answer","city"]}`

// TestToolSchemaKeyOrderEveryProvider: a tool schema sent as JSON text
// reaches every provider type with its key order intact.
func TestToolSchemaKeyOrderEveryProvider(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.Replay(t, providertest.Load(t, "provider/"+pc.unary))
			c, _ := startWith(t, pc.yaml, up.URL)
			// Spaces in the caller's text are not meaning; the order is.
			spaced := strings.ReplaceAll(orderedSchema, `":`, `": `)
			_, err := c.Tools(context.Background(), &llmrelayv1.ToolsRequest{Model: "m",
				Messages: []*llmrelayv1.Message{user("Weather in Paris and London?")},
				Tools: []*llmrelayv1.Tool{
					{Name: "get_weather", Parameters: spaced},
					{Name: "get_time", Parameters: `{"type":"object","properties":{"zone":{"type":"string"},"city":{"type":"string"}}}`},
				}})
			if err != nil {
				t.Fatal(err)
			}
			body := string(up.Last(t).Body)
			for _, want := range []string{
				`"properties":{"reasoning":{"type":"string"},"answer":{"type":"string"},"city":{"type":"string"}}`,
				`"required":["reasoning","answer","city"]`,
				`"properties":{"zone":{"type":"string"},"city":{"type":"string"}}`,
			} {
				if !strings.Contains(compactArgs(body), want) {
					t.Errorf("the provider did not receive %s\nbody: %s", want, body)
				}
			}
		})
	}
}

// TestInvalidSchemasRejected: schemas that are not JSON, or not JSON
// Schemas, are InvalidArgument naming the field before any provider call.
func TestInvalidSchemasRejected(t *testing.T) {
	t.Parallel()
	up := providertest.Replay(t) // any call would fail the test: nothing to replay
	c, _ := startWith(t, providerCases[0].yaml, up.URL)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("hi")}
	for _, tc := range []struct {
		name, params, schema, field, msg string
	}{
		{"tool params not JSON", `{"type":"object",`, "", "tools[1].parameters", "not valid JSON"},
		{"tool params a JS object's string form", `[object Object]`, "", "tools[1].parameters", "not valid JSON"},
		{"tool params wrong keyword type", `{"type":"object","properties":{"a":{"type":12}}}`, "", "tools[1].parameters", "not a valid JSON Schema"},
		{"tool params an array", `[{"type":"object"}]`, "", "tools[1].parameters", "a JSON Schema is an object"},
		{"tool params external ref", `{"$ref":"file:///etc/passwd"}`, "", "tools[1].parameters", "not allowed"},
		// Function parameters are an object of named arguments on every
		// provider; these compiled as schemas and reached the provider.
		{"tool params a string schema", `{"type":"string"}`, "", "tools[1].parameters", `"type" is "string", want "object"`},
		{"tool params a boolean schema", `true`, "", "tools[1].parameters", "not a boolean schema"},
		{"tool params types without object", `{"type":["string","null"]}`, "", "tools[1].parameters", `does not allow "object"`},
		{"response schema not JSON", "", `{"type":`, "options.response_format.schema", "not valid JSON"},
		{"response schema bad pattern", "", `{"type":"string","pattern":"("}`, "options.response_format.schema", "not a valid JSON Schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools := []*llmrelayv1.Tool{{Name: "ok", Parameters: `{"type":"object"}`}, {Name: "bad", Parameters: tc.params}}
			var opts *llmrelayv1.GenerationOptions
			if tc.schema != "" {
				opts = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
					Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: tc.schema}}
			}
			_, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "m", Messages: msgs, Tools: tools, Options: opts})
			st, _, br := statusDetails(t, err)
			if st.Code() != codes.InvalidArgument || len(br.GetFieldViolations()) != 1 ||
				br.GetFieldViolations()[0].GetField() != tc.field || !strings.Contains(st.Message(), tc.msg) {
				t.Fatalf("got %v %v, want InvalidArgument on %s saying %q", status.Convert(err).Proto(), br, tc.field, tc.msg)
			}
		})
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("%d provider calls for invalid requests", n)
	}
}
