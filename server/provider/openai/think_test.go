package openai

import (
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestThinkStream: a streamed answer whose content opens with a think
// block, the tags in deltas of their own as Together sends them, gives
// reasoning events then text events, the same message as unary, and a
// block cut by the finish is flushed before the finish reason.
func TestThinkStream(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(content string) string {
		b, err := json.Marshal(content)
		if err != nil {
			t.Fatal(err)
		}
		return `data: {"id":"think-1","choices":[{"index":0,"delta":{"role":"assistant","content":` + string(b) + `}}]}` + "\n\n"
	}
	body := chunk("<think>") + chunk("\n") + chunk("Okay") + chunk("</") + chunk("think>\n\n") + chunk("Hi") +
		`data: {"id":"think-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	evs, _, err := collect(t, streamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []provider.EventKind
	for _, ev := range evs {
		if ev.Kind == provider.EventReasoning || ev.Kind == provider.EventText {
			kinds = append(kinds, ev.Kind)
		}
	}
	f := accFold(t, evs)
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "\nOkay" || parts[1].GetText() != "\n\nHi" {
		t.Fatalf("parts %v", parts)
	}
	if kinds[0] != provider.EventReasoning || kinds[len(kinds)-1] != provider.EventText {
		t.Errorf("event kinds %v", kinds)
	}
	res, err := p.parseChatResponse([]byte(`{"id":"think-1","choices":[{"index":0,"message":{"role":"assistant","content":"<think>\nOkay</think>\n\nHi"},"finish_reason":"stop"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Message.GetParts(); len(u) != 2 || u[0].GetReasoning().GetText() != "\nOkay" || u[1].GetText() != "\n\nHi" {
		t.Errorf("unary parts %v", u)
	}

	// Cut by the length limit inside the block: the held-back "</th" is
	// reasoning, released before the finish reason.
	body = chunk("<think>") + chunk("long </th") +
		`data: {"id":"think-2","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n"
	evs, _, err = collect(t, streamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	f = accFold(t, evs)
	if parts := f.Message.GetParts(); len(parts) != 1 || parts[0].GetReasoning().GetText() != "long </th" {
		t.Errorf("parts %v", parts)
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	last := -1
	for i, ev := range evs {
		if ev.Kind == provider.EventReasoning {
			last = i
		}
		if ev.Kind == provider.EventMeta && ev.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED && last < 0 {
			t.Errorf("finish before the reasoning")
		}
	}
}
