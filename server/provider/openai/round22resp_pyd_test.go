package openai

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"google.golang.org/protobuf/proto"
)

// r22Body reads the JSON body of a unary recording (after the blank line
// ending its headers).
func r22Body(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(td(name + ".http"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), "\n\n")
	if i < 0 {
		t.Fatalf("%s: no blank line after the headers", name)
	}
	var body map[string]any
	if err := json.Unmarshal(raw[i+2:], &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// TestRound22WebSearchPreview: pydantic-ai's cassette of gpt-4o with
// web_search_preview (August 2025), unary: one web_search_call (a search
// with its query), then the message whose five url_citation annotations
// index the text by code point (it has "–", "ú", "ó", "ð": byte offsets
// would cut the citations). The annotations are relayed as OpenAI sent
// them, the search as a warning.
func TestRound22WebSearchPreview(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_model_web_search_tool"
	res := r21Unary(t, name, r21Request("gpt-4o", "What are the latest news in Iceland?"))
	body := r22Body(t, name)
	msg := body["output"].([]any)[1].(map[string]any)
	content := msg["content"].([]any)[0].(map[string]any)
	want := content["text"].(string)
	parts := res.Message.GetParts()
	if len(parts) != 1 || parts[0].GetText() != want || parts[0].GetItemId() != "msg_68ac1e3616548192bc0265a336983d12014ed998995dd5ee" {
		t.Fatalf("parts %v", parts)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if m.GetResponseId() != "resp_68ac1e32b0108192973c8cfec29c2e61014ed998995dd5ee" || m.GetResolvedModel() != "gpt-4o-2024-08-06" ||
		m.GetServiceTier() != "default" || m.GetToolCallCount() != 0 {
		t.Errorf("meta %v", m)
	}
	if u := (&llmrelayv1.Usage{InputTokens: 319, OutputTokens: 556, TotalTokens: 875}); !proto.Equal(m.GetUsage(), u) {
		t.Errorf("usage %v, want %v", m.GetUsage(), u)
	}
	// The annotations, exactly as sent, each citing the markdown link
	// it spans (counted in code points).
	var anns []map[string]any
	if err := json.Unmarshal([]byte(extendedJSON(t, m, extAnnotations)), &anns); err != nil {
		t.Fatal(err)
	}
	sent := content["annotations"].([]any)
	if len(anns) != len(sent) {
		t.Fatalf("annotations %v", anns)
	}
	runes := []rune(want)
	for i, a := range anns {
		s := sent[i].(map[string]any)
		for _, k := range []string{"type", "title", "url", "start_index", "end_index"} {
			if a[k] != s[k] {
				t.Errorf("annotation %d %s: %v, want %v", i, k, a[k], s[k])
			}
		}
		cited := string(runes[int(s["start_index"].(float64)):int(s["end_index"].(float64))])
		if !strings.HasPrefix(cited, "([") || !strings.Contains(cited, s["url"].(string)) {
			t.Errorf("annotation %d spans %q", i, cited)
		}
	}
	if w := []string{`ignored output item of type "web_search_call" (id ws_68ac1e339ee8819289d2eb5604ce44ce014ed998995dd5ee; a tool the provider ran itself)`}; strings.Join(m.GetWarnings(), "\n") != strings.Join(w, "\n") {
		t.Errorf("warnings %q, want %q", m.GetWarnings(), w)
	}
}

// TestRound22ModerationStream: pydantic-ai's cassette of gpt-5 with
// moderation asked for (July 2026), streamed: an encrypted reasoning item
// (its encrypted_content differs between added, done and completed; the
// item as done is relayed), the answer "Paris." in two deltas, and the
// moderation results of input and output only in response.completed
// (null in created), relayed as sent in meta.extended["moderation"].
// 13 in, 59 out of which 0 reasoning although a reasoning item came (as
// sent: the usage is the provider's); service tier auto, then default;
// no request id (the cassette kept none).
func TestRound22ModerationStream(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_moderation_stream"
	f := r21Stream(t, name, r21Request("gpt-5", "What is the capital of France?"))
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[1].GetText() != "Paris." || parts[1].GetItemId() != "msg_06fe400e17c64daf006a5fa35428b0819c9409e8d48bd8d1a2" {
		t.Fatalf("parts %v", parts)
	}
	r := parts[0].GetReasoning()
	if r.GetId() != "rs_06fe400e17c64daf006a5fa35397e8819c87342597af84fde1" || r.GetText() != "" ||
		!strings.HasPrefix(r.GetSignature(), "gAAAAABqX6NUUH7IHn_J7IsD") || !strings.HasSuffix(r.GetSignature(), "pzT8ZU=") {
		t.Errorf("reasoning %v", r)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 59, TotalTokens: 72}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_06fe400e17c64daf006a5fa35305c0819c9417367f9fcf2e5e" || m.GetResolvedModel() != "gpt-5-2025-08-07" ||
		m.GetServiceTier() != "default" || m.GetProviderRequestId() != "" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	var mod struct {
		Input, Output struct {
			Type    string             `json:"type"`
			Flagged *bool              `json:"flagged"`
			Model   string             `json:"model"`
			Scores  map[string]float64 `json:"category_scores"`
		}
	}
	if err := json.Unmarshal([]byte(extendedJSON(t, m, extModeration)), &mod); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		side     string
		got      float64
		want     float64
		typ, mdl string
		flagged  *bool
	}{
		{"input", mod.Input.Scores["illicit"], 0.005284363395662242, mod.Input.Type, mod.Input.Model, mod.Input.Flagged},
		{"output", mod.Output.Scores["violence"], 0.0005852836038915696, mod.Output.Type, mod.Output.Model, mod.Output.Flagged},
	} {
		if r.got != r.want || r.typ != "moderation_result" || r.mdl != "omni-moderation-latest" || r.flagged == nil || *r.flagged {
			t.Errorf("%s moderation %+v", r.side, mod)
		}
	}
}

// TestRound22WebSearchAllowedDomains: pydantic-ai's cassette of gpt-5
// with web_search limited to wikipedia.org (January 2026), unary: five
// encrypted reasoning items, each of the first four followed by a
// web_search_call (two searches with several queries, two open_page
// actions), the fifth by the message "14195730". The reasoning items are
// relayed with their ids and encrypted contents, each search as a
// warning; 22,013 in, 1,737 out of which 1,728 reasoning.
//
// Sent back in a next turn, the first four reasoning items have no
// following item the request can carry (their web_search_call) and are
// left out, each with a warning; the fifth goes with the message it led
// to, both with their ids, as the API pairs them.
func TestRound22WebSearchAllowedDomains(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_model_web_search_tool_with_allowed_domains"
	res := r21Unary(t, name, r21Request("gpt-5", "Search Google for the current population of Tokyo prefecture. Give me just the number."))
	body := r22Body(t, name)
	output := body["output"].([]any)
	var rs, ws []string
	for _, o := range output {
		it := o.(map[string]any)
		switch it["type"] {
		case "reasoning":
			rs = append(rs, it["id"].(string))
		case "web_search_call":
			ws = append(ws, it["id"].(string))
		}
	}
	parts := res.Message.GetParts()
	if len(rs) != 5 || len(ws) != 4 || len(parts) != 6 {
		t.Fatalf("%d reasoning, %d searches in the body; parts %d", len(rs), len(ws), len(parts))
	}
	for i, id := range rs {
		want := output[2*i].(map[string]any)["encrypted_content"].(string)
		if r := parts[i].GetReasoning(); r.GetId() != id || r.GetSignature() != want || r.GetText() != "" {
			t.Errorf("part %d: %.80v, want reasoning %s", i, parts[i], id)
		}
	}
	if parts[5].GetText() != "14195730" || parts[5].GetItemId() != "msg_08e7da464e3f8cf70069780c28d520819b8df668fee3b5be9a" {
		t.Errorf("text part %v", parts[5])
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if want := (&llmrelayv1.Usage{InputTokens: 22013, OutputTokens: 1737, TotalTokens: 23750, ReasoningTokens: 1728}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if m.GetResponseId() != "resp_08e7da464e3f8cf70069780c019ccc819b9d7a3f4d04a52f83" || m.GetResolvedModel() != "gpt-5-2025-08-07" || m.GetServiceTier() != "default" {
		t.Errorf("meta %v", m)
	}
	var wantWarnings []string
	for _, id := range ws {
		wantWarnings = append(wantWarnings, `ignored output item of type "web_search_call" (id `+id+`; a tool the provider ran itself)`)
	}
	if strings.Join(m.GetWarnings(), "\n") != strings.Join(wantWarnings, "\n") {
		t.Errorf("warnings\n%q\nwant\n%q", m.GetWarnings(), wantWarnings)
	}

	// The next turn.
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	req := r21Request("gpt-5", "Search Google for the current population of Tokyo prefecture. Give me just the number.")
	req.Reasoning = true
	req.Messages = append(req.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("And of Osaka?")))
	raw, warnings, err := p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(raw, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Input) != 4 {
		t.Fatalf("input %v", sent.Input)
	}
	if in := sent.Input[1]; in["type"] != "reasoning" || in["id"] != rs[4] || in["encrypted_content"] != parts[4].GetReasoning().GetSignature() {
		t.Errorf("input[1] %.200v", in)
	}
	if in := sent.Input[2]; in["type"] != "message" || in["role"] != "assistant" || in["id"] != "msg_08e7da464e3f8cf70069780c28d520819b8df668fee3b5be9a" || in["status"] != "completed" {
		t.Errorf("input[2] %v", in)
	}
	var wantDropped []string
	for _, id := range rs[:4] {
		wantDropped = append(wantDropped, "reasoning item "+id+" was not sent: another reasoning item follows it, not the message or call it led to "+
			"(a hosted tool's call or an empty message, which the contract has no place for), and OpenAI refuses a reasoning item without its following item")
	}
	if strings.Join(warnings, "\n") != strings.Join(wantDropped, "\n") {
		t.Errorf("warnings\n%q\nwant\n%q", warnings, wantDropped)
	}
}
