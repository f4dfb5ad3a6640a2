package anthropic

import (
	"errors"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// rw3FruitsSchema is maruel/genai's JSONSchemaArray schema: an array at
// the top, which the forced-tool way cannot give (a tool's input is an
// object), so the model's structured_output: native.
const rw3FruitsSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","items":{"properties":{"name":{"type":"string"},"color":{"type":"string"}},"additionalProperties":false,"type":"object","required":["name","color"]},"type":"array"}`

func rw3FruitsRequest() *provider.Request {
	req := r21Request("claude-haiku-4-5-20251001", "Name two fruits with their color. Do not include an explanation. Reply ONLY as JSON.", 64000, 0)
	req.Options.ResponseFormat = &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: rw3FruitsSchema}
	req.NativeStructuredOutput = true
	return req
}

// TestRound22w3bJSONSchemaArray: claude-haiku-4-5-20251001 (September
// 2026) with output_config.format json_schema of a top-level array, unary
// and streamed (two answers, the same text): [{"name":"apple","color":
// "red"},{"name":"banana","color":"yellow"}], end_turn, 229 in, 23 out
// (the stream's message_start 1 provisional); container and stop_details
// null; requests limit 20000, tokens 12000000 (input 10000000, output
// 2000000); Anthropic-Workspace-Id, Server-Timing and Traceresponse kept
// in the recording, none of them a request id. Both requests are the
// recorded ones (rmgSame). Without native structured output ours refuses
// the array schema before sending.
func TestRound22w3bJSONSchemaArray(t *testing.T) {
	t.Parallel()
	const model = "claude-haiku-4-5-20251001"
	const answer = `[{"name":"apple","color":"red"},{"name":"banana","color":"yellow"}]`
	const unary, stream = "real_maruel_haiku45_json_array", "real_maruel_haiku45_json_array_stream"
	res, srv := r22Unary(t, unary, rw3FruitsRequest())
	checkLLMWant(t, unary, res.Message, res.Meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer)},
		responseID: "msg_011CfB3aRXCtTcdJQcoUAn5C", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(229, 23, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 12000000, tokensReset: rmgReset(t, "2026-09-18T14:15:09Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
	})
	if got := res.Meta.GetRateLimit().GetRequestsResetTime().AsTime(); !got.Equal(rmgReset(t, "2026-09-18T14:15:08Z")) {
		t.Errorf("requests reset %v, want 14:15:08Z", got)
	}
	r22SameRequest(t, srv.Last(t).Body, unary, rmgSame)

	_, f, srv2 := r21Stream(t, stream, rw3FruitsRequest())
	checkLLMWant(t, stream, f.message, f.meta, llmWant{
		parts:      []*llmrelayv1.Part{text(answer)},
		responseID: "msg_011CfB3aRh7pNfvvRjaK9NLx", model: model,
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
		usage:         usageOf(229, 23, 0, 0, 0),
		requestsLimit: 20000, tokensLimit: 12000000, tokensReset: rmgReset(t, "2026-09-18T14:15:08Z"),
		extended: map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
	})
	r22SameRequest(t, srv2.Last(t).Body, stream, rmgSame)

	// Without structured_output: native, the forced tool cannot carry an
	// array (a tool's input is an object): ours refuses before sending,
	// saying so, rather than sending what the API would refuse.
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	req := rw3FruitsRequest()
	req.NativeStructuredOutput = false
	var pe *provider.Error
	if _, _, _, err := p.buildRequest(req, false); !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest ||
		!strings.Contains(pe.Message, `"type": "object" at the root`) {
		t.Errorf("array schema through a forced tool: err %v, want our invalid request naming the root type", err)
	}
}
