package openai

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// respFoldExceptions are the real Responses streams whose fold may differ
// from the unary answer of their final response, and in what: the
// stream's ids are the ones its events gave first.
var respFoldExceptions = map[string]map[string]bool{
	// The AI SDK's fixture of vercel/ai#19067 gives response.completed
	// "output": [] (cut by its authors): the unary reading of it has no
	// call (finalOutputCut).
	"real_responses_parallel_wrapper_stream": {"parts": true, "warnings": true, "finish": true},
	// vLLM behind DigitalOcean's LiteLLM (hosted_vllm) builds
	// response.completed's items afresh: other reasoning and call ids
	// (rs_…, functions.get_weather:0 for call_baa…) and the arguments
	// without the spaces streamed around them. The stream keeps what it
	// relayed, warning of the call's other id and arguments.
	"real_opencode_digitalocean_kimi_tool_loop_stream_1": {"reasoning": true, "call": true, "warnings": true},
	// OpenRouter's temporary rs_tmp_ reasoning ids change in
	// response.completed; the stream relayed the first.
	"real_pyd_openai_responses_raw_cot_stream_openrouter": {"reasoning": true},
	// GitHub Copilot gives every event its own item ids; the stream
	// keeps the first one of each item.
	"real_responses_copilot_id_rotation_stream": {"reasoning": true, "item_id": true},
	// A run cut by max_output_tokens inside its reasoning summary: 164
	// summary deltas streamed, and the final response's reasoning item
	// has "summary": []. The stream keeps what it relayed.
	"real_maruel_gpt5mini_max_tokens_stream": {"reasoning": true},
	// A hosted item's output_item.done carries the item as the stream
	// finished it, and its JSON is not the final response's copy (not
	// inspected field by field): the stream relays the done event's
	// item, as sent.
	"real_maruel_gpt41_web_search_stream":             {"provider_item": true},
	"real_responses_programmatic_tool_calling_stream": {"provider_item": true},
	"real_xai_responses_13218_web_search_stream":      {"provider_item": true},
	// vercel/ai's anonymizer replaced the message's 1105 text deltas by
	// "X" and kept the done events' and response.completed's text: the
	// stream relays the deltas it was sent.
	"real_vercel_azure_gpt54_multi_summary_stream": {"text": true},
	// Two of its three mcp_list_tools items have no output_item.done: the
	// stream relays them from response.completed, after the answer's text
	// (the unary answer has them before it), which splits the text there.
	"real_pyd_openai_responses_model_mcp_list_tools_stream_backfills_missing_results": {"provider_item": true, "text": true, "item_id": true},
}

// TestRound22StreamFoldsAsUnary: every real Responses stream recording
// that ends with a final response (response.completed or
// response.incomplete) folds to what the unary parser makes of that final
// response: the same parts in the same order (kind, text, item id, phase,
// reasoning id and text, call id, name and arguments), the same warnings
// (as a multiset: a stream reports an item when it ends), the same usage
// and finish reason. Signatures are not compared: OpenAI sends a
// reasoning item's encrypted_content anew in each event, and the stream
// relays the item's as done. Before round 22 two of pydantic-ai's
// mcp_list_tools items came out of the stream without their warning.
func TestRound22StreamFoldsAsUnary(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(td("real_*.http"))
	if err != nil {
		t.Fatal(err)
	}
	// LiteLLM's proxy, whose final response carries an id other than
	// response.created's (round 24).
	files = append(files, td("litellm_responses_reasoning_text_stream.http"))
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
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
		name := strings.TrimSuffix(filepath.Base(f), ".http")
		unary, err := p.parseResponsesResponse(final, "m")
		if err != nil {
			continue // a failed response: an error both ways
		}
		checked++
		srv := providertest.ReplayFile(t, f)
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), r21Request("m", "x"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		evs, _, err := collect(t, s)
		s.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		fo := accFold(t, evs)
		diffs := map[string]bool{}
		a, b := fo.Message.GetParts(), unary.Message.GetParts()
		if len(a) != len(b) {
			diffs["parts"] = true
		} else {
			for i := range a {
				if a[i].GetText() != b[i].GetText() || a[i].GetRefusal() != b[i].GetRefusal() {
					diffs["text"] = true
				}
				if a[i].GetItemId() != b[i].GetItemId() {
					diffs["item_id"] = true
				}
				if a[i].GetPhase() != b[i].GetPhase() {
					diffs["phase"] = true
				}
				if ra, rb := a[i].GetReasoning(), b[i].GetReasoning(); (ra == nil) != (rb == nil) || ra.GetId() != rb.GetId() || ra.GetText() != rb.GetText() {
					diffs["reasoning"] = true
				}
				if ia, ib := a[i].GetProviderItem(), b[i].GetProviderItem(); (ia == nil) != (ib == nil) || ia.GetType() != ib.GetType() ||
					(ia != nil && !r23SameJSON(t, ia.GetJson(), ib.GetJson())) {
					diffs["provider_item"] = true
				}
				if ca, cb := a[i].GetToolCall(), b[i].GetToolCall(); (ca == nil) != (cb == nil) || ca.GetCallId() != cb.GetCallId() ||
					ca.GetName() != cb.GetName() || ca.GetArguments() != cb.GetArguments() {
					diffs["call"] = true
				}
			}
		}
		wa, wb := append([]string(nil), fo.Meta.GetWarnings()...), append([]string(nil), unary.Meta.GetWarnings()...)
		sort.Strings(wa)
		sort.Strings(wb)
		if strings.Join(wa, "\n") != strings.Join(wb, "\n") {
			diffs["warnings"] = true
			t.Logf("%s: stream warnings %q, unary %q", name, wa, wb)
		}
		if fo.Meta.GetUsage().String() != unary.Meta.GetUsage().String() {
			diffs["usage"] = true
		}
		if fo.Meta.GetFinishReason() != unary.Meta.GetFinishReason() {
			diffs["finish"] = true
		}
		if fo.Meta.GetResponseId() != unary.Meta.GetResponseId() {
			diffs["response_id"] = true
		}
		for d := range diffs {
			if !respFoldExceptions[name][d] {
				t.Errorf("%s: the stream's %s differs from the unary answer's", name, d)
			}
		}
	}
	if checked < 35 {
		t.Errorf("checked %d streams: the recordings moved", checked)
	}
}

// finalOutputCut: the recordings whose final response lists none of the
// items their stream gave, so that no variant of the stream can fold as it.
var finalOutputCut = map[string]bool{"real_responses_parallel_wrapper_stream": true}

// respFinalObject is the response object of a Responses stream's last
// response.completed or response.incomplete event (nil: none).
func respFinalObject(body string) json.RawMessage {
	var final json.RawMessage
	for _, l := range strings.Split(body, "\n") {
		d, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), "data:")
		if !ok {
			continue
		}
		var ev struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(d)), &ev) == nil && (ev.Type == "response.completed" || ev.Type == "response.incomplete") && len(ev.Response) > 0 {
			final = ev.Response
		}
	}
	return final
}
