package fold

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// BenchmarkAccumulator folds a typical streamed answer: start, 20 text
// deltas, two tool calls in 3 fragments each, usage, end; then builds the
// message.
func BenchmarkAccumulator(b *testing.B) {
	var evs []*llmrelayv1.StreamToolsResponse
	evs = append(evs, &llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_Start{Start: &llmrelayv1.StreamStart{RequestId: "r"}}})
	for range 20 {
		evs = append(evs, &llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "word "}}})
	}
	for _, frag := range []string{`{"city"`, `:"Par`, `is"}`} {
		for i, id := range []string{"call_a", "call_b"} {
			d := &llmrelayv1.ToolCallDelta{CallId: id, Index: int32(i), ArgumentsDelta: frag}
			if frag == `{"city"` {
				d.Name = "get_weather"
			}
			evs = append(evs, &llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{ToolCallDelta: d}})
		}
	}
	evs = append(evs,
		&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_Usage{Usage: &llmrelayv1.Usage{InputTokens: 10, OutputTokens: 20, TotalTokens: 30}}},
		&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_End{End: &llmrelayv1.StreamEnd{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS}}})
	b.ReportAllocs()
	for b.Loop() {
		var a Accumulator
		for _, ev := range evs {
			if err := a.AddTools(ev); err != nil {
				b.Fatal(err)
			}
		}
		m := a.Message()
		if len(m.GetParts()) != 3 {
			b.Fatalf("parts = %d", len(m.GetParts()))
		}
	}
}
