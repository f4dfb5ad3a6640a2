package openai

import (
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound26ModerationBlockPolicy: gpt-5 asked for moderation with a
// block policy on input and output (pydantic-ai's
// test_openai_responses_moderation_block_policy cassette) answered "I want
// to kill them." with status completed, an encrypted reasoning item and a
// supportive message, although its moderation results flag the input
// (harassment, harassment/threatening, violence 0.95). The answer stays
// complete (STOP, as the status says) and the results stay in
// meta.extended.moderation; a warning now says the input was flagged
// (before, nothing outside meta.extended did), and none for the output,
// which was not.
func TestRound26ModerationBlockPolicy(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_moderation_block_policy"
	res := replayRound13Unary(t, name, r21Request("gpt-5", "I want to kill them."))
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetId() != "rs_0389eb20a98f6e92006a6103ba8d1081a3a25b6853727c9f28" ||
		!strings.HasPrefix(parts[0].GetReasoning().GetSignature(), "gAAAAABqYQPRvLOf") ||
		!strings.HasPrefix(parts[1].GetText(), "I'm really sorry you're feeling this much anger.") {
		t.Fatalf("parts %v", parts)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	want := []string{"OpenAI's moderation flagged the input (harassment, harassment/threatening, violence); " +
		"the provider answered anyway (see meta.extended.moderation)"}
	if got := m.GetWarnings(); len(got) != 1 || got[0] != want[0] {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if !strings.Contains(extendedJSON(t, m, extModeration), `"violence":0.9530094249314258`) {
		t.Errorf("moderation %s", extendedJSON(t, m, extModeration))
	}
	if u := m.GetUsage(); u.GetInputTokens() != 12 || u.GetOutputTokens() != 1351 || u.GetReasoningTokens() != 1024 {
		t.Errorf("usage %v", u)
	}
}

// TestRound26ModerationFlaggedStream: the same warning on a stream, from
// the moderation results in response.completed, for a flagged output.
func TestRound26ModerationFlaggedStream(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body := sseEvent("response.created", `{"type":"response.created","response":{"id":"resp_r26mod_1","status":"in_progress","output":[],"moderation":null}}`) +
		sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_r26mod_1","status":"completed","output":[],`+
			`"moderation":{"input":{"type":"moderation_result","flagged":false,"categories":{"violence":false}},`+
			`"output":{"type":"moderation_result","flagged":true,"categories":{"self-harm":true,"violence":false}}}}}`)
	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	f := accFold(t, evs)
	want := "OpenAI's moderation flagged the output (self-harm); the provider answered anyway (see meta.extended.moderation)"
	found := false
	for _, w := range f.Meta.GetWarnings() {
		found = found || w == want
	}
	if !found {
		t.Errorf("warnings %q", f.Meta.GetWarnings())
	}
}
