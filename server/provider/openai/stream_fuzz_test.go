package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/fold"
	"github.com/llmrelay/llmrelay/internal/sse"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// chatStreamSeeds are the chat-completion stream recordings FuzzStream
// starts from: round 19's tool-call assembly cases (calls without ids,
// reused indexes, surrogate pairs split across fragments, calls cut by
// finish_reason length) and its new real recordings among them.
var chatStreamSeeds = []string{
	"chat_plain_stream", "tools_parallel_stream", "azure_chat_stream", "stream_error_event", "stream_cut",
	"tools19_idless_whole_calls_stream", "tools19_interleaved_after_text_stream", "tools19_js_surrogate_split_stream",
	"tools19_length_after_text_stream", "tools19_length_mid_args_stream", "tools19_length_parsing_args_stream",
	"tools19_mistral_same_index_one_delta_stream", "tools19_object_args_noindex_stream", "tools19_reused_index_stream",
	"tools19_vllm_id_every_chunk_stream", "surrogate19_chat_split_stream", "leftovers20_length_open_args_text_stream",
	"leftovers20_repeat_whole_call_stream", "leftovers20_reused_id_same_index_stream", "real_oljs_openai_logprobs_stream",
	"surr19b_openrouter_details_stream", "surr19b_mistral_thinking_stream",
	"real_reasoning19_mistral_reasoning_stream", "real_asknvim_ollama_v1_parallel_tools_stream",
	"real_elastic_azure_stream_include_usage", "real_openaipy_parallel_tools_stream",
	"real_moonshot_indexless_tool_calls_stream", "real_azsdk_streaming_function_call", "real_maruel_together_qwen_logprobs_stream",
	"real_maruel_openrouter_qwen35_noargs_stream_1", "real_maruel_cerebras_oss_logprobs_stream",
	"dialect_whole_message_stream", "real_svir_azure_async_flagged_stream",
}

// refChatStream is what a reference decoder reads of a chat stream: the
// choice-0 content and refusal text, and the argument fragments of its
// tool calls in the order sent. It reads the SSE events as the adapter's
// reader frames them, decodes each chunk with encoding/json alone (no
// fast path, no call assembly), and gives up (sure false) on any shape
// it would have to guess about.
type refChatStream struct {
	text, refusal string
	args          strings.Builder
	calls         refCalls
	// textSure: every content was a string or null (no content arrays,
	// which carry reasoning and refusals too).
	textSure, sure bool
}

type refChunk struct {
	Choices []struct {
		Index json.RawMessage `json:"index"`
		Delta *refDelta       `json:"delta"`
		// Message: a whole message, read as the delta when there is
		// none (wholeMessage).
		Message *refDelta `json:"message"`
	} `json:"choices"`
}

type refDelta struct {
	Content      json.RawMessage `json:"content"`
	Refusal      json.RawMessage `json:"refusal"`
	ToolCalls    json.RawMessage `json:"tool_calls"`
	FunctionCall json.RawMessage `json:"function_call"`
}

type refFunction struct {
	Name       json.RawMessage `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

type refToolCall struct {
	Index    json.RawMessage `json:"index"`
	ID       json.RawMessage `json:"id"`
	Function json.RawMessage `json:"function"`
	Custom   json.RawMessage `json:"custom"`
}

// refCalls assembles the calls of a stream whose every tool-call
// fragment has an index, as OpenAI sends them: a fragment continues the
// call at its index unless it names another id (a new call there); each
// call's first fragment names its id. A fragment with the id of a call
// whose arguments are whole, naming a function, with arguments of its
// own (or naming another function), is that call again when it names its function with the same JSON
// arguments (dropped: not relayed), otherwise a second call at that
// index, keyed by a made id (provider.MadeCallID). ok is false for any
// other stream; unsure is set when a fragment the reference did not
// assemble may repeat a call (its arguments may not be relayed).
type refCalls struct {
	ok      bool
	unsure  bool
	byIndex map[string]*refCall // the index's JSON → its call
	order   []*refCall
	seen    map[string]bool // every id sent
	// sawArgs: a fragment with arguments came before (a nameless whole
	// object after one may be a repeat the adapter drops).
	sawArgs bool
}

type refCall struct {
	sent, key, name string
	args            strings.Builder
}

// add adds a fragment (fn: a function call's, named name) and reports
// whether it repeats a call whole (its arguments are not relayed).
func (r *refCalls) add(tc *refToolCall, fn bool, name, args string) (repeat bool) {
	id, okID := refString(tc.ID)
	hasArgs := strings.TrimSpace(args) != ""
	named := okID && id != "" && name != "" && hasArgs
	// maybeRepeat: a nameless whole object after other arguments, which
	// the adapter drops when it repeats the call it would continue
	// (chatStream.namelessRepeatOf), a call this reference cannot tell
	// once it gave up keying calls.
	maybeRepeat := fn && name == "" && strings.HasPrefix(strings.TrimSpace(args), "{") && r.sawArgs
	defer func() {
		if okID && id != "" {
			r.seen[id] = true
		}
		r.sawArgs = r.sawArgs || args != ""
	}()
	if !r.ok {
		r.unsure = r.unsure || (fn && named && r.seen[id]) || maybeRepeat
		return false
	}
	var n int
	if isNull(tc.Index) || json.Unmarshal(tc.Index, &n) != nil || n < 0 || !okID {
		r.ok = false
		r.unsure = r.unsure || (fn && named && r.seen[id]) || maybeRepeat
		return false
	}
	if a := strings.TrimSpace(args); fn && name == "" && strings.HasPrefix(a, "{") {
		// A call's whole arguments sent again without its name
		// (chatStream.namelessRepeatOf): the call the fragment would
		// continue, by its id at its index, else by its id, else at its
		// index, when named and whole and the same JSON.
		c := r.byIndex[strconv.Itoa(n)]
		if id != "" && (c == nil || c.sent != id) {
			c = nil
			for _, o := range r.order {
				if o.sent == id {
					c = o
					break
				}
			}
		}
		same := func(c *refCall) bool {
			prev := c.args.String()
			return c.name != "" && fold.ValidArguments(prev) && len(prev) <= 2*len(a)+16 &&
				(a == strings.TrimSpace(prev) || provider.SameJSON([]byte(a), []byte(prev)))
		}
		if c == nil && id == "" {
			// At an index no call has: a repeat of any call.
			for _, o := range r.order {
				if same(o) {
					return true
				}
			}
		}
		if c != nil && same(c) {
			return true
		}
	}
	if fn && named {
		for _, c := range r.order {
			if c.sent == id && c.name == name && fold.ValidArguments(c.args.String()) &&
				(c.args.String() == args || provider.SameJSON([]byte(c.args.String()), []byte(args))) {
				return true
			}
		}
	}
	key := strconv.Itoa(n)
	cur := r.byIndex[key]
	taken := func(k string) bool {
		for _, c := range r.order {
			if c.key == k {
				return true
			}
		}
		return false
	}
	switch {
	case id == "" && cur == nil:
		r.ok = false // a call without id: keyed by the adapter's rules
		return false
	case id != "" && (cur == nil || id != cur.sent):
		for _, c := range r.order {
			if c.sent == id {
				r.ok = false // an id again at another index
				return false
			}
		}
		if taken(id) {
			r.ok = false // the id made for another call
			return false
		}
		cur = &refCall{sent: id, key: id}
		r.byIndex[key] = cur
		r.order = append(r.order, cur)
	case id != "" && name != "" && (hasArgs || name != cur.name) && cur.name != "" && fold.ValidArguments(cur.args.String()):
		// A second call with the id of the whole call at its index: a
		// fragment naming a function with arguments, or naming another
		// function (one restating the call's name with no arguments but
		// white space adds nothing to it).
		cur = &refCall{sent: id, key: provider.MadeCallID(len(r.order), taken)}
		r.byIndex[key] = cur
		r.order = append(r.order, cur)
	}
	if cur.name == "" {
		cur.name = name
	}
	cur.args.WriteString(args)
	return false
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// refString decodes a JSON string, or null/absent as "".
func refString(raw json.RawMessage) (string, bool) {
	if isNull(raw) {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// refArgs is a function object's arguments text.
func refArgs(raw json.RawMessage) (string, bool) {
	_, a, ok := refFunc(raw)
	return a, ok
}

// refFunc is a function object's name and arguments text.
func refFunc(raw json.RawMessage) (name, args string, ok bool) {
	if isNull(raw) {
		return "", "", true
	}
	var f refFunction
	if t := bytes.TrimSpace(raw); t[0] != '{' || json.Unmarshal(t, &f) != nil {
		return "", "", false
	}
	if name, ok = refString(f.Name); !ok {
		return "", "", false
	}
	if isNull(f.Arguments) && !isNull(f.Parameters) {
		return name, provider.ArgumentsText(f.Parameters, ""), true
	}
	return name, provider.ArgumentsText(f.Arguments, ""), true
}

func readRefChatStream(body []byte) refChatStream {
	ref := refChatStream{textSure: true, calls: refCalls{ok: true, byIndex: map[string]*refCall{}, seen: map[string]bool{}}}
	var text, refusal strings.Builder
	rd := sse.NewReader(bytes.NewReader(body))
	for {
		ev, err := rd.Next()
		if err != nil {
			ref.sure = errors.Is(err, io.EOF)
			break
		}
		data := bytes.TrimSpace(ev.Data)
		if string(data) == "[DONE]" {
			ref.sure = true
			break
		}
		if len(data) == 0 || string(ev.Type) == "error" {
			continue
		}
		var c refChunk
		if json.Unmarshal(data, &c) != nil {
			return ref
		}
		for _, ch := range c.Choices {
			if !isNull(ch.Index) {
				var n float64
				if json.Unmarshal(ch.Index, &n) != nil {
					return ref
				}
				if n != 0 {
					continue
				}
			}
			d := ch.Delta
			if d == nil {
				d = ch.Message
			}
			if d == nil {
				continue
			}
			if t := bytes.TrimSpace(d.Content); len(t) > 0 && t[0] != '"' && string(t) != "null" {
				ref.textSure = false
			} else if s, ok := refString(d.Content); ok {
				text.WriteString(s)
			}
			s, ok := refString(d.Refusal)
			if !ok {
				return ref
			}
			refusal.WriteString(s)
			if !isNull(d.ToolCalls) {
				var calls []refToolCall
				t := bytes.TrimSpace(d.ToolCalls)
				if t[0] == '{' {
					calls = make([]refToolCall, 1)
					if json.Unmarshal(t, &calls[0]) != nil {
						return ref
					}
				} else if json.Unmarshal(t, &calls) != nil {
					return ref
				}
				for _, tc := range calls {
					switch {
					case !isNull(tc.Function):
						name, a, ok := refFunc(tc.Function)
						if !ok {
							return ref
						}
						if !ref.calls.add(&tc, true, name, a) {
							ref.args.WriteString(a)
						}
					case !isNull(tc.Custom):
						var cu struct {
							Name  json.RawMessage `json:"name"`
							Input json.RawMessage `json:"input"`
						}
						if json.Unmarshal(tc.Custom, &cu) != nil {
							return ref
						}
						name, ok := refString(cu.Name)
						in, ok2 := refString(cu.Input)
						if !ok || !ok2 {
							return ref
						}
						ref.args.WriteString(in)
						ref.calls.add(&tc, false, name, in)
					default:
						ref.calls.add(&tc, false, "", "")
					}
				}
			}
			if !isNull(d.FunctionCall) {
				a, ok := refArgs(d.FunctionCall)
				if !ok {
					return ref
				}
				ref.args.WriteString(a)
				ref.calls.ok = false
			}
		}
	}
	ref.text, ref.refusal = text.String(), refusal.String()
	return ref
}

// checkAgainstReference compares a complete stream's events with what
// the reference decoder read of the same body: nothing of the argument
// text is lost, added or repeated (in order, up to how a surrogate pair
// split across fragments decodes: SplitInsensitive), and the text and
// refusal are the content and refusal sent, when no content could hold
// reasoning markup.
func checkAgainstReference(t *testing.T, body []byte, evs []*provider.Event, calls []*providertest.CallLog) {
	t.Helper()
	ref := readRefChatStream(body)
	if !ref.sure || ref.calls.unsure {
		return
	}
	var got strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCall {
			got.WriteString(ev.ToolCall.Arguments)
		}
	}
	gs, gw := providertest.SplitInsensitive(got.String())
	ws, ww := providertest.SplitInsensitive(ref.args.String())
	if (gs != ws || gw != ww) && !late(calls) {
		t.Errorf("arguments relayed %q (weight %d), sent %q (weight %d)", gs, gw, ws, ww)
	}
	if rc := ref.calls; rc.ok && !late(calls) {
		// Per call, for streams keyed as OpenAI keys them.
		if len(calls) != len(rc.order) {
			t.Errorf("%d calls relayed, %d sent", len(calls), len(rc.order))
		}
		for i, c := range calls {
			if i >= len(rc.order) {
				break
			}
			gs, gw := providertest.SplitInsensitive(c.Arguments.String())
			ws, ww := providertest.SplitInsensitive(rc.order[i].args.String())
			if c.ID != rc.order[i].key || gs != ws || gw != ww {
				t.Errorf("call %d: %s %q (weight %d), sent %s %q (weight %d)", i, c.ID, gs, gw, rc.order[i].key, ws, ww)
			}
		}
	}
	var refusal strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventRefusal {
			refusal.WriteString(ev.Text)
		}
	}
	if ref.textSure && !providertest.SameSplitText(refusal.String(), ref.refusal) {
		t.Errorf("refusal %q, sent %q", refusal.String(), ref.refusal)
	}
	if ref.textSure && !strings.Contains(ref.text, "<") {
		if got := providertest.Text(evs); !providertest.SameSplitText(got, ref.text) {
			t.Errorf("text %q, sent %q", got, ref.text)
		}
	}
}

// refRespItem is what the reference reads of a Responses stream's
// function or custom tool call item.
type refRespItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
}

// checkRespFinalArguments checks a complete Responses stream against the
// complete arguments its items state (output_item.done, and the final
// response's output): a call's relayed fragments concatenate to them, or
// a warning names the call (they do not continue what was streamed, or
// came after its end). Only calls the body names unambiguously are
// checked: one item id per call_id and per output index, one call_id per
// item id.
func checkRespFinalArguments(t *testing.T, body []byte, evs []*provider.Event, calls []*providertest.CallLog) {
	t.Helper()
	type finalArgs struct {
		callID, args string
	}
	var finals []finalArgs
	itemsOfCall := map[string]map[string]bool{}
	callsOfItem := map[string]map[string]bool{}
	itemsAt := map[string]map[string]bool{}
	note := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	// streamed: the call_ids item events named; a call_id only the final
	// response gives comes after the call was relayed keyed otherwise.
	streamed := map[string]bool{}
	item := func(it *refRespItem, final, completed bool) {
		if it.Type != "function_call" && it.Type != "custom_tool_call" {
			return
		}
		note(itemsOfCall, it.CallID, it.ID)
		note(callsOfItem, it.ID, it.CallID)
		if !completed {
			streamed[it.CallID] = true
		}
		if !final || it.CallID == "" || (completed && !streamed[it.CallID]) {
			return
		}
		args := provider.ArgumentsText(it.Arguments, "")
		if it.Type == "custom_tool_call" && !isNull(it.Input) {
			var in string
			if json.Unmarshal(it.Input, &in) != nil {
				return
			}
			args = in
		}
		if args != "" {
			finals = append(finals, finalArgs{it.CallID, args})
		}
	}
	rd := sse.NewReader(bytes.NewReader(body))
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		var e struct {
			Type        string          `json:"type"`
			OutputIndex json.RawMessage `json:"output_index"`
			ItemID      string          `json:"item_id"`
			Item        *refRespItem    `json:"item"`
			Response    *struct {
				Output []refRespItem `json:"output"`
			} `json:"response"`
		}
		if json.Unmarshal(bytes.TrimSpace(ev.Data), &e) != nil {
			return // the adapter read it leniently: not checked
		}
		if e.Type == "" {
			e.Type = string(ev.Type)
		}
		if !isNull(e.OutputIndex) {
			id := e.ItemID
			if e.Item != nil {
				id = e.Item.ID
			}
			note(itemsAt, string(bytes.TrimSpace(e.OutputIndex)), id)
		}
		if e.ItemID != "" {
			note(callsOfItem, e.ItemID, "?") // a delta names no call_id: ambiguous unless an item does
		}
		switch e.Type {
		case "response.output_item.added", "response.output_item.done":
			if e.Item != nil {
				item(e.Item, e.Type == "response.output_item.done", false)
			}
		case "response.completed", "response.incomplete":
			if e.Response != nil {
				for i := range e.Response.Output {
					item(&e.Response.Output[i], true, true)
				}
			}
		}
	}
	for _, ids := range itemsAt {
		if len(ids) > 1 {
			return // the adapter maps rotated ids by output index (canonItem)
		}
	}
	byID := map[string]*providertest.CallLog{}
	for _, c := range calls {
		byID[c.ID] = c
	}
	warned := func(id string) bool {
		for _, ev := range evs {
			if ev.Kind == provider.EventMeta {
				for _, w := range ev.Meta.GetWarnings() {
					if strings.HasPrefix(w, "tool call "+id+": ") {
						return true
					}
				}
			}
		}
		return false
	}
	renamed := func(id string) bool {
		for _, ev := range evs {
			if ev.Kind == provider.EventMeta {
				for _, w := range ev.Meta.GetWarnings() {
					if strings.Contains(w, "a later item event names call_id "+id+";") {
						return true
					}
				}
			}
		}
		return false
	}
	for _, f := range finals {
		items := itemsOfCall[f.callID]
		if len(items) != 1 {
			continue
		}
		var itemID string
		for itemID = range items {
		}
		if n := len(callsOfItem[itemID]); itemID != "" && (n > 2 || (n == 2 && !callsOfItem[itemID]["?"])) {
			continue
		}
		c := byID[f.callID]
		if renamed(f.callID) {
			// Its call went out keyed by what its first item event gave
			// (another call_id, its item id, a made id), and the
			// warning says so: the item's complete arguments were
			// checked under that key. A final response that lists the
			// call_id again relays it as a call of its own.
			continue
		}
		if c == nil {
			t.Errorf("call %s (complete arguments %q) was not relayed", f.callID, f.args)
			continue
		}
		if got := c.Arguments.String(); got != f.args && !warned(f.callID) {
			t.Errorf("call %s: relayed arguments %q, complete arguments %q, and no warning", f.callID, got, f.args)
		}
	}
}

// TestResponsesFinalArgumentsCaughtUp: a stream without output_item.done
// (its arguments.done lost too) has the final response's complete
// arguments checked as output_item.done's are: the rest the deltas did
// not carry is relayed; arguments that do not continue them are reported
// (FuzzResponsesStream found the second kept silently).
func TestResponsesFinalArgumentsCaughtUp(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	added := sseEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_1","name":"f"}}`)
	delta := sseEvent("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"a\""}`)
	completed := func(args string) string {
		return sseEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"f","arguments":`+args+`}]}}`)
	}
	for _, tc := range []struct {
		final, want, warning string
	}{
		{`"{\"a\":1}"`, `{"a":1}`, ""},
		{`"{\"b\":1}"`, `{"a"`, "tool call call_1: complete arguments do not continue the streamed ones; kept the streamed ones"},
	} {
		evs, _, err := collect(t, respStreamFrom(p, added+delta+completed(tc.final)))
		if err != nil {
			t.Fatal(err)
		}
		calls := providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: true, EndEveryCall: true})
		if len(calls) != 1 || calls[0].Arguments.String() != tc.want {
			t.Errorf("final %s: calls %+v, want arguments %s", tc.final, calls, tc.want)
		}
		var warnings []string
		for _, ev := range evs {
			if ev.Kind == provider.EventMeta {
				warnings = append(warnings, ev.Meta.GetWarnings()...)
			}
		}
		if got := strings.Join(warnings, "|"); got != tc.warning {
			t.Errorf("final %s: warnings %q, want %q", tc.final, got, tc.warning)
		}
	}
}

// late reports a fragment relayed after its call's end: the gateway's
// fold fails the stream there (UPSTREAM_BAD_RESPONSE,
// TestProtocolBreakIsBadResponse), so what follows is not compared.
func late(calls []*providertest.CallLog) bool {
	for _, c := range calls {
		if c.Late {
			return true
		}
	}
	return false
}
