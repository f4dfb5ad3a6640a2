package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestRound22MgbPollinationsNestedError: Pollinations (text.pollinations.ai,
// model "gemini", August 2025) refused square_root's schema: 400 with
// {"error": "400 Bad Request", "status": 400, "details": {"error":
// {"message": "openai error: Invalid JSON payload received. Unknown name
// \"$schema\" at 'tools[0].function_declarations[0].parameters': Cannot
// find field.\n…\"additionalProperties\"…", "type": null, "param": null,
// "code": 400}, "provider": "openai"}}. **Bug:** the message was "400
// Bad Request", the status's text; it is the upstream's message now, its
// code 400, and details.provider the upstream provider. An invalid
// request.
func TestRound22MgbPollinationsNestedError(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		e, body := mgbErr(t, "real_maruel_pollinations_gemini_schema_err", "https://text.pollinations.ai/v1", mgbSqrtReq("gemini", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), stream)
		const msg = "openai error: Invalid JSON payload received. Unknown name \"$schema\" at 'tools[0].function_declarations[0].parameters': Cannot find field.\n" +
			"Invalid JSON payload received. Unknown name \"additionalProperties\" at 'tools[0].function_declarations[0].parameters': Cannot find field."
		if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != 400 || e.Code != "400" || e.Message != msg || e.Extended[extUpstreamProvider] != "openai" {
			t.Errorf("stream %v: %+v", stream, e)
		}
		if body["tool_choice"] != "required" {
			t.Errorf("request %v", body)
		}
	}
}
