package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// respVariant rewrites a recorded Responses stream as an
// OpenAI-compatible server sends it: "nokeys" leaves output_index out of
// every event and item_id out of every event but the item events (vLLM,
// Ollama, LM Studio, keyItem); "nodone" leaves out the
// response.output_item.done events and "noadded" the
// response.output_item.added and content_part.added ones (servers that
// send only the final response whole). sequence_number is left out of
// all (the events it would number are gone). The events keep their data
// otherwise, framed as data-only events.
func respVariant(t *testing.T, body, mode string) string {
	t.Helper()
	i := strings.Index(body, "\n\n")
	if i < 0 {
		t.Fatal("no blank line after the headers")
	}
	var out strings.Builder
	for _, block := range strings.Split(strings.ReplaceAll(body[i+2:], "\r\n", "\n"), "\n\n") {
		var data string
		for _, l := range strings.Split(block, "\n") {
			if d, ok := strings.CutPrefix(l, "data:"); ok {
				data = strings.TrimSpace(d)
			}
		}
		var ev map[string]json.RawMessage
		if data == "" || json.Unmarshal([]byte(data), &ev) != nil {
			continue
		}
		var typ string
		if err := json.Unmarshal(ev["type"], &typ); err != nil {
			continue
		}
		switch {
		case mode == "nokeys":
			delete(ev, "output_index")
			if typ != "response.output_item.added" && typ != "response.output_item.done" {
				delete(ev, "item_id")
			}
		case mode == "nodone" && typ == "response.output_item.done",
			mode == "noadded" && (typ == "response.output_item.added" || typ == "response.content_part.added"):
			continue
		}
		delete(ev, "sequence_number")
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("data: " + string(b) + "\n\n")
	}
	return out.String()
}

// TestRound22StreamVariantsFoldAsUnary: every real Responses stream here,
// rewritten as OpenAI-compatible servers send streams (respVariant), still
// folds to what the unary parser makes of its final response: the same
// texts, calls (id, name, arguments) and reasoning texts, part for part,
// and the same warnings. Two recordings are left out of the "nokeys"
// variant: their servers give items ids that change (OpenRouter's rs_tmp_
// ids differ in the final response; GitHub Copilot gives every event its
// own), which with no output_index leaves nothing to tie the final
// response's items to the streamed ones.
func TestRound22StreamVariantsFoldAsUnary(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(td("real_*.http"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	// summaryDropped: the final response left out the summary its
	// deltas streamed (respFoldExceptions).
	summaryDropped := map[string]bool{"real_maruel_gpt5mini_max_tokens_stream": true}
	// finalRebuilt: the final response names the items otherwise than
	// the stream did (respFoldExceptions), so no variant of the stream
	// can fold to its unary reading.
	finalRebuilt := map[string]bool{"real_opencode_digitalocean_kimi_tool_loop_stream_1": true}
	// textAnonymized: the recording's text deltas were replaced by its
	// publisher's anonymizer and contradict the final response's text
	// (respFoldExceptions); the other parts are still compared.
	textAnonymized := map[string]bool{"real_vercel_azure_gpt54_multi_summary_stream": true}
	skipNoKeys := map[string]bool{"real_pyd_openai_responses_raw_cot_stream_openrouter": true, "real_responses_copilot_id_rotation_stream": true}
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		final := respFinalObject(string(raw))
		if final == nil {
			continue
		}
		unary, err := p.parseResponsesResponse(final, "m")
		if err != nil {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".http")
		if finalOutputCut[name] || finalRebuilt[name] {
			continue
		}
		for _, mode := range []string{"nokeys", "nodone", "noadded"} {
			if mode == "nokeys" && skipNoKeys[name] {
				continue
			}
			checked++
			s := respStreamFrom(p, respVariant(t, string(raw), mode))
			evs, _, err := providertest.Drain(t, s, 1<<20)
			s.Close()
			if err != nil {
				t.Errorf("%s %s: %v", name, mode, err)
				continue
			}
			fo := accFold(t, evs)
			// A hosted item whose output_item.done a variant took away is
			// relayed whole from the final response, after the text that
			// followed it (the stream cannot hold the text back for it):
			// the items are compared apart, in their own order.
			a, ia := splitRespItems(fo.Message)
			b, ib := splitRespItems(unary.Message)
			if ia != ib {
				t.Errorf("%s %s: provider items %s, the unary answer's %s", name, mode, ia, ib)
			}
			if len(a) != len(b) {
				t.Errorf("%s %s: %d parts, the unary answer %d", name, mode, len(a), len(b))
				continue
			}
			for i := range a {
				ca, cb := a[i].GetToolCall(), b[i].GetToolCall()
				if (a[i].GetText() != b[i].GetText() && !textAnonymized[name]) || a[i].GetRefusal() != b[i].GetRefusal() ||
					(a[i].GetReasoning().GetText() != b[i].GetReasoning().GetText() && !summaryDropped[name]) ||
					ca.GetCallId() != cb.GetCallId() || ca.GetName() != cb.GetName() || ca.GetArguments() != cb.GetArguments() {
					t.Errorf("%s %s: part %d %.120v, the unary answer's %.120v", name, mode, i, a[i], b[i])
				}
			}
			wa, wb := append([]string(nil), fo.Meta.GetWarnings()...), append([]string(nil), unary.Meta.GetWarnings()...)
			sort.Strings(wa)
			sort.Strings(wb)
			if strings.Join(wa, "\n") != strings.Join(wb, "\n") {
				t.Errorf("%s %s: warnings %q, the unary answer's %q", name, mode, wa, wb)
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked %d variants: the recordings moved", checked)
	}
}

// splitRespItems returns msg's parts without its provider items, and the
// items' types in order.
func splitRespItems(msg *llmrelayv1.Message) ([]*llmrelayv1.Part, string) {
	var rest []*llmrelayv1.Part
	var types []string
	for _, p := range msg.GetParts() {
		if it := p.GetProviderItem(); it != nil {
			types = append(types, it.GetType())
			continue
		}
		rest = append(rest, p)
	}
	return rest, strings.Join(types, " ")
}
