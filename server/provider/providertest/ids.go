package providertest

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// AlignIDs prepares two recordings of one answer, unary and streamed, for
// comparison: every recording has ids of its own (see the testdata
// READMEs), so the provider-made ids of got (tool call ids, reasoning item
// ids, matched by position) are set to those of want, after checking that
// each one got has is non-empty where want's is. Everything else must
// then be equal.
func AlignIDs(t testing.TB, got, want *llmrelayv1.Message) {
	t.Helper()
	gc, wc := calls(got), calls(want)
	AlignCallIDs(t, gc, wc)
	gr, wr := reasonings(got), reasonings(want)
	for i := range min(len(gr), len(wr)) {
		if (gr[i].GetId() == "") != (wr[i].GetId() == "") {
			t.Errorf("reasoning %d: id %q, the other recording %q", i, gr[i].GetId(), wr[i].GetId())
			continue
		}
		gr[i].Id = wr[i].GetId()
	}
}

// AlignCallIDs is AlignIDs for lists of tool calls.
func AlignCallIDs(t testing.TB, got, want []*llmrelayv1.ToolCall) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i].GetCallId() == "" || want[i].GetCallId() == "" {
			t.Errorf("call %d: id %q, the other recording %q", i, got[i].GetCallId(), want[i].GetCallId())
			continue
		}
		got[i].CallId = want[i].GetCallId()
	}
}

// AlignResponseIDs is AlignIDs for the ids of a response meta: the
// response id and the provider's request id.
func AlignResponseIDs(t testing.TB, got, want *llmrelayv1.ResponseMeta) {
	t.Helper()
	if (got.GetResponseId() == "") != (want.GetResponseId() == "") {
		t.Errorf("response id %q, the other recording %q", got.GetResponseId(), want.GetResponseId())
	} else {
		got.ResponseId = want.GetResponseId()
	}
	if (got.GetProviderRequestId() == "") != (want.GetProviderRequestId() == "") {
		t.Errorf("provider request id %q, the other recording %q", got.GetProviderRequestId(), want.GetProviderRequestId())
	} else {
		got.ProviderRequestId = want.GetProviderRequestId()
	}
}

func calls(m *llmrelayv1.Message) []*llmrelayv1.ToolCall {
	var out []*llmrelayv1.ToolCall
	for _, p := range m.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			out = append(out, tc)
		}
	}
	return out
}

func reasonings(m *llmrelayv1.Message) []*llmrelayv1.Reasoning {
	var out []*llmrelayv1.Reasoning
	for _, p := range m.GetParts() {
		if r := p.GetReasoning(); r != nil {
			out = append(out, r)
		}
	}
	return out
}
