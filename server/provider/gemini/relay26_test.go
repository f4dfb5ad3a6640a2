package gemini

import (
	"context"
	"errors"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

func init() {
	round17Recordings = append(round17Recordings, "error_400_cloudcode_claude_wrapped")
}

// TestRelay26CloudCodeClaudeWrapped: Cloud Code (Antigravity) serving
// Claude answers Anthropic's refusal as a 400 INVALID_ARGUMENT whose
// message is Anthropic's error body as JSON (znlsl/Antigravity2Api#11,
// testdata/error_400_cloudcode_claude_wrapped.http): the message is
// Anthropic's words (it was the JSON text), Anthropic's request id kept
// as the upstream's; still an invalid request. Anthropic's context-length
// words inside such a body read as a context length; a Status message
// that is other JSON stays as it is.
func TestRelay26CloudCodeClaudeWrapped(t *testing.T) {
	t.Parallel()
	const want = "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
	for _, stream := range []bool{false, true} {
		p, _ := replay(t, "error_400_cloudcode_claude_wrapped")
		var err error
		if stream {
			_, err = p.Stream(context.Background(), generateCases(t)["plain"])
		} else {
			_, err = p.Generate(context.Background(), generateCases(t)["plain"])
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("stream %v: error %v", stream, err)
		}
		if pe.Kind != provider.KindInvalidRequest || pe.HTTPStatus != 400 || pe.Message != want || pe.Code != "INVALID_ARGUMENT" ||
			pe.Extended["upstream_request_id"] != "req_vrtx_011CWqmRVYLu5HdUJcKnekTy" || pe.SignatureRefused {
			t.Errorf("stream %v: kind %v status %d message %q code %q extended %v", stream, pe.Kind, pe.HTTPStatus, pe.Message, pe.Code, pe.Extended)
		}
	}
	p, _ := replay(t, "error_400_cloudcode_claude_wrapped")
	for _, tc := range []struct {
		msg  string
		kind provider.Kind
		out  string
	}{
		{`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209303 tokens > 200000 maximum"},"request_id":"req_vrtx_r26relayCtx"}`, provider.KindContextLength, "prompt is too long: 209303 tokens > 200000 maximum"},
		{`{"detail":"prompt is too long"}`, provider.KindInvalidRequest, `{"detail":"prompt is too long"}`},
	} {
		e := &provider.Error{HTTPStatus: 400, Kind: provider.KindInvalidRequest}
		p.applyStatus(e, &statusError{Code: 400, Message: tc.msg, Status: "INVALID_ARGUMENT"})
		if e.Kind != tc.kind || e.Message != tc.out {
			t.Errorf("%s: kind %v message %q", tc.msg, e.Kind, e.Message)
		}
	}
}
