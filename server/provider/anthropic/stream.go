package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/sse"
	"github.com/llmrelay/llmrelay/server/provider"
)

// maxBlocks bounds the content blocks tracked per stream.
const maxBlocks = 4096

// blockState is what the stream remembers about one content block.
type blockState struct {
	typ       string
	callID    string
	toolIndex int
	// madeID: the block came without an id; callID is a made one.
	madeID bool
	// reasoningIndex is a thinking or redacted_thinking block's position
	// among the reasoning blocks.
	reasoningIndex int
	// gotArgs is set once an argument fragment was emitted.
	gotArgs bool
	// startInput is a tool_use block's input from content_block_start
	// when not {}: held, the input unless input_json_delta fragments
	// come, which are the input then (as the Anthropic SDKs read it);
	// deltas holds theirs, to tell whether the start's said otherwise.
	startInput string
	deltas     strings.Builder
	// name is the call's name while its first fragment waits (a held
	// startInput): it goes with the first arguments relayed.
	name  string
	ended bool
	// textBegun: a text block's first text went out (with BeginsPart).
	textBegun bool
	// text is a text block's text so far, kept while the block is open
	// (a citation may come after the text it cites) and, once the block
	// is cited, until the end; index is the block's, cites its citations
	// as sent, citesDropped set when they were past the bound
	// (streamCitations).
	text         []byte
	index        int
	cites        []any
	citesDropped bool
	// item is a provider item block's state (isItemBlock), relayed whole
	// at its content_block_stop.
	item *itemState
}

// stream reads an Anthropic SSE stream: message_start,
// content_block_start/delta/stop, message_delta, message_stop, ping and
// error events.
type stream struct {
	body   io.ReadCloser
	r      *sse.Reader
	header http.Header

	pending []*provider.Event
	blocks  map[int]*blockState
	// usageDetails are the usage fields no counter holds, so far.
	usageDetails provider.UsageDetails
	tools        int
	// reasonings counts thinking and redacted_thinking blocks.
	reasonings int
	// cites are the cited text blocks (meta.extended.citations).
	cites streamCitations
	// inputTransformations is set once meta.extended.input_transformations
	// was emitted.
	inputTransformations bool
	// fallbacks are the fallback blocks so far (meta.extended.fallback).
	fallbacks []any
	// heldEnd is the end of the last tool_use block stopped so far, held
	// until the next block or the stop reason says whether the answer was
	// cut inside it (releaseEnd).
	heldEnd *provider.Event
	// textLast: the last block that said anything was a text block, so
	// the next text continues its part (textRun); any other block,
	// relayed or dropped, ends it.
	textLast bool
	usage    usageState
	done     bool
	closed   bool
	err      *provider.Error

	// held is the high half of a surrogate pair held back from the end of
	// a text, thinking or input_json delta of block heldBlock (at
	// heldIdx) for the next delta (provider.SurrogateJoin); rawText,
	// rawThinking and rawPartialJSON are the current event's delta
	// strings as sent, read only when it has a surrogate escape.
	held                                 provider.SurrogateJoin
	heldBlock                            *blockState
	heldIdx                              int
	rawText, rawThinking, rawPartialJSON json.RawMessage

	// Reused by decodeTextDeltaFast between events.
	fastIdx   int
	fastDelta streamDelta
	scratch   []byte

	// serviceTier is the usage's service_tier last sent.
	serviceTier string
	// oddUsage are the usage fields already said to hold no value of theirs.
	oddUsage []string
}

func newStream(resp *http.Response, warnings []string) *stream {
	s := &stream{
		body:   resp.Body,
		r:      sse.NewReader(resp.Body),
		header: resp.Header,
		blocks: map[int]*blockState{},
	}
	meta := headerMeta(resp.Header)
	meta.Warnings = warnings
	s.pending = append(s.pending, &provider.Event{Kind: provider.EventMeta, Meta: meta})
	return s
}

// Recv returns the next event, io.EOF after message_stop.
func (s *stream) Recv() (*provider.Event, error) {
	for {
		if s.closed {
			return nil, provider.ErrStreamClosed(providerName)
		}
		if len(s.pending) > 0 {
			ev := s.pending[0]
			s.pending[0] = nil
			s.pending = s.pending[1:]
			return ev, nil
		}
		if s.err != nil {
			return nil, s.err
		}
		if s.done {
			return nil, io.EOF
		}
		ev, err := s.r.Next()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				s.err = provider.StreamCut(providerName, "stream ended before message_stop")
			case errors.Is(err, sse.ErrEventTooLarge):
				s.err = provider.BadResponse(providerName, "%v", err)
			default:
				s.err = provider.BodyReadError(providerName, err)
			}
			s.err.RequestID = headerRequestID(s.header)
			// The stream broke after the call's block stopped: the call
			// was whole.
			s.flushHeld()
			s.flushStartInputs()
			s.releaseEnd("")
			s.flushCitations()
			continue
		}
		if err := s.handle(string(ev.Type), ev.Data); err != nil {
			if err.RequestID == "" {
				err.RequestID = headerRequestID(s.header)
			}
			s.flushHeld()
			s.flushStartInputs()
			s.releaseEnd("")
			s.flushCitations()
			s.err = err
		}
	}
}

// Close closes the response body; safe to call more than once.
func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.pending = nil
	return s.body.Close()
}

func (s *stream) emit(ev *provider.Event) { s.pending = append(s.pending, ev) }

// handle decodes one SSE event and queues the events it yields.
func (s *stream) handle(sseType string, data []byte) *provider.Error {
	var ev streamEvent
	s.rawText, s.rawThinking, s.rawPartialJSON = nil, nil, nil
	if decodeTextDeltaFast(data, &ev, &s.fastIdx, &s.fastDelta, &s.scratch) {
		return s.blockDelta(ev)
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		if t := bytes.TrimSpace(data); sseType == "error" && len(t) > 0 && t[0] != '{' {
			// An error event in plain text: what stands in front of
			// the provider (Envoy's "upstream connect error or
			// disconnect/reset before headers. reset reason: …") broke
			// the stream and said why. Its text is the message (it was
			// lost to "last error event incomplete").
			e := eventError(&wireErrorDetail{Message: provider.Shorten(strings.ToValidUTF8(string(t), "\uFFFD"), 512)}, "", s.header)
			e.Kind = provider.KindUnavailable
			return e
		}
		// The SSE reader dispatches a last event that lacks its blank line;
		// undecodable and followed by the end, it is a cut stream. One
		// that had its blank line is whole: what the server wrote does
		// not parse, a bad answer (not retried), as on every other
		// format (it was retried as a cut into the same bytes).
		if !s.r.Unterminated() {
			return provider.BadResponse(providerName, "decode %s event: %v", eventName(sseType), err)
		}
		if _, nextErr := s.r.Next(); errors.Is(nextErr, io.EOF) || errors.Is(nextErr, io.ErrUnexpectedEOF) {
			return provider.StreamCut(providerName, "stream ended before message_stop (last %s event incomplete)", eventName(sseType))
		}
		return provider.BadResponse(providerName, "decode %s event: %v", eventName(sseType), err)
	}
	typ := ev.Type
	if typ == "" {
		typ = sseType
	}
	if typ != "content_block_delta" {
		// Only the next delta of the same block continues a held half.
		s.flushHeld()
	} else if provider.MayCutCharacter(data) {
		s.deltaTokens(data)
	}
	switch typ {
	case "ping":
	case "message_start":
		if ev.Message == nil {
			return provider.BadResponse(providerName, "message_start without a message")
		}
		meta := &llmrelayv1.ResponseMeta{ResponseId: ev.Message.ID, ResolvedModel: ev.Message.Model}
		if u := ev.Message.Usage; u != nil && u.ServiceTier != "" {
			s.serviceTier = u.ServiceTier
			provider.SetExtended(meta, "service_tier", u.ServiceTier)
		}
		s.inputTransformations = setInputTransformations(meta, ev.Message.InputTransformations, false)
		setContainer(meta, ev.Message.Container)
		setContextManagement(meta, ev.Message.ContextManagement)
		setUpstreamProvider(meta, ev.Message.ProviderMetadata)
		setDiagnostics(meta, ev.Message.Diagnostics)
		s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
		s.updateUsage(ev.Message.Usage)
		// The message may start with content already whole (a resumed
		// turn, e.g. programmatic tool calling: code execution results
		// and a tool_use the code made), and even with its stop reason:
		// each block is converted as if started and stopped at its index.
		var blocks []json.RawMessage // the content as sent, for provider items
		for i := range ev.Message.Content {
			idx := i
			start := streamEvent{Index: &idx, ContentBlock: &ev.Message.Content[i]}
			if isItemBlock(start.ContentBlock.Type) {
				if blocks == nil {
					var v struct {
						Message struct {
							Content []json.RawMessage `json:"content"`
						} `json:"message"`
					}
					if err := json.Unmarshal(data, &v); err != nil || len(v.Message.Content) != len(ev.Message.Content) {
						return provider.BadResponse(providerName, "decode message_start content: %v", err)
					}
					blocks = v.Message.Content
				}
				start.rawBlock = blocks[i]
			}
			if err := s.blockStart(start); err != nil {
				return err
			}
			if err := s.blockStop(streamEvent{Index: &idx}); err != nil {
				return err
			}
		}
		if ev.Message.StopReason != nil {
			s.finish(string(*ev.Message.StopReason), ev.Message.StopSequence, ev.Message.StopDetails, nil)
		}
	case "content_block_start":
		if ev.ContentBlock != nil && isItemBlock(ev.ContentBlock.Type) {
			var v struct {
				ContentBlock json.RawMessage `json:"content_block"`
			}
			if err := json.Unmarshal(data, &v); err != nil {
				// The event decoded a moment ago.
				return provider.BadResponse(providerName, "decode content_block_start: %v", err)
			}
			ev.rawBlock = v.ContentBlock
		}
		return s.blockStart(ev)
	case "content_block_delta":
		return s.blockDelta(ev)
	case "content_block_stop":
		return s.blockStop(ev)
	case "message_delta":
		if len(ev.InputTransformations) > 0 {
			// After a fallback: the serving model's list replaces the
			// first (an empty one too, if a list was given before).
			meta := &llmrelayv1.ResponseMeta{}
			if setInputTransformations(meta, ev.InputTransformations, s.inputTransformations) {
				s.inputTransformations = true
				s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
			}
		}
		if meta := (&llmrelayv1.ResponseMeta{}); setContextManagement(meta, ev.ContextManagement) {
			s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
		}
		if meta := (&llmrelayv1.ResponseMeta{}); setUpstreamProvider(meta, ev.ProviderMetadata) {
			s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
		}
		if meta := (&llmrelayv1.ResponseMeta{}); setDiagnostics(meta, ev.Diagnostics) {
			s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
		}
		if d := ev.Delta; d != nil {
			if d.StopReason != nil {
				s.finish(string(*d.StopReason), d.StopSequence, d.StopDetails, d.Container)
			} else if meta := (&llmrelayv1.ResponseMeta{}); setContainer(meta, d.Container) {
				s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
			}
		}
		s.updateUsage(ev.Usage)
	case "message_stop":
		s.done = true
		// Provider items whose content_block_stop never came are whole
		// as far as the provider said: relayed in block order.
		s.endOpenItems()
		// No stop reason came (or it came before the block): the call
		// stands as it stopped, and so do calls whose
		// content_block_stop never came.
		s.releaseEnd("")
		s.endOpenCalls()
		// Citations that came after the stop reason (or without one).
		s.flushCitations()
		// The counts are final: an inconsistent thinking count is said
		// once, here.
		if w := s.usage.thinkingWarning(); w != "" {
			s.warn("%s", w)
		}
	case "error":
		return eventError(ev.Error, ev.RequestID, s.header)
	default:
		// New event types may appear (API versioning policy): skip them.
	}
	return nil
}

// finish emits the finish reason (with the stop sequence and details, and
// message_delta's container).
func (s *stream) finish(stop string, seq *string, details, container json.RawMessage) {
	s.releaseEnd(stop)
	s.cutOpenCalls(stop)
	s.flushCitations()
	meta := &llmrelayv1.ResponseMeta{
		ProviderFinishReason: stop,
		FinishReason:         provider.ToolCallsFinish(finishReason(stop), s.tools),
	}
	if seq != nil && *seq != "" {
		provider.SetExtended(meta, "stop_sequence", *seq)
	}
	setStopDetails(meta, details)
	setContainer(meta, container)
	s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
}

func eventName(t string) string {
	if t == "" {
		return "stream"
	}
	return t
}

func (s *stream) updateUsage(u *wireUsage) {
	if u == nil {
		return
	}
	s.usage.update(u)
	if s.usage.seen {
		s.emit(&provider.Event{Kind: provider.EventUsage, Usage: s.usage.normalized()})
	}
	changed := s.usageDetails.Merge(usageDetails(u))
	// service_tier is read from every usage object, as the unary answer
	// reads it from its one: message_start's (sent with its meta), and a
	// message_delta's should it carry another (the later replaces the
	// earlier).
	tier := u.ServiceTier != "" && u.ServiceTier != s.serviceTier
	var odd []string
	for _, k := range u.Odd {
		if !slices.Contains(s.oddUsage, k) {
			s.oddUsage = append(s.oddUsage, k)
			odd = append(odd, provider.OddUsageWarning(k))
		}
	}
	if changed || tier || odd != nil {
		meta := &llmrelayv1.ResponseMeta{Warnings: odd}
		if changed {
			s.usageDetails.Set(meta)
		}
		if tier {
			s.serviceTier = u.ServiceTier
			provider.SetExtended(meta, "service_tier", u.ServiceTier)
		}
		s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
}

// callIDTaken reports whether a tool_use block of the stream is keyed by
// id.
func (s *stream) callIDTaken(id string) bool {
	for _, o := range s.blocks {
		if o.typ == "tool_use" && o.callID == id {
			return true
		}
	}
	return false
}

func (s *stream) warn(format string, args ...any) {
	s.emit(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{
		Warnings: []string{fmt.Sprintf(format, args...)},
	}})
}

// flushCitations reports meta.extended.citations when it changed since
// last reported.
func (s *stream) flushCitations() {
	if meta := s.cites.flush(); meta != nil {
		s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
}

// addCitations adds citations to text block b (at idx).
func (s *stream) addCitations(b *blockState, idx int, list ...any) {
	if w := s.cites.add(b, idx, list...); w != "" {
		s.warn("%s", w)
	}
}

// appendText buffers a text block's text (see blockState.text).
func (s *stream) appendText(b *blockState, text string) {
	if text == "" || b.citesDropped {
		return
	}
	b.text = append(b.text, text...)
	if b.cites != nil {
		s.cites.dirty = true
	}
}

func (s *stream) blockStart(ev streamEvent) *provider.Error {
	if ev.Index == nil || ev.ContentBlock == nil {
		return provider.BadResponse(providerName, "content_block_start without index or content_block")
	}
	idx := *ev.Index
	if _, dup := s.blocks[idx]; dup {
		return provider.BadResponse(providerName, "content block %d started twice", idx)
	}
	// Another block follows the held call: it was not the one being
	// written when the answer stopped.
	s.releaseEnd("")
	// Blocks come one after another: a provider item block still open
	// (its content_block_stop never came) ends here, so that it keeps its
	// place before this block.
	s.endOpenItems()
	if len(s.blocks) >= maxBlocks {
		return provider.BadResponse(providerName, "more than %d content blocks", maxBlocks)
	}
	cb := ev.ContentBlock
	b := &blockState{typ: cb.Type}
	s.blocks[idx] = b
	if cb.Type != "text" {
		s.textLast = false
	}
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			s.emit(&provider.Event{Kind: provider.EventText, Text: cb.Text, BeginsPart: s.beginsPart(b)})
		}
		s.appendText(b, cb.Text)
		if list, ok := citationList(cb.Citations); !ok {
			s.warn("content block %d: text block citations are not a list; dropped (the text is kept)", idx)
		} else {
			s.addCitations(b, idx, list...)
		}
	case "tool_use":
		if w := toolsetWarning(idx, cb.ToolsetName); w != "" {
			s.warn("%s", w)
		}
		id := cb.ID
		for i, o := range s.blocks {
			if id != "" && o.typ == "tool_use" && o.callID == id && i != idx {
				if o.madeID {
					// The id made for an earlier block without one: this
					// block, sent with it, is keyed by another made id.
					id, b.madeID = provider.MadeCallID(s.tools, s.callIDTaken), true
					s.warn("content[%d]: tool_use block repeats the id %s made for block %d; keyed as %s", idx, cb.ID, i, id)
					break
				}
				// Calls are keyed by their id (the fragments, the
				// gateway's fold): two blocks with one id would become
				// one call with both inputs run together.
				return provider.BadResponse(providerName, "tool_use blocks %d and %d have the same id %s", i, idx, cb.ID)
			}
		}
		if id == "" {
			// A call without an id cannot be answered (the tool result
			// names its call by id): it is keyed by a made id, as the
			// unary answer keys it and the other adapters key theirs.
			id, b.madeID = provider.MadeCallID(s.tools, s.callIDTaken), true
			s.warn("content[%d]: tool_use block without an id; keyed as %s", idx, id)
		}
		b.callID = id
		b.toolIndex = s.tools
		s.tools++
		delta := provider.ToolCallDelta{CallID: id, Index: b.toolIndex, Name: cb.Name}
		// The input is {} at the start. Some servers and proxies send it
		// whole there: held, it is the input unless input_json_delta
		// fragments follow, which are the input then (the Anthropic SDKs
		// read it so) — a proxy that sends the input in both was relayed
		// as `{"a":1}{"a":1}`.
		// The call's first fragment waits for its arguments then, so
		// that a whole call is still one fragment.
		if args := provider.ArgumentsText(cb.Input, "{}"); args != "{}" {
			b.startInput, b.name = args, cb.Name
			return nil
		}
		s.emit(&provider.Event{Kind: provider.EventToolCall, ToolCall: delta})
	case "thinking", "redacted_thinking":
		// The start event opens the Reasoning part in model order, even
		// before (or without) any text: a redacted block carries all its
		// data here, a thinking block usually starts empty.
		b.reasoningIndex = s.reasonings
		s.reasonings++
		r := reasoningOf(cb)
		s.emit(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{
			Index: b.reasoningIndex, Text: r.GetText(), Signature: r.GetSignature(), Redacted: r.GetRedacted(),
		}})
	case "fallback":
		// The rest of the answer is the fallback model's: it becomes the
		// resolved model (message_start named the one that declined).
		s.fallbacks = append(s.fallbacks, fallbackRecord(cb))
		meta := &llmrelayv1.ResponseMeta{
			ResolvedModel: fallbackTo(cb),
			Warnings:      []string{fmt.Sprintf("content block %d: %s", idx, fallbackWarning(cb))},
		}
		provider.SetExtended(meta, extFallback, s.fallbacks)
		s.emit(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	default:
		if !isItemBlock(cb.Type) {
			s.warn("content block %d: %s", idx, unsupportedBlock(cb))
			break
		}
		b.item, b.index = &itemState{start: ev.rawBlock}, idx
		if note := itemNote(cb); note != "" {
			s.warn("content block %d: %s", idx, note)
		}
	}
	return nil
}

func (s *stream) blockDelta(ev streamEvent) *provider.Error {
	if ev.Index == nil || ev.Delta == nil {
		return provider.BadResponse(providerName, "content_block_delta without index or delta")
	}
	idx := *ev.Index
	b := s.blocks[idx]
	if s.heldBlock != nil && (idx != s.heldIdx || b != s.heldBlock || (ev.Delta.Type != "text_delta" && ev.Delta.Type != "thinking_delta" && ev.Delta.Type != "input_json_delta")) {
		s.flushHeld()
	}
	switch ev.Delta.Type {
	case "text_delta":
		if b != nil && b.typ != "text" {
			return provider.BadResponse(providerName, "text_delta for %s block %d", b.typ, idx)
		}
		if b == nil {
			// A block the provider never started: its text is kept, and
			// the protocol break is reported once per block.
			if len(s.blocks) >= maxBlocks {
				return provider.BadResponse(providerName, "more than %d content blocks", maxBlocks)
			}
			b = &blockState{typ: "text"}
			s.blocks[idx] = b
			s.releaseEnd("") // a block follows the held call
			s.endOpenItems()
			s.warn("text_delta for content block %d, which was never started; kept as text", idx)
		}
		if text := s.join(b, idx, ev.Delta.Text, s.rawText); text != "" {
			s.emitText(b, text)
		}
	case "input_json_delta":
		if b != nil && b.item != nil {
			// The input of a tool Anthropic runs itself (server_tool_use:
			// web search, code execution, tool search; mcp_tool_use): not
			// a client call; it goes in the block's provider item.
			b.item.input.WriteString(ev.Delta.PartialJSON)
			b.item.gotInput = true
			return nil
		}
		if b != nil && b.typ != "tool_use" && b.typ != "text" && b.typ != "thinking" && b.typ != "redacted_thinking" {
			// A block of a type not kept, or a provider item already
			// relayed (a piece after its end): nothing to add to.
			if isItemBlock(b.typ) {
				s.warn("input_json_delta after the end of content block %d (%s, already relayed); dropped", idx, b.typ)
			}
			return nil
		}
		if b == nil || b.typ != "tool_use" {
			return provider.BadResponse(providerName, "input_json_delta for content block %d, which is not a started tool_use block", idx)
		}
		if b.ended {
			return provider.BadResponse(providerName, "input_json_delta after content_block_stop of block %d", idx)
		}
		// partial_json is a piece of the input's JSON text, itself
		// JSON-encoded: an escape inside the input's strings arrives as
		// text ("\\ud83d") and stays as sent, a valid pair once the
		// pieces are concatenated. A UTF-16 proxy cutting the text
		// between the halves of a character sends each half as an
		// escape of the piece's own string ("\ud83d"), which decodes to
		// U+FFFD alone: it is held for the block's next piece.
		if args := s.join(b, idx, ev.Delta.PartialJSON, s.rawPartialJSON); args != "" {
			s.emitArgs(b, args)
		}
	case "thinking_delta", "signature_delta":
		if b == nil || b.typ != "thinking" {
			return provider.BadResponse(providerName, "%s for content block %d, which is not a started thinking block", ev.Delta.Type, idx)
		}
		if b.ended {
			return provider.BadResponse(providerName, "%s after content_block_stop of block %d", ev.Delta.Type, idx)
		}
		thinking := ev.Delta.Thinking
		if ev.Delta.Type == "thinking_delta" {
			thinking = s.join(b, idx, thinking, s.rawThinking)
		}
		if thinking != "" || ev.Delta.Signature != "" {
			s.emit(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{
				Index: b.reasoningIndex, Text: thinking, Signature: ev.Delta.Signature,
			}})
		}
	case "compaction_delta":
		if b == nil || b.typ != "compaction" {
			return provider.BadResponse(providerName, "compaction_delta for content block %d, which is not a started compaction block", idx)
		}
		if b.item == nil {
			s.warn("compaction_delta after the end of content block %d (already relayed); dropped", idx)
			return nil
		}
		if ev.Delta.Content != nil {
			b.item.content.WriteString(*ev.Delta.Content)
			b.item.gotContent = true
		}
		if ev.Delta.EncryptedContent != nil {
			e := *ev.Delta.EncryptedContent
			b.item.encrypted = &e
		}
	case "citations_delta":
		// A citation of a text block (web search, documents): kept as
		// sent in meta.extended.citations with the block's text.
		c := citation(ev.Delta.Citation)
		switch {
		case c == nil || (b != nil && b.typ != "text"):
			// Nothing cited, or not a text block's (no block type but
			// text has citations).
		case b == nil:
			// A block the provider never started: kept as a text block,
			// as text_delta does, with the text that follows.
			if len(s.blocks) >= maxBlocks {
				return provider.BadResponse(providerName, "more than %d content blocks", maxBlocks)
			}
			b = &blockState{typ: "text"}
			s.blocks[idx] = b
			s.releaseEnd("") // a block follows the held call
			s.endOpenItems()
			s.warn("citations_delta for content block %d, which was never started; kept with the text that follows", idx)
			s.addCitations(b, idx, c)
		case b.ended && b.cites == nil:
			// Its text was let go at content_block_stop.
			s.warn("citations_delta after content_block_stop of content block %d; dropped", idx)
		default:
			s.addCitations(b, idx, c)
		}
	default:
		// New delta types carry nothing the normalized stream holds.
	}
	return nil
}

func (s *stream) blockStop(ev streamEvent) *provider.Error {
	if ev.Index == nil {
		return provider.BadResponse(providerName, "content_block_stop without index")
	}
	b := s.blocks[*ev.Index]
	if b == nil || b.ended {
		return nil
	}
	b.ended = true
	if b.cites == nil {
		// An uncited block's text is not needed any more.
		b.text = nil
	}
	if b.item != nil {
		s.emitItem(b)
		return nil
	}
	if b.typ != "tool_use" {
		return nil
	}
	s.endArgs(b)
	// The end is held: if the stop reason that follows cut the answer
	// (max_tokens, the context window, a refusal), this call is the one
	// being written, and its arguments are partial even when they parse
	// (the API's parsed-so-far input; response.go flags the unary call the
	// same way).
	s.releaseEnd("")
	s.heldEnd = &provider.Event{Kind: provider.EventToolCallEnd, ToolCall: provider.ToolCallDelta{
		CallID: b.callID, Index: b.toolIndex,
	}}
	return nil
}

// releaseEnd emits the held tool call end. stop is the answer's stop
// reason when it is known ("" when something else followed the call): a
// reason that cuts the answer (cutBy) makes it EventToolCallCut, with the
// unary answer's warning.
func (s *stream) releaseEnd(stop string) {
	ev := s.heldEnd
	if ev == nil {
		return
	}
	s.heldEnd = nil
	if cut := cutBy(stop); cut != "" {
		ev.Kind = provider.EventToolCallCut
		s.warn("tool call %s was cut by %s; its arguments are partial", ev.ToolCall.CallID, cut)
	}
	s.emit(ev)
}

// endOpenCalls ends the tool_use blocks still open at message_stop
// (their content_block_stop never came) as content_block_stop would,
// with the empty object for a call that had no arguments (the unary
// answer's input {}), in call order.
func (s *stream) endOpenCalls() {
	s.closeOpenCalls(func(b *blockState) {
		s.emit(&provider.Event{Kind: provider.EventToolCallEnd, ToolCall: provider.ToolCallDelta{CallID: b.callID, Index: b.toolIndex}})
	})
}

// closeOpenCalls marks each tool_use block still open ended, in call
// order, sends {} for one that had no arguments (the input parsed so far,
// as the unary answer has it), then calls end with it.
func (s *stream) closeOpenCalls(end func(*blockState)) {
	var open []*blockState
	for _, b := range s.blocks {
		if b.typ == "tool_use" && !b.ended {
			open = append(open, b)
		}
	}
	slices.SortFunc(open, func(a, b *blockState) int { return a.toolIndex - b.toolIndex })
	for _, b := range open {
		b.ended = true
		s.endArgs(b)
		end(b)
	}
}

// endArgs completes the input of tool_use block b at its end: the input content_block_start held when no fragment
// came, else {} (the unary answer's input); a held input the fragments
// do not repeat is reported dropped.
func (s *stream) endArgs(b *blockState) {
	switch {
	case !b.gotArgs && b.startInput != "":
		s.emitArgs(b, b.startInput)
	case !b.gotArgs:
		s.emit(&provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{CallID: b.callID, Index: b.toolIndex, Arguments: "{}"}})
	case b.startInput != "":
		if d := b.deltas.String(); d != b.startInput && !provider.SameJSON([]byte(d), []byte(b.startInput)) {
			s.warn("tool call %s: the input of its content_block_start was dropped; its input_json_delta fragments are the input", b.callID)
		}
	}
	b.startInput = ""
	b.deltas.Reset()
}

// flushStartInputs relays, before the error of a failed stream, the input
// held from content_block_start of the tool_use blocks still open without
// fragments: what the provider said of the call.
func (s *stream) flushStartInputs() {
	var open []*blockState
	for _, b := range s.blocks {
		if b.typ == "tool_use" && !b.ended && !b.gotArgs && b.startInput != "" {
			open = append(open, b)
		}
	}
	slices.SortFunc(open, func(a, b *blockState) int { return a.toolIndex - b.toolIndex })
	for _, b := range open {
		s.emitArgs(b, b.startInput)
		b.startInput = ""
	}
}

// cutOpenCalls ends the tool_use blocks still open (no content_block_stop)
// when the stop reason cut the answer (cutBy): they were being written, so
// they end as EventToolCallCut with the warning, never as whole calls
// (the gateway would complete an open call at the end as valid when its
// partial arguments parse). In call order.
func (s *stream) cutOpenCalls(stop string) {
	cut := cutBy(stop)
	if cut == "" {
		return
	}
	s.closeOpenCalls(func(b *blockState) {
		s.warn("tool call %s was cut by %s; its arguments are partial", b.callID, cut)
		s.emit(&provider.Event{Kind: provider.EventToolCallCut, ToolCall: provider.ToolCallDelta{CallID: b.callID, Index: b.toolIndex}})
	})
}

// beginsPart says whether text of block b, about to be emitted, begins a
// new text part (Event.BeginsPart): its block's first text does when the
// last block that said anything was not text (a server-tool block, which
// is not a part, between two texts), as the unary answer splits them
// (textRun); text blocks in a row (one per cited span) stay one part.
func (s *stream) beginsPart(b *blockState) bool {
	begins := !b.textBegun && !s.textLast
	b.textBegun, s.textLast = true, true
	return begins
}

// emitText emits a text block's text and keeps it for its citations.
func (s *stream) emitText(b *blockState, text string) {
	begins := false
	if text != "" {
		begins = s.beginsPart(b)
	}
	s.emit(&provider.Event{Kind: provider.EventText, Text: text, BeginsPart: begins})
	if !b.ended || b.cites != nil {
		s.appendText(b, text)
	}
}

// deltaTokens reads the quoted tokens of a content_block_delta's text,
// thinking and partial_json (data has a surrogate escape: the fast decoder refused it, and
// encoding/json decoded a cut pair's halves as U+FFFD).
func (s *stream) deltaTokens(data []byte) {
	var v struct {
		Delta *struct {
			Text        json.RawMessage `json:"text"`
			Thinking    json.RawMessage `json:"thinking"`
			PartialJSON json.RawMessage `json:"partial_json"`
		} `json:"delta"`
	}
	if json.Unmarshal(data, &v) == nil && v.Delta != nil {
		s.rawText, s.rawThinking, s.rawPartialJSON = v.Delta.Text, v.Delta.Thinking, v.Delta.PartialJSON
	}
}

// join is the text of a text or thinking delta of block b (at idx), d as
// decoded and raw its quoted token (nil when the event had no surrogate
// escape), with a surrogate pair cut between it and the block's previous
// delta joined; a high half ending raw is held for the next delta.
func (s *stream) join(b *blockState, idx int, d string, raw json.RawMessage) string {
	d = s.held.Text(d, raw)
	if s.held.Held() {
		s.heldBlock, s.heldIdx = b, idx
	} else {
		s.heldBlock = nil
	}
	return d
}

// flushHeld releases a held half as U+FFFD, what it decodes to alone, in
// its block: the block stopped, another delta or event came, or the
// stream ended.
func (s *stream) flushHeld() {
	b := s.heldBlock
	t := s.held.Flush()
	s.heldBlock = nil
	if t == "" || b == nil {
		return
	}
	switch b.typ {
	case "thinking":
		s.emit(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: b.reasoningIndex, Text: t}})
	case "tool_use":
		s.emitArgs(b, t)
	default:
		s.emitText(b, t)
	}
}

// emitArgs queues a piece of tool_use block b's input text.
func (s *stream) emitArgs(b *blockState, args string) {
	b.gotArgs = true
	if b.startInput != "" {
		b.deltas.WriteString(args)
	}
	s.emit(&provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{
		CallID: b.callID, Index: b.toolIndex, Name: b.name, Arguments: args,
	}})
	b.name = ""
}

// emitItem relays provider item block b, ended, whole (itemState.item).
// One the stream made unreadable (its input_json_delta text is not JSON)
// is not relayed, with a warning.
func (s *stream) emitItem(b *blockState) {
	it, err := b.item.item(b.typ)
	b.item = nil
	if err != nil {
		s.warn("content block %d: block %q could not be rebuilt (%v); not relayed", b.index, b.typ, err)
		return
	}
	s.emit(&provider.Event{Kind: provider.EventProviderItem, Item: &it})
}

// endOpenItems ends the provider item blocks still open at message_stop,
// in block order.
func (s *stream) endOpenItems() {
	var open []*blockState
	for _, b := range s.blocks {
		if b.item != nil && !b.ended {
			open = append(open, b)
		}
	}
	slices.SortFunc(open, func(a, b *blockState) int { return a.index - b.index })
	for _, b := range open {
		b.ended = true
		s.emitItem(b)
	}
}
