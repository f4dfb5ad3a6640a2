package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/sse"
	"github.com/llmrelay/llmrelay/server/provider"
)

// stream reads streamGenerateContent?alt=sse: each SSE event is a whole
// GenerateContentResponse chunk. There is no terminator event: the stream
// is complete at EOF after a chunk with a finishReason.
type stream struct {
	p    *Provider
	body io.ReadCloser
	r    *sse.Reader
	// date is the answer's Date, from which an error chunk's quota
	// resets are counted.
	date time.Time

	// queue holds the events of the current chunk (bounded by one chunk)
	// from qpos on; its array is reused by the next chunk.
	queue []*provider.Event
	qpos  int
	// err is sticky: io.EOF after a proper end, else the failure.
	err    error
	closed bool

	ans      answer
	metaSent bool
	// promptSafetySent: promptFeedback.safetyRatings were delivered.
	promptSafetySent bool
	// modelStatusSent: the response's modelStatus was delivered (the
	// first chunk that carries one; a later one is the same status).
	modelStatusSent bool
	finished        bool
	lastUsage       *llmrelayv1.Usage
	// usageDetails are the usageMetadata fields no counter holds, so far.
	usageDetails provider.UsageDetails
	serviceTier  string         // usageMetadata.serviceTier, last sent
	lastWire     *usageMetadata // the counts lastUsage was converted from
	safety       json.RawMessage
	citations    json.RawMessage
	// logprobs: every chunk's candidate avgLogprobs and logprobsResult,
	// reported with the finish.
	logprobs   streamLogprobs
	grounding  json.RawMessage
	urlContext json.RawMessage
	fast       fastChunk // decodeChunkFast's storage
	items      []item    // handle's, reused
	// heldEnd is the end of a call that was the last output item so far:
	// held until something follows it or the finish reason says whether
	// the token limit cut it.
	heldEnd *provider.Event
	// heldCut is the warning of a held call the answer ended while it
	// was still being streamed (item.cut).
	heldCut string
	// warnedCandidates: a candidate other than 0 was seen and reported.
	warnedCandidates bool
	// warnedPrompt: a usage without promptTokenCount was said to have its
	// input derived from the total (promptTokens).
	warnedPrompt bool
	// turnToken is the last turnToken delivered.
	turnToken string
	// continuation is the last continuationToken received: delivered with
	// the finish, or before the error when the stream is cut after a
	// checkpoint chunk (a token with no finishReason), so that the client
	// can still go on from there.
	continuation string

	// toolUsePrompt is the toolUsePromptTokenCount last sent as
	// extended.gemini.tool_use_prompt_tokens.
	toolUsePrompt int64
	// oddUsage are the usageMetadata counts already said to hold no count.
	oddUsage []string

	// held is the high half of a surrogate pair held back from the end of
	// a text or (heldThought) thought part for the next part
	// (provider.SurrogateJoin); rawText is the current chunk's parts'
	// texts as sent, per candidate, read only when the chunk has a
	// surrogate escape.
	held        provider.SurrogateJoin
	heldThought bool
	rawText     [][]json.RawMessage
}

// newStream reads resp; warnings (from encoding the request) are sent first.
func (p *Provider) newStream(resp *http.Response, warnings ...string) *stream {
	s := &stream{p: p, body: resp.Body, r: sse.NewReader(resp.Body), date: provider.ResponseDate(resp.Header)}
	meta := &llmrelayv1.ResponseMeta{Warnings: warnings}
	// The tier the header names is known before any chunk; a serviceTier
	// in the body, sent later, wins (pushUsageDetails sends it when it
	// differs).
	headerServiceTier(meta, resp.Header)
	s.serviceTier = meta.GetServiceTier()
	if len(warnings) > 0 || s.serviceTier != "" {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
	return s
}

// Recv returns the next event, io.EOF after the end of a complete stream,
// or a *provider.Error.
func (s *stream) Recv() (*provider.Event, error) {
	for {
		if s.closed {
			return nil, provider.ErrStreamClosed(providerName)
		}
		if s.qpos < len(s.queue) {
			ev := s.queue[s.qpos]
			s.queue[s.qpos] = nil
			s.qpos++
			return ev, nil
		}
		s.queue, s.qpos = s.queue[:0], 0
		if s.err != nil {
			return nil, s.err
		}
		ev, err := s.r.Next()
		if err != nil {
			s.fail(err)
			continue
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		w, ok := decodeChunkFast(data, &s.fast)
		s.rawText = s.rawText[:0]
		if !ok && provider.MayCutCharacter(data) {
			s.textTokens(data)
		}
		if !ok {
			w = new(generateContentResponse)
			if err := json.Unmarshal(data, w); err != nil {
				// What came before is delivered as a cut stream's is.
				s.flushHeld()
				s.closePending()
				s.releaseEnd("")
				s.pushGathered()
				s.err = provider.BadResponse(providerName, "decoding stream chunk: %v", err)
				continue
			}
		}
		s.handle(w)
		s.fast.version, s.fast.id = w.ModelVersion, w.ResponseID
	}
}

// fail records the end of the byte stream.
func (s *stream) fail(err error) {
	s.flushHeld()
	if !s.finished {
		s.closePending()
	}
	s.releaseEnd("")
	s.pushGathered()
	switch {
	case s.finished && errors.Is(err, provider.ErrIdleTimeout):
		// The last chunk (its finishReason) came; the connection stayed
		// open: a complete answer, not a cut one.
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{provider.IdleAfterEndWarning}}})
		s.err = io.EOF
	case s.finished && provider.CutAfterEnd(err):
		// The last chunk came; the connection then broke instead of
		// ending cleanly: the answer is whole all the same.
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{provider.CutAfterEndWarning}}})
		s.err = io.EOF
	case errors.Is(err, io.EOF):
		if s.finished {
			s.err = io.EOF
		} else {
			s.pushContinuation()
			s.err = provider.StreamCut(providerName, "stream ended before a finish reason")
		}
	case errors.Is(err, sse.ErrEventTooLarge):
		s.err = provider.BadResponse(providerName, "stream chunk too large: %v", err)
	default:
		e := provider.BodyReadError(providerName, err)
		e.Message = s.p.redact(e.Message)
		s.err = e
	}
}

// emit queues the events of convert's items, the first call's index
// first (reusing their array for the next chunk).
func (s *stream) emit(first int, items []item) {
	idx := first
	for _, it := range items {
		s.releaseEnd("") // something follows the held call: it was whole
		switch it.kind {
		case itemText:
			s.push(&provider.Event{Kind: provider.EventText, Text: it.text})
		case itemReasoning:
			s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: it.reasoning})
		case itemProvider:
			pi := it.pitem // a copy: &it.pitem would move every item of the loop to the heap
			s.push(&provider.Event{Kind: provider.EventProviderItem, Item: &pi})
		case itemCall:
			// Gemini sends each call whole, in one part.
			d := provider.ToolCallDelta{CallID: it.call.CallId, Index: idx, Name: it.call.Name,
				Arguments: it.call.Arguments, Signature: it.call.Signature}
			s.push(&provider.Event{Kind: provider.EventToolCall, ToolCall: d})
			s.heldEnd = &provider.Event{Kind: provider.EventToolCallEnd, ToolCall: provider.ToolCallDelta{CallID: d.CallID, Index: idx}}
			s.heldCut = it.cut
			idx++
		}
	}
	clear(items) // the next chunk's items reuse the array
	s.items = items[:0]
}

// closePending delivers the call still being streamed when the stream
// failed (cut, or an error event), as a cut call: its arguments are those
// streamed so far.
func (s *stream) closePending() {
	if s.ans.pending != nil {
		first := s.ans.calls
		s.emit(first, s.ans.convert(s.items[:0], nil, true, "", s.warn))
	}
}

func (s *stream) push(ev *provider.Event) { s.queue = append(s.queue, ev) }

// setGathered sets what the candidate's chunks said that is reported
// with the finish: safety ratings, citations, grounding, URL context and
// logprobs.
func (s *stream) setGathered(meta *llmrelayv1.ResponseMeta) {
	if s.safety != nil {
		provider.SetExtended(meta, extSafetyRatings, rawValue(s.safety))
	}
	if s.citations != nil {
		provider.SetExtended(meta, extCitationMetadata, rawValue(s.citations))
	}
	if s.grounding != nil {
		provider.SetExtended(meta, extGroundingMetadata, rawValue(s.grounding))
	}
	if s.urlContext != nil {
		provider.SetExtended(meta, extURLContextMetadata, rawValue(s.urlContext))
	}
	s.logprobs.set(meta)
}

// pushGathered delivers, before the error of a stream that fails without
// a finish reason, what setGathered would have reported with the finish:
// the server merges a stream's meta events into the failure's meta
// (FailedCallMeta), where they stand beside the text already relayed.
func (s *stream) pushGathered() {
	if s.finished {
		return
	}
	meta := &llmrelayv1.ResponseMeta{}
	s.setGathered(meta)
	if meta.Extended != nil {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
}

// pushContinuation delivers the last continuationToken of a stream that
// ends without a finish reason.
func (s *stream) pushContinuation() {
	if s.continuation == "" {
		return
	}
	meta := &llmrelayv1.ResponseMeta{}
	provider.SetExtended(meta, extContinuationToken, s.continuation)
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
}

// releaseEnd queues the held call end, if any; cut (cutBy: the token
// limit, a safety stop, a malformed call; "" for none) marks the call as
// cut, with a warning. A call the answer ended while it was still being
// streamed (heldCut) ends cut whatever cut says.
func (s *stream) releaseEnd(cut string) {
	ev := s.heldEnd
	if ev == nil {
		return
	}
	why := s.heldCut
	s.heldEnd, s.heldCut = nil, ""
	if why == "" && cut != "" {
		why = cutCallWarning(ev.ToolCall.CallID, cut)
	}
	if why != "" {
		ev.Kind = provider.EventToolCallCut
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{why}}})
	}
	s.push(ev)
}

// handle converts one chunk into events.
func (s *stream) handle(w *generateContentResponse) {
	if w.Error != nil {
		s.flushHeld()
		s.closePending()
		s.releaseEnd("")
		s.pushGathered()
		s.err = s.p.streamError(w.Error, s.date)
		return
	}
	if s.ans.responseID == "" && s.ans.calls == 0 && w.ResponseID != "" {
		s.ans.responseID = w.ResponseID
	}
	var meta *llmrelayv1.ResponseMeta
	if !s.metaSent && (w.ResponseID != "" || w.ModelVersion != "" || w.CreateTime != "") {
		s.metaSent = true
		meta = &llmrelayv1.ResponseMeta{}
		responseMeta(meta, w)
		s.turnToken = w.TurnToken
	}
	if w.TurnToken != "" && w.TurnToken != s.turnToken {
		// A turnToken on a later chunk than the first meta's.
		s.turnToken = w.TurnToken
		if meta == nil {
			meta = &llmrelayv1.ResponseMeta{}
		}
		provider.SetExtended(meta, extTurnToken, w.TurnToken)
	}
	// The prompt's safety ratings come with the first chunk, which need
	// not carry a responseId or modelVersion (the API before them, and
	// semantic-kernel's sk_chat_stream): they are kept whichever chunk
	// brings them, as the unary answer keeps them.
	if !s.promptSafetySent && w.PromptFeedback != nil && present(w.PromptFeedback.SafetyRatings) {
		s.promptSafetySent = true
		if meta == nil {
			meta = &llmrelayv1.ResponseMeta{}
		}
		provider.SetExtended(meta, extPromptSafetyRatings, rawValue(w.PromptFeedback.SafetyRatings))
	}
	if !s.modelStatusSent && present(w.ModelStatus) {
		s.modelStatusSent = true
		if meta == nil {
			meta = &llmrelayv1.ResponseMeta{}
		}
		if warning := modelStatusMeta(meta, w.ModelStatus); warning != "" {
			meta.Warnings = append(meta.Warnings, warning)
		}
	}
	if meta != nil {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
	if len(w.Candidates) == 0 && w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" {
		// The meta and usage above are delivered before the error, with
		// the usage fields no counter holds, as an answer's are.
		if u := toUsage(w.UsageMetadata); u != nil {
			s.push(&provider.Event{Kind: provider.EventUsage, Usage: u})
		}
		s.pushUsageDetails(w.UsageMetadata)
		s.flushHeld()
		s.closePending()
		s.releaseEnd("")
		s.err = blockedError(w)
		return
	}
	c, others := firstCandidate(w.Candidates)
	if others > 0 && !s.warnedCandidates {
		// Reported once: each further candidate's chunks are skipped.
		s.warnedCandidates = true
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{
			Warnings: []string{"gemini sent more than one candidate (generationConfig.candidateCount > 1): only candidate 0 is streamed, the others are dropped"}}})
	}
	if c == nil || c.Content == nil {
		// No part continues a held half.
		s.flushHeld()
	}
	if c != nil && (c.Content != nil || (c.FinishReason != "" && s.ans.pending != nil)) {
		// A finish without content still ends a call being streamed.
		var parts []respPart
		if c.Content != nil {
			parts = s.joinParts(c.Content.Parts, s.rawTextOf(w, c), c.FinishReason != "")
		}
		first := s.ans.calls
		s.emit(first, s.ans.convert(s.items[:0], parts, c.FinishReason != "", string(c.FinishReason), s.warn))
	}
	if c != nil && c.FinishReason != "" {
		// A call last in an answer the token limit or a safety stop cut
		// is the call being written when it stopped: Gemini sends the
		// arguments parsed so far (toResult's rule too).
		s.releaseEnd(cutBy(string(c.FinishReason)))
	}
	if c != nil {
		if present(c.SafetyRatings) {
			s.safety = append(s.safety[:0], c.SafetyRatings...)
		}
		if present(c.CitationMetadata) {
			s.citations = append(s.citations[:0], c.CitationMetadata...)
		}
		if present(c.AvgLogprobs) || present(c.LogprobsResult) {
			s.logprobs.add(c.LogprobsResult, c.AvgLogprobs, s.warn)
		}
		if grounded(c.GroundingMetadata) {
			s.grounding = append(s.grounding[:0], c.GroundingMetadata...)
		}
		if grounded(c.URLContextMetadata) {
			s.urlContext = append(s.urlContext[:0], c.URLContextMetadata...)
		}
		if c.ContinuationToken != "" {
			s.continuation = c.ContinuationToken
		}
	}
	// usageMetadata is cumulative on every chunk: each is the total, sent
	// on when it changed. The same counts as the last chunk's convert to
	// the same Usage: skipped without converting and comparing. One with
	// no count at all (Vertex AI's first chunks: only trafficType) says
	// nothing of the totals, which are not zero: no usage event, only its
	// details.
	if um := w.UsageMetadata; um != nil && !(s.lastWire != nil && sameUsage(um, s.lastWire)) {
		s.lastWire = um
		if u := toUsage(um); u != nil && counted(um) && !proto.Equal(u, s.lastUsage) {
			s.lastUsage = u
			s.push(&provider.Event{Kind: provider.EventUsage, Usage: proto.Clone(u).(*llmrelayv1.Usage)})
			if _, derived := promptTokens(um); derived && !s.warnedPrompt {
				s.warnedPrompt = true
				s.warn(derivedPromptWarning(um))
			}
		}
		s.pushUsageDetails(um)
	}
	if c != nil && c.FinishReason != "" {
		s.finished = true
		meta := &llmrelayv1.ResponseMeta{
			ProviderFinishReason: string(c.FinishReason),
			FinishReason:         s.ans.finish(string(c.FinishReason)),
			ToolCallCount:        int32(s.ans.calls),
		}
		s.setGathered(meta)
		if c.FinishMessage != "" {
			provider.SetExtended(meta, extFinishMessage, c.FinishMessage)
		}
		if w := s.ans.unexpectedCallWarning(string(c.FinishReason), c.FinishMessage); w != "" {
			meta.Warnings = append(meta.Warnings, w)
		}
		if s.continuation != "" && (c.ContinuationToken != "" || c.FinishReason == "CONTINUATION") {
			// A checkpoint's token is stale once the answer ends another
			// way (js-genai continues only after CONTINUATION or a
			// checkpoint).
			provider.SetExtended(meta, extContinuationToken, s.continuation)
		}
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
}

// pushUsageDetails sends the usageMetadata fields no counter holds when
// they changed: the service tier (setUsageDetails), usage_details, all of
// them so far, and toolUsePromptTokenCount as gemini.tool_use_prompt_tokens
// (from whichever chunk brings it, as the unary answer has it: a usage
// that comes after the finish chunk, or grows after it, is not lost).
func (s *stream) pushUsageDetails(um *usageMetadata) {
	d := usageDetails(um)
	tier := serviceTierOf(d)
	changed := s.usageDetails.Merge(d)
	newTier := tier != "" && tier != s.serviceTier
	toolUse := um != nil && um.ToolUsePromptTokenCount > 0 && um.ToolUsePromptTokenCount != s.toolUsePrompt
	var odd []string
	if um != nil {
		for _, k := range um.Odd {
			if !slices.Contains(s.oddUsage, k) {
				s.oddUsage = append(s.oddUsage, k)
				odd = append(odd, provider.OddUsageWarning("usageMetadata."+k))
			}
		}
	}
	if !changed && !newTier && !toolUse && odd == nil {
		return
	}
	meta := &llmrelayv1.ResponseMeta{Warnings: odd}
	if changed {
		s.usageDetails.Set(meta)
	}
	if newTier {
		s.serviceTier = tier
		provider.SetExtended(meta, extServiceTier, tier)
	}
	if toolUse {
		s.toolUsePrompt = um.ToolUsePromptTokenCount
		provider.SetExtended(meta, extToolUsePromptTokens, float64(um.ToolUsePromptTokenCount))
	}
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
}

// Close releases the connection; safe to call more than once.
func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.queue, s.qpos = nil, 0
	return s.body.Close()
}

// counted reports whether u holds any token count.
func counted(u *usageMetadata) bool {
	return u.PromptTokenCount != 0 || u.CandidatesTokenCount != 0 || u.ThoughtsTokenCount != 0 ||
		u.CachedContentTokenCount != 0 || u.ToolUsePromptTokenCount != 0 || u.TotalTokenCount != 0
}

// sameUsage: the two usageMetadata objects say the same (their counts, and
// the bytes the details come from).
func sameUsage(a, b *usageMetadata) bool {
	return a.PromptTokenCount == b.PromptTokenCount && a.CandidatesTokenCount == b.CandidatesTokenCount &&
		a.ThoughtsTokenCount == b.ThoughtsTokenCount && a.CachedContentTokenCount == b.CachedContentTokenCount &&
		a.ToolUsePromptTokenCount == b.ToolUsePromptTokenCount && a.TotalTokenCount == b.TotalTokenCount &&
		bytes.Equal(a.Raw, b.Raw)
}

// textTokens reads the quoted tokens of the candidates' parts' texts of
// chunk data, which has a surrogate escape (the fast decoder refused it,
// and encoding/json decoded a cut pair's halves as U+FFFD).
func (s *stream) textTokens(data []byte) {
	var v struct {
		Candidates []struct {
			Content *struct {
				Parts []struct {
					Text json.RawMessage `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if json.Unmarshal(data, &v) != nil {
		return
	}
	for _, c := range v.Candidates {
		var texts []json.RawMessage
		if c.Content != nil {
			for _, pt := range c.Content.Parts {
				texts = append(texts, pt.Text)
			}
		}
		s.rawText = append(s.rawText, texts)
	}
}

// rawTextOf is the parts' text tokens of candidate c of w (nil when the
// chunk had no surrogate escape).
func (s *stream) rawTextOf(w *generateContentResponse, c *candidate) []json.RawMessage {
	for i := range w.Candidates {
		if &w.Candidates[i] == c && i < len(s.rawText) {
			return s.rawText[i]
		}
	}
	return nil
}

// joinParts joins the surrogate pairs a UTF-16 server cut between the text
// (or thought) parts of consecutive chunks (provider.SurrogateJoin): a
// text part's high half that ends it is held back for the next part, and
// the next part of the same kind begins with it (its low half makes the
// character; anything else is U+FFFD). Before a part of another kind, and
// at the finish (final), a held half becomes a U+FFFD part of its own
// kind, so that convert puts it in its block. A signed part (its
// signature closes the block) holds nothing. raw are the parts' text
// tokens, nil when the chunk had no surrogate escape. parts is not
// modified: a part whose text changes, or a U+FFFD part, makes a copy.
func (s *stream) joinParts(parts []respPart, raw []json.RawMessage, final bool) []respPart {
	if !s.held.Held() && raw == nil {
		return parts
	}
	out := make([]respPart, 0, len(parts)+1)
	for i, pt := range parts {
		isText := pt.FunctionCall == nil && pt.Text != nil && unsupportedPartKind(&pt) == ""
		if s.held.Held() && (!isText || pt.Thought != s.heldThought) {
			out = append(out, s.heldPart())
		}
		if isText {
			var tok json.RawMessage
			if i < len(raw) {
				tok = raw[i]
			}
			t := s.held.Text(*pt.Text, tok)
			if pt.ThoughtSignature != "" {
				t += s.held.Flush()
			}
			s.heldThought = pt.Thought
			pt.Text = &t
		}
		out = append(out, pt)
	}
	if final && s.held.Held() {
		out = append(out, s.heldPart())
	}
	return out
}

// heldPart is the part a held half becomes alone: U+FFFD, of its kind.
func (s *stream) heldPart() respPart {
	t := s.held.Flush()
	return respPart{Text: &t, Thought: s.heldThought}
}

// flushHeld releases a held half as U+FFFD when no part follows it: in the
// text, or in the last thought block (a held thought part was unsigned,
// so its block is the last one).
func (s *stream) flushHeld() {
	t := s.held.Flush()
	if t == "" {
		return
	}
	if s.heldThought && s.ans.reasoning > 0 {
		s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: s.ans.reasoning - 1, Text: t}})
		return
	}
	s.push(&provider.Event{Kind: provider.EventText, Text: t})
}

// warn queues a warning.
func (s *stream) warn(msg string) {
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{msg}}})
}
