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
	finished         bool
	lastUsage        *llmrelayv1.Usage
	// usageDetails are the usageMetadata fields no counter holds, so far.
	usageDetails provider.UsageDetails
	serviceTier  string         // usageMetadata.serviceTier, last sent
	lastWire     *usageMetadata // the counts lastUsage was converted from
	safety       json.RawMessage
	citations    json.RawMessage
	// avgLogprobs, logprobs: the last chunk's candidate avgLogprobs and
	// logprobsResult, reported with the finish.
	avgLogprobs json.RawMessage
	logprobs    json.RawMessage
	grounding   json.RawMessage
	urlContext  json.RawMessage
	fast        fastChunk // decodeChunkFast's storage
	items       []item    // handle's, reused
	// heldEnd is the end of a call that was the last output item so far:
	// held until something follows it or the finish reason says whether
	// the token limit cut it.
	heldEnd *provider.Event
	// warnedCandidates: a candidate other than 0 was seen and reported.
	warnedCandidates bool
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
		if !ok {
			w = new(generateContentResponse)
			if err := json.Unmarshal(data, w); err != nil {
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
	s.releaseEnd(false)
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
		e := provider.TransportError(providerName, err)
		e.Message = s.p.redact(e.Message)
		s.err = e
	}
}

func (s *stream) push(ev *provider.Event) { s.queue = append(s.queue, ev) }

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

// releaseEnd queues the held call end, if any; cut marks the call as cut
// by the token limit, with a warning.
func (s *stream) releaseEnd(cut bool) {
	ev := s.heldEnd
	if ev == nil {
		return
	}
	s.heldEnd = nil
	if cut {
		ev.Kind = provider.EventToolCallCut
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{cutCallWarning(ev.ToolCall.CallID)}}})
	}
	s.push(ev)
}

// handle converts one chunk into events.
func (s *stream) handle(w *generateContentResponse) {
	if w.Error != nil {
		s.releaseEnd(false)
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
		s.releaseEnd(false)
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
	if c != nil && c.Content != nil {
		first := s.ans.calls
		items := s.ans.convert(s.items[:0], c.Content.Parts, c.FinishReason != "", func(msg string) {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{msg}}})
		})
		idx := first
		for _, it := range items {
			s.releaseEnd(false) // something follows the held call: it was whole
			switch it.kind {
			case itemText:
				s.push(&provider.Event{Kind: provider.EventText, Text: it.text})
			case itemReasoning:
				s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: it.reasoning})
			case itemCall:
				// Gemini sends each call whole, in one part.
				d := provider.ToolCallDelta{CallID: it.call.CallId, Index: idx, Name: it.call.Name,
					Arguments: it.call.Arguments, Signature: it.call.Signature}
				s.push(&provider.Event{Kind: provider.EventToolCall, ToolCall: d})
				s.heldEnd = &provider.Event{Kind: provider.EventToolCallEnd, ToolCall: provider.ToolCallDelta{CallID: d.CallID, Index: idx}}
				idx++
			}
		}
		clear(items) // the next chunk's items reuse the array
		s.items = items[:0]
	}
	if c != nil && c.FinishReason != "" {
		// A call last in an answer the token limit cut is the call being
		// written when it hit: Gemini sends the arguments parsed so far
		// (toResult's rule too).
		s.releaseEnd(finishReason(string(c.FinishReason)) == llmrelayv1.FinishReason_FINISH_REASON_LENGTH)
	}
	if c != nil {
		if present(c.SafetyRatings) {
			s.safety = append(s.safety[:0], c.SafetyRatings...)
		}
		if present(c.CitationMetadata) {
			s.citations = append(s.citations[:0], c.CitationMetadata...)
		}
		if present(c.AvgLogprobs) {
			s.avgLogprobs = append(s.avgLogprobs[:0], c.AvgLogprobs...)
		}
		if present(c.LogprobsResult) {
			s.logprobs = append(s.logprobs[:0], c.LogprobsResult...)
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
		}
		s.pushUsageDetails(um)
	}
	if c != nil && c.FinishReason != "" {
		s.finished = true
		meta := &llmrelayv1.ResponseMeta{
			ProviderFinishReason: string(c.FinishReason),
			FinishReason:         provider.ToolCallsFinish(finishReason(string(c.FinishReason)), s.ans.calls),
			ToolCallCount:        int32(s.ans.calls),
		}
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
		if c.FinishMessage != "" {
			provider.SetExtended(meta, extFinishMessage, c.FinishMessage)
		}
		if s.avgLogprobs != nil {
			provider.SetExtended(meta, extAvgLogprobs, rawValue(s.avgLogprobs))
		}
		if s.logprobs != nil {
			provider.SetExtended(meta, extLogprobsResult, rawValue(s.logprobs))
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
