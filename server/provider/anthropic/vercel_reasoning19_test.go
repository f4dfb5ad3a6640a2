package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Claude 5 thinking from the Vercel AI SDK's recordings (testdata/README.md,
// "Session 19"): claude-opus-5 at effort high, unary, a summarized
// thinking block and its signature; claude-sonnet-5 with the thinking
// display omitted, streamed: a thinking block whose only delta is its
// signature. Both carry output_tokens_details.thinking_tokens. The next
// turn must send each block back as it came (Anthropic verifies the
// signature; a thinking block of an omitted display goes back with its
// empty text).

// reasoning19Question is a plain question with thinking on.
func reasoning19Question(model string) *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Solve it and check the answer."))},
		Options:  &llmrelayv1.GenerationOptions{ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH}}
}

// reasoning19SentBack builds the next turn from answer and returns the
// content blocks of the assistant message sent, as JSON.
func reasoning19SentBack(t *testing.T, p *Provider, model string, answer *llmrelayv1.Message) string {
	t.Helper()
	req := reasoning19Question(model)
	req.Messages = append(req.Messages, answer, msgOf(llmrelayv1.Role_ROLE_USER, text("Thanks. And x^2-1?")))
	body, _, warnings, err := p.buildRequest(req, false)
	if err != nil || len(warnings) != 0 {
		t.Fatal(err, warnings)
	}
	var wire struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		t.Fatal(err)
	}
	if len(wire.Messages) != 3 || wire.Messages[1].Role != "assistant" {
		t.Fatalf("messages %s", body)
	}
	return string(wire.Messages[1].Content)
}

func TestReasoning19Opus5Unary(t *testing.T) {
	t.Parallel()
	const name = "real_reasoning19_opus_5_reasoning_high"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	p := newTestProvider(t, srv.URL)
	res, err := p.Generate(context.Background(), reasoning19Question("claude-opus-5"))
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, "testdata/"+name+".golden", renderResult(t, res))
	var rec struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(providertest.Load(t, "testdata/"+name+".http").Body, &rec); err != nil || len(rec.Content) != 2 {
		t.Fatal(err, rec)
	}
	var thinking struct{ Thinking, Signature string }
	var answer struct{ Text string }
	if json.Unmarshal(rec.Content[0], &thinking) != nil || json.Unmarshal(rec.Content[1], &answer) != nil {
		t.Fatal("recording blocks")
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts %v", parts)
	}
	if r := parts[0].GetReasoning(); r.GetText() != thinking.Thinking || r.GetSignature() != thinking.Signature || r.GetRedacted() || r.GetId() != "" {
		t.Errorf("reasoning %v", r)
	}
	if parts[1].GetText() != answer.Text {
		t.Errorf("text %q", parts[1].GetText())
	}
	// output_tokens counts the thinking: 139 of 1699.
	if u := res.Meta.GetUsage(); u.GetInputTokens() != 51 || u.GetOutputTokens() != 1699 || u.GetReasoningTokens() != 139 || u.GetTotalTokens() != 1750 {
		t.Errorf("usage %v", u)
	}
	if res.Meta.GetResponseId() != "msg_011CdMNhurHSJCxCC2NB7WYc" || res.Meta.GetServiceTier() != "standard" ||
		res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || res.Meta.GetProviderFinishReason() != "end_turn" {
		t.Errorf("meta %v", res.Meta)
	}
	// Both blocks go back as received, in order.
	got := reasoning19SentBack(t, p, "claude-opus-5", res.Message)
	want := `[{"type":"thinking","thinking":` + quote(t, thinking.Thinking) + `,"signature":"` + thinking.Signature + `"},{"type":"text","text":` + quote(t, answer.Text) + `}]`
	if got != want {
		t.Errorf("sent back\n%s\nwant\n%s", got, want)
	}
}

const reasoning19OmittedSig = "EsECCokBCBAYAipA9i3HF1aHpQITkdN8OvLd33gdPZEyLKJA9EvxTXumYzG5xgpLkCYbGOTUkjuimP/4sMuSvrTX1hLxRAhUtlZnJzIPY2xhdWRlLXNvbm5ldC01OABCCHRoaW5raW5nWiQzYjkzYTVkZC03MzAyLTQ4M2YtYWVhZS0zNjIwNzU1NDhhZTESDNlVEoXuZoEhE1ILexoM2QA6DHy1pUp9oyMeIjBldJ41NEz7Tg/NO6ItwQvkCuIr2LUCCrD0ShC3nkvprczQ+tsGC4CciunsElK19d8qZR3MIIsljKJ5WxgDQoiThZBZRhXy/sQ8rG4YwfXR8/an7Syp9kKbJSMWVOb2Ad/xKL3CtNKN/mNQ/7jnw7RyN2m+JHfCRzlRG2EJ9y4CuMMYeD/RD33OWQOps1lO2FrUnc0exlyaGAE="

func TestReasoning19Sonnet5OmittedThinkingStream(t *testing.T) {
	t.Parallel()
	const name = "real_reasoning19_sonnet_5_omitted_thinking_stream"
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	p := newTestProvider(t, srv.URL)
	s, err := p.Stream(context.Background(), reasoning19Question("claude-sonnet-5"))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(s)
	providertest.Golden(t, "testdata/"+name+".golden", renderEvents(t, evs, err))
	if err != nil {
		t.Fatal(err)
	}
	// Block 0's deltas (its opening one, empty, then its signature): no
	// text, not redacted.
	var sig string
	for _, ev := range evs {
		if r := ev.Reasoning; ev.Kind == provider.EventReasoning {
			if r.Index != 0 || r.Text != "" || r.Redacted {
				t.Errorf("reasoning delta %+v", r)
			}
			sig += r.Signature
		}
	}
	if sig != reasoning19OmittedSig {
		t.Errorf("signature %q", sig)
	}
	f := foldEvents(t, evs)
	parts := f.message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetSignature() != reasoning19OmittedSig || parts[0].GetReasoning().GetText() != "" {
		t.Fatalf("parts %v", parts)
	}
	const answer = "# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\nThe Euclidean algorithm works by repeated division: divide the larger number by the smaller, then replace the larger number with the smaller number, and the smaller number with the remainder. Repeat until the remainder is 0.\n\n## Step 1: Divide 1071 by 462\n$$1071 = 2 \\times 462 + 147$$\n\n**Check:** $2 \\times 462 = 924$, and $1071 - 924 = 147$ ✓\n\n## Step 2: Divide 462 by 147\n$$462 = 3 \\times 147 + 21$$\n\n**Check:** $3 \\times 147 = 441$, and $462 - 441 = 21$ ✓\n\n## Step 3: Divide 147 by 21\n$$147 = 7 \\times 21 + 0$$\n\n**Check:** $7 \\times 21 = 147$, and $147 - 147 = 0$ ✓\n\n## Conclusion\nSince the remainder is now **0**, the algorithm stops. The GCD is the **last nonzero remainder**, which is:\n\n$$\\gcd(1071, 462) = 21$$\n\n## Verification\n- $1071 = 21 \\times 51$\n- $462 = 21 \\times 22$\n\nBoth divide evenly by 21, confirming the answer. ✅"
	if parts[1].GetText() != answer {
		t.Errorf("text %q", parts[1].GetText())
	}
	if u := f.meta.GetUsage(); u.GetInputTokens() != 47 || u.GetOutputTokens() != 496 || u.GetReasoningTokens() != 62 {
		t.Errorf("usage %v", u)
	}
	if f.meta.GetResponseId() != "msg_011CdZqGKa1m7G8uTzmdLcQr" || f.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("meta %v", f.meta)
	}
	// The omitted thinking goes back with its empty text and signature.
	got := reasoning19SentBack(t, p, "claude-sonnet-5", f.message)
	want := `[{"type":"thinking","thinking":"","signature":"` + reasoning19OmittedSig + `"},{"type":"text","text":` + quote(t, answer) + `}]`
	if got != want {
		t.Errorf("sent back\n%s\nwant\n%s", got, want)
	}
}

func quote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
