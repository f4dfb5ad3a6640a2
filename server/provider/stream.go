package provider

import (
	"context"
	"errors"
	"io"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Stream is an open provider stream.
type Stream interface {
	// Recv returns the next event, or io.EOF after the provider's final
	// event. A stream cut before the provider's final event must return an
	// error (StreamCut, or a TransportError when the connection broke),
	// never io.EOF: both are retried while nothing has been relayed.
	Recv() (*Event, error)
	// Close releases the upstream connection; safe to call more than once.
	Close() error
}

// EventKind says which field of an Event is set.
type EventKind uint8

const (
	// EventMeta carries ResponseMeta fields to merge into the call's meta
	// (proto.Merge): response id, resolved model, create time, provider
	// request id, rate limits, extended values, finish reason and
	// provider_finish_reason, warnings. Send it whenever the provider reveals
	// them (at open from headers, from the first chunk, at the finish).
	EventMeta EventKind = iota + 1
	// EventText is a text delta in Text.
	EventText
	// EventRefusal is a refusal delta in Text.
	EventRefusal
	// EventToolCall is a tool-call fragment in ToolCall.
	EventToolCall
	// EventToolCallEnd says the call ToolCall.CallID is complete. Optional:
	// calls still open at the finish or at EOF are completed then.
	EventToolCallEnd
	// EventUsage carries the usage totals so far in Usage; each replaces the
	// previous one (adapters convert per-chunk or split counts to totals).
	EventUsage
	// EventReasoning is a piece of the model's reasoning in Reasoning.
	EventReasoning
	// EventToolCallCut is EventToolCallEnd for a call the token limit cut:
	// its arguments are partial even though they parse (a provider that
	// sends them as a parsed object, Gemini), and the gateway reports the
	// call with arguments_valid false.
	EventToolCallCut
	// EventProviderItem is a whole piece of the answer the contract has no
	// type for (a server tool's call or result, a hosted tool item), in
	// Item, sent when the provider finished it, in order with the other
	// events (Part.provider_item). The gateway sets its provider.
	EventProviderItem
)

// Event is one normalized stream event.
type Event struct {
	Kind EventKind
	// BeginsPart: an EventText that begins a new text part (the
	// provider began another text block; TextDelta.begins_part). Beside
	// Kind, in its word.
	BeginsPart bool
	Text       string
	// Phase is an EventText's phase (Part.phase): set on every piece of
	// text the provider labelled.
	Phase string
	// ItemID is an EventText's or EventRefusal's output message id
	// (Part.item_id, OpenAI Responses msg_...): set on every piece of a
	// message the provider gave an id; the relay sends it on the first.
	ItemID    string
	ToolCall  ToolCallDelta
	Reasoning ReasoningDelta
	Usage     *llmrelayv1.Usage
	Meta      *llmrelayv1.ResponseMeta
	// Item is an EventProviderItem's item: its type and JSON (a pointer:
	// every event of a stream is allocated, few carry an item).
	Item *ProviderItem
}

// ProviderItem is an answer piece kept verbatim (Part.provider_item).
type ProviderItem struct {
	// Type is the provider's type name for the item.
	Type string
	// JSON is the item as the provider sent it: one JSON object.
	JSON string
}

// ReasoningDelta is a piece of one reasoning block.
type ReasoningDelta struct {
	// Index is the block's position among the response's reasoning blocks,
	// 0-based; pieces with the same index form one Reasoning part.
	Index int
	// Text is the next piece of reasoning text.
	Text string
	// SummaryIndex is the position among the block's summary parts of
	// the part Text belongs to (llmrelayv1.ReasoningDelta.summary_index):
	// a piece with a greater one than the piece before begins a part,
	// its Text beginning with the blank line that joins the parts.
	SummaryIndex int
	// Signature is the block's opaque signature, when it arrives.
	Signature string
	// Redacted and ID are set on the block's first piece.
	Redacted bool
	ID       string
	// Format is the provider's name for the encoding of the block's
	// signature and data (OpenRouter's reasoning_details format), on the
	// first piece that knows it.
	Format string
}

// Proto is d as the contract's ReasoningDelta (without its provider, which
// the gateway sets).
func (d ReasoningDelta) Proto() *llmrelayv1.ReasoningDelta {
	return &llmrelayv1.ReasoningDelta{Index: int32(d.Index), Text: d.Text, Signature: d.Signature, Redacted: d.Redacted,
		Id: d.ID, Format: d.Format, SummaryIndex: int32(d.SummaryIndex)}
}

// ToolCallDelta is a fragment of a tool call.
type ToolCallDelta struct {
	// CallID is the provider's call id, on every delta (adapters map the
	// provider's index or item id to it). Required.
	CallID string
	// Index is the call's position in the response, 0-based.
	Index int
	// Name is set on the first delta of a call.
	Name string
	// Arguments is the next fragment of the arguments JSON text.
	Arguments string
	// Signature is the call's opaque signature (Gemini thoughtSignature),
	// when it arrives.
	Signature string
}

// ErrIdleTimeout is the error a response body returns when the provider
// sent nothing within the idle timeout (the pipeline's watched body).
// An adapter whose stream had already delivered a complete answer (its
// finish, and its usage where the format sends one) ends the stream as
// complete on it, with IdleAfterEndWarning: the provider kept the
// connection open after its last event, which is not a cut answer.
var ErrIdleTimeout = errors.New("provider sent no data within the idle timeout")

// IdleAfterEndWarning is the warning of a complete stream ended by the
// idle timeout.
const IdleAfterEndWarning = "the provider kept the stream open after its last event; it was ended by the idle timeout (the answer is complete)"

// CutAfterEndWarning is the warning of a complete stream whose connection
// then closed uncleanly.
const CutAfterEndWarning = "the connection broke after the provider's last event (the body did not end cleanly); the answer is complete"

// CutAfterEnd reports whether err, read from the body of a stream that had
// already delivered a complete answer in a format without a terminator of
// its own (Gemini's last chunk with its finishReason; a chat stream's
// finish and usage without [DONE]), is the connection breaking: a chunked
// body closed without its last chunk, a reset. For those formats the end
// of the body is the end of the answer, and a close that was not clean
// (a proxy's, a load balancer's) loses nothing of it: the adapter ends
// the stream as complete with CutAfterEndWarning, as it does when the
// connection stays open (IdleAfterEndWarning), instead of failing an
// answer the client has whole. Not a clean end (io.EOF), the caller's
// cancellation or deadline, a timeout, nor a limit of the gateway.
func CutAfterEnd(err error) bool {
	var pe *Error
	var le *LimitError
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrIdleTimeout) || errors.As(err, &le) || errors.As(err, &pe) {
		return false
	}
	k := TransportError("", err).Kind
	return k == KindUnavailable || k == KindConnection
}

// ErrStreamClosed is what Recv returns after Close: the caller's own doing,
// so KindCanceled (a fresh error each time: callers may annotate it).
func ErrStreamClosed(providerName string) *Error {
	return &Error{Provider: providerName, Kind: KindCanceled, Message: "stream closed"}
}
