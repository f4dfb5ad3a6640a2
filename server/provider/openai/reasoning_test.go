package openai

import "testing"

// TestReasoningSummaryWithEncrypted: OpenRouter relaying an OpenAI
// reasoning model gives a reasoning.summary and a reasoning.encrypted
// detail at one index. They are one readable block (the summary, the
// encrypted state as its signature, the item id), not a redacted one:
// redacted means the provider withheld the text.
func TestReasoningSummaryWithEncrypted(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.parseChatResponse([]byte(`{"id":"gen-1763981245-Qm8tXcVb2kRj","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"42.",` +
		`"reasoning":"**Computing** six times seven.","reasoning_details":[` +
		`{"type":"reasoning.summary","summary":"**Computing** six times seven.","format":"openai-responses-v1","index":0},` +
		`{"type":"reasoning.encrypted","data":"gAAAAABpJ9xQ-enc","id":"rs_0c5e7a1d","format":"openai-responses-v1","index":0}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 {
		t.Fatalf("parts = %v", parts)
	}
	r := parts[0].GetReasoning()
	if r.GetText() != "**Computing** six times seven." || r.GetSignature() != "gAAAAABpJ9xQ-enc" || r.GetId() != "rs_0c5e7a1d" || r.GetRedacted() {
		t.Errorf("reasoning = %v", r)
	}
	// Encrypted reasoning alone stays redacted.
	res, err = p.parseChatResponse([]byte(`{"id":"gen-1763981301-Wd4pLs9nTzAe","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"42.",` +
		`"reasoning_details":[{"type":"reasoning.encrypted","data":"gAAAAABpJ9yZ-enc","index":0}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Message.GetParts()[0].GetReasoning(); !r.GetRedacted() || r.GetSignature() != "gAAAAABpJ9yZ-enc" {
		t.Errorf("encrypted only: %v", r)
	}
}
