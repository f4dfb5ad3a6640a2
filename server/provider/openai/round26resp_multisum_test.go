package openai

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound26AzureMultiSummaryNoEncryption: gpt-5.4 on Azure, store false
// without reasoning.encrypted_content (vercel/ai's
// azure-gpt5-reasoning-multi-summary-no-encryption fixture, a live stream
// anonymized by its authors): one reasoning item whose summary streams as
// three parts (summary_index 0…2, 88, 102 and 92 deltas), no encrypted
// content anywhere, then the message, whose 1105 deltas the anonymizer
// replaced by "X" while its done events and response.completed say
// "Anonymized assistant response text."; content_filters in
// response.completed. Stream and unary readings give the same reasoning
// block (the three summaries joined with a blank line, the item's id, no
// signature); the stream's text is its deltas, the unary text the final
// object's. Unsigned and unstored, the follow-up leaves the reasoning out
// with its warning (OpenAI and Azure resolve no such item).
func TestRound26AzureMultiSummaryNoEncryption(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_azure_gpt54_multi_summary_stream"
	req := r21Request("gpt-5.4", "Explain.")
	req.Reasoning = true
	f := r21Stream(t, name, req)
	var summaries []string
	for i := range 3 {
		summaries = append(summaries, fmt.Sprintf("**Anonymized summary %d**\n\nThis is placeholder reasoning text for anonymized fixture summary index %d. "+
			"The actual reasoning content has been redacted; only the streaming structure is preserved for test purposes.", i, i))
	}
	// The three parts, kept (summary_parts, round 26): folded from the
	// stream's deltas by their summary_index, as the unary reading lists
	// them.
	wantReasoning := &llmrelayv1.Reasoning{Id: "rs_anonymized_002", Text: strings.Join(summaries, "\n\n"), SummaryParts: summaries}
	parts := f.Message.GetParts()
	if len(parts) != 2 || !proto.Equal(parts[0].GetReasoning(), wantReasoning) {
		t.Fatalf("parts %v", parts)
	}
	if parts[1].GetText() != strings.Repeat("X", 1105) || parts[1].GetPhase() != "final_answer" || parts[1].GetItemId() != "msg_anonymized_003" {
		t.Errorf("text %v", parts[1])
	}
	m := f.Meta
	if len(m.GetWarnings()) != 0 || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetResponseId() != "resp_anonymized_001" ||
		m.GetServiceTier() != "default" || m.GetExtended().GetFields()["content_filters"] == nil {
		t.Errorf("meta %v", m)
	}
	if u := m.GetUsage(); u.GetInputTokens() != 12044 || u.GetOutputTokens() != 1627 || u.GetReasoningTokens() != 516 ||
		u.GetTotalTokens() != 13671 || u.GetCachedInputTokens() != 0 {
		t.Errorf("usage %v", u)
	}

	raw, err := os.ReadFile(td(name + ".http"))
	if err != nil {
		t.Fatal(err)
	}
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	unary, err := p.parseResponsesResponse(respFinalObject(string(raw)), "gpt-5.4")
	if err != nil {
		t.Fatal(err)
	}
	u := unary.Message.GetParts()
	if len(u) != 2 || !proto.Equal(u[0], parts[0]) || u[1].GetText() != "Anonymized assistant response text." || len(unary.Meta.GetWarnings()) != 0 {
		t.Errorf("unary %v, warnings %q", u, unary.Meta.GetWarnings())
	}

	got, warnings := r24NextInput(t, p, "gpt-5.4", msgOf(llmrelayv1.Role_ROLE_USER, text("Explain.")), unary.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("More.")))
	wantMsg := map[string]any{"type": "message", "id": "msg_anonymized_003", "role": "assistant", "status": "completed", "phase": "final_answer",
		"content": []any{map[string]any{"type": "output_text", "text": "Anonymized assistant response text.", "annotations": []any{}}}}
	if len(got) != 3 || !reflect.DeepEqual(got[1], wantMsg) || len(warnings) != 1 ||
		!strings.Contains(warnings[0], "messages[1].parts[0]: reasoning without encrypted content (signature) was not sent") {
		t.Errorf("input %v, warnings %q", got, warnings)
	}

	// Stored (store true): the item goes back by its id, which OpenAI
	// resolves, with its three summary_text entries as listed (before
	// summary_parts, one entry held the joined text).
	req = r21Request("gpt-5.4", "")
	req.Reasoning = true
	req.Messages = []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Explain.")), unary.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("More."))}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}
	stored, warnings := r24Built(t, p, req)
	var entries []any
	for _, s := range summaries {
		entries = append(entries, map[string]any{"type": "summary_text", "text": s})
	}
	wantItem := map[string]any{"type": "reasoning", "id": "rs_anonymized_002", "summary": entries}
	if len(warnings) != 0 || len(stored.Input) != 4 || !reflect.DeepEqual(stored.Input[1], wantItem) || !reflect.DeepEqual(stored.Input[2], wantMsg) {
		t.Errorf("stored input %v, warnings %q", stored.Input, warnings)
	}
}
