package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestResponsesStreamEncryptedFromCompleted: an Azure OpenAI deployment
// ends a reasoning item (output_item.done) without its encrypted content
// and sends it only in response.completed's output (earendil-works/pi#4256
// describes it). The folded reasoning part still gets it as its
// signature, so the next unstored turn can send it back, before the
// message by its item id. Hand-built from that description, ids of its
// own.
func TestResponsesStreamEncryptedFromCompleted(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const enc = "gAAAAz1-encrypted-only-at-the-end"
	body := sseEvent("response.created", `{"type":"response.created","response":{"id":"resp_az1","status":"in_progress","model":"o4-mini","output":[]}}`) +
		sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_az1","type":"reasoning","summary":[]}}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_az1","type":"reasoning","summary":[]}}`) +
		sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_az1","type":"message","status":"in_progress","role":"assistant","content":[]}}`) +
		sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","output_index":1,"content_index":0,"item_id":"msg_az1","delta":"Four."}`) +
		sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_az1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Four.","annotations":[]}]}}`) +
		sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_az1","status":"completed","model":"o4-mini","output":[`+
			`{"id":"rs_az1","type":"reasoning","encrypted_content":"`+enc+`","summary":[]},`+
			`{"id":"msg_az1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Four.","annotations":[]}]}],`+
			`"usage":{"input_tokens":9,"output_tokens":20,"total_tokens":29,"output_tokens_details":{"reasoning_tokens":16}}}}`)
	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatal(err)
	}
	msg := accFold(t, evs).Message
	parts := msg.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetId() != "rs_az1" || parts[0].GetReasoning().GetSignature() != enc ||
		parts[1].GetText() != "Four." || parts[1].GetItemId() != "msg_az1" {
		t.Fatalf("folded %v", msg)
	}
	req := &provider.Request{Model: "o4-mini", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("2 + 2?")), msg, msgOf(llmrelayv1.Role_ROLE_USER, text("And 3 + 3?"))}}
	b, warnings, err := p.buildResponsesRequest(req, false)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %q", err, warnings)
	}
	input := decodeBody(t, b)["input"].([]any)
	if len(input) != 4 {
		t.Fatalf("input %v", input)
	}
	rs, _ := input[1].(map[string]any)
	m, _ := input[2].(map[string]any)
	if rs["id"] != "rs_az1" || rs["encrypted_content"] != enc || m["id"] != "msg_az1" {
		t.Errorf("input %v", input)
	}
}
