package openai

import (
	"bytes"
	"encoding/json"
	"sort"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// respLogprobs gathers the token logprobs of a Responses API answer
// (asked with include "message.output_text.logprobs"): each output_text
// part of a message item carries the list of its tokens' logprobs
// ([{token, logprob, bytes, top_logprobs}]). meta.extended["logprobs"]
// relays them in the Responses API's own shape: a list with one entry
// per output_text part of the answer's message items, in output order
// (output index, then content index), each the part's list as sent ([]
// for a part without), set only when some part has logprobs. The unary
// answer's come from its output items; a stream's from its
// response.output_text.delta events (each carries its own tokens'),
// else, for a part whose deltas carried none, from its
// response.output_text.done event, its output_item.done item or the
// final response, in that order; they are reported whole with the
// finish. A stream keeps at most maxStreamLogprobBytes of them (one
// warning), as the chat stream does.
type respLogprobs struct {
	parts map[respPartKey]*respLogprobPart
	// any: some part has a non-empty list.
	any bool
	logprobBudget
}

// respPartKey is an output_text part's place: its item's output index
// and its content index.
type respPartKey struct{ output, content int64 }

type respLogprobPart struct {
	// deltas: the entries of the part's delta events; whole: the part's
	// complete list from a done event, an item or the final response,
	// used when no delta carried any; each joined
	// (logprobBudget.joinEntries).
	deltas, whole bytes.Buffer
}

// part returns the record of the part at k, made at the first use; nil
// past maxStreamItems parts.
func (l *respLogprobs) part(k respPartKey) *respLogprobPart {
	if p, ok := l.parts[k]; ok {
		return p
	}
	if len(l.parts) >= maxStreamItems {
		return nil
	}
	if l.parts == nil {
		l.parts = map[respPartKey]*respLogprobPart{}
	}
	p := &respLogprobPart{}
	l.parts[k] = p
	return p
}

// rekey moves the parts recorded at output index from (an item whose
// index was not known yet) to output index to: a part there with no
// deltas of its own gives way.
func (l *respLogprobs) rekey(from, to int64) {
	for k, p := range l.parts {
		if k.output != from {
			continue
		}
		delete(l.parts, k)
		nk := respPartKey{to, k.content}
		if q := l.parts[nk]; q == nil || (q.deltas.Len() == 0 && p.deltas.Len() > 0) {
			l.parts[nk] = p
		}
	}
}

// logprobList reads a logprobs value: its entries, and a warning when it is
// present but not an array.
func logprobList(raw json.RawMessage) ([]json.RawMessage, string) {
	if !isPresent(raw) {
		return nil, ""
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, "output_text logprobs that are not an array ignored"
	}
	return list, ""
}

// keep joins entries into dst within the budget (joinEntries).
func (l *respLogprobs) keep(dst *bytes.Buffer, entries []json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	n := dst.Len()
	l.joinEntries(dst, entries, meta)
	l.any = l.any || dst.Len() > n
}

// delta adds a delta event's logprobs to the part at k.
func (l *respLogprobs) delta(k respPartKey, raw json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	list, warn := logprobList(raw)
	if warn != "" {
		l.warn(meta, warn)
	}
	if len(list) == 0 {
		return
	}
	if p := l.part(k); p != nil {
		l.keep(&p.deltas, list, meta)
	}
}

// whole records a part's complete list (a done event, an item, the
// final response), unless the part has one or its deltas carried some.
// A part without logprobs is recorded too, with an empty list: its place
// in the list is kept.
func (l *respLogprobs) whole(k respPartKey, raw json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	list, warn := logprobList(raw)
	if warn != "" {
		l.warn(meta, warn)
	}
	p := l.part(k)
	if p == nil || p.deltas.Len() > 0 || p.whole.Len() > 0 {
		return
	}
	l.keep(&p.whole, list, meta)
}

// item records the output_text parts of a message item at output index i.
func (l *respLogprobs) item(i int64, it *respOutputItem, meta *llmrelayv1.ResponseMeta) {
	if it.Type != "message" {
		return
	}
	t := bytes.TrimSpace(it.Content)
	if len(t) == 0 || t[0] != '[' {
		return
	}
	var parts []respContentPart
	if json.Unmarshal(t, &parts) != nil {
		return // messageItemContent reports the shape
	}
	for j, pt := range parts {
		if pt.Type == "output_text" {
			l.whole(respPartKey{i, int64(j)}, pt.Logprobs, meta)
		}
	}
}

// set stores the list in meta.extended["logprobs"] when some part has
// logprobs.
func (l *respLogprobs) set(meta *llmrelayv1.ResponseMeta) {
	if !l.any {
		return
	}
	keys := make([]respPartKey, 0, len(l.parts))
	for k := range l.parts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].output != keys[b].output {
			return keys[a].output < keys[b].output
		}
		return keys[a].content < keys[b].content
	})
	var b bytes.Buffer
	b.WriteByte('[')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		p := l.parts[k]
		entries := &p.deltas
		if entries.Len() == 0 {
			entries = &p.whole
		}
		writeList(&b, entries)
	}
	b.WriteByte(']')
	setExtendedJSON(meta, extLogprobs, b.Bytes())
}
