package server_test

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestAgentCutTurnEndsRun: a round whose tool call the output token limit
// cut runs none of its calls (the client is asked for nothing) and ends
// the run with LENGTH and a warning naming the call; before, the cut
// call's partial arguments went to the tool.
func TestAgentCutTurnEndsRun(t *testing.T) {
	t.Parallel()
	c := startBuiltinAgent(t, "http://127.0.0.1:1")
	setup := echoSetup(t)
	limit := int32(1) // the built-in provider cuts the first call at one token
	setup.Options = &llmrelayv1.GenerationOptions{MaxTokens: &limit}
	evs, err := agentRun(context.Background(), t, c, setup, answerAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if r := ev.GetToolCallRequest(); r != nil {
			t.Errorf("a cut turn's call was sent to run: %v", r)
		}
	}
	end := evs[len(evs)-1].GetEnd()
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || end.GetMeta().GetToolRounds() != 0 {
		t.Fatalf("end %v, want LENGTH after no tool round", end)
	}
	warned := false
	for _, w := range end.GetMeta().GetWarnings() {
		warned = warned || strings.Contains(w, "was cut by the output token limit")
	}
	if !warned {
		t.Errorf("no warning names the cut call: %q", end.GetMeta().GetWarnings())
	}
}
