package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound24ReasoningRunBack: meta/muse-spark-1.3 through the Vercel AI
// Gateway's Responses endpoint (anomalyco/opencode's
// vercel-native/continues-responses-muse-reasoning-and-tools recording)
// answers with two reasoning items one after the other (ids
// "rs_<response>:rs_<item>", encrypted content, an empty summary text),
// then the call. The recorded follow-up, which the gateway answered,
// sends both reasoning items, then the call
// (testdata/opencode_vercelgw_muse_tool_loop.next_request.json, the
// recorded request). Ours left the first out ("another reasoning item
// follows it"), OpenAI's rule; it now goes, with the second, before the
// call they led to, to a server that is not OpenAI's or Azure's. To
// OpenAI the first is still left out: OpenAI refuses a reasoning item
// whose following item is not the one it led to.
func TestRound24ReasoningRunBack(t *testing.T) {
	t.Parallel()
	raw := r24RecordedInput(t, "opencode_vercelgw_muse_tool_loop")
	item := func(i int) map[string]any { return raw[i].(map[string]any) }
	// The assistant turn as our stream relays it: the reasoning parts
	// with their ids and encrypted content (no text: the summary text is
	// empty), then the call.
	rs := func(i int) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{
			Id: item(i)["id"].(string), Signature: item(i)["encrypted_content"].(string)}}}
	}
	answer := msgOf(llmrelayv1.Role_ROLE_ASSISTANT, rs(1), rs(2),
		toolCallPart(item(3)["call_id"].(string), "get_weather", item(3)["arguments"].(string)))
	build := func(baseURL string) ([]any, []string) {
		t.Helper()
		p, err := New(testKey, WithBaseURL(baseURL))
		if err != nil {
			t.Fatal(err)
		}
		req := r21Request("meta/muse-spark-1.3", "")
		req.Protocol, req.Reasoning = llmrelayv1.Protocol_PROTOCOL_TOOLS, true
		req.Tools = []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`}}
		req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris?")), answer,
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(item(4)["call_id"].(string), item(4)["output"].(string)))}
		b, warnings, err := p.buildResponsesRequest(req, true)
		if err != nil {
			t.Fatal(err)
		}
		var in struct {
			Input []any `json:"input"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		return in.Input, warnings
	}

	got, warnings := build("https://ai-gateway.vercel.sh/v1")
	if len(warnings) != 0 || len(got) != len(raw) {
		t.Fatalf("input %v, warnings %q", got, warnings)
	}
	call := map[string]any{}
	for k, v := range item(3) {
		if k != "id" { // the call's item id: not sent (TestRound24OpencodeToolLoop)
			call[k] = v
		}
	}
	for i, want := range []any{raw[1], raw[2], call, raw[4]} {
		if !reflect.DeepEqual(got[i+1], want) {
			t.Errorf("input[%d]\n got %v\nwant %v", i+1, got[i+1], want)
		}
	}

	got, warnings = build("https://api.openai.com/v1")
	if len(got) != len(raw)-1 || got[1].(map[string]any)["id"] != item(2)["id"] || len(warnings) != 1 ||
		!strings.Contains(warnings[0], "another reasoning item follows it") {
		t.Errorf("OpenAI: input %v, warnings %q", got, warnings)
	}
}
