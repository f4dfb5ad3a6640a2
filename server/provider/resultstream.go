package provider

import (
	"bufio"
	"io"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// WholeAnswerWarning is the warning of a stream request a server answered
// with a whole response (it ignored "stream"): the answer is relayed, in
// one piece per part, instead of failing a call the provider was paid for.
const WholeAnswerWarning = "the server answered the stream request with a whole response (it ignored \"stream\"); it is relayed as it came, in one piece per part"

// ResultStream is a stream of the events whose fold (FoldStream, and the
// gateway's relay) is res: the inverse of FoldStream, for a stream
// request a server answered with a whole response. Its events are, in
// order: the meta without what ends an answer; each part of the message
// in one piece (a text part begins a part of its own, a reasoning part
// has its own index, a tool call its fragment and its end, or its cut
// when the parser found its arguments invalid); the usage; then the
// finish reason, provider finish reason and stop sequence. res is not
// changed.
func ResultStream(providerName string, res *Result) Stream {
	meta := &llmrelayv1.ResponseMeta{}
	if res.Meta != nil {
		meta = proto.CloneOf(res.Meta)
	}
	finish := &llmrelayv1.ResponseMeta{FinishReason: meta.FinishReason, ProviderFinishReason: meta.ProviderFinishReason,
		StopSequence: meta.StopSequence}
	usage := meta.Usage
	meta.FinishReason, meta.ProviderFinishReason, meta.StopSequence, meta.Usage, meta.ToolCallCount = 0, "", "", nil, 0
	parts := res.Message.GetParts()
	events := make([]*Event, 0, len(parts)*2+3)
	events = append(events, &Event{Kind: EventMeta, Meta: meta})
	reasoning, call := 0, 0
	for _, p := range parts {
		switch k := p.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			if k.Text != "" {
				events = append(events, &Event{Kind: EventText, BeginsPart: true, Text: k.Text, Phase: p.GetPhase(), ItemID: p.GetItemId()})
			}
		case *llmrelayv1.Part_Refusal:
			if k.Refusal != "" {
				events = append(events, &Event{Kind: EventRefusal, Text: k.Refusal, ItemID: p.GetItemId()})
			}
		case *llmrelayv1.Part_Reasoning:
			r := k.Reasoning
			events = append(events, &Event{Kind: EventReasoning, Reasoning: ReasoningDelta{Index: reasoning, Text: r.GetText(),
				Signature: r.GetSignature(), Redacted: r.GetRedacted(), ID: r.GetId(), Format: r.GetFormat()}})
			if sp := r.GetSummaryParts(); len(sp) > 1 && strings.Join(sp, fold.SummarySeparator) == r.GetText() {
				// One piece per summary part, as a stream sends them
				// (ReasoningDelta.summary_index), the first with the
				// block's signature and id.
				first := events[len(events)-1]
				first.Reasoning.Text = sp[0]
				for i, t := range sp[1:] {
					events = append(events, &Event{Kind: EventReasoning, Reasoning: ReasoningDelta{Index: reasoning,
						Text: fold.SummarySeparator + t, SummaryIndex: i + 1}})
				}
			}
			reasoning++
		case *llmrelayv1.Part_ToolCall:
			c := k.ToolCall
			end := EventToolCallEnd
			if !c.GetArgumentsValid() {
				end = EventToolCallCut
			}
			events = append(events,
				&Event{Kind: EventToolCall, ToolCall: ToolCallDelta{CallID: c.GetCallId(), Index: call, Name: c.GetName(),
					Arguments: c.GetArguments(), Signature: c.GetSignature()}},
				&Event{Kind: end, ToolCall: ToolCallDelta{CallID: c.GetCallId(), Index: call}})
			call++
		case *llmrelayv1.Part_ProviderItem:
			it := k.ProviderItem
			events = append(events, &Event{Kind: EventProviderItem, Item: &ProviderItem{Type: it.GetType(), JSON: it.GetJson()}})
		default:
			// An assistant answer holds none of the input kinds (image,
			// file, tool result); a parser that made one is told here,
			// not by a silent loss.
			meta.Warnings = append(meta.Warnings, "a part of the whole response could not be relayed on a stream: "+partKind(p))
		}
	}
	if usage != nil {
		events = append(events, &Event{Kind: EventUsage, Usage: usage})
	}
	events = append(events, &Event{Kind: EventMeta, Meta: finish})
	return &resultStream{name: providerName, events: events}
}

// partKind names a part's kind for a warning.
func partKind(p *llmrelayv1.Part) string {
	switch p.GetKind().(type) {
	case *llmrelayv1.Part_Image:
		return "an image"
	case *llmrelayv1.Part_File:
		return "a file"
	case *llmrelayv1.Part_ToolResult:
		return "a tool result"
	default:
		return "an empty part"
	}
}

// resultStream hands out its events, then io.EOF.
type resultStream struct {
	name   string
	events []*Event
	closed bool
}

func (s *resultStream) Recv() (*Event, error) {
	if s.closed {
		return nil, ErrStreamClosed(s.name)
	}
	if len(s.events) == 0 {
		return nil, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *resultStream) Close() error { s.closed = true; return nil }

// PeekJSONBody reports, for a response labelled application/json, the
// first byte of its body after white space ('{' for a whole answer or an
// error object, '[' for an array), reading no further: resp.Body is put
// back behind a buffer holding it, and its Content-Length forgotten (the
// white space is read). 0 for another content type, an empty body or a
// read error (which the reader after it meets again).
func PeekJSONBody(resp *http.Response) byte {
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type"))), "application/json") {
		return 0
	}
	br := bufio.NewReader(resp.Body)
	resp.Body = struct {
		io.Reader
		io.Closer
	}{br, resp.Body}
	resp.ContentLength = -1
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			if _, err := br.Discard(1); err != nil {
				return 0
			}
		default:
			return b[0]
		}
	}
}
