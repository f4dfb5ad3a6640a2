// Package fold folds the events of a StreamChat or StreamTools response
// into the final result, the way the unary RPC would have returned it. The
// server uses it to build a stream's final meta; clients use it (re-exported
// by package client) to rebuild the message from the deltas.
package fold

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// MaxToolCalls bounds the number of distinct tool calls one stream may
// open, so that a broken upstream cannot grow memory without limit.
const MaxToolCalls = 1024

// Accumulator folds stream events. The zero value is ready to use.
type Accumulator struct {
	start *llmrelayv1.StreamStart
	order []string // call ids in order of first delta
	calls map[string]*callState
	usage *llmrelayv1.Usage
	end   *llmrelayv1.StreamEnd
	// parts keeps text and tool calls in the order they started, so the
	// folded message has the same part order a unary answer has.
	// Pointers: a segment holds strings.Builders, which must not be
	// copied once written (a reasoning block's signature can arrive after
	// later segments grew the slice).
	segments []*segment
	// reasoning maps a reasoning block index to its segment.
	reasoning map[int32]int
	// failed is set by Fail: the stream ended with an error status.
	failed bool
	// items counts the provider items (MaxProviderItems).
	items int
}

type segment struct {
	kind      int // 1 text, 2 refusal, 3 tool call, 4 reasoning, 5 provider item
	item      *llmrelayv1.ProviderItem
	callID    string
	text      strings.Builder
	signature strings.Builder
	redacted  bool
	id        string
	provider  string
	format    string
	phase     string // a text segment's phase (TextDelta.phase)
	itemID    string // a text or refusal segment's message item id
	// cuts are a reasoning block's summary part boundaries after its
	// first part (ReasoningDelta.summary_index): where in text the
	// previous part ends and the next begins (after the separator).
	cuts []partCut
	// part is the summary_index of the block's last text piece.
	part int32
}

// partCut is where a reasoning block's text passes from one summary part
// to the next: the previous part ends at end, the next begins at begin.
type partCut struct{ end, begin int }

// SummarySeparator joins a reasoning block's summary parts in
// Reasoning.text, and begins the text of a delta that begins a part
// after earlier text (ReasoningDelta.summary_index).
const SummarySeparator = "\n\n"

type callState struct {
	index     int32
	name      string
	args      strings.Builder
	signature strings.Builder
	done      bool
	cut       bool // the done event said the arguments are not valid
}

// AddChat adds one StreamChat event. An event this version does not know (a
// newer server's; protobuf keeps it as unknown fields) is skipped, so a
// newer server never breaks an older client.
func (a *Accumulator) AddChat(ev *llmrelayv1.StreamChatResponse) error {
	switch e := ev.GetEvent().(type) {
	case *llmrelayv1.StreamChatResponse_Start:
		a.AddStart(e.Start)
	case *llmrelayv1.StreamChatResponse_TextDelta:
		a.AddTextDelta(e.TextDelta)
	case *llmrelayv1.StreamChatResponse_RefusalDelta:
		a.AddRefusalDelta(e.RefusalDelta)
	case *llmrelayv1.StreamChatResponse_Usage:
		a.AddUsage(e.Usage)
	case *llmrelayv1.StreamChatResponse_End:
		a.AddEnd(e.End)
	case *llmrelayv1.StreamChatResponse_ReasoningDelta:
		return a.AddReasoning(e.ReasoningDelta)
	case *llmrelayv1.StreamChatResponse_ProviderItem:
		return a.AddProviderItem(e.ProviderItem)
	}
	return nil
}

// AddTools adds one StreamTools event; unknown events are skipped, as in
// AddChat.
func (a *Accumulator) AddTools(ev *llmrelayv1.StreamToolsResponse) error {
	switch e := ev.GetEvent().(type) {
	case *llmrelayv1.StreamToolsResponse_Start:
		a.AddStart(e.Start)
	case *llmrelayv1.StreamToolsResponse_TextDelta:
		a.AddTextDelta(e.TextDelta)
	case *llmrelayv1.StreamToolsResponse_RefusalDelta:
		a.AddRefusalDelta(e.RefusalDelta)
	case *llmrelayv1.StreamToolsResponse_ToolCallDelta:
		return a.AddToolCallDelta(e.ToolCallDelta)
	case *llmrelayv1.StreamToolsResponse_ToolCallDone:
		return a.AddToolCallDone(e.ToolCallDone)
	case *llmrelayv1.StreamToolsResponse_Usage:
		a.AddUsage(e.Usage)
	case *llmrelayv1.StreamToolsResponse_End:
		a.AddEnd(e.End)
	case *llmrelayv1.StreamToolsResponse_ReasoningDelta:
		return a.AddReasoning(e.ReasoningDelta)
	case *llmrelayv1.StreamToolsResponse_ProviderItem:
		return a.AddProviderItem(e.ProviderItem)
	}
	return nil
}

// AddStart records the start event.
func (a *Accumulator) AddStart(s *llmrelayv1.StreamStart) { a.start = s }

// AddText appends a text delta without a phase.
func (a *Accumulator) AddText(s string) {
	a.appendSegment(1, "", "", false, s)
}

// AddPhasedText appends a text delta of the given phase (TextDelta.phase):
// text of another phase than the text before it begins a new part.
func (a *Accumulator) AddPhasedText(s, phase string) {
	a.appendSegment(1, phase, "", false, s)
}

// AddTextDelta appends a text delta: text of another phase than the text
// before it begins a new part, as does text of another message item (an
// item_id set and different from the current part's).
func (a *Accumulator) AddTextDelta(d *llmrelayv1.TextDelta) {
	a.AddItemText(d.GetText(), d.GetPhase(), d.GetItemId(), d.GetBeginsPart())
}

// AddItemText is AddTextDelta for a delta's fields; begins: the delta
// begins a new part (TextDelta.begins_part).
func (a *Accumulator) AddItemText(s, phase, itemID string, begins bool) {
	a.appendSegment(1, phase, itemID, begins, s)
}

// AddRefusal appends a refusal delta.
func (a *Accumulator) AddRefusal(s string) {
	a.appendSegment(2, "", "", false, s)
}

// AddRefusalDelta appends a refusal delta; one of another message item
// begins a new part, as in AddTextDelta.
func (a *Accumulator) AddRefusalDelta(d *llmrelayv1.RefusalDelta) {
	a.AddItemRefusal(d.GetText(), d.GetItemId())
}

// AddItemRefusal is AddRefusalDelta for a delta's fields.
func (a *Accumulator) AddItemRefusal(s, itemID string) {
	a.appendSegment(2, "", itemID, false, s)
}

// appendSegment appends a text (kind 1) or refusal (2) piece; begins
// starts a new part whatever the piece before.
func (a *Accumulator) appendSegment(kind int, phase, itemID string, begins bool, s string) {
	if n := len(a.segments); n > 0 && !begins {
		last := a.segments[n-1]
		if last.kind == kind && last.phase == phase && (itemID == "" || itemID == last.itemID) {
			last.text.WriteString(s)
			return
		}
	}
	a.segments = append(a.segments, &segment{kind: kind, phase: phase, itemID: itemID})
	a.segments[len(a.segments)-1].text.WriteString(s)
}

// MaxReasoningBlocks bounds the reasoning blocks of one stream.
const MaxReasoningBlocks = 1024

// AddReasoning merges a reasoning piece into its block (by index).
func (a *Accumulator) AddReasoning(d *llmrelayv1.ReasoningDelta) error {
	pos, ok := a.reasoning[d.GetIndex()]
	if !ok {
		if len(a.reasoning) >= MaxReasoningBlocks {
			return fmt.Errorf("fold: more than %d reasoning blocks", MaxReasoningBlocks)
		}
		if a.reasoning == nil {
			a.reasoning = map[int32]int{}
		}
		a.segments = append(a.segments, &segment{kind: 4})
		pos = len(a.segments) - 1
		a.reasoning[d.GetIndex()] = pos
	}
	s := a.segments[pos]
	if t := d.GetText(); t != "" {
		if d.GetSummaryIndex() > s.part {
			// A piece that begins a summary part: after earlier text,
			// its text begins with the separator, which is no part's.
			// The block's first text begins its first part, whatever
			// its index.
			s.part = d.GetSummaryIndex()
			c := partCut{end: s.text.Len(), begin: s.text.Len()}
			if strings.HasPrefix(t, SummarySeparator) {
				c.begin += len(SummarySeparator)
			}
			if c.end > 0 && len(s.cuts) < MaxSummaryParts-1 {
				s.cuts = append(s.cuts, c)
			}
		}
		s.text.WriteString(t)
	}
	s.signature.WriteString(d.GetSignature())
	s.redacted = s.redacted || d.GetRedacted()
	if d.GetId() != "" {
		s.id = d.GetId()
	}
	if d.GetFormat() != "" {
		s.format = d.GetFormat()
	}
	if d.GetProvider() != "" {
		s.provider = d.GetProvider()
	}
	return nil
}

// MaxSummaryParts bounds the summary parts of one reasoning block: the
// pieces of later parts join the last.
const MaxSummaryParts = 1024

// summaryParts are a reasoning block's summary parts, nil when it has one
// or none, as a unary answer's Reasoning.summary_parts.
func (s *segment) summaryParts() []string {
	if len(s.cuts) == 0 {
		return nil
	}
	text := s.text.String()
	parts := make([]string, 0, len(s.cuts)+1)
	from := 0
	for _, c := range s.cuts {
		parts = append(parts, text[from:c.end])
		from = c.begin
	}
	return append(parts, text[from:])
}

// MaxProviderItems bounds the provider items of one stream.
const MaxProviderItems = 1024

// AddProviderItem appends a whole provider item as a part, after the
// parts before it.
func (a *Accumulator) AddProviderItem(it *llmrelayv1.ProviderItem) error {
	if a.items >= MaxProviderItems {
		return fmt.Errorf("fold: more than %d provider items", MaxProviderItems)
	}
	a.items++
	a.segments = append(a.segments, &segment{kind: 5, item: proto.CloneOf(it)})
	return nil
}

// AddToolCallDelta merges a tool-call fragment by call_id.
func (a *Accumulator) AddToolCallDelta(d *llmrelayv1.ToolCallDelta) error {
	id := d.GetCallId()
	if id == "" {
		return fmt.Errorf("fold: tool call delta without call_id (index %d)", d.GetIndex())
	}
	c, ok := a.calls[id]
	if !ok {
		if len(a.order) >= MaxToolCalls {
			return fmt.Errorf("fold: more than %d tool calls", MaxToolCalls)
		}
		if a.calls == nil {
			a.calls = map[string]*callState{}
		}
		c = &callState{index: d.GetIndex()}
		a.calls[id] = c
		a.order = append(a.order, id)
		a.segments = append(a.segments, &segment{kind: 3, callID: id})
	}
	if c.done {
		return fmt.Errorf("fold: delta for completed tool call %q", id)
	}
	if d.GetName() != "" {
		c.name = d.GetName()
	}
	c.args.WriteString(d.GetArgumentsDelta())
	c.signature.WriteString(d.GetSignature())
	return nil
}

// AddToolCallDone marks a call complete; its full arguments must equal the
// concatenated deltas.
func (a *Accumulator) AddToolCallDone(d *llmrelayv1.ToolCallDone) error {
	tc := d.GetToolCall()
	c, ok := a.calls[tc.GetCallId()]
	if !ok {
		// A done event without deltas is a whole call.
		if err := a.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: tc.GetCallId(), Index: d.GetIndex(), Name: tc.GetName(), ArgumentsDelta: tc.GetArguments(), Signature: tc.GetSignature()}); err != nil {
			return err
		}
		c = a.calls[tc.GetCallId()]
	} else if c.args.String() != tc.GetArguments() {
		return fmt.Errorf("fold: tool call %q: done arguments differ from the deltas", tc.GetCallId())
	}
	c.done = true
	// The gateway's verdict on the done event stands over the arguments'
	// syntax: a call cut by the output limit can still be a whole JSON
	// object (Gemini sends parsed arguments), and then only the done
	// event says it is not valid.
	c.cut = !tc.GetArgumentsValid()
	return nil
}

// AddUsage records the latest usage totals.
func (a *Accumulator) AddUsage(u *llmrelayv1.Usage) { a.usage = u }

// AddEnd records the final event.
func (a *Accumulator) AddEnd(e *llmrelayv1.StreamEnd) { a.end = e }

// Text is the text so far (the text segments joined: the accumulator keeps
// each delta once).
func (a *Accumulator) Text() string {
	var b strings.Builder
	for i := range a.segments {
		if a.segments[i].kind == 1 {
			b.WriteString(a.segments[i].text.String())
		}
	}
	return b.String()
}

// ToolCallCount is the number of tool calls so far.
func (a *Accumulator) ToolCallCount() int { return len(a.order) }

// ToolCalls are the calls so far, in order of their first delta.
func (a *Accumulator) ToolCalls() []*llmrelayv1.ToolCall {
	out := make([]*llmrelayv1.ToolCall, 0, len(a.order))
	for _, id := range a.order {
		out = append(out, a.toolCall(id))
	}
	return out
}

func (a *Accumulator) toolCall(id string) *llmrelayv1.ToolCall {
	c := a.calls[id]
	args := c.args.String()
	valid := !c.cut && (c.done || !a.failed) && ValidArguments(args)
	return &llmrelayv1.ToolCall{CallId: id, Name: c.name, Arguments: args, ArgumentsValid: valid, Signature: c.signature.String()}
}

// Fail records that the stream ended with an error status instead of its
// end event. A call still open then is not valid, even when its arguments
// so far parse: the stream may have failed inside them (`{"city": "Paris"}`
// can be the start of `{"city": "Paris", "days": 3}`), and a client
// reading the folded message after the error must not run it. The client
// streams (package client) call it when Recv returns an error.
func (a *Accumulator) Fail() { a.failed = true }

// Open returns the calls that have deltas but no done event yet.
func (a *Accumulator) Open() []string {
	var out []string
	for _, id := range a.order {
		if !a.calls[id].done {
			out = append(out, id)
		}
	}
	return out
}

// ToolCall returns the call with this id, or nil, and its index.
func (a *Accumulator) ToolCall(id string) (*llmrelayv1.ToolCall, int32) {
	c, ok := a.calls[id]
	if !ok {
		return nil, 0
	}
	return a.toolCall(id), c.index
}

// Message is the assistant message folded so far: text, refusal, tool
// call, reasoning and provider item parts in the order they started.
func (a *Accumulator) Message() *llmrelayv1.Message {
	m := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	for i := range a.segments {
		s := a.segments[i]
		switch s.kind {
		case 1:
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s.text.String()}, Phase: s.phase, ItemId: s.itemID})
		case 2:
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: s.text.String()}, ItemId: s.itemID})
		case 3:
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: a.toolCall(s.callID)}})
		case 4:
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{
				Text: s.text.String(), Signature: s.signature.String(), Redacted: s.redacted && s.text.Len() == 0, Id: s.id, Provider: s.provider, Format: s.format,
				SummaryParts: s.summaryParts()}}})
		case 5:
			m.Parts = append(m.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: proto.CloneOf(s.item)}})
		}
	}
	return m
}

// Usage is the latest usage (nil if none arrived).
func (a *Accumulator) Usage() *llmrelayv1.Usage { return a.usage }

// Start is the start event (nil if none arrived).
func (a *Accumulator) Start() *llmrelayv1.StreamStart { return a.start }

// End is the final event (nil until it arrived).
func (a *Accumulator) End() *llmrelayv1.StreamEnd { return a.end }

// FinishReason is the final event's finish reason.
func (a *Accumulator) FinishReason() llmrelayv1.FinishReason { return a.end.GetFinishReason() }

// Meta is the final event's meta (nil until the end).
func (a *Accumulator) Meta() *llmrelayv1.ResponseMeta {
	if a.end == nil {
		return nil
	}
	return proto.CloneOf(a.end.GetMeta())
}

// ValidArguments reports whether tool-call arguments parse as a JSON object.
func ValidArguments(args string) bool {
	s := strings.TrimSpace(args)
	if len(s) < 2 || s[0] != '{' {
		return false
	}
	return json.Valid([]byte(s))
}
