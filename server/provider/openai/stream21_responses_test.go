package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// s21 stream generators cut texts as providertest.StringPieces does.
func s21Deltas(s string, n int) []string {
	return providertest.StringPieces(s, n, func(r rune) bool { return r > 0x7f && r%2 == 0 })
}

func s21JSON(v any) string { return providertest.MustJSON(v) }

// s21Item is one output item of a generated Responses stream.
type s21Item struct {
	kind           string // "message", "function_call", "reasoning"
	id, callID     string
	name, text     string // text: the message's text, the call's arguments, the reasoning summary
	status         string // "" completed
	argsInAdded    bool   // the call's arguments whole in output_item.added, no deltas
	noDeltaItemID  bool   // this item's deltas without item_id
	noDeltaOutput  bool   // this item's deltas without output_index
	noAddedOutput  bool   // output_item.added without output_index
	noAddedItemID  bool   // output_item.added without id
	noDoneEvents   bool   // no *.done / output_item.done events
	noAddedEvents  bool   // no output_item.added events
	deltaTokensPer int    // JSON string tokens per delta (1: every character, and halves of a pair)
}

// s21Whole is the item as the final response (and output_item.done)
// carries it.
func (it *s21Item) whole() map[string]any {
	st := it.status
	if st == "" {
		st = "completed"
	}
	m := map[string]any{"type": it.kind, "id": it.id, "status": st}
	switch it.kind {
	case "message":
		m["role"] = "assistant"
		m["content"] = []any{map[string]any{"type": "output_text", "text": it.text, "annotations": []any{}}}
	case "function_call":
		m["call_id"], m["name"], m["arguments"] = it.callID, it.name, it.text
	case "reasoning":
		m["summary"] = []any{map[string]any{"type": "summary_text", "text": it.text}}
	}
	return m
}

// s21ResponsesBody generates a Responses API stream of items (interleave:
// the calls' deltas round robin, else item after item) and the
// final response it ends with.
func s21ResponsesBody(items []s21Item, interleave bool, status string, extra string) (body, final string) {
	var b strings.Builder
	seq := 0
	ev := func(m map[string]any) {
		m["sequence_number"] = seq
		seq++
		b.WriteString("event: " + m["type"].(string) + "\ndata: " + s21JSON(m) + "\n\n")
	}
	keyed := func(it *s21Item, i int, m map[string]any) map[string]any {
		if !it.noDeltaItemID {
			m["item_id"] = it.id
		}
		if !it.noDeltaOutput {
			m["output_index"] = i
		}
		return m
	}
	ev(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_s21", "status": "in_progress", "model": "m-1", "output": []any{}}})
	deltas := make([][]string, len(items))
	for i := range items {
		it := &items[i]
		if it.kind != "function_call" || !it.argsInAdded {
			deltas[i] = s21Deltas(it.text, max(it.deltaTokensPer, 1))
		}
	}
	added := func(i int) {
		it := &items[i]
		if it.noAddedEvents {
			return
		}
		a := map[string]any{"type": it.kind, "status": "in_progress"}
		if !it.noAddedItemID {
			a["id"] = it.id
		}
		switch it.kind {
		case "message":
			a["role"], a["content"] = "assistant", []any{}
		case "function_call":
			a["call_id"], a["name"], a["arguments"] = it.callID, it.name, ""
			if it.argsInAdded {
				a["arguments"] = it.text
			}
		case "reasoning":
			a["summary"] = []any{}
		}
		m := map[string]any{"type": "response.output_item.added", "item": a}
		if !it.noAddedOutput {
			m["output_index"] = i
		}
		ev(m)
	}
	delta := func(i int, d string) {
		it := &items[i]
		var typ string
		m := map[string]any{}
		switch it.kind {
		case "message":
			typ = "response.output_text.delta"
			m["content_index"] = 0
		case "function_call":
			typ = "response.function_call_arguments.delta"
		case "reasoning":
			typ = "response.reasoning_summary_text.delta"
			m["summary_index"] = 0
		}
		m["type"] = typ
		m["delta"] = json.RawMessage(d)
		ev(keyed(it, i, m))
	}
	done := func(i int) {
		it := &items[i]
		if it.noDoneEvents {
			return
		}
		if it.kind == "function_call" && it.status == "" {
			ev(keyed(it, i, map[string]any{"type": "response.function_call_arguments.done", "arguments": it.text}))
		}
		if it.kind == "message" {
			ev(keyed(it, i, map[string]any{"type": "response.output_text.done", "content_index": 0, "text": it.text}))
		}
		ev(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it.whole()})
	}
	if interleave {
		// The calls' deltas round robin (a message's or reasoning
		// item's are sequential: one token stream writes them).
		var calls []int
		for i := range items {
			if items[i].kind != "function_call" {
				added(i)
				for _, d := range deltas[i] {
					delta(i, d)
				}
				done(i)
				continue
			}
			calls = append(calls, i)
			added(i)
		}
		for more := true; more; {
			more = false
			for _, i := range calls {
				if len(deltas[i]) > 0 {
					delta(i, deltas[i][0])
					deltas[i] = deltas[i][1:]
					more = true
				}
			}
		}
		for _, i := range calls {
			done(i)
		}
	} else {
		for i := range items {
			added(i)
			for _, d := range deltas[i] {
				delta(i, d)
			}
			done(i)
		}
	}
	out := make([]any, len(items))
	for i := range items {
		out[i] = items[i].whole()
	}
	if status == "" {
		status = "completed"
	}
	resp := map[string]any{"id": "resp_s21", "object": "response", "status": status, "model": "m-1", "output": out,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}}
	if status == "incomplete" {
		resp["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	final = s21JSON(resp)
	ev(map[string]any{"type": typ, "response": json.RawMessage(final)})
	return b.String() + extra, final
}

// s21Parts is a message's parts as comparable text: text and reasoning
// joined per part, tool calls with their id, name, arguments and
// validity.
func s21Parts(m *llmrelayv1.Message) []string {
	var out []string
	for _, p := range m.GetParts() {
		switch {
		case p.GetToolCall() != nil:
			c := p.GetToolCall()
			out = append(out, fmt.Sprintf("call %s %s %q valid=%v", c.GetCallId(), c.GetName(), c.GetArguments(), c.GetArgumentsValid()))
		case p.GetReasoning() != nil:
			out = append(out, fmt.Sprintf("reasoning %q", p.GetReasoning().GetText()))
		default:
			c := proto.Clone(p).(*llmrelayv1.Part)
			out = append(out, protojson.Format(c))
		}
	}
	return out
}

// TestResponsesStreamKeysStream21: Responses API streams whose deltas
// name their item by item_id only, by output_index only, or by neither
// (OpenAI-compatible /v1/responses servers leave one or both out), and
// whose added events may lack either, fold to the unary answer for the
// same final response: calls never merged or split, text never doubled
// by the item's done event, reasoning one part per item. Before, a delta
// naming neither opened a call (or reasoning item) of its own per delta,
// and text deltas without item_id were relayed again by output_item.done.
func TestResponsesStreamKeysStream21(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	const long = `{"path":"/a/b","data":"`
	bigArgs := long + strings.Repeat("xyzé😀", 3000) + `"}`
	base := func() []s21Item {
		return []s21Item{
			{kind: "reasoning", id: "rs_1", text: "Think 😀 twice"},
			{kind: "message", id: "msg_1", text: "Hi é 😀 \"there\"\n"},
			{kind: "function_call", id: "fc_1", callID: "call_1", name: "get_weather", text: `{"city":"Zürich 😀"}`},
			{kind: "function_call", id: "fc_2", callID: "call_2", name: "now", text: `{}`},
			{kind: "function_call", id: "fc_3", callID: "call_3", name: "get_weather", text: `{"city":"Oslo"}`},
		}
	}
	type style struct {
		name       string
		mod        func(it *s21Item)
		interleave bool
	}
	styles := []style{
		{"all keys", func(*s21Item) {}, false},
		{"all keys interleaved", func(*s21Item) {}, true},
		{"deltas without output_index", func(it *s21Item) { it.noDeltaOutput = true }, false},
		{"deltas without output_index interleaved", func(it *s21Item) { it.noDeltaOutput = true }, true},
		{"deltas without item_id", func(it *s21Item) { it.noDeltaItemID = true }, false},
		{"deltas without item_id interleaved", func(it *s21Item) { it.noDeltaItemID = true }, true},
		{"deltas without either", func(it *s21Item) { it.noDeltaItemID, it.noDeltaOutput = true, true }, false},
		{"added without output_index, deltas without item_id", func(it *s21Item) { it.noAddedOutput, it.noDeltaItemID = true, true }, false},
		{"added without id, deltas without output_index", func(it *s21Item) { it.noAddedItemID, it.noDeltaOutput = true, true }, false},
		{"deltas without either, no done events", func(it *s21Item) { it.noDeltaItemID, it.noDeltaOutput, it.noDoneEvents = true, true, true }, false},
		{"deltas alone, without either key", func(it *s21Item) {
			it.noDeltaItemID, it.noDeltaOutput, it.noDoneEvents, it.noAddedEvents = true, true, true, true
		}, false},
	}
	for _, st := range styles {
		for _, per := range []int{1, 2, 3, 7} {
			t.Run(fmt.Sprintf("%s/%d", st.name, per), func(t *testing.T) {
				t.Parallel()
				items := base()
				for i := range items {
					items[i].deltaTokensPer = per
					st.mod(&items[i])
				}
				s21CheckResponses(t, p, items, st.interleave, "")
			})
		}
	}
	t.Run("empty arguments", func(t *testing.T) {
		t.Parallel()
		items := base()
		items[3].text = ""
		for i := range items {
			items[i].noDeltaOutput, items[i].noDeltaItemID = true, true
		}
		s21CheckResponses(t, p, items, false, "")
	})
	t.Run("long arguments", func(t *testing.T) {
		t.Parallel()
		items := []s21Item{{kind: "function_call", id: "fc_1", callID: "call_1", name: "write", text: bigArgs, deltaTokensPer: 5, noDeltaItemID: true, noDeltaOutput: true}}
		s21CheckResponses(t, p, items, false, "")
	})
	t.Run("arguments whole in output_item.added", func(t *testing.T) {
		t.Parallel()
		items := base()
		for i := range items {
			items[i].argsInAdded = true
			items[i].noDeltaOutput = true
		}
		s21CheckResponses(t, p, items, false, "")
	})
	t.Run("incomplete at the token limit", func(t *testing.T) {
		t.Parallel()
		items := base()[:4]
		items[3].text, items[3].status = `{"tz":"Eur`, "incomplete"
		for i := range items {
			items[i].noDeltaOutput, items[i].noDeltaItemID = true, true
		}
		evs, _ := s21CheckResponses(t, p, items, false, "incomplete")
		var cut, end int
		for _, ev := range evs {
			if ev.ToolCall.CallID != "call_2" {
				continue
			}
			switch ev.Kind {
			case provider.EventToolCallCut:
				cut++
			case provider.EventToolCallEnd:
				end++
			}
		}
		if cut != 1 || end != 0 {
			t.Errorf("call_2: %d cut, %d end events; want it cut", cut, end)
		}
	})
}

// s21CheckResponses streams items and checks the folded stream against
// the unary parse of the final response.
func s21CheckResponses(t *testing.T, p *Provider, items []s21Item, interleave bool, status string) ([]*provider.Event, string) {
	t.Helper()
	body, final := s21ResponsesBody(items, interleave, status, "")
	evs, _, err := collect(t, respStreamFrom(p, body))
	if err != nil {
		t.Fatalf("stream: %v\n%s", err, body)
	}
	checkStreamInvariants(t, evs)
	f := accFold(t, evs)
	res, err := p.parseResponsesResponse([]byte(final), "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.kind == "message" && it.noDeltaItemID && (it.noAddedEvents || it.noAddedItemID) {
			// No event before its text names the message: the stream
			// cannot give its text the item id the final response has.
			for _, p := range res.Message.GetParts() {
				p.ItemId = ""
			}
		}
	}
	got, want := s21Parts(f.Message), s21Parts(res.Message)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stream folds to\n%s\nunary\n%s\nbody\n%.3000s", strings.Join(got, "\n"), strings.Join(want, "\n"), body)
	}
	if f.Meta.GetFinishReason() != res.Meta.GetFinishReason() {
		t.Errorf("finish %v, unary %v", f.Meta.GetFinishReason(), res.Meta.GetFinishReason())
	}
	return evs, body
}

// TestResponsesLogprobsKeylessStream21: output_text deltas that name
// their item by neither item_id nor output_index carry the part's
// logprobs once: they were kept under output index -1, and the item's
// own list (output_item.done, the final response) was added beside
// them, every token twice.
func TestResponsesLogprobsKeylessStream21(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	lp := func(tok string) string { return `{"token":"` + tok + `","logprob":-1,"bytes":[],"top_logprobs":[]}` }
	item := `{"id":"msg_a","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[` + lp("a") + `,` + lp("b") + `],"text":"ab"}]}`
	deltas := `data: {"type":"response.output_text.delta","content_index":0,"delta":"a","logprobs":[` + lp("a") + `]}` + "\n\n" +
		`data: {"type":"response.output_text.delta","content_index":0,"delta":"b","logprobs":[` + lp("b") + `]}` + "\n\n"
	completed := `data: {"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[` + item + `]}}` + "\n\n"
	want := `[[` + lp("a") + `,` + lp("b") + `]]`
	var v any
	if err := json.Unmarshal([]byte(want), &v); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(v)
	for _, tc := range []struct{ name, body string }{
		{"deltas alone", deltas + completed},
		{"done event with the index", deltas + `data: {"type":"response.output_item.done","output_index":0,"item":` + item + `}` + "\n\n" + completed},
		{"added without the index", `data: {"type":"response.output_item.added","item":{"id":"msg_a","type":"message","status":"in_progress","role":"assistant","content":[]}}` + "\n\n" +
			deltas + completed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs, _, err := collect(t, respStreamFrom(p, tc.body))
			if err != nil {
				t.Fatal(err)
			}
			f := accFold(t, evs)
			if got := extendedJSON(t, f.Meta, extLogprobs); got != string(wantJSON) {
				t.Errorf("logprobs\n%s\nwant\n%s", got, wantJSON)
			}
			if got := s21Text(f.Message); got != "ab" {
				t.Errorf("text %q", got)
			}
		})
	}
}
