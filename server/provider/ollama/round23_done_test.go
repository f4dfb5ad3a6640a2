package ollama

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound23DoneConnectionClosed: Ollama's llm.DoneReason has a third
// value, DoneReasonConnectionClosed, which the runner ends a sequence with
// when it cannot pass a token on; the versions that name it write
// "connection_closed". The answer is cut before the model ended: OTHER,
// as any unknown reason, and now a warning that it is incomplete (it had
// none), unary and streamed.
func TestRound23DoneConnectionClosed(t *testing.T) {
	t.Parallel()
	const msg = `"content":"The first half of an ans"`
	u, s := e19Both(t, e19Final("connection_closed", msg), e19Stream("connection_closed", msg))
	for what, a := range map[string]e19Answer{"unary": u, "stream": s} {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		if a.meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || a.meta.GetProviderFinishReason() != "connection_closed" {
			t.Errorf("%s: finish %v (%q)", what, a.meta.GetFinishReason(), a.meta.GetProviderFinishReason())
		}
		if w := a.meta.GetWarnings(); len(w) != 1 || w[0] != `done_reason "connection_closed": Ollama's runner stopped generating when its connection closed; the answer is incomplete` {
			t.Errorf("%s: warnings %q", what, w)
		}
	}
}
