package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestPhaseEndToEnd: an OpenAI Responses answer's message phase reaches
// the client (on every TextDelta of the item, and on the folded text
// part), goes back to OpenAI on the assistant message item of the next
// turn, and is dropped without a warning when the conversation continues
// on another provider (Anthropic: no place for it; the text is sent).
// Recordings: pydantic-ai's phase_streamed_on_part_start cassette.
func TestPhaseEndToEnd(t *testing.T) {
	t.Parallel()
	oai := providertest.Replay(t,
		providertest.Load(t, "provider/openai/testdata/real_pyd_openai_responses_phase_streamed_on_part_start_1.http"),
		providertest.Load(t, "provider/openai/testdata/real_pyd_openai_responses_phase_streamed_on_part_start_2.http"))
	claude := providertest.Replay(t, providertest.Load(t, "provider/anthropic/testdata/tools.http"))
	yaml := strings.ReplaceAll(`
providers:
  - {name: oai, type: openai, base_url: {{URL}}, api_key: sk-e2e-test-key-000000000000}
  - {name: claude, type: anthropic, base_url: CLAUDE, api_key: k-claude-000}
models:
  - {name: codex, provider: oai, upstream_model: gpt-5.5, capabilities: {tools: {format: openai-responses}}}
  - {name: sonnet, provider: claude, upstream_model: claude-sonnet-4-5, capabilities: {tools: {format: anthropic-messages}}}
`, "CLAUDE", claude.URL)
	c, _ := startWith(t, yaml, oai.URL)
	ctx := context.Background()
	msgs := []*llmrelayv1.Message{user("What is the capital of PotatoLand?")}

	stream := func(msgs []*llmrelayv1.Message) (*fold.Accumulator, []*llmrelayv1.TextDelta) {
		t.Helper()
		s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "codex", Messages: msgs, Tools: weatherTools(t)})
		if err != nil {
			t.Fatal(err)
		}
		acc := &fold.Accumulator{}
		var deltas []*llmrelayv1.TextDelta
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return acc, deltas
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := ev.GetTextDelta(); d != nil {
				deltas = append(deltas, d)
			}
			if err := acc.AddTools(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	acc, deltas := stream(msgs)
	if len(deltas) != 13 {
		t.Errorf("%d text deltas, want 13", len(deltas))
	}
	for i, d := range deltas {
		if d.GetPhase() != "commentary" {
			t.Errorf("delta %v without the item's phase", d)
		}
		// The item id on the message's first delta only: it begins the
		// part, the others continue it.
		if want := map[bool]string{true: "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce"}[i == 0]; d.GetItemId() != want {
			t.Errorf("delta %d: item id %q, want %q", i, d.GetItemId(), want)
		}
	}
	answer := acc.Message()
	var text *llmrelayv1.Part
	var callID string
	for _, p := range answer.GetParts() {
		if p.GetText() != "" {
			text = p
		}
		if tc := p.GetToolCall(); tc != nil {
			callID = tc.GetCallId()
		}
	}
	if text.GetText() != "I’ll check the capital lookup tool for “PotatoLand.”" || text.GetPhase() != "commentary" || callID != "call_LabG58Uhrq9kZvR52BYKjToD" {
		t.Fatalf("folded answer %v", answer)
	}

	// The next turn on OpenAI carries the phase back.
	next := append(msgs, answer, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{
		{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: callID, Content: "Potato City"}}}}})
	acc2, _ := stream(next)
	if p := acc2.Message().GetParts(); len(p) != 1 || p[0].GetPhase() != "final_answer" {
		t.Errorf("second answer %v", p)
	}
	if body := oai.Last(t).Body; !bytes.Contains(body, []byte(`"role":"assistant","content":[{"type":"output_text","text":"I’ll check the capital lookup tool for “PotatoLand.”","annotations":[]}],"phase":"commentary"`)) {
		t.Errorf("request without the message's phase: %s", body)
	}
	// And its item id (streamed on the message's first text delta, folded
	// by the client into the part), which pairs it with the reasoning
	// item before it, sent with its id.
	if body := oai.Last(t).Body; !bytes.Contains(body, []byte(`{"type":"message","id":"msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce","status":"completed"`)) ||
		!bytes.Contains(body, []byte(`{"type":"reasoning","id":"rs_0fabc13af1ee0049006a691dfe60b081a1baa444d3cf19afba"`)) {
		t.Errorf("request without the message's item id: %s", body)
	}
	if text.GetItemId() != "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce" {
		t.Errorf("folded text part %v", text)
	}

	// On Anthropic the text goes, the phase does not, and nothing warns.
	out, err := c.Tools(ctx, &llmrelayv1.ToolsRequest{Model: "sonnet", Messages: next, Tools: weatherTools(t)})
	if err != nil {
		t.Fatal(err)
	}
	body := claude.Last(t).Body
	if bytes.Contains(body, []byte("phase")) || bytes.Contains(body, []byte("commentary")) || !bytes.Contains(body, []byte("PotatoLand.”")) {
		t.Errorf("anthropic request %s", body)
	}
	for _, w := range out.GetMeta().GetWarnings() {
		if strings.Contains(w, "phase") {
			t.Errorf("warning %q", w)
		}
	}
}
