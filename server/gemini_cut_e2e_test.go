package server_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestGeminiCallCutByMaxTokens: a Gemini answer cut by MAX_TOKENS while
// writing its last functionCall (whose args are the object parsed so far)
// reports that call with arguments_valid false, unary and streamed, with a
// warning; the whole call before it stays valid.
func TestGeminiCallCutByMaxTokens(t *testing.T) {
	t.Parallel()
	var gemini providerCase
	for _, pc := range providerCases {
		if pc.name == "gemini" {
			gemini = pc
		}
	}
	up := providertest.Replay(t, providertest.Load(t, "provider/gemini/testdata/max_tokens_call.http"),
		providertest.Load(t, "provider/gemini/testdata/stream_max_tokens_call.http"))
	c, _ := startWith(t, gemini.yaml, up.URL)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("What's the weather in Paris and London?")}
	tools := weatherTools(t)
	unary, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "m", Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	var valid []bool
	for _, p := range unary.GetMessage().GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			valid = append(valid, tc.GetArgumentsValid())
		}
	}
	if len(valid) != 2 || !valid[0] || valid[1] {
		t.Errorf("unary arguments_valid %v, want [true false]", valid)
	}
	if m := unary.GetMeta(); m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || !cutWarning(m.GetWarnings()) {
		t.Errorf("unary meta %v", m)
	}
	s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "m", Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	valid = nil
	var end *llmrelayv1.StreamEnd
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := ev.GetToolCallDone(); d != nil {
			valid = append(valid, d.GetToolCall().GetArgumentsValid())
		}
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
	if len(valid) != 2 || !valid[0] || valid[1] {
		t.Errorf("stream tool_call_done arguments_valid %v, want [true false]", valid)
	}
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || !cutWarning(end.GetMeta().GetWarnings()) {
		t.Errorf("stream end %v", end)
	}
}

func cutWarning(ws []string) bool {
	for _, w := range ws {
		if strings.Contains(w, "was cut by the token limit") {
			return true
		}
	}
	return false
}
