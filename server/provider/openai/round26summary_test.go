package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// r26SummaryParts are three summary parts as OpenAI writes them: a bold
// title, a blank line, a body (which may hold blank lines itself), so
// that the joined text cannot be split back into its parts.
var r26SummaryParts = []string{
	"**Reading the question**\n\nThe user asks for a list.",
	"**Checking edge cases**\n\nEmpty input.\n\nOne element.",
	"**Answering**\n\nI'll give the list.",
}

// r26SummaryStream is a Responses stream of one reasoning item (id
// rs_r26sum_<tag>) whose summary_text deltas are deltas (item id,
// summary_index, text), then the item done with summary, then a message
// "ok" and response.completed listing both items.
func r26SummaryStream(tag string, deltas [][2]any, summary string) string {
	id := "rs_r26sum_" + tag
	var b strings.Builder
	b.WriteString(sseEvent("response.created", `{"type":"response.created","response":{"id":"resp_r26sum_`+tag+`","status":"in_progress","output":[]}}`))
	b.WriteString(sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"`+id+`","type":"reasoning","summary":[]}}`))
	for _, d := range deltas {
		text, _ := json.Marshal(d[1])
		b.WriteString(sseEvent("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"`+id+
			`","output_index":0,"summary_index":`+d[0].(string)+`,"delta":`+string(text)+`}`))
	}
	item := `{"id":"` + id + `","type":"reasoning","summary":` + summary + `}`
	msg := `{"id":"msg_r26sum_` + tag + `","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}`
	b.WriteString(sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+item+`}`))
	b.WriteString(sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_r26sum_`+tag+`","type":"message","role":"assistant","content":[]}}`))
	b.WriteString(sseEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_r26sum_`+tag+`","output_index":1,"content_index":0,"delta":"ok"}`))
	b.WriteString(sseEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":`+msg+`}`))
	b.WriteString(sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_r26sum_`+tag+`","status":"completed","output":[`+item+`,`+msg+`]}}`))
	return b.String()
}

func r26SummaryJSON(parts ...string) string {
	var entries []map[string]string
	for _, p := range parts {
		entries = append(entries, map[string]string{"type": "summary_text", "text": p})
	}
	b, _ := json.Marshal(entries)
	return string(b)
}

// TestRound26SummaryPartsStream: a reasoning item's summary parts are
// Reasoning.summary_parts whether the stream carried them in deltas (each
// part's deltas at its summary_index), in part (the rest only in the done
// item), or not at all; the folded stream equals the unary reading of the
// final response, and the text deltas concatenate to the joined text
// (a delta beginning a part begins with the blank line and a greater
// summary_index). A part without text is no part (summary_index 2 after
// 0 is the second part), and one part is no summary_parts.
func TestRound26SummaryPartsStream(t *testing.T) {
	t.Parallel()
	sp := r26SummaryParts
	full := r26SummaryJSON(sp...)
	for _, tc := range []struct {
		name    string
		deltas  [][2]any
		summary string
		want    []string
	}{
		{"whole", [][2]any{{"0", sp[0][:10]}, {"0", sp[0][10:]}, {"1", sp[1][:20]}, {"1", sp[1][20:]}, {"2", sp[2]}}, full, sp},
		{"none streamed", nil, full, sp},
		{"cut in the second part", [][2]any{{"0", sp[0]}, {"1", sp[1][:7]}}, full, sp},
		{"cut after the first part", [][2]any{{"0", sp[0]}}, full, sp},
		{"empty part between", [][2]any{{"0", sp[0]}, {"2", sp[2]}}, r26SummaryJSON(sp[0], "", sp[2]), []string{sp[0], sp[2]}},
		{"one part", [][2]any{{"0", sp[1]}}, r26SummaryJSON(sp[1]), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tag := strings.ReplaceAll(tc.name, " ", "_")
			body := r26SummaryStream(tag, tc.deltas, tc.summary)
			p, err := New(testKey)
			if err != nil {
				t.Fatal(err)
			}
			evs, _, err := collect(t, respStreamFrom(p, body))
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			r := f.Message.GetParts()[0].GetReasoning()
			if !reflect.DeepEqual(r.GetSummaryParts(), tc.want) || r.GetText() != strings.Join(tc.want, "\n\n") && tc.want != nil {
				t.Errorf("reasoning %v, want parts %q", r, tc.want)
			}
			// The deltas: their texts concatenate to Reasoning.text, and
			// a delta at a greater summary_index begins with the blank
			// line (after text).
			var text strings.Builder
			last := 0
			for _, ev := range evs {
				if ev.Kind != provider.EventReasoning || ev.Reasoning.Text == "" {
					continue
				}
				d := ev.Reasoning
				if d.SummaryIndex < last || d.SummaryIndex > last+1 ||
					(d.SummaryIndex > last) != strings.HasPrefix(d.Text, "\n\n") && text.Len() > 0 {
					t.Errorf("delta %+v after summary_index %d", d, last)
				}
				last = d.SummaryIndex
				text.WriteString(d.Text)
			}
			if text.String() != r.GetText() {
				t.Errorf("deltas %q, text %q", text.String(), r.GetText())
			}
			unary, err := p.parseResponsesResponse(respFinalObject(body), "m")
			if err != nil {
				t.Fatal(err)
			}
			if u := unary.Message.GetParts()[0]; !proto.Equal(u, f.Message.GetParts()[0]) {
				t.Errorf("unary %v, stream %v", u, f.Message.GetParts()[0])
			}
		})
	}
}

// TestRound26SummaryPartsBack: a reasoning part with summary_parts goes
// back with one summary_text entry per part (as OpenAI listed them:
// Mirascope's recorded follow-up, real_mira_responses_thinking_1); one
// whose text no longer joins its parts (the caller changed the text) or
// a client-built one without parts sends its text as one entry.
func TestRound26SummaryPartsBack(t *testing.T) {
	t.Parallel()
	joined := strings.Join(r26SummaryParts, "\n\n")
	for _, tc := range []struct {
		name string
		r    *llmrelayv1.Reasoning
		want []string
	}{
		{"parts", &llmrelayv1.Reasoning{Id: "rs_r26back_1", Signature: "enc_r26back_1", Text: joined, SummaryParts: r26SummaryParts}, r26SummaryParts},
		{"client built", &llmrelayv1.Reasoning{Id: "rs_r26back_2", Signature: "enc_r26back_2", Text: joined}, []string{joined}},
		{"text changed", &llmrelayv1.Reasoning{Id: "rs_r26back_3", Signature: "enc_r26back_3", Text: "shorter", SummaryParts: r26SummaryParts}, []string{"shorter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			it, warning := reasoningInputItem(tc.r, 1, 0, false, false, summaryBackNone)
			if warning != "" || it.Summary == nil {
				t.Fatalf("item %+v, warning %q", it, warning)
			}
			var got []string
			for _, e := range *it.Summary {
				if e.Type != "summary_text" {
					t.Errorf("entry %+v", e)
				}
				got = append(got, e.Text)
			}
			if !reflect.DeepEqual(got, tc.want) || it.EncryptedContent != tc.r.GetSignature() || it.ID != tc.r.GetId() {
				t.Errorf("summary %q, item %+v", got, it)
			}
		})
	}
}
