package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// maxStreamItems bounds the per-stream table of output items (messages,
// calls) whose streamed length is tracked.
const maxStreamItems = 4096

// maxRespStreamEventBytes bounds one event of a Responses stream, larger
// than a chat chunk's bound (maxStreamEventBytes): an image_generation_call
// carries its whole image as base64, in output_item.done and again in
// response.completed, which holds every image of the response. A
// low-quality 1536x1024 WebP is 2.2 MB of base64
// (testdata/real_responses_image_generation_stream.http: its RIFF header
// declares 1,644,258 bytes); a high-quality 1536x1024 PNG is 3,102,808
// bytes of base64 in a unary body of 3,114,640 (pydantic-ai's cassette
// test_openai_responses_image_generation_tool_without_image_output.yaml):
// three quarters of the chat bound, which a second image, or a larger
// one, passes, failing the whole stream, text and usage included, for
// images the answer has no place for. 32 MiB holds several such images
// and stays under the unary body's bound (maxBodyBytes).
const maxRespStreamEventBytes = 32 << 20

// responsesStream reads a Responses API event stream: SSE events whose data
// is a JSON object with a "type" (response.created, ...output_text.delta,
// ...function_call_arguments.delta, response.completed, error, ...) and a
// sequence_number. The stream ends with response.completed,
// response.incomplete or response.failed; there is no [DONE].
type responsesStream struct {
	eventLoop
	// tools: the request's declared tools (parallelWrapperWarning).
	tools []*llmrelayv1.Tool
	// asked: the request's output token limit (limitCutHidden); echoed:
	// the one response.created echoes (Ollama's).
	asked int32
	// echoed: the limit response.created echoes (Ollama's), echoNull
	// when it echoes none (null).
	echoed   int64
	echoNull bool
	// heldEnd is the call whose end is held (holdEnd), nil for none.
	heldEnd *respCallState
	fast    respDeltaScratch // reused by decodeRespTextDeltaFast

	// Function calls, keyed by item id (fc_...) and by output index, since
	// argument deltas name only the item, never the call_id.
	byItem   map[string]*respCallState
	byOutput map[int64]*respCallState
	calls    []*respCallState
	// relayed counts the calls relayed so far (their indexes).
	relayed int
	// Bytes of text and refusal streamed per message item, so that an item
	// or final response carrying more than its deltas can be caught up.
	texts map[string]*respTextState
	// Output indexes seen in any event: items there are not caught up
	// again from the final response.
	seenOutput map[int64]bool
	// Reasoning items, keyed by item id (rs_...) and by output index, in
	// order of appearance (their position is the ReasoningDelta index).
	rsByItem   map[string]*respReasoningState
	rsByOutput map[int64]*respReasoningState
	reasoning  []*respReasoningState
	// rsRelayed counts the reasoning blocks relayed (their indexes).
	rsRelayed int
	// itemAt is the item id first seen at each output index, with its
	// kind (itemKind, "" unknown). Events naming another id at a known
	// index are read as naming that one: GitHub Copilot's Responses
	// endpoint gives every event of one item an id of its own
	// (testdata/real_responses_copilot_id_rotation_stream.http). An event
	// of another kind of item keeps its id: LiteLLM's proxy puts every
	// item of a response it builds from Chat Completions at output index 0
	// (testdata/litellm_responses_reasoning_text_stream.http).
	itemAt map[int64]respItemAt
	// items: what the stream knows of each output item (respItem), by
	// item id, by output index, and the last of each kind: the item an
	// event names by what it gives (keyItem).
	items     int
	itemByID  map[string]*respItem
	itemByOut map[int64]*respItem
	lastItem  map[string]*respItem
	itemList  []*respItem

	// at is the item the event being handled names (keyItem; nil: none).
	at *respItem

	// hosted: the output items the contract has no place for (hosted
	// tool calls, mcp_list_tools, …) already reported by their
	// output_item.done (hostedItemWarning), so that the final response
	// reports those whose done event never came, and only those.
	hosted respHostedDone

	// What the meta events already said.
	id, resolvedModel string
	created           int64

	// anns: the message items' annotations, reported with the finish.
	anns annotationSet
	// lp: the output_text parts' token logprobs, reported with the
	// finish (respLogprobs).
	lp respLogprobs

	// lastSeq is the highest sequence_number so far (-1: none yet).
	// seqMissing holds the numbers a jump past lastSeq+1 skipped, each
	// with the warning naming that jump, until they come: a number
	// still missing when the response ends means events were lost,
	// reported once (seqWarned).
	lastSeq    int64
	seqMissing map[int64]string
	seqWarned  bool

	// held is the high half of a surrogate pair held back from the end
	// of a text, refusal or reasoning delta for the next delta.
	held respHeld
}

// respHeld is the high half of a surrogate pair that a UTF-16 server cut
// off the end of a delta (provider.SurrogateJoin), and the text it
// belongs to: the delta type, the message item's (text) or reasoning
// item's (rs) record, and the content or summary part. Only the next
// delta of the same text continues it; any other event releases it as
// U+FFFD, in that text, first.
type respHeld struct {
	join provider.SurrogateJoin
	typ  string
	text *respTextState
	rs   *respReasoningState
	part int64
}

type respCallState struct {
	callID string
	itemID string
	// pos is the call's place among the calls the stream named (its
	// made id's number); index its place among those relayed, set at its
	// first fragment (emitArgs).
	pos, index int
	named      bool
	emitted    bool
	ended      bool
	// args is the arguments text streamed so far: the complete text of
	// output_item.done or function_call_arguments.done is checked
	// against it; scan follows its nesting (a delta naming no item
	// after a whole object is another call: splitKeyless).
	args strings.Builder
	scan argsScan
	// added is the arguments text the call's output_item.added carried,
	// not relayed yet: the next delta may restate it rather than continue
	// it (vLLM's Responses stream sends a call's first fragment both in
	// output_item.added and as its first delta). Relayed with the first
	// delta (once, whichever way), superseded by the complete text, or
	// relayed at the call's end or the stream's failure.
	added string
	// high is the escape of a high surrogate that ended the last delta,
	// held for the low half (provider/surrogate.go).
	high string
	// pending: the call was opened by an event that names only its item
	// (arguments before output_item.added, as some servers send them):
	// its call_id is not known yet, so what it says is held (the name in
	// heldName, the arguments in args, its end in endHeld/heldCut) and
	// relayed keyed by the call_id once an item event gives it
	// (resolve).
	// diffWarned: complete arguments that do not continue the streamed
	// ones were reported.
	diffWarned bool
	// nsWarned, callerWarned: the call's namespace (namespaceWarning)
	// and caller (callerWarning) were reported.
	nsWarned     bool
	callerWarned bool
	// wrapWarned: the call to the undeclared "parallel" wrapper was
	// reported (parallelWrapperWarning).
	wrapWarned bool
	pending    bool
	endHeld    bool
	// heldFull: complete arguments that came while the call was
	// pending, checked when it is resolved.
	heldFull string
	heldName string
	heldCut  string
	// given: the call_id the provider gave when the call was keyed (""
	// when it gave none and the call went out keyed by its item id or a
	// made id); idWarned: a later item naming another one was reported.
	given    string
	idWarned bool
}

// deltaArgs is the text of an arguments delta, a high surrogate that ends
// it held back for the next delta and one held before prepended
// (provider/surrogate.go).
func (c *respCallState) deltaArgs(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return deltaText(raw)
	}
	raw, c.high = provider.CutHighSurrogate(provider.WithHighSurrogate(c.high, raw))
	return deltaText(raw)
}

// respItem is what the stream knows of one output item: its kind
// (itemKind), the keys events gave it (id "", out -1: none yet), whether
// its output_item.added and its end came, and its state, bound at the
// first event that needs it.
type respItem struct {
	kind        string
	id          string
	out         int64
	added, done bool
	call        *respCallState
	text        *respTextState
	rs          *respReasoningState
	// serial is the item's place among those the stream knew.
	serial int
}

// lpKey is the output index the item's logprobs are kept under while its
// own is not known: one of its own, below -1.
func (it *respItem) lpKey() int64 { return -2 - int64(it.serial) }

// itemKind is the kind of item an output item type or an event type is
// about: "call", "message", "reasoning", or "" (another item, or an event
// about none).
func itemKind(typ string) string {
	switch typ {
	case "function_call", "custom_tool_call",
		"response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.custom_tool_call_input.delta", "response.custom_tool_call_input.done":
		return "call"
	case "message", "response.output_text.delta", "response.output_text.done",
		"response.refusal.delta", "response.refusal.done":
		return "message"
	case "reasoning", "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return "reasoning"
	}
	return ""
}

type respTextState struct {
	text, refusal int
	// phase is the message item's phase (output_item.added, else the
	// first item event that names one before any text), on its text.
	phase string
	// id is the message item's id (Part.item_id), on its text and
	// refusal.
	id string
}

// respReasoningState is what the stream said of one reasoning item.
type respReasoningState struct {
	index int
	// summary is the summary_index of the last summary delta (-1: none).
	summary int
	// part is the position in Reasoning.summary_parts of the summary
	// part the last text belongs to (ReasoningDelta.summary_index): the
	// provider's summary_index counted over the parts that had text.
	part int
	// textBytes is the length of the reasoning text emitted so far.
	textBytes int
	// encrypted is the encrypted_content announced by output_item.added,
	// sent when the item ends unless output_item.done carries its own.
	encrypted string
	signed    bool // the signature was emitted
	// raw: the text emitted so far is raw reasoning_text, not summary.
	raw       bool
	mixWarned bool // summary deltas after raw text were reported
	ended     bool // output_item.done (or the final response) was seen
	// idSent: the item's id went with a piece. An item added without
	// one sends no piece until it has text; the id an event gives it
	// later goes with that (pushReasoning).
	idSent bool
	id     string
	// relayed is the block's index among those relayed, given at its
	// first piece (-1: none yet): an item with neither id nor text
	// relays nothing, and the next block's index follows the last
	// relayed.
	relayed int
}

// pushReasoning queues a piece of reasoning item st, with the item's id
// if none went yet.
func (s *responsesStream) pushReasoning(st *respReasoningState, d provider.ReasoningDelta) {
	if st.relayed < 0 {
		st.relayed = s.rsRelayed
		s.rsRelayed++
	}
	d.Index = st.relayed
	if !st.idSent {
		if st.id == "" && s.at != nil && s.at.rs == st {
			st.id = s.at.id
		}
		if st.id != "" {
			d.ID, st.idSent = st.id, true
		}
	}
	s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: d})
}

func (p *Provider) newResponsesStream(resp *http.Response, model string, warnings []string, sec secrets) *responsesStream {
	s := &responsesStream{eventLoop: p.newEventLoop(resp, model, warnings, sec, "response.completed"),
		byItem: map[string]*respCallState{}, byOutput: map[int64]*respCallState{},
		texts: map[string]*respTextState{}, seenOutput: map[int64]bool{}, lastSeq: -1,
		rsByItem: map[string]*respReasoningState{}, rsByOutput: map[int64]*respReasoningState{},
		itemAt: map[int64]respItemAt{}, itemByID: map[string]*respItem{}, itemByOut: map[int64]*respItem{}, lastItem: map[string]*respItem{}}
	s.eventLoop.handle = s.handle
	s.rd.SetMaxEventSize(maxRespStreamEventBytes)
	return s
}

// Recv is the event loop's, the calls still pending relayed before an
// error (relayPending).
func (s *responsesStream) Recv() (*provider.Event, error) {
	ev, err := s.eventLoop.Recv()
	if err != nil && !s.closed && !errors.Is(err, io.EOF) && (s.flushHeldOnError() || s.endHeldOnError() || s.relayAdded() || s.relayPending() || s.flushLogprobs()) {
		return s.eventLoop.Recv()
	}
	return ev, err
}

// flushHeldOnError queues, once the stream has failed, the half of a
// surrogate pair still held (what it decodes to alone); it reports
// whether it queued any.
func (s *responsesStream) flushHeldOnError() bool {
	n := len(s.queue)
	s.flushHeld()
	return len(s.queue) > n
}

// endHeldOnError ends, once the stream has failed, the call whose end was
// held (holdEnd): its done event came, it is whole. It reports whether it
// ended one.
func (s *responsesStream) endHeldOnError() bool {
	if s.heldEnd == nil {
		return false
	}
	s.releaseEnd()
	return true
}

// flushLogprobs queues, once the stream has failed, the token logprobs
// gathered for the finish (the server merges a stream's meta events into
// the failure's meta, FailedCallMeta); it reports whether it queued any.
func (s *responsesStream) flushLogprobs() bool {
	meta := &llmrelayv1.ResponseMeta{}
	s.lp.set(meta)
	s.lp = respLogprobs{}
	if proto.Size(meta) == 0 {
		return false
	}
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	return true
}

// relayAdded relays, before the stream's error, the arguments of
// output_item.added events no delta followed (respCallState.added): what
// was generated reaches the client. It reports whether it relayed any.
func (s *responsesStream) relayAdded() bool {
	relayed := false
	for _, c := range s.calls {
		if c.added == "" || c.pending || c.ended {
			continue
		}
		a := c.added
		c.added = ""
		s.emitArgs(c, "", a)
		relayed = true
	}
	return relayed
}

// argsDelta relays an arguments delta; the arguments output_item.added
// carried (respCallState.added) go first, unless the delta begins with
// them (it restates them: vLLM's first delta repeats the item's
// arguments; arguments that continued them would be the text twice, never
// JSON).
func (s *responsesStream) argsDelta(c *respCallState, d string) {
	if a := c.added; a != "" {
		c.added = ""
		if !strings.HasPrefix(d, a) {
			d = a + d
		}
	}
	s.emitArgs(c, "", d)
}

// relayPending relays, before the stream's error, the calls still held
// for a call_id that never came (pending: arguments before their item's
// output_item.added, then the response failed, an error event came, or
// the body was cut): keyed by their item id (callKey, with its warning),
// then ended as cut by the failure, unless their arguments had ended
// (function_call_arguments.done). Dropped, the client would never see
// what was generated. It reports whether it relayed any.
func (s *responsesStream) relayPending() bool {
	relayed := false
	for _, c := range s.calls {
		if !c.pending {
			continue
		}
		relayed = true
		id, warning := s.callKey(c, "")
		c.callID, c.pending = id, false
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{warning}}})
		held := c.args.String()
		c.args.Reset()
		c.scan = argsScan{}
		s.emitArgs(c, c.heldName, held)
		if full := c.heldFull; full != "" {
			c.heldFull = ""
			s.catchUpArgs(c, full)
		}
		if c.endHeld {
			s.endNow(c, c.heldCut)
		} else {
			s.endNow(c, "the stream's failure")
		}
	}
	return relayed
}

// fail records an error reported inside the 200 stream.
func (s *responsesStream) fail(e *provider.Error) {
	s.p.refineResponsesKind(e)
	s.p.inBand(e, s.header)
	s.sec.redactError(e)
	s.err = e
}

// handle converts one SSE event into queued events. sseType is the
// `event:` field, used when the data has no "type".
func (s *responsesStream) handle(sseType, data []byte) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return // an empty data line carries nothing
	}
	if string(t) == "[DONE]" {
		// Compatible servers may end with [DONE]; before a final event
		// it means the response is incomplete.
		s.err = s.bad("stream ended before response.completed ([DONE] without a final event)")
		return
	}
	if text, ok := decodeRespTextDeltaFast(t, &s.fast); ok {
		// What handleEvent does with this event, without a respEvent.
		s.releaseEnd()
		s.sequence(int64(s.fast.seq))
		s.sawOutput(int64(s.fast.output))
		s.at = s.keyItem("message", s.canonItem(s.fast.itemID, int64(s.fast.output), "message"), &s.fast.output, keyDelta)
		s.textDelta("response.output_text.delta", s.canonItem(s.fast.itemID, int64(s.fast.output), "message"), text, s.fast.delta, int64(s.fast.content))
		return
	}
	s.handleEvent(sseType, t)
}

// handleEvent converts one event of any type (t: its trimmed data).
func (s *responsesStream) handleEvent(sseType, t []byte) {
	var ev respEvent
	warn, err := decodeLenient(t, &ev)
	if err != nil {
		// An event cut by the end of the body is a cut stream, not a
		// malformed event: look whether anything follows. One that had
		// its blank line is whole: its data does not parse, a bad
		// answer (it was retried as a cut into the same bytes).
		if !s.rd.Unterminated() {
			s.err = s.bad("invalid stream event: %v", err)
			return
		}
		if _, nerr := s.rd.Next(); errors.Is(nerr, io.EOF) || errors.Is(nerr, io.ErrUnexpectedEOF) {
			s.err = s.cut("stream ended before response.completed (last event cut short)")
			return
		}
		s.err = s.bad("invalid stream event: %v", err)
		return
	}
	if warn != "" {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{warn}}})
	}
	if ev.SequenceNumber != nil {
		s.sequence(int64(*ev.SequenceNumber))
	}
	typ := ev.Type
	if typ == "" {
		typ = string(sseType)
	}
	if typ == "" && isPresent(ev.Error) {
		// A bare error object, no type and no event name: LiteLLM's
		// proxy ends a /v1/responses stream that failed upstream with
		// `data: {"error": {message, type, param, code}}`, as it ends a
		// Chat Completions stream (testdata/litellm_responses_stream_error_object.http).
		// Ignored, the stream failed as a cut one and the rate limit it
		// says was lost.
		typ = "error"
	}
	switch typ {
	case "response.output_text.delta", "response.refusal.delta", "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		// joinDelta releases a held half the delta does not continue.
	default:
		s.flushHeld()
	}
	if s.heldEnd != nil && !endsCallOrAnswer(typ, &ev) {
		// Another event after the held call (more of the answer, or
		// another item's end): it ends where it did.
		s.releaseEnd()
	}
	if ev.OutputIndex != nil {
		ev.ItemID = s.canonItem(ev.ItemID, int64(*ev.OutputIndex), itemKind(typ))
		if ev.Item != nil {
			ev.Item.ID = s.canonItem(ev.Item.ID, int64(*ev.OutputIndex), itemKind(ev.Item.Type))
		}
	}
	s.at = nil
	keyless := ev.ItemID == "" && ev.OutputIndex == nil
	if typ != "response.output_item.added" && typ != "response.output_item.done" {
		if k := itemKind(typ); k != "" {
			s.at = s.keyItem(k, ev.ItemID, ev.OutputIndex, keyDelta)
		}
	} else if ev.Item != nil {
		if k := itemKind(ev.Item.Type); k != "" {
			mode := keyAdded
			if typ == "response.output_item.done" {
				mode = keyDone
			}
			if k == "call" && ev.Item.ID == "" && ev.OutputIndex == nil {
				// A call item named by neither item id nor output index
				// (llama.cpp's server): its call_id names it, not its place
				// among the calls of the response.
				s.at = s.itemOfCall(ev.Item.CallID)
			}
			if s.at == nil {
				s.at = s.keyItem(k, ev.Item.ID, ev.OutputIndex, mode)
			} else if mode == keyAdded {
				s.at.added = true
			}
		}
	}
	if it := s.at; it != nil {
		// The keys the event left out that its item has.
		if ev.ItemID == "" {
			ev.ItemID = it.id
		}
		if ev.Item != nil && ev.Item.ID == "" {
			ev.Item.ID = it.id
		}
		if ev.OutputIndex == nil && it.out >= 0 {
			o := flexInt(it.out)
			ev.OutputIndex = &o
		}
	}
	if ev.OutputIndex != nil {
		s.sawOutput(int64(*ev.OutputIndex))
	}
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		if ev.Response != nil {
			s.responseMeta(ev.Response, nil)
			if m := ev.Response.MaxOutputTokens; m != nil {
				s.echoed, s.echoNull = min(echoedLimit(m), math.MaxInt32), echoedLimit(m) == 0
			}
		}
	case "response.output_item.added":
		if ev.Item != nil {
			s.itemAdded(ev.Item, ev.OutputIndex)
		}
	case "response.output_text.delta", "response.refusal.delta":
		s.textDelta(typ, ev.ItemID, deltaText(ev.Delta), ev.Delta, partIndex(ev.ContentIndex))
		if typ == "response.output_text.delta" && isPresent(ev.Logprobs) && string(bytes.TrimSpace(ev.Logprobs)) != "[]" {
			// OpenAI sends "logprobs": [] on every delta when none were
			// asked: nothing to read.
			s.logprobs(&ev, s.lp.delta)
		}
	case "response.output_text.done":
		if isPresent(ev.Logprobs) {
			s.logprobs(&ev, s.lp.whole)
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if keyless {
			s.splitKeyless(deltaText(ev.Delta))
		}
		c := s.callOf(ev.ItemID, ev.OutputIndex)
		if c == nil {
			return
		}
		s.argsDelta(c, c.deltaArgs(ev.Delta))
	case "response.function_call_arguments.done":
		c := s.callOf(ev.ItemID, ev.OutputIndex)
		if c == nil {
			return
		}
		s.catchUpArgs(c, argumentsText(ev.Arguments))
		s.endCall(c, "")
	case "response.output_item.done":
		if ev.Item != nil {
			s.itemDone(ev.Item, ev.OutputIndex)
		}
		if s.at != nil {
			s.at.done = true
		}
	case "response.reasoning_summary_text.delta":
		s.reasoningDelta(ev.ItemID, ev.OutputIndex, ev.SummaryIndex, deltaText(ev.Delta), ev.Delta, false)
	case "response.reasoning_text.delta":
		// The raw chain of thought (open-weight models), the text of a
		// reasoning item without a summary (reasoningFromItem).
		s.reasoningDelta(ev.ItemID, ev.OutputIndex, ev.ContentIndex, deltaText(ev.Delta), ev.Delta, true)
	case "response.completed", "response.incomplete":
		if ev.Response == nil {
			s.err = s.bad("%s event without a response", typ)
			return
		}
		s.finish(ev.Response)
	case "response.failed":
		if ev.Response == nil {
			s.fail(&provider.Error{Provider: s.p.name, Kind: provider.KindUnavailable, HTTPStatus: http.StatusOK,
				Message: "response failed without an error object"})
			return
		}
		s.fail(s.p.responseFailure(ev.Response, s.model))
	case "error":
		s.fail(s.p.errorFromObject(errorEventObject(&ev), http.StatusOK, s.model, nil))
	default:
		// content_part.added/done, output_text.done, refusal.done,
		// annotations, reasoning_summary_part.added/done,
		// reasoning_summary_text.done, hosted tool progress: nothing to
		// translate (their content arrives in deltas or item events).
	}
}

// sequence checks an event's sequence_number n against the highest one
// so far. A number past the next one skips numbers, which may still
// come: OpenRouter's native search (grok-4.3) sends 9 after 6, then 7
// and 8 (testdata/real_opencode_openrouter_grok_search_stream.http), and
// was reported as lost events. The skipped numbers are kept until they
// come; seqLost reports those that never did once the response ends. A
// jump past maxSeqSkip is reported at once (no stream reorders that
// far). A number at or below the highest loses nothing: LiteLLM's proxy
// numbers the output_item.done of the message it builds 1 whatever came
// before (testdata/litellm_responses_reasoning_text_stream.http).
func (s *responsesStream) sequence(n int64) {
	switch {
	case s.lastSeq >= 0 && n > s.lastSeq+1 && !s.seqWarned:
		msg := fmt.Sprintf("stream event sequence_number %d after %d: events may have been lost", n, s.lastSeq)
		if n-s.lastSeq-1 > maxSeqSkip || len(s.seqMissing) > maxSeqSkip {
			s.seqWarn(msg)
			break
		}
		if s.seqMissing == nil {
			s.seqMissing = map[int64]string{}
		}
		for m := s.lastSeq + 1; m < n; m++ {
			s.seqMissing[m] = msg
		}
	case n < s.lastSeq:
		delete(s.seqMissing, n)
	}
	if n > s.lastSeq {
		s.lastSeq = n
	}
}

// maxSeqSkip bounds the sequence numbers kept as skipped (sequence).
const maxSeqSkip = 256

// seqLost reports, once, the first jump whose skipped sequence numbers
// did not all come by the end of the response.
func (s *responsesStream) seqLost() {
	first := int64(-1)
	for m := range s.seqMissing {
		if first < 0 || m < first {
			first = m
		}
	}
	if first >= 0 && !s.seqWarned {
		s.seqWarn(s.seqMissing[first])
	}
}

func (s *responsesStream) seqWarn(msg string) {
	s.seqWarned, s.seqMissing = true, nil
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{msg}}})
}

// respItemAt is the item first named at an output index: its id and
// kind (itemKind; "" not known).
type respItemAt struct{ id, kind string }

// canonItem returns the id of the item at output index i: the first id
// an event gave for that index, which id names from then on, unless the
// event is about another kind of item (kind, "" for an event that does
// not say) than the first: that is another item at the same index, which
// keeps its id. An event with no id leaves it empty (the lookups fall
// back to the index).
func (s *responsesStream) canonItem(id string, i int64, kind string) string {
	if id == "" {
		return ""
	}
	if first, ok := s.itemAt[i]; ok {
		switch {
		case first.kind == "" && kind != "":
			first.kind = kind
			s.itemAt[i] = first
		case kind != "" && first.kind != kind:
			return id
		}
		return first.id
	}
	if len(s.itemAt) < maxStreamItems {
		s.itemAt[i] = respItemAt{id, kind}
	}
	return id
}

// finalID is the id the stream used for the final response's item at
// position i with id: the first id an event gave at output index i (a
// server that rotates ids, canonItem), unless id is one an event gave at
// another index: then the final output left an item out and the
// positions after it moved, and the item is the one its id names.
func (s *responsesStream) finalID(id string, i int64) string {
	at, ok := s.itemAt[i]
	first := at.id
	if !ok || id == "" || id == first {
		return id
	}
	for j, other := range s.itemAt {
		if other.id == id && j != i {
			return id
		}
	}
	return first
}

// sawOutput records an output index seen in an event.
func (s *responsesStream) sawOutput(i int64) {
	if len(s.seenOutput) < maxStreamItems && !s.seenOutput[i] {
		s.seenOutput[i] = true
	}
}

// textDelta queues a text (output_text) or refusal delta d of item itemID;
// raw is its quoted token, part its content_index (-1: none).
func (s *responsesStream) textDelta(typ, itemID, d string, raw json.RawMessage, part int64) {
	if d == "" && !s.held.join.Held() {
		return
	}
	st := s.textState(itemID)
	if st == nil {
		return
	}
	if d = s.joinDelta(typ, st, nil, part, d, raw); d == "" {
		return
	}
	if typ == "response.output_text.delta" {
		st.text += len(d)
		s.push(&provider.Event{Kind: provider.EventText, Text: d, Phase: st.phase, ItemID: st.id})
	} else {
		st.refusal += len(d)
		s.push(&provider.Event{Kind: provider.EventRefusal, Text: d, ItemID: st.id})
	}
}

// logprobs hands an output_text delta or done event's logprobs to add
// (respLogprobs.delta or .whole), keyed by the event's output and
// content indexes: an event without output_index takes its item's (the
// index an earlier event gave the item id), else -1; the part's list
// from the item and the final response, keyed by their index, would be
// relayed again beside it. A warning add gives is queued.
func (s *responsesStream) logprobs(ev *respEvent, add func(respPartKey, json.RawMessage, *llmrelayv1.ResponseMeta)) {
	k := respPartKey{-1, partIndex(ev.ContentIndex)}
	if ev.OutputIndex != nil {
		k.output = int64(*ev.OutputIndex)
	} else if ev.ItemID != "" {
		for i, at := range s.itemAt {
			if at.id == ev.ItemID {
				k.output = i
				break
			}
		}
	}
	if k.output < 0 && s.at != nil {
		// The item's index is not known yet: its parts are kept under
		// a place of its own, moved to its index once an event or the
		// final response gives it (keyItem, finish), so that the
		// item's own lists do not add them again.
		k.output = s.at.lpKey()
	}
	meta := &llmrelayv1.ResponseMeta{}
	add(k, ev.Logprobs, meta)
	if len(meta.Warnings) > 0 {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
}

// errorEventObject is the error object of an "error" event: its "error"
// member, or {code, message, param} at the top level.
func errorEventObject(ev *respEvent) json.RawMessage {
	if isPresent(ev.Error) {
		return ev.Error
	}
	obj := map[string]string{"message": string(ev.Message), "code": string(ev.Code), "param": string(ev.Param)}
	if obj["message"] == "" {
		obj["message"] = "error event without a message"
	}
	b, err := json.Marshal(obj)
	if err != nil {
		// Marshaling a map of strings cannot fail.
		return json.RawMessage(`{"message":"error event"}`)
	}
	return b
}

// deltaText reads a delta: a JSON string, else the compact JSON text of
// what was sent (kept rather than lost).
func deltaText(raw json.RawMessage) string {
	return argumentsText(raw)
}

// responseMeta queues a meta event with what a Response object says that
// the stream has not said yet. final is the finish meta to merge into it.
func (s *responsesStream) responseMeta(w *respResponse, final *llmrelayv1.ResponseMeta) {
	meta := final
	if meta == nil {
		meta = &llmrelayv1.ResponseMeta{}
	}
	if w.ID != "" && (s.id == "" || (final != nil && w.ID != s.id)) {
		// The response's id is the first one announced until the final
		// response names it: that id is the one the unary answer gives
		// and the one a follow-up's previous_response_id needs. LiteLLM's
		// proxy announces the bare id in response.created and gives
		// response.completed the id encoded with its deployment, which
		// its router decodes to send the follow-up to the same
		// deployment (testdata/litellm_responses_reasoning_text_stream.http);
		// GitHub Copilot gives each event's response an id of its own
		// (testdata/real_responses_copilot_id_rotation_stream.http).
		s.id, meta.ResponseId = w.ID, w.ID
	}
	if w.Model != "" && w.Model != s.resolvedModel {
		s.resolvedModel, meta.ResolvedModel = w.Model, w.Model
	}
	if w.CreatedAt > 0 && int64(w.CreatedAt) != s.created {
		s.created = int64(w.CreatedAt)
		setCreated(meta, w.CreatedAt)
	}
	if proto.Size(meta) > 0 {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
}

// textState returns the streamed-length record of a message item: the
// event's item's (s.at), else the one of the id. An item without id has
// one of its own.
func (s *responsesStream) textState(itemID string) *respTextState {
	if s.at != nil && s.at.text != nil {
		st := s.at.text
		if st.id == "" && itemID != "" && st.text == 0 && st.refusal == 0 {
			// The message's id, from an event after the one that
			// opened it (an output_item.added without id), before any
			// of its text went out: its text carries it (Part.item_id).
			// Once text went out without it, it stays without: a part
			// cannot take an id later.
			st.id = itemID
		}
		return st
	}
	if st, ok := s.texts[itemID]; ok && (itemID != "" || s.at == nil) {
		if s.at != nil {
			s.at.text = st
		}
		return st
	}
	if len(s.texts) >= maxStreamItems {
		s.err = s.bad("more than %d output items in one response", maxStreamItems)
		return nil
	}
	st := &respTextState{id: itemID}
	s.texts[itemID] = st
	if s.at != nil {
		s.at.text = st
	}
	return st
}

// How an event names an item (keyItem): a delta or done event of its
// parts, its output_item.added, its output_item.done.
const (
	keyDelta = iota
	keyAdded
	keyDone
)

// keyItem is the item of kind that an event names (mode: keyDelta,
// keyAdded, keyDone): by its item id, else by its output index, else the
// last item of that kind if it has not ended and its keys do not differ
// from those the event gives. OpenAI-compatible /v1/responses servers
// leave output_index or item_id out of their deltas, or out of every
// event (vLLM, Ollama, LM Studio): each delta naming neither opened a
// call (or reasoning item) of its own, and text deltas without item_id
// were relayed again by the item's done event. An output_item.added
// takes only an item no added event announced (one its deltas began), a
// delta not a call whose arguments ended. None found, one is made; the
// keys the event gives that the item lacked are its own from then on.
// nil when the table is full (the lookups by key alone then apply).
func (s *responsesStream) keyItem(kind, id string, out *flexInt, mode int) *respItem {
	o := int64(-1)
	if out != nil {
		o = int64(*out)
	}
	var it *respItem
	if id != "" {
		it = s.itemByID[id]
	}
	if it == nil && o >= 0 {
		if c := s.itemByOut[o]; c != nil && (id == "" || c.id == "") {
			it = c
		}
	}
	if it != nil && it.kind != kind {
		it = nil
	}
	if l := s.lastItem[kind]; it == nil && l != nil && !l.done && (id == "" || l.id == "") && (o < 0 || l.out < 0) {
		switch {
		case mode == keyAdded && l.added:
		case mode == keyDelta && l.call != nil && l.call.ended:
		default:
			it = l
		}
	}
	if it == nil {
		if s.items >= maxStreamItems {
			return nil
		}
		it = &respItem{kind: kind, out: -1, serial: s.items}
		s.items++
		s.lastItem[kind] = it
		s.itemList = append(s.itemList, it)
	}
	if it.id == "" && id != "" {
		it.id = id
		if s.itemByID[id] == nil {
			s.itemByID[id] = it
		}
		if it.text != nil && s.texts[id] == nil {
			s.texts[id] = it.text
		}
	}
	if it.out < 0 && o >= 0 {
		it.out = o
		if s.itemByOut[o] == nil {
			s.itemByOut[o] = it
		}
		s.lp.rekey(it.lpKey(), o)
	}
	if mode == keyAdded {
		it.added = true
	}
	return it
}

// itemOfCall is the item of the call the provider gave callID, nil for
// none (or "").
func (s *responsesStream) itemOfCall(callID string) *respItem {
	if callID == "" {
		return nil
	}
	for _, it := range s.itemList {
		if c := it.call; c != nil && (c.given == callID || c.callID == callID) {
			return it
		}
	}
	return nil
}

// splitKeyless ends the call of a delta that names no item (s.at) when
// its arguments are a whole JSON object and the delta (d) begins another:
// the next call of a server that names no item in its deltas, not more of
// this one (`{"a":1}{"b":2}`). The delta is bound to a new item.
func (s *responsesStream) splitKeyless(d string) {
	at := s.at
	if at == nil || at.call == nil || !strings.HasPrefix(strings.TrimLeft(d, " \t\r\n"), "{") {
		return
	}
	c := at.call
	if !c.scan.closed() || !fold.ValidArguments(c.args.String()) {
		return
	}
	s.endCall(c, "")
	at.done = true
	s.at = s.keyItem("call", "", nil, keyDelta)
}

// callOf is the call an arguments event names (s.at, else by its keys),
// opened when unknown.
func (s *responsesStream) callOf(itemID string, outputIndex *flexInt) *respCallState {
	c := s.boundCall(itemID, "", outputIndex)
	if c == nil {
		if c = s.openByItem(itemID, outputIndex); c == nil {
			return nil
		}
		if s.at != nil {
			s.at.call = c
		}
	}
	return c
}

// boundCall is the call of the event's item (s.at), else the call found
// by its keys (findCall), which the item is bound to; the item's keys the
// call lacked are the call's too.
func (s *responsesStream) boundCall(itemID, callID string, outputIndex *flexInt) *respCallState {
	at := s.at
	if at != nil && at.call != nil {
		c := at.call
		if c.itemID == "" && at.id != "" {
			c.itemID = at.id
			if s.byItem[at.id] == nil {
				s.byItem[at.id] = c
			}
		}
		if at.out >= 0 && s.byOutput[at.out] == nil {
			s.byOutput[at.out] = c
		}
		return c
	}
	c := s.findCall(itemID, callID, outputIndex)
	if c != nil && at != nil {
		at.call = c
	}
	return c
}

// findCall finds a known call by item id, call_id or output index.
func (s *responsesStream) findCall(itemID, callID string, outputIndex *flexInt) *respCallState {
	if itemID != "" {
		if c, ok := s.byItem[itemID]; ok {
			return c
		}
	}
	if callID != "" {
		for _, c := range s.calls {
			if c.callID == callID {
				return c
			}
		}
	}
	if outputIndex != nil {
		if c, ok := s.byOutput[int64(*outputIndex)]; ok && (itemID == "" || c.itemID == "") {
			if itemID != "" {
				// The item at this output index came without an id: an
				// event naming one there names that item.
				c.itemID = itemID
				s.byItem[itemID] = c
			}
			return c
		}
	}
	return nil
}

// callKey is the id a call is keyed by (respCallID), unless another call
// of the response already has it: calls are keyed by their id (the
// fragments, the gateway's fold), and two with one id would become one.
// A repeated call_id is replaced by the item id, else by a made id, with
// a warning.
func (s *responsesStream) callKey(c *respCallState, callID string) (string, string) {
	taken := func(id string) bool {
		for _, o := range s.calls {
			if o != c && o.callID == id {
				return true
			}
		}
		return false
	}
	if callID == "" && c.itemID == "" {
		// A made id is none an earlier call has (provider.MadeCallID); a later
		// call sent with it is the one re-keyed.
		id := provider.MadeCallID(c.pos, taken)
		return id, fmt.Sprintf("function_call %d has neither call_id nor item id; keyed as %s", c.pos, id)
	}
	id, warning := respCallID(callID, c.itemID, c.pos)
	if !taken(id) {
		return id, warning
	}
	alt := c.itemID
	if alt == "" || taken(alt) {
		alt = provider.MadeCallID(c.pos, taken)
	}
	return alt, fmt.Sprintf("function_call %d repeats the id %s of an earlier call; keyed as %s", c.pos, id, alt)
}

// openCall registers a new call. It is keyed by the item's call_id, else
// by its item id (with a warning in the meta).
func (s *responsesStream) openCall(it *respOutputItem, outputIndex *flexInt) *respCallState {
	if len(s.calls) >= maxStreamToolCalls {
		s.err = s.bad("more than %d tool calls in one response", maxStreamToolCalls)
		return nil
	}
	c := &respCallState{itemID: it.ID, pos: len(s.calls), given: it.CallID}
	id, warning := s.callKey(c, it.CallID)
	c.callID = id
	if warning != "" {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{warning}}})
	}
	s.calls = append(s.calls, c)
	if it.ID != "" {
		s.byItem[it.ID] = c
	}
	if outputIndex != nil {
		s.byOutput[int64(*outputIndex)] = c
	}
	return c
}

// openByItem opens a call named only by its item id, or by nothing (an
// arguments event before the item's output_item.added): pending until an
// item event gives its call_id (or the response's end its made one).
func (s *responsesStream) openByItem(itemID string, outputIndex *flexInt) *respCallState {
	if len(s.calls) >= maxStreamToolCalls {
		s.err = s.bad("more than %d tool calls in one response", maxStreamToolCalls)
		return nil
	}
	c := &respCallState{itemID: itemID, pos: len(s.calls), pending: true}
	s.calls = append(s.calls, c)
	if itemID != "" {
		s.byItem[itemID] = c
	}
	if outputIndex != nil {
		s.byOutput[int64(*outputIndex)] = c
	}
	return c
}

// resolve keys a pending call by the call_id of its item (it: an item
// event's, or the final response's, item; without a call_id, by its item
// id with the warning) and relays what was held: the name and arguments
// in one fragment, then the end if it came.
func (s *responsesStream) resolve(c *respCallState, it *respOutputItem) {
	if !c.pending && it.CallID != "" && it.CallID != c.given && !c.idWarned {
		// The call went out keyed otherwise (its first item event gave
		// another call_id, or none): the client answers with the key it
		// got, so the key stays, and the call_id the item gives now is
		// said.
		c.idWarned = true
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{
			fmt.Sprintf("tool call %s: a later item event names call_id %s; kept %s", c.callID, provider.Shorten(strings.ToValidUTF8(it.CallID, "\uFFFD"), 128), c.callID)}}})
	}
	s.resolvePending(c, it)
	if c.pending {
		return
	}
	if it.Namespace != "" && !c.nsWarned {
		c.nsWarned = true
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{namespaceWarning(c.callID, string(it.Namespace))}}})
	}
	if w := callerWarning(c.callID, it.Caller); w != "" && !c.callerWarned {
		c.callerWarned = true
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{w}}})
	}
	if w := parallelWrapperWarning(c.callID, it.Name, s.tools); w != "" && !c.wrapWarned {
		c.wrapWarned = true
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{w}}})
	}
}

// resolvePending keys a pending call by the call_id the item gives and
// relays what was held for it.
func (s *responsesStream) resolvePending(c *respCallState, it *respOutputItem) {
	if !c.pending {
		return
	}
	id, warning := s.callKey(c, it.CallID)
	c.callID, c.pending, c.given = id, false, it.CallID
	if warning != "" {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{warning}}})
	}
	name := c.heldName
	if name == "" {
		name = it.Name
	}
	held := c.args.String()
	c.args.Reset()
	c.scan = argsScan{}
	s.emitArgs(c, name, held)
	if full := c.heldFull; full != "" {
		c.heldFull = ""
		s.catchUpArgs(c, full)
	}
	if c.endHeld {
		s.endCall(c, c.heldCut)
	}
}

// emitArgs queues a tool-call fragment. The name goes on the first
// fragment that knows it.
func (s *responsesStream) emitArgs(c *respCallState, name, args string) {
	if c.pending {
		if c.heldName == "" {
			c.heldName = name
		}
		c.args.WriteString(args)
		c.scan.feed(args)
		return
	}
	if c.ended {
		if args != "" {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{
				fmt.Sprintf("tool call %s: arguments after the call's end were ignored", c.callID)}}})
		}
		return
	}
	if !c.emitted {
		// The call's index is its place among the calls relayed: a call
		// held until its call_id is known (pending) can be relayed after
		// one that came later.
		c.index = s.relayed
		s.relayed++
	}
	d := provider.ToolCallDelta{CallID: c.callID, Index: c.index, Arguments: args}
	if !c.named && name != "" {
		d.Name, c.named = name, true
	}
	if c.emitted && d.Name == "" && d.Arguments == "" {
		return
	}
	c.emitted = true
	c.args.WriteString(args)
	c.scan.feed(args)
	s.push(&provider.Event{Kind: provider.EventToolCall, ToolCall: d})
}

// catchUpArgs emits the part of the complete arguments that the deltas did
// not carry (servers that send no deltas, or fewer than the whole). The
// streamed fragments are already relayed and the call's arguments are
// their concatenation: complete arguments that do not continue them (the
// server rewrote them) are reported and the streamed ones kept, never
// spliced onto them. An empty complete text says nothing (a done event
// without its arguments).
func (s *responsesStream) catchUpArgs(c *respCallState, full string) {
	if a := c.added; a != "" {
		// The complete text supersedes what output_item.added carried.
		c.added = ""
		if full == "" {
			full = a
		}
	}
	if c.pending {
		// Its call_id is not known yet: the text is checked when it is
		// (resolve), so that what is relayed or said names the call.
		if full != "" {
			c.heldFull = full
		}
		return
	}
	if full != "" {
		c.high = "" // the complete text carries the held half's character
	}
	s.flushHigh(c)
	streamed := c.args.String()
	if full == "" || full == streamed {
		if !c.emitted {
			s.emitArgs(c, "", "")
		}
		return
	}
	if c.ended || !strings.HasPrefix(full, streamed) {
		// After the call's end (function_call_arguments.done, then an
		// output_item.done saying otherwise) nothing more is relayed.
		// Said once per call (output_item.done and the final response
		// carry the same text).
		if !c.diffWarned {
			c.diffWarned = true
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{
				fmt.Sprintf("tool call %s: complete arguments do not continue the streamed ones; kept the streamed ones", c.callID)}}})
		}
		if !c.emitted {
			s.emitArgs(c, "", "")
		}
		return
	}
	s.emitArgs(c, "", full[len(streamed):])
}

// endCall completes the call; cut says what stopped the response in it
// ("" when it ended whole): it ends as EventToolCallCut, its arguments
// partial even when they parse, with a warning.
func (s *responsesStream) endCall(c *respCallState, cut string) {
	if c.ended {
		return
	}
	if cut == "" && s.holdEnd() {
		// Held until something follows it (releaseEnd): the last call
		// of a response reported completed may yet be found cut by the
		// token limit (limitCutHidden).
		if s.heldEnd != c {
			s.releaseEnd()
		}
		s.heldEnd = c
		return
	}
	if s.heldEnd == c {
		s.heldEnd = nil
	}
	s.endNow(c, cut)
}

// holdEnd reports whether the stream holds the end of its calls: a
// request with an output token limit (or a response echoing one) to a
// server other than OpenAI and Azure, whose "completed" answer may have
// been cut by it (limitCutHidden), its last call with it.
func (s *responsesStream) holdEnd() bool {
	return !s.p.openAI && !s.p.azure && (s.echoed > 0 || (s.asked > 0 && !s.echoNull))
}

// endsCallOrAnswer reports whether an event of type typ ends a call (its
// arguments' or its item's done event) or the response: those after a
// held call's end leave it held (holdEnd).
func endsCallOrAnswer(typ string, ev *respEvent) bool {
	switch typ {
	case "response.completed", "response.incomplete", "response.failed", "error",
		"response.function_call_arguments.done", "response.custom_tool_call_input.done":
		return true
	case "response.output_item.done":
		return ev.Item != nil && itemKind(ev.Item.Type) == "call"
	}
	return false
}

// releaseEnd ends the call whose end is held (a later event carried more
// of the answer: the call was not what the limit cut).
func (s *responsesStream) releaseEnd() {
	if c := s.heldEnd; c != nil {
		s.heldEnd = nil
		s.endNow(c, "")
	}
}

// endNow is endCall without holding.
func (s *responsesStream) endNow(c *respCallState, cut string) {
	if c.ended {
		return
	}
	if c.pending {
		c.endHeld, c.heldCut = true, cut
		return
	}
	s.flushHigh(c)
	if a := c.added; a != "" {
		c.added = ""
		s.emitArgs(c, "", a)
	}
	if !c.emitted {
		s.emitArgs(c, "", "")
	}
	c.ended = true
	kind := provider.EventToolCallEnd
	if cut != "" {
		kind = provider.EventToolCallCut
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{cutCallWarning(c.callID, cut)}}})
	}
	s.push(&provider.Event{Kind: kind, ToolCall: provider.ToolCallDelta{CallID: c.callID, Index: c.index}})
}

// itemAdded handles response.output_item.added: a function call is opened
// (its first fragment carries the name); message items start their text
// record.
func (s *responsesStream) itemAdded(it *respOutputItem, outputIndex *flexInt) {
	switch it.Type {
	case "function_call", "custom_tool_call":
		c := s.boundCall(it.ID, it.CallID, outputIndex)
		if c == nil {
			if c = s.openCall(it, outputIndex); c == nil {
				return
			}
			if s.at != nil {
				s.at.call = c
			}
		}
		s.resolve(c, it)
		args := argumentsText(it.Arguments)
		if it.Type == "custom_tool_call" && it.Input != nil {
			args = *it.Input
		}
		if c.emitted && args != "" {
			// The arguments came before the item (held, now relayed):
			// the item's own are checked against them.
			s.catchUpArgs(c, args)
			return
		}
		if args != "" && !c.pending && !c.emitted {
			// The name goes now, the arguments with what follows
			// (respCallState.added).
			s.emitArgs(c, it.Name, "")
			c.added = args
			return
		}
		s.emitArgs(c, it.Name, args)
	case "message":
		s.catchUpText(it)
	case "reasoning":
		st := s.findReasoning(it.ID, outputIndex)
		if st == nil {
			if st = s.openReasoning(it.ID, outputIndex); st == nil {
				return
			}
		}
		if enc := encryptedContent(it); enc != "" {
			st.encrypted = enc
		}
	}
}

// itemDone handles response.output_item.done: the complete item, which
// catches up what its deltas did not carry and ends a call.
func (s *responsesStream) itemDone(it *respOutputItem, outputIndex *flexInt) {
	switch it.Type {
	case "function_call", "custom_tool_call":
		c := s.boundCall(it.ID, it.CallID, outputIndex)
		if c == nil {
			if c = s.openCall(it, outputIndex); c == nil {
				return
			}
			if s.at != nil {
				s.at.call = c
			}
		}
		s.resolve(c, it)
		args := argumentsText(it.Arguments)
		if it.Type == "custom_tool_call" && it.Input != nil {
			args = *it.Input
		}
		if !c.emitted {
			s.emitArgs(c, it.Name, args)
		} else {
			if !c.named && it.Name != "" {
				s.emitArgs(c, it.Name, "")
			}
			s.catchUpArgs(c, args)
		}
		s.endCall(c, itemCut(it))
	case "message":
		s.catchUpText(it)
		if warns := s.anns.add(it); len(warns) > 0 {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: warns}})
		}
		if outputIndex != nil {
			meta := &llmrelayv1.ResponseMeta{}
			s.lp.item(int64(*outputIndex), it, meta)
			if len(meta.Warnings) > 0 {
				s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
			}
		}
	case "reasoning":
		st := s.findReasoning(it.ID, outputIndex)
		if st == nil {
			if st = s.openReasoning(it.ID, outputIndex); st == nil {
				return
			}
		}
		s.reasoningDone(st, it)
	default:
		// A hosted tool's item (web_search_call, code_interpreter_call,
		// mcp_call, …): the server ran it, nothing of it is the client's
		// to act on. Reported as the unary answer reports it
		// (parseResponsesResponse), once per item: on its
		// output_item.done, or from response.completed for an item the
		// stream did not carry.
		item, warning := hostedItem(it)
		if warning != "" {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{warning}}})
		}
		if item != nil {
			s.push(&provider.Event{Kind: provider.EventProviderItem, Item: item})
		}
		s.hosted.add(it.ID, outputIndex)
	}
}

// respHostedDone records the hosted items a stream reported, by item id
// and by output index; anon counts those whose done event gave neither.
type respHostedDone struct {
	ids  map[string]bool
	outs map[int64]bool
	anon int
}

// add records a reported item.
func (h *respHostedDone) add(id string, out *flexInt) {
	switch {
	case id == "" && out == nil:
		h.anon++
		return
	case len(h.ids)+len(h.outs) >= 2*maxStreamItems:
		return
	}
	if id != "" {
		if h.ids == nil {
			h.ids = map[string]bool{}
		}
		h.ids[id] = true
	}
	if out != nil {
		if h.outs == nil {
			h.outs = map[int64]bool{}
		}
		h.outs[int64(*out)] = true
	}
}

// reported says whether the item of the final response with this id at
// output index i was reported: by its id or its index, else as one of the
// items reported without either (each counted once).
func (h *respHostedDone) reported(id string, i int64) bool {
	if (id != "" && h.ids[id]) || h.outs[i] {
		return true
	}
	if h.anon > 0 {
		h.anon--
		return true
	}
	return false
}

// catchUpText emits the text and refusal of a message item that its deltas
// did not carry.
func (s *responsesStream) catchUpText(it *respOutputItem) {
	text, refusal, warns := messageItemText(it)
	if len(warns) > 0 {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: warns}})
	}
	st := s.textState(it.ID)
	if st == nil {
		return
	}
	if st.phase == "" && st.text == 0 {
		st.phase = it.Phase
	}
	if len(text) > st.text {
		if rest := text[st.text:]; utf8.ValidString(rest) {
			st.text = len(text)
			s.push(&provider.Event{Kind: provider.EventText, Text: rest, Phase: st.phase, ItemID: st.id})
		}
	}
	if len(refusal) > st.refusal {
		if rest := refusal[st.refusal:]; utf8.ValidString(rest) {
			st.refusal = len(refusal)
			s.push(&provider.Event{Kind: provider.EventRefusal, Text: rest, ItemID: st.id})
		}
	}
}

// finish handles response.completed / response.incomplete: items of the
// final response never seen in the stream are emitted, open calls ended,
// then the finish meta and the usage totals.
func (s *responsesStream) finish(w *respResponse) {
	if isPresent(w.Error) || w.Status == "failed" {
		s.fail(s.p.responseFailure(w, s.model))
		return
	}
	s.seqLost()
	hidden := s.p.limitCutHidden(w, s.asked)
	if c := s.heldEnd; c != nil {
		// Ended first, where its done event left it: cut if it is the
		// stream's last call and the limit cut the answer.
		s.heldEnd = nil
		cut := ""
		if hidden != "" && c == s.calls[len(s.calls)-1] {
			cut = cutByLimit
		}
		s.endNow(c, cut)
	}
	hasCalls := len(s.calls) > 0
	meta := &llmrelayv1.ResponseMeta{}
	ord := map[string]int{}
	for i := range w.Output {
		// The logprobs of the deltas of an item whose index no event
		// gave are its part's at its place in the final response.
		it := &w.Output[i]
		id := s.finalID(it.ID, int64(i))
		if at := s.finalItem(itemKind(it.Type), id, int64(i), ord); at != nil && at.out < 0 {
			s.lp.rekey(at.lpKey(), int64(i))
		}
	}
	for i := range w.Output {
		// The logprobs of parts the stream's events did not carry.
		s.lp.item(int64(i), &w.Output[i], meta)
	}
	var whole map[*respCallState]bool // calls the final response says were completed
	ordinal := map[string]int{}
	defer func() { s.at = nil }()
	for i, it := range w.Output {
		it.ID = s.finalID(it.ID, int64(i)) // the id the stream used for this item
		s.at = s.finalItem(itemKind(it.Type), it.ID, int64(i), ordinal)
		switch it.Type {
		case "function_call", "custom_tool_call":
			hasCalls = true
			if c := s.boundCall(it.ID, "", nil); c != nil {
				s.resolve(c, &it) // its call_id, if no item event gave it
				if it.Status == "completed" {
					if whole == nil {
						whole = map[*respCallState]bool{}
					}
					whole[c] = true
				}
				// Its complete arguments, as output_item.done's are
				// checked: what the deltas did not carry is caught up,
				// and arguments that do not continue them are reported
				// (a stream without output_item.done).
				args := argumentsText(it.Arguments)
				if it.Type == "custom_tool_call" && it.Input != nil {
					args = *it.Input
				}
				s.catchUpArgs(c, args)
			}
		case "reasoning":
			// A reasoning item the stream opened but did not end
			// (no output_item.done) is completed from the final one.
			st := s.findReasoning(it.ID, nil)
			if st == nil && (it.ID == "" || s.seenOutput[int64(i)]) {
				// No id, or one the stream did not use for the item at
				// this output index (OpenRouter's temporary rs_tmp_ ids
				// change in the final response): the item is the one
				// streamed at its position.
				st = s.rsByOutput[int64(i)]
			}
			if st != nil {
				s.reasoningDone(st, &it)
			} else {
				// Never streamed (events at its output index, if any,
				// carried nothing of it): emitted now.
				s.itemDone(&it, nil)
			}
			if s.err != nil {
				return
			}
			continue
		}
		if itemKind(it.Type) == "" {
			// A hosted item is reported once, as the unary answer
			// reports it: by its output_item.done, else now (the stream
			// announced it, even streamed its progress, but only the
			// final response carries it whole: two of the three
			// mcp_list_tools items of
			// testdata/real_pyd_openai_responses_model_mcp_list_tools_stream_backfills_missing_results.http).
			if !s.hosted.reported(it.ID, int64(i)) {
				idx := flexInt(i)
				s.itemDone(&it, &idx)
				if s.err != nil {
					return
				}
			}
			continue
		}
		at := s.at
		if s.seenOutput[int64(i)] || (it.ID != "" && (s.byItem[it.ID] != nil || s.texts[it.ID] != nil || s.rsByItem[it.ID] != nil)) ||
			(at != nil && (at.call != nil || at.text != nil || at.rs != nil)) {
			if it.Type == "message" && at != nil && at.text != nil {
				// What its deltas did not carry (a stream without
				// output_item.done).
				s.catchUpText(&it)
			}
			if it.Type == "message" {
				// Its annotations, if output_item.done did not carry
				// them (an annotation already received is not added).
				if warns := s.anns.add(&it); len(warns) > 0 {
					s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: warns}})
				}
			}
			continue
		}
		s.itemDone(&it, nil)
		if s.err != nil {
			return
		}
	}
	for _, c := range s.calls {
		// Never given a call_id: keyed by its item id.
		s.resolve(c, &respOutputItem{})
	}
	for i, c := range s.calls {
		// The response's last call, still open when the response ended
		// incomplete, is the one being written then; so is it when the
		// response, reported completed, was cut by the token limit
		// (limitCutHidden), whatever its item's status says.
		cut := ""
		if i == len(s.calls)-1 && hidden != "" {
			cut = cutByLimit
		} else if i == len(s.calls)-1 && !whole[c] {
			cut = respCut(w)
		}
		s.endNow(c, cut)
	}
	for _, st := range s.reasoning {
		s.reasoningDone(st, nil)
	}
	s.anns.set(meta)
	s.lp.set(meta)
	meta.ProviderFinishReason, meta.FinishReason = respFinish(w, hasCalls)
	if hidden != "" {
		meta.ProviderFinishReason, meta.FinishReason = limitCutFinish(w)
		meta.Warnings = append(meta.Warnings, hidden)
	}
	if w.ServiceTier != "" {
		provider.SetExtended(meta, extServiceTier, w.ServiceTier)
	}
	setRespContentFilters(meta, w)
	setRespExtras(meta, w)
	if w.Usage.counted() {
		d, odd := respUsageDetails(w.Usage)
		d.Set(meta)
		meta.Warnings = append(meta.Warnings, odd...)
	} else if w.Usage != nil {
		meta.Warnings = append(meta.Warnings, warnZeroUsage)
	}
	s.responseMeta(w, meta)
	if w.Usage.counted() {
		s.push(&provider.Event{Kind: provider.EventUsage, Usage: normalizeRespUsage(w.Usage)})
	}
	s.done = true
}

// finalItem is the item the stream knew as the final response's item of
// kind at output index i with id: by id, by output index, else the one
// of that kind at the same place among them (ordinal counts the items of
// each kind so far) if the stream gave it no key at all.
func (s *responsesStream) finalItem(kind, id string, i int64, ordinal map[string]int) *respItem {
	if kind == "" {
		return nil
	}
	n := ordinal[kind]
	ordinal[kind]++
	if it := s.itemByID[id]; id != "" && it != nil && it.kind == kind {
		return it
	}
	if it := s.itemByOut[i]; it != nil && it.kind == kind && (id == "" || it.id == "") {
		return it
	}
	for _, it := range s.itemList {
		if it.kind != kind {
			continue
		}
		if n == 0 {
			if it.id == "" && it.out < 0 {
				return it
			}
			return nil
		}
		n--
	}
	return nil
}

// findReasoning finds a known reasoning item: the event's item's (s.at),
// else by item id, else (for events without an item id) by output index.
func (s *responsesStream) findReasoning(itemID string, outputIndex *flexInt) *respReasoningState {
	if s.at != nil && s.at.rs != nil {
		return s.at.rs
	}
	var st *respReasoningState
	if itemID != "" {
		st = s.rsByItem[itemID]
	} else if outputIndex != nil {
		st = s.rsByOutput[int64(*outputIndex)]
	}
	if st != nil && s.at != nil {
		s.at.rs = st
	}
	return st
}

// openReasoning registers a new reasoning item and emits its first piece
// (its id, no text yet), so that the folded part sits where the model
// produced it.
func (s *responsesStream) openReasoning(itemID string, outputIndex *flexInt) *respReasoningState {
	if len(s.reasoning) >= maxStreamItems {
		s.err = s.bad("more than %d reasoning items in one response", maxStreamItems)
		return nil
	}
	st := &respReasoningState{index: len(s.reasoning), summary: -1, relayed: -1}
	s.reasoning = append(s.reasoning, st)
	if s.at != nil {
		s.at.rs = st
	}
	if itemID != "" {
		s.rsByItem[itemID] = st
	}
	if outputIndex != nil {
		s.rsByOutput[int64(*outputIndex)] = st
	}
	if itemID != "" {
		st.id = itemID
		s.pushReasoning(st, provider.ReasoningDelta{})
	}
	return st
}

// reasoningDelta handles response.reasoning_summary_text.delta (raw false)
// and response.reasoning_text.delta (raw true). The first delta of a new
// part is preceded by reasoningSeparator when text came before, as the
// unary texts are joined. An item's text is its summary, or its raw text
// when it has no summary: raw deltas after summary text are dropped, and
// summary deltas replace nothing already sent (a warning says so).
func (s *responsesStream) reasoningDelta(itemID string, outputIndex, summaryIndex *flexInt, delta string, tok json.RawMessage, raw bool) {
	st := s.findReasoning(itemID, outputIndex)
	if st == nil {
		if st = s.openReasoning(itemID, outputIndex); st == nil {
			return
		}
	}
	if delta == "" && !s.held.join.Held() {
		return
	}
	if st.ended {
		s.flushHeld()
		if delta == "" {
			return
		}
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{
			fmt.Sprintf("reasoning item %d: summary text after the item's end was ignored", st.index)}}})
		return
	}
	if st.textBytes > 0 && st.raw != raw {
		s.flushHeld()
		if !raw && !st.mixWarned && delta != "" {
			st.mixWarned = true
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{
				fmt.Sprintf("reasoning item %d: summary text after its raw reasoning text was ignored", st.index)}}})
		}
		return
	}
	part := st.summary
	if summaryIndex != nil {
		part = int(*summaryIndex)
	} else if part < 0 {
		part = 0
	}
	typ := "response.reasoning_summary_text.delta"
	if raw {
		typ = "response.reasoning_text.delta"
	}
	if delta = s.joinDelta(typ, nil, st, int64(part), delta, tok); delta == "" {
		return
	}
	delta = st.partText(part, raw, delta)
	s.pushReasoning(st, provider.ReasoningDelta{Text: delta, SummaryIndex: st.part})
}

// partText is delta, the next text of the provider's part (summary_index,
// or content_index for raw text), preceded by reasoningSeparator when it
// begins another part after earlier text, as the unary texts are joined;
// another summary part is the next of Reasoning.summary_parts (st.part).
// Raw text parts are no summary parts: their text is joined alike, all at
// summary_index 0.
func (st *respReasoningState) partText(part int, raw bool, delta string) string {
	if part != st.summary && st.textBytes > 0 {
		delta = reasoningSeparator + delta
		if !raw {
			st.part++
		}
	}
	st.raw = raw
	st.summary = part
	st.textBytes += len(delta)
	return delta
}

// reasoningDone ends a reasoning item: the summary text its deltas did not
// carry, then its signature (the item's encrypted_content, else the one
// announced when it was added). it is nil when the stream ends without the
// complete item.
func (s *responsesStream) reasoningDone(st *respReasoningState, it *respOutputItem) {
	if it != nil && !st.ended {
		// The text the deltas were part of: raw text, the summary, or
		// (nothing streamed) the item's text as the unary answer has it.
		var (
			text  string
			parts []string
			warns []string
		)
		if !st.raw {
			parts, warns = summaryParts(it)
		}
		switch {
		case len(parts) > 0:
			text = strings.Join(parts, reasoningSeparator)
		case st.raw || st.textBytes == 0:
			var w []string
			text, w = reasoningContentText(it)
			warns = append(warns, w...)
		}
		if len(warns) > 0 {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: warns}})
		}
		if len(text) > st.textBytes {
			if rest := text[st.textBytes:]; utf8.ValidString(rest) {
				s.pushSummaryRest(st, parts, text)
			}
		}
	}
	if it != nil && !st.signed {
		// Also from the final response for an item output_item.done
		// ended without it: Azure OpenAI deployments send the encrypted
		// content only in response.completed's output, and a reasoning
		// part without it cannot go back in an unstored request.
		if enc := encryptedContent(it); enc != "" {
			st.encrypted = enc
		}
	}
	st.ended = true
	if !st.signed && st.encrypted != "" {
		st.signed = true
		s.pushReasoning(st, provider.ReasoningDelta{Signature: st.encrypted})
		st.encrypted = ""
	}
}

// pushSummaryRest sends text[st.textBytes:], the end of a reasoning
// item's text its deltas did not carry, one piece per summary part (parts
// joined are text; none: raw text, one piece): a piece that begins a part
// after earlier text begins with its separator and the next summary_index,
// as a delta would, so that the folded parts are the unary ones.
func (s *responsesStream) pushSummaryRest(st *respReasoningState, parts []string, text string) {
	if len(parts) == 0 {
		rest := text[st.textBytes:]
		st.textBytes = len(text)
		s.pushReasoning(st, provider.ReasoningDelta{Text: rest, SummaryIndex: st.part})
		return
	}
	pos := 0
	for k, p := range parts {
		begin := pos // where the part's separator begins
		if k > 0 {
			pos += len(reasoningSeparator)
		}
		pos += len(p)
		if pos <= st.textBytes {
			continue
		}
		from := max(begin, st.textBytes)
		if k > 0 && from == begin {
			st.part++
		}
		piece := text[from:pos]
		st.textBytes = pos
		s.pushReasoning(st, provider.ReasoningDelta{Text: piece, SummaryIndex: st.part})
	}
}

// flushHigh sends what a high surrogate still held decodes to alone:
// U+FFFD (the complete arguments that follow, or the call's end, say no
// low half is coming).
func (s *responsesStream) flushHigh(c *respCallState) {
	if c.high == "" {
		return
	}
	c.high = ""
	s.emitArgs(c, "", "\uFFFD")
}

// partIndex is a delta's content_index, -1 when it has none.
func partIndex(i *flexInt) int64 {
	if i == nil {
		return -1
	}
	return int64(*i)
}

// joinDelta is the text of a text, refusal or reasoning delta (d as
// decoded, raw its quoted token) with a surrogate pair cut between it and
// the previous delta of the same text joined (provider.SurrogateJoin): a
// half held for another text is released there first, a high half ending
// raw is held back.
func (s *responsesStream) joinDelta(typ string, text *respTextState, rs *respReasoningState, part int64, d string, raw json.RawMessage) string {
	h := &s.held
	if h.join.Held() && (h.typ != typ || h.text != text || h.rs != rs || h.part != part) {
		s.flushHeld()
	}
	d = h.join.Text(d, raw)
	if h.join.Held() {
		h.typ, h.text, h.rs, h.part = typ, text, rs, part
	}
	return d
}

// flushHeld releases a held half as U+FFFD, what it decodes to alone, in
// the text it belongs to.
func (s *responsesStream) flushHeld() {
	h := &s.held
	t := h.join.Flush()
	if t == "" {
		return
	}
	switch {
	case h.rs != nil:
		t = h.rs.partText(int(h.part), h.typ == "response.reasoning_text.delta", t)
		s.pushReasoning(h.rs, provider.ReasoningDelta{Text: t, SummaryIndex: h.rs.part})
	case h.typ == "response.output_text.delta":
		h.text.text += len(t)
		s.push(&provider.Event{Kind: provider.EventText, Text: t, Phase: h.text.phase, ItemID: h.text.id})
	default:
		h.text.refusal += len(t)
		s.push(&provider.Event{Kind: provider.EventRefusal, Text: t, ItemID: h.text.id})
	}
	*h = respHeld{}
}
