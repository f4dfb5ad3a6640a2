package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// citedWant is one entry of meta.extended.citations as a recording says:
// the cited text block's text and, per citation, its type, cited_text and
// url (or document title).
type citedWant struct {
	text  string
	cites []citeWant
}

type citeWant struct{ typ, citedText, source string }

// citedEntries decodes meta.extended.citations (nil when absent).
func citedEntries(t *testing.T, m *llmrelayv1.ResponseMeta) []map[string]any {
	t.Helper()
	v, ok := m.GetExtended().GetFields()[extCitations]
	if !ok {
		return nil
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(valueJSON(t, v)), &entries); err != nil {
		t.Fatalf("extended.citations is not a list of objects: %v", err)
	}
	return entries
}

// checkCited compares meta.extended.citations with want; nil wants none.
func checkCited(t *testing.T, what string, m *llmrelayv1.ResponseMeta, want []citedWant) {
	t.Helper()
	got := citedEntries(t, m)
	if want == nil {
		if got != nil {
			t.Errorf("%s: extended.citations %v, want none", what, got)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d cited blocks, want %d: %v", what, len(got), len(want), got)
	}
	for i, w := range want {
		if len(got[i]) != 2 || got[i]["text"] != w.text {
			t.Errorf("%s: citations[%d] = %v, want text %q and its citations", what, i, got[i], w.text)
		}
		cites, _ := got[i]["citations"].([]any)
		if len(cites) != len(w.cites) {
			t.Errorf("%s: citations[%d] has %d citations, want %d", what, i, len(cites), len(w.cites))
			continue
		}
		for j, wc := range w.cites {
			c, _ := cites[j].(map[string]any)
			source := c["url"]
			if source == nil {
				source = c["document_title"]
			}
			if source == nil { // search_result_location
				source = c["source"]
			}
			if source == nil { // a document without a title
				source = ""
			}
			if c["type"] != wc.typ || c["cited_text"] != wc.citedText || source != wc.source {
				t.Errorf("%s: citations[%d].citations[%d] = %v, want %+v", what, i, j, c, wc)
			}
		}
	}
}

// recordedCitations reads a recording's cited text blocks independently of
// the adapter: the text and citations of each text block that has some, in
// block order (unary: the body's content; stream: content_block_start's
// text and citations, then the block's text_delta and citations_delta).
func recordedCitations(t *testing.T, name string) []any {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name + ".http")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no body", name)
	}
	type block struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Citations []any  `json:"citations"`
	}
	var blocks []*block
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("event:")) {
		var m struct{ Content []*block }
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		blocks = m.Content
	} else {
		byIndex := map[int]*block{}
		for _, line := range strings.Split(string(body), "\n") {
			data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type         string `json:"type"`
				Index        int    `json:"index"`
				ContentBlock *block `json:"content_block"`
				Delta        struct {
					Type     string `json:"type"`
					Text     string `json:"text"`
					Citation any    `json:"citation"`
				} `json:"delta"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			switch {
			case ev.Type == "content_block_start":
				byIndex[ev.Index] = ev.ContentBlock
				blocks = append(blocks, ev.ContentBlock)
			case ev.Delta.Type == "text_delta":
				byIndex[ev.Index].Text += ev.Delta.Text
			case ev.Delta.Type == "citations_delta":
				byIndex[ev.Index].Citations = append(byIndex[ev.Index].Citations, ev.Delta.Citation)
			}
		}
	}
	var out []any
	for _, b := range blocks {
		if b.Type == "text" && len(b.Citations) > 0 {
			out = append(out, map[string]any{"text": b.Text, "citations": b.Citations})
		}
	}
	return out
}

// TestCitationsAsRecorded: every recording with citations keeps them in
// meta.extended.citations exactly as sent (each object whole, in order, one
// entry per cited text block with that block's text), unary and streamed,
// and no longer warns about them.
func TestCitationsAsRecorded(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"real_llm_test_web_search", "pause_turn_stream", "pause_turn", "real_vercel_web_search_tool", "real_vercel_web_search_tool_stream"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var meta *llmrelayv1.ResponseMeta
			if strings.HasSuffix(name, "_stream") || strings.HasPrefix(name, "real_llm_") {
				evs, err := r14Stream(t, name, plainRequest())
				if err != nil {
					t.Fatal(err)
				}
				meta = foldEvents(t, evs).meta
				// Reported once, whole, not per delta.
				n := 0
				for _, ev := range evs {
					if _, ok := ev.Meta.GetExtended().GetFields()[extCitations]; ok {
						n++
					}
				}
				if n != 1 {
					t.Errorf("citations reported %d times, want once", n)
				}
			} else {
				meta = r14Generate(t, name, plainRequest()).Meta
			}
			want := recordedCitations(t, name)
			if len(want) == 0 {
				t.Fatalf("%s has no citations", name)
			}
			var got []any
			if err := json.Unmarshal([]byte(valueJSON(t, meta.GetExtended().GetFields()[extCitations])), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("extended.citations\n got %v\nwant %v", got, want)
			}
			for _, w := range meta.GetWarnings() {
				if strings.Contains(w, "citation") {
					t.Errorf("warning %q", w)
				}
			}
		})
	}
}

// Hand-built citations for the tests below, keys sorted as protojson
// writes them.
const (
	citeWeb  = `{"cited_text":"Sunny, 18 C.","encrypted_index":"Eo8BCioIAhgBIiQ","title":"SF weather","type":"web_search_result_location","url":"https://example.com/sf"}`
	citeChar = `{"cited_text":"The sky is blue.","document_index":0,"document_title":"Notes","end_char_index":21,"start_char_index":5,"type":"char_location"}`
	citePage = `{"cited_text":"Page two.","document_index":1,"document_title":null,"end_page_number":3,"start_page_number":2,"type":"page_location"}`
)

// entryJSON is one meta.extended.citations entry as valueJSON renders it.
func entryJSON(text string, cites ...string) string {
	t, _ := json.Marshal(text)
	return `{"citations":[` + strings.Join(cites, ",") + `],"text":` + string(t) + `}`
}

func sseEv(ev string) string {
	var v struct{ Type string }
	if err := json.Unmarshal([]byte(ev), &v); err != nil {
		panic(err)
	}
	return "event: " + v.Type + "\ndata: " + ev + "\n\n"
}

func textStart(i int, extra string) string {
	return sseEv(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""%s}}`, i, extra))
}

func textDelta(i int, text string) string {
	q, _ := json.Marshal(text)
	return sseEv(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, q))
}

func citeDelta(i int, cite string) string {
	return sseEv(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"citations_delta","citation":%s}}`, i, cite))
}

func blockStop(i int) string {
	return sseEv(fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

const (
	citeStreamStart = `{"type":"message_start","message":{"id":"msg_01CitationsStreamHn8Rb","model":"m","usage":{"input_tokens":3,"output_tokens":1}}}`
	citeStreamEnd   = `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`
)

func citeStream(t *testing.T, body string) ([]*provider.Event, folded) {
	t.Helper()
	evs, err := collect(streamFromBody([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	return evs, foldEvents(t, evs)
}

// TestCitationsUnary: a text block's citations are kept as sent with its
// text, one entry per cited block in order; a block with citations null,
// [] or absent adds none, and the text parts are those of before.
func TestCitationsUnary(t *testing.T) {
	t.Parallel()
	res, err := parseResponse([]byte(`{"id":"msg_01CitationsUnaryWq4Tz","type":"message","role":"assistant","model":"m","content":[`+
		`{"type":"text","text":"It is ","citations":null},{"type":"text","text":"sunny and 18 C.","citations":[`+citeWeb+`,`+citeWeb+`]},`+
		`{"type":"text","text":" As noted, ","citations":[]},{"type":"text","text":"the sky is blue","citations":[`+citeChar+`,`+citePage+`]},`+
		`{"type":"text","text":"."}],`+
		`"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5}}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, p := range res.Message.GetParts() {
		texts = append(texts, p.GetText())
	}
	// Text blocks in a row (one per cited span) are one part, as the
	// stream has no boundary between them; the citations keep their
	// spans in meta.extended.
	if got := strings.Join(texts, "|"); got != "It is sunny and 18 C. As noted, the sky is blue." {
		t.Errorf("parts %q", got)
	}
	want := `[` + entryJSON("sunny and 18 C.", citeWeb, citeWeb) + `,` + entryJSON("the sky is blue", citeChar, citePage) + `]`
	if got := valueJSON(t, res.Meta.GetExtended().GetFields()[extCitations]); got != want {
		t.Errorf("extended.citations\n got %s\nwant %s", got, want)
	}
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}

	// Not a list: said, the text kept.
	res, err = parseResponse([]byte(`{"id":"msg_01CitationsOddL7hQ","type":"message","model":"m","content":[`+
		`{"type":"text","text":"odd","citations":`+citeWeb+`}],"stop_reason":"end_turn"}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "content[0]: text block citations are not a list") {
		t.Errorf("warnings %q", w)
	}
	if _, ok := res.Meta.GetExtended().GetFields()[extCitations]; ok || res.Message.GetParts()[0].GetText() != "odd" {
		t.Errorf("odd citations: %v / %v", res.Message, res.Meta)
	}
}

// TestCitationsStreamDeltas: in a stream a cited text block starts with
// `citations: []` and its citations come one by one as citations_delta
// events, interleaved with its text_delta events; the entry holds the
// block's whole text (also text sent before the first citation, and text
// on content_block_start) and every citation in order. The list is
// reported once, whole, just before the finish reason, not per delta; the
// text events are unchanged.
func TestCitationsStreamDeltas(t *testing.T) {
	t.Parallel()
	body := sseEv(citeStreamStart) +
		textStart(0, "") + textDelta(0, "Before. ") + blockStop(0) +
		textStart(1, `,"citations":[]`) + citeDelta(1, citeWeb) + textDelta(1, "It is ") + citeDelta(1, citeChar) + textDelta(1, "sunny.") + blockStop(1) +
		// Text before its citation, and a null citation (nothing cited).
		textStart(2, "") + textDelta(2, "Already ") + citeDelta(2, "null") + textDelta(2, "there") + citeDelta(2, citePage) + blockStop(2) +
		// Whole on content_block_start (as message_start's content is).
		sseEv(`{"type":"content_block_start","index":3,"content_block":{"type":"text","text":" Whole.","citations":[`+citeWeb+`]}}`) + blockStop(3) +
		sseEv(citeStreamEnd) + sseEv(`{"type":"message_stop"}`)
	evs, f := citeStream(t, body)
	if got := f.message.GetParts(); len(got) != 1 || got[0].GetText() != "Before. It is sunny.Already there Whole." {
		t.Errorf("parts %v", got)
	}
	want := `[` + entryJSON("It is sunny.", citeWeb, citeChar) + `,` + entryJSON("Already there", citePage) + `,` + entryJSON(" Whole.", citeWeb) + `]`
	if got := valueJSON(t, f.meta.GetExtended().GetFields()[extCitations]); got != want {
		t.Errorf("extended.citations\n got %s\nwant %s", got, want)
	}
	if w := f.meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	reported, finishAt := -1, -1
	for i, ev := range evs {
		if _, ok := ev.Meta.GetExtended().GetFields()[extCitations]; ok {
			if reported >= 0 {
				t.Errorf("citations reported at events %d and %d", reported, i)
			}
			reported = i
		}
		if ev.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
			finishAt = i
		}
	}
	if reported < 0 || finishAt != reported+1 {
		t.Errorf("citations at event %d, finish at %d: want the list just before the finish", reported, finishAt)
	}

	// Without a stop reason the list comes at message_stop; with no
	// citation at all there is none.
	_, f = citeStream(t, sseEv(citeStreamStart)+textStart(0, `,"citations":[]`)+citeDelta(0, citeWeb)+textDelta(0, "x")+sseEv(`{"type":"message_stop"}`))
	if got := valueJSON(t, f.meta.GetExtended().GetFields()[extCitations]); got != `[`+entryJSON("x", citeWeb)+`]` {
		t.Errorf("at message_stop: %s", got)
	}
	_, f = citeStream(t, sseEv(citeStreamStart)+textStart(0, `,"citations":[]`)+textDelta(0, "x")+blockStop(0)+sseEv(citeStreamEnd)+sseEv(`{"type":"message_stop"}`))
	if _, ok := f.meta.GetExtended().GetFields()[extCitations]; ok || len(f.meta.GetWarnings()) != 0 {
		t.Errorf("no citation: %v", f.meta)
	}
	// A cut stream still reports what it had.
	evs, err := collect(streamFromBody([]byte(sseEv(citeStreamStart) + textStart(0, `,"citations":[]`) + citeDelta(0, citeWeb) + textDelta(0, "cut"))))
	if err == nil {
		t.Fatal("cut stream: no error")
	}
	if got := valueJSON(t, foldEvents(t, evs).meta.GetExtended().GetFields()[extCitations]); got != `[`+entryJSON("cut", citeWeb)+`]` {
		t.Errorf("cut stream: %s", got)
	}
}

// TestCitationsStreamOddDeltas: a citations_delta for a block never
// started is kept with the text that follows (said once, as for text); one
// after content_block_stop of an uncited block, whose text is let go, is
// said and dropped; one for a non-text block (a server tool's) cites
// nothing and is skipped.
func TestCitationsStreamOddDeltas(t *testing.T) {
	t.Parallel()
	body := sseEv(citeStreamStart) +
		citeDelta(0, citeWeb) + textDelta(0, "unstarted") + blockStop(0) +
		textStart(1, "") + textDelta(1, " plain") + blockStop(1) + citeDelta(1, citeChar) +
		sseEv(`{"type":"content_block_start","index":2,"content_block":{"type":"server_tool_use","id":"srvtoolu_01CiteOddQ2w","name":"web_search","input":{}}}`) +
		citeDelta(2, citePage) + blockStop(2) +
		sseEv(citeStreamEnd) + sseEv(`{"type":"message_stop"}`)
	_, f := citeStream(t, body)
	if got := f.message.GetParts(); len(got) != 2 || got[0].GetText() != "unstarted plain" || got[1].GetProviderItem().GetType() != "server_tool_use" {
		t.Errorf("parts %v", got)
	}
	if got := valueJSON(t, f.meta.GetExtended().GetFields()[extCitations]); got != `[`+entryJSON("unstarted", citeWeb)+`]` {
		t.Errorf("extended.citations %s", got)
	}
	w := f.meta.GetWarnings()
	if len(w) != 2 || !strings.Contains(w[0], "citations_delta for content block 0, which was never started") ||
		!strings.Contains(w[1], "citations_delta after content_block_stop of content block 1; dropped") {
		t.Errorf("warnings %q", w)
	}
}

// TestCitationsBound: at most 256 cited text blocks are kept (the first
// ones), then one warning says the rest were dropped; every block's text
// stays in the message, unary and streamed.
func TestCitationsBound(t *testing.T) {
	t.Parallel()
	const n = maxCitedBlocks + 44
	var blocks []string
	var stream strings.Builder
	var all strings.Builder
	stream.WriteString(sseEv(citeStreamStart))
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("b%d ", i)
		all.WriteString(text)
		blocks = append(blocks, `{"type":"text","text":"`+text+`","citations":[`+citeWeb+`]}`)
		stream.WriteString(textStart(i, `,"citations":[]`) + citeDelta(i, citeWeb) + textDelta(i, text) + blockStop(i))
	}
	stream.WriteString(sseEv(citeStreamEnd) + sseEv(`{"type":"message_stop"}`))
	var want strings.Builder
	want.WriteString("[")
	for i := 0; i < maxCitedBlocks; i++ {
		if i > 0 {
			want.WriteString(",")
		}
		want.WriteString(entryJSON(fmt.Sprintf("b%d ", i), citeWeb))
	}
	want.WriteString("]")

	res, err := parseResponse([]byte(`{"id":"msg_01CitationsBoundP3x","type":"message","model":"m","content":[`+
		strings.Join(blocks, ",")+`],"stop_reason":"end_turn"}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, p := range res.Message.GetParts() {
		text.WriteString(p.GetText())
	}
	_, f := citeStream(t, stream.String())
	for what, got := range map[string]struct {
		text string
		meta *llmrelayv1.ResponseMeta
	}{"unary": {text.String(), res.Meta}, "stream": {f.message.GetParts()[0].GetText(), f.meta}} {
		if got.text != all.String() {
			t.Errorf("%s: text %q", what, got.text)
		}
		if v := valueJSON(t, got.meta.GetExtended().GetFields()[extCitations]); v != want.String() {
			t.Errorf("%s: extended.citations has %d entries: %.200s…", what, strings.Count(v, `"text":`), v)
		}
		if w := got.meta.GetWarnings(); len(w) != 1 || w[0] != "more than 256 cited text blocks; the citations of the rest dropped (their text is kept)" {
			t.Errorf("%s: warnings %q", what, w)
		}
	}
}
