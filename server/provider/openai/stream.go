package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

const (
	// maxStreamToolCalls bounds the per-stream call table.
	maxStreamToolCalls = 1024
	// maxStreamEventBytes bounds one SSE event (one chunk).
	maxStreamEventBytes = 4 << 20
	// maxFilterCategories bounds the merged content filter verdicts.
	maxFilterCategories = 64
	// maxAnnotations bounds the annotations (citations) kept of a stream.
	maxAnnotations = 256
	// maxStreamLogprobBytes bounds the token logprobs kept of a stream
	// (the unary body they would come in is capped at maxBodyBytes).
	maxStreamLogprobBytes = 16 << 20
)

// chatStream reads a chat.completion.chunk SSE stream.
type chatStream struct {
	eventLoop

	// executedWarned: Groq's executed_tools were reported; annWarned: a
	// warning about annotations was given.
	executedWarned bool
	annWarned      bool
	finishSeen     bool
	// contentSeen: a content delta came (the think splitter's Prefill is
	// decided at the first); reasoningSeen: a reasoning piece came.
	contentSeen, reasoningSeen bool
	// wantLogprobs: the request asked for token logprobs (a stream that
	// ends without any says so: warnNoLogprobs); toolTextWarned: the text
	// held a DeepSeek tool-call control token (noteToolTokens).
	wantLogprobs, toolTextWarned bool
	// topTier: the tier came from a chunk's service_tier, which a usage
	// object's (Mistral's) does not override.
	topTier bool

	// think splits leading reasoning blocks off the content (provider.ThinkSplitter, p.think's dialect).
	think provider.ThinkSplitter

	// Tool calls: byIndex maps the wire index to the call currently at
	// that index (made at the first tool call); order holds all calls by
	// position.
	byIndex map[int]*callState
	order   []*callState

	// What the meta events already said.
	id, resolvedModel, fingerprint, tier string
	created                              int64
	// rare holds what few streams have (content filter verdicts,
	// annotations), made when the first arrives: the struct stays in its
	// size class (TestStreamHoldsLittle).
	rare         *rareState
	finish       string
	usageDetails provider.UsageDetails

	// prev holds the previous chunk's strings, which the next chunk
	// usually repeats (decodeChunkFast shares them).
	prev chunkStrings
	// cur is the chunk being decoded, and meta the meta event being
	// built for it; both are reused while they stay empty, so the
	// common chunk (one text delta) allocates only its event.
	cur  chatResponse
	meta *llmrelayv1.ResponseMeta
	dec  fastDecoder
}

// rareState is the part of a chat stream's state that few streams need.
type rareState struct {
	// upstream: the upstream provider last reported (OpenRouter's
	// "provider"); native: the upstream's own finish reason last
	// reported (its native_finish_reason).
	upstream, native string
	// promptFilter: Azure's prompt_filter_results last reported.
	promptFilter string
	// filter: Azure's content filter verdicts so far, by category.
	filter map[string]json.RawMessage
	// filterResult: the last content_filter_result (singular) reported.
	filterResult string
	// filterOffsets: the last content_filter_offsets reported.
	filterOffsets string
	// blocked: the first completion verdict that filtered something
	// (filterVerdict's summary); blockTold: the finish reason last
	// received was made content_filter; blockWarned: the warning was
	// given.
	blocked                string
	blockTold, blockWarned bool
	// annotations: the deltas' annotations so far, in order, each once;
	// annPending: some are not reported yet.
	annotations []json.RawMessage
	annPending  bool
	// reasoningText: the reasoning blocks (by index) that had text.
	reasoningText map[int]bool
	// ignoredChoices: the choices other than 0 already warned about (an
	// n>1 stream sends each of them in many chunks; one warning each).
	ignoredChoices map[int64]bool
	// groqIDRead: a chunk's x_groq.id was looked at (Groq sends it in the
	// first and last chunks).
	groqIDRead bool
	// sources: Perplexity's sources last reported (their JSON texts).
	sources string
	// seed, moderation: the seed and OpenAI's moderation results last
	// reported.
	seed, moderation string
	// stats: the serving statistics last reported, by their place in
	// ChunkExtras.serverStats.
	stats [numServerStats]string
	// legacyCall: the call of legacy function_call deltas.
	legacyCall *callState
	// oddUsage: the warnings already sent for usage fields that held no
	// count.
	oddUsage []string
	// phase is the text phase of the last content delta (the Vercel AI
	// Gateway's delta.phase: "commentary"; Part.phase), its text events'.
	phase string
	// textJoin, reasonJoin and refusalJoin hold the high half of a
	// surrogate pair a UTF-16 server cut off the end of a content,
	// reasoning or refusal delta, for the next delta
	// (provider.SurrogateJoin); rawReasoning is the current chunk's
	// reasoning and refusal tokens, read only when the chunk has a
	// surrogate escape (reasoningTokens).
	textJoin, reasonJoin, refusalJoin provider.SurrogateJoin
	rawReasoning                      []rawReasoning
	// thinkJoin holds a high half cut off the end of Mistral's thinking
	// text in a content array, detailJoin one cut off the end of a
	// reasoning_details entry's text (block detailIdx), for the next
	// delta's.
	thinkJoin, detailJoin provider.SurrogateJoin
	detailIdx             int
	// logprobs: choice 0's token logprobs so far (streamLogprobs);
	// reasoningLogprobs: those of its reasoning tokens (Cerebras's
	// reasoning_logprobs).
	logprobs, reasoningLogprobs streamLogprobs
	// audio: the audio output so far (audio.go).
	audio *audioState
	// messageWarned: a choice's whole message was read as a delta
	// (wholeMessage).
	messageWarned bool
	// holdCalls: a call came while the content was held as a possible
	// prefilled think block: the calls' events are held in heldCalls
	// (heldCallBytes of arguments) until a finish after the block, the
	// end or a failure (holdCall).
	holdCalls     bool
	heldCalls     []*provider.Event
	heldCallBytes int
	// toolTokenTail: the end of the last text delta that may begin a
	// DeepSeek tool-call control token (noteToolTokens).
	toolTokenTail string
}

// rawReasoning is the quoted tokens of a choice delta's reasoning and
// refusal strings (the fast decoder refuses their escapes, encoding/json
// decodes them with a cut pair's halves as U+FFFD).
type rawReasoning struct {
	Delta *struct {
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
		Refusal          json.RawMessage `json:"refusal"`
	} `json:"delta"`
}

// rareOf returns s.rare, made at the first use.
func (s *chatStream) rareOf() *rareState {
	if s.rare == nil {
		s.rare = &rareState{}
	}
	return s.rare
}

type callState struct {
	id string
	// sent is the id the server sent for the call ("" if none): the
	// call's key unless another call had it (open).
	sent     string
	pos      int
	fallback bool // id made up by the adapter
	named    bool
	// name is the function the call names (once named).
	name  string
	ended bool
	// high is the escape of a high surrogate that ended the last
	// fragment, held for the low half (provider/surrogate.go).
	high string
	// textAfter: content came after the call's last fragment, so the
	// call, if its arguments parse, is not the one an answer cut by the
	// token limit stopped in (endCalls; the unary answer reads its
	// content so: cutChatLastCall).
	textAfter bool
	// args is the arguments text so far: a named fragment after it is
	// whole is another call (startsAnother, whole).
	args *strings.Builder
	// scan follows args' nesting (argsScan): whole parses args only
	// when they are closed; parses counts the times it did (a test holds
	// them few).
	scan   argsScan
	parses int
}

// startsAnother reports whether a fragment without id that names a
// function, which would continue st by its index or position, is the
// start of another call: st has no id of its own, is named already and
// its arguments are a whole JSON object. Servers that send whole calls
// without ids at one index (or without index) would otherwise have their
// calls joined into one (`{"a":1}{"b":2}`); a server repeating the name
// on every fragment still continues a call whose arguments are partial.
//
// Only arguments ending in "}" can be whole: the others are not parsed,
// or a call whose every fragment repeats the name would have its whole
// text parsed again at each fragment (quadratic: 17 s for 160 KB sent in
// 4-byte fragments).
func (st *callState) startsAnother(name string) bool {
	return st.fallback && st.whole(name)
}

// whole reports whether a fragment naming a function (name) after st's
// fragments is another call: st is named already and its arguments are a
// whole JSON object. A fragment naming a known call by id at another index
// continues it unless so (call): two whole calls sent with one id are two
// calls, not one with `{"a":1}{"b":2}` (the later is re-keyed, as the
// unary answer re-keys it).
func (st *callState) whole(name string) bool {
	if name == "" || !st.named || st.args == nil || !st.scan.closed() {
		return false
	}
	args := strings.TrimRight(st.args.String(), " \t\r\n")
	if !strings.HasSuffix(args, "}") {
		return false
	}
	st.parses++
	return fold.ValidArguments(args)
}

// addArgs appends arguments text to the call's.
func (st *callState) addArgs(a string) {
	st.args.WriteString(a)
	st.scan.feed(a)
}

// argsScan follows the nesting of a call's arguments text as it grows:
// the brackets outside strings. A whole JSON object is closed (opened,
// back to depth 0, not in a string), so whole parses only closed text:
// once per call as a server sends it. Without it, a call whose every
// fragment names its id and function (repeatOf and call ask whole at
// each) and ends in "}" had its text parsed again at each fragment
// (quadratic: 4.6 s for 10,000 fragments, 100 KB).
type argsScan struct {
	depth              int
	opened, inStr, esc bool
	// broken: a closing bracket without its opening; no text that
	// continues it is a JSON object.
	broken bool
}

func (a *argsScan) feed(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if a.inStr {
			switch {
			case a.esc:
				a.esc = false
			case c == '\\':
				a.esc = true
			case c == '"':
				a.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			a.inStr = true
		case '{', '[':
			a.depth++
			a.opened = true
		case '}', ']':
			if a.depth--; a.depth < 0 {
				a.broken = true
			}
		}
	}
}

// closed reports whether the text could be a whole JSON value: it opened
// a bracket, closed every one it opened and ends outside a string.
func (a *argsScan) closed() bool { return a.opened && a.depth == 0 && !a.inStr && !a.broken }

func (p *Provider) newStream(resp *http.Response, model string, warnings []string, sec secrets) *chatStream {
	// The tool-call and content-filter maps are made when first needed:
	// most streams have neither, and an open stream should hold little.
	s := &chatStream{eventLoop: p.newEventLoop(resp, model, warnings, sec, "[DONE]"), think: provider.NewThinkSplitter(p.think)}
	s.eventLoop.handle = func(typ, data []byte) {
		if string(typ) == "error" {
			s.handleErrorEvent(data)
			return
		}
		s.mergeReasoningLogprobs(data)
		s.handle(data)
	}
	return s
}

// handleErrorEvent handles an event of type "error": a chunk with an
// "error" member (`event: error` then `data: {"error": ...}`) as any chunk,
// and otherwise the data as the error object itself, as llama.cpp's
// server sends it ("error: {"code":400,"message":...,"type":...}",
// testdata/dialect_llamacpp_stream_error_field.http). An error event is
// never an answer chunk.
func (s *chatStream) handleErrorEvent(data []byte) {
	t := bytes.TrimSpace(data)
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(t, &probe); err == nil && isPresent(probe.Error) {
		s.handle(t)
		return
	}
	e := s.p.errorFromObject(t, http.StatusOK, s.model, nil)
	if e.Message == "" {
		e.Message = "the server sent an error event: " + string(t)
	}
	withRouterRateLimit(e, t, s.header)
	s.p.inBand(e, s.header)
	s.sec.redactError(e)
	s.err = e
}

// Recv is the event loop's, what arrived before a failure relayed before
// the error (flushOnError).
func (s *chatStream) Recv() (*provider.Event, error) {
	ev, err := s.eventLoop.Recv()
	if err != nil && !s.closed && !errors.Is(err, io.EOF) && s.flushOnError() {
		return s.eventLoop.Recv()
	}
	return ev, err
}

// flushOnError queues, once the stream has failed, what it still held:
// the text a splitter held back (white space or a tag that might open a
// <think> block, the half of a surrogate pair), as an interrupted finish
// relays it, and the token logprobs gathered for the finish (the server
// merges a stream's meta events into the failure's meta, FailedCallMeta,
// where they stand beside the text already relayed). Dropped, the client
// would never see them. It reports whether it queued any. Not inlined
// into Recv, in whose frame an idle stream waits (server's
// TestIdleStreamStack).
//
//go:noinline
func (s *chatStream) flushOnError() bool {
	n := len(s.queue)
	s.flushHeld()
	s.flushThink()
	s.releaseCalls()
	s.flushLogprobs()
	return len(s.queue) > n
}

// end ends the stream: what a splitter or an open call still holds is
// reported.
func (s *chatStream) end() {
	s.done = true
	s.flushHeld()
	s.flushThink()
	s.releaseCalls()
	s.endCalls(cutBy(s.finish))
	s.flushAnnotations()
	s.flushAudio()
	s.flushLogprobs()
	if s.wantLogprobs && (s.rare == nil || !s.rare.logprobs.got) {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{warnNoLogprobs}}})
	}
}

// flatError is the error of a chunk that is a flat error object, as vLLM
// and Mistral write their error bodies ({"object": "error", "message": …,
// "type": …, "code": …}): object "error", or a message and a code with no
// object; nil for any other chunk. The caller has seen that it has no
// choices, usage or id.
func (s *chatStream) flatError(raw []byte, object string) *provider.Error {
	if object != "error" && object != "" {
		return nil
	}
	var f struct {
		Message json.RawMessage `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	if object == "" && (!isPresent(f.Message) || !isPresent(f.Code)) {
		return nil
	}
	return s.p.errorFromObject(raw, http.StatusOK, s.model, nil)
}

// handle converts one SSE data payload into queued events.
func (s *chatStream) handle(data []byte) {
	t := bytes.TrimSpace(data)
	if string(t) == "[DONE]" {
		s.end()
		return
	}
	if len(t) == 0 {
		return // an empty data line carries nothing
	}
	s.cur = chatResponse{Choices: s.cur.Choices[:0]} // the backing array is reused
	c := &s.cur
	var warn string
	defer func() {
		s.prev = chunkStrings{ID: c.ID, Object: c.Object, Model: c.Model, SystemFingerprint: c.SystemFingerprint, ServiceTier: c.ServiceTier}
		// The decoded chunk is handled: a stream waiting for its next
		// chunk keeps only the choices array, not the last delta.
		clear(c.Choices)
		*c = chatResponse{Choices: c.Choices[:0]}
	}()
	fast := decodeChunkFast(t, c, &s.prev, &s.dec)
	if !fast {
		*c = chatResponse{}
		var err error
		if warn, err = decodeLenient(t, c); err != nil {
			s.err = s.bad("invalid stream chunk: %v", err)
			return
		}
	}
	if s.rare != nil {
		clear(s.rare.rawReasoning)
		s.rare.rawReasoning = s.rare.rawReasoning[:0]
	}
	// The fast decoder refuses reasoning and refusal strings with escapes
	// or bytes that are not UTF-8: only a chunk it refused may have a
	// character cut at such a string's edge.
	if hasReasoningString(c) && (provider.HasSurrogateEscape(t) || (!fast && !utf8.Valid(t))) {
		s.reasoningTokens(t)
	}
	if sent(c.Error) {
		e := s.p.errorFromObject(c.Error, http.StatusOK, s.model, nil)
		if c.ChunkExtras != nil {
			// text-generation-inference's classification beside a string
			// error (testdata/real_hfhub_tgi_stream_validation_error.http).
			applyErrorType(e, c.ErrorType, true)
		}
		withRouterRateLimit(e, c.Error, s.header)
		s.p.inBand(e, s.header)
		s.sec.redactError(e)
		s.err = e
		return
	}
	if len(c.Choices) == 0 && c.Usage == nil && c.ID == "" {
		if e := s.flatError(t, c.Object); e != nil {
			// An error object without the "error" key in a 200 stream:
			// the unary path reads the same body as an error (bodyError);
			// skipped, it let the stream end as if complete.
			s.p.inBand(e, s.header)
			s.sec.redactError(e)
			s.err = e
			return
		}
	}
	if c.ChunkExtras != nil {
		if e := s.p.minimaxError(c.BaseResp, http.StatusOK); e != nil {
			// MiniMax's failure status in a chunk of a 200 stream.
			s.p.inBand(e, s.header)
			s.sec.redactError(e)
			s.err = e
			return
		}
	}
	if s.meta == nil {
		s.meta = &llmrelayv1.ResponseMeta{}
	}
	meta := s.meta
	if warn != "" {
		meta.Warnings = append(meta.Warnings, warn)
	}
	if c.ID != "" && c.ID != s.id {
		s.id, meta.ResponseId = c.ID, c.ID
	}
	if c.Model != "" && c.Model != s.resolvedModel {
		s.resolvedModel, meta.ResolvedModel = c.Model, c.Model
	}
	// The response's creation time is the first chunk's: xAI stamps every
	// chunk with the second it was sent (testdata/
	// real_lcg_function_call_streaming_xai_grok_4_5.http), which is no
	// new creation time. A placeholder chunk's created 0 is none.
	if c.Created > 0 && s.created == 0 {
		s.created = int64(c.Created)
		setCreated(meta, c.Created)
	}
	if c.SystemFingerprint != "" && c.SystemFingerprint != s.fingerprint {
		s.fingerprint = c.SystemFingerprint
		provider.SetExtended(meta, extSystemFingerprint, c.SystemFingerprint)
	}
	if c.Provider != "" {
		// OpenRouter names its upstream on every chunk: reported when it
		// changes, so once.
		if r := s.rareOf(); string(c.Provider) != r.upstream {
			r.upstream = string(c.Provider)
			provider.SetExtended(meta, extUpstreamProvider, validUTF8(r.upstream))
		}
	}
	if c.ServiceTier != "" && (c.ServiceTier != s.tier || !s.topTier) {
		s.tier, s.topTier = c.ServiceTier, true
		provider.SetExtended(meta, extServiceTier, c.ServiceTier)
	}
	if c.ChunkExtras != nil && c.XGroq != nil && c.XGroq.ID != "" {
		// Groq's request id in the body: the provider request id when no
		// header gave one (x-request-id holds the same id; a recording
		// without headers has only this: testdata/
		// real_oi_llama_index_groq_astream.http).
		if r := s.rareOf(); !r.groqIDRead {
			r.groqIDRead = true
			if s.p.requestID(s.header) == "" {
				meta.ProviderRequestId = strings.ToValidUTF8(c.XGroq.ID, "\uFFFD")
			}
		}
	}
	if x := c.ChunkExtras; x != nil && (isPresent(x.Citations) || isPresent(x.SearchResults) || isPresent(x.Images) || isPresent(x.RelatedQuestions)) {
		// Perplexity repeats its sources on every chunk: reported when
		// they change.
		key := string(x.Citations) + "\x00" + string(x.SearchResults) + "\x00" + string(x.Images) + "\x00" + string(x.RelatedQuestions)
		if r := s.rareOf(); key != r.sources {
			r.sources = key
			setSources(meta, x)
		}
	}
	if x := c.ChunkExtras; x != nil {
		s.noteServerStats(x, meta)
	}
	if x := c.ChunkExtras; x != nil && x.XGroq != nil {
		s.noteSeed(meta, x.XGroq.Seed)
	}
	if x := c.ChunkExtras; x != nil && isPresent(x.Moderation) {
		if r := s.rareOf(); string(x.Moderation) != r.moderation {
			r.moderation = string(x.Moderation)
			setExtendedJSON(meta, extModeration, x.Moderation)
		}
	}
	if pf := c.promptFilter(); pf != nil && string(pf) != s.rareOf().promptFilter {
		s.rare.promptFilter = string(pf)
		setExtendedJSON(meta, extPromptFilterResults, pf)
		meta.Warnings = append(meta.Warnings, promptFilterErrors(pf)...)
	}
	metaAt := len(s.queue)
	var finishMeta *llmrelayv1.ResponseMeta
	var cut *provider.Error
	native := ""
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			if r := s.rareOf(); !r.ignoredChoices[int64(ch.Index)] {
				if r.ignoredChoices == nil {
					r.ignoredChoices = make(map[int64]bool)
				}
				r.ignoredChoices[int64(ch.Index)] = true
				meta.Warnings = append(meta.Warnings, fmt.Sprintf("ignored choice %d (only choice 0 is read)", ch.Index))
			}
			continue
		}
		d := ch.Delta
		if d == nil && ch.Message != nil {
			d = s.wholeMessage(ch.Message, meta)
		}
		if d != nil {
			s.delta(d, meta, s.rawReasoningAt(i))
			if s.err != nil {
				return
			}
		}
		if sent(ch.ContentFilterResults) || sent(ch.ContentFilterOffsets) {
			s.noteContentFilter(ch, meta)
		}
		if sent(ch.Logprobs) {
			s.rareOf().logprobs.merge(ch.Logprobs, meta)
		}
		if sent(ch.StopReason) || sent(ch.MatchedStop) {
			// What ended the answer (vLLM's stop_reason, SGLang's
			// matched_stop), sent with the finish reason.
			setStopMatch(meta, ch.StopReason, ch.MatchedStop)
		}
		if sent(ch.Seed) {
			s.noteSeed(meta, ch.Seed)
		}
		if sent(ch.ContentFilterResult) {
			if r := s.rareOf(); string(ch.ContentFilterResult) != r.filterResult {
				r.filterResult = string(ch.ContentFilterResult)
				setContentFilterResult(meta, ch.ContentFilterResult)
			}
		}
		if n := ch.NativeFinishReason; n != nil && *n != "" && string(*n) != s.rareOf().native {
			// OpenRouter's upstream finish reason, with the finish
			// reason (and again on the chunk carrying the usage):
			// reported when it changes, so once.
			s.rare.native, native = string(*n), string(*n)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			if s.finishSeen && string(*ch.FinishReason) == s.finish {
				// The same finish again (OpenRouter repeats it on the
				// chunk carrying the usage: testdata/
				// real_oi_agno_openrouter_cost_stream.http) says nothing
				// new; reported once.
				continue
			}
			s.finish, s.finishSeen = string(*ch.FinishReason), true
			if e := s.p.interrupted(s.finish, ch.Error); e != nil {
				// The server broke the answer off: the stream fails after
				// what this chunk carries (its usage included).
				s.p.inBand(e, s.header)
				cut = e
				continue
			}
			finishMeta = &llmrelayv1.ResponseMeta{
				ProviderFinishReason: s.finish,
				FinishReason:         provider.ToolCallsFinish(mapFinishReason(s.finish), len(s.order)),
			}
			s.tellBlock(finishMeta, true)
		}
	}
	if cut == nil && finishMeta == nil && s.finishSeen {
		// A verdict after the model's finish (Azure's asynchronous
		// filter annotates the answer after its stop).
		s.tellBlock(meta, false)
	}
	if native != "" {
		// With the finish reason it came with; alone (an interrupted
		// answer: no finish event) in the chunk's meta.
		m := finishMeta
		if m == nil {
			m = meta
		}
		provider.SetExtended(m, extNativeFinishReason, validUTF8(native))
	}
	if proto.Size(meta) > 0 {
		s.meta = nil // handed over with the event
		// Insert before this chunk's content events.
		s.queue = append(s.queue, nil)
		copy(s.queue[metaAt+1:], s.queue[metaAt:])
		s.queue[metaAt] = &provider.Event{Kind: provider.EventMeta, Meta: meta}
	}
	if finishMeta != nil {
		s.flushHeld()
		s.finishThink()
		s.flushAnnotations()
		s.flushAudio()
		s.flushLogprobs()
		if cut := cutBy(s.finish); cut != "" {
			// The relay completes the calls still open when a finish
			// reason arrives, as whole: the call the token limit cut
			// ends (as cut) before it.
			s.endCalls(cut)
		}
		// Held after the calls when they are held (finishThink).
		s.pushCall(&provider.Event{Kind: provider.EventMeta, Meta: finishMeta})
		s.endCalls(cutBy(s.finish))
	}
	if u := c.usage(); u != nil {
		u.reasoningApart = s.p.perplexity
		s.push(&provider.Event{Kind: provider.EventUsage, Usage: normalizeUsage(u)})
		// A usage object with or after the finish reason is the end of
		// a complete answer, which Cerebras sends without [DONE]; a
		// stream cut before the finish, or after it but before the usage
		// (OpenAI sends the usage in a chunk of its own), stays an error.
		s.completeAtEOF = s.completeAtEOF || s.finishSeen
		// A later usage object replaces an earlier one (Mistral sends one
		// on an intermediate chunk, then the final one): its details do
		// too, whole, so no key of the earlier object outlives it. Metas
		// are merged key by key in meta.extended, so the replacement is
		// sent whole, and an object with no details clears the earlier
		// ones with an empty usage_details.
		m := &llmrelayv1.ResponseMeta{}
		d, odd := usageDetailsAndOdd(u)
		for _, w := range odd {
			if r := s.rareOf(); !slices.Contains(r.oddUsage, w) {
				r.oddUsage = append(r.oddUsage, w)
				m.Warnings = append(m.Warnings, w)
			}
		}
		if !maps.EqualFunc(d, s.usageDetails, reflect.DeepEqual) {
			if len(d) == 0 {
				provider.SetExtended(m, provider.ExtUsageDetails, map[string]any{})
			} else {
				d.Set(m)
			}
			s.usageDetails = d
		}
		if t := usageServiceTier(d); t != "" && t != s.tier && !s.topTier {
			s.tier = t
			provider.SetExtended(m, extServiceTier, t)
		}
		if proto.Size(m) > 0 {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: m})
		}
	}
	if cut != nil {
		s.flushHeld()
		s.flushThink() // what was said before the cut is relayed
		s.releaseCalls()
		s.err = cut
	}
}

// noteBlock keeps the first completion verdict that filtered something.
// A verdict without "true" filtered nothing (the common "safe" verdict of
// every chunk is not decoded).
func (s *chatStream) noteBlock(raw json.RawMessage) {
	if s.rare != nil && s.rare.blocked != "" || !bytes.Contains(raw, []byte("true")) {
		return
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	if verdict := filterVerdict(v); verdict != "" {
		s.rareOf().blocked = verdict
	}
}

// tellBlock makes the finish reason content_filter when Azure's content
// filter blocked the answer and the finish says otherwise (newFinish: m
// carries a finish just received; else m is a later chunk's meta, and the
// finish received earlier is made content_filter once). Once blocked, an
// answer stays blocked whatever finish follows.
// With the asynchronous filter the answer streams unvetted and the
// verdicts follow it: a block found after the model's stop is an
// annotation with filtered true and no finish reason, then the usage and
// [DONE] (testdata/real_svir_azure_async_flagged_stream.http); the answer
// was reported as complete. The model's finish stays in
// provider_finish_reason.
func (s *chatStream) tellBlock(m *llmrelayv1.ResponseMeta, newFinish bool) {
	r := s.rare
	if r == nil || r.blocked == "" || mapFinishReason(s.finish) == llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER {
		return
	}
	if !newFinish && r.blockTold {
		return // this finish was already made content_filter
	}
	r.blockTold = true
	m.FinishReason = llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	if !r.blockWarned {
		r.blockWarned = true
		m.Warnings = append(m.Warnings, fmt.Sprintf("Azure's content filter blocked the answer (filtered: %s) after it was streamed; the model finished %q", r.blocked, s.finish))
	}
}

// noteServerStats reports the serving statistics of a chunk (Cerebras's
// time_info, llama.cpp's timings, LM Studio's stats, model_info and
// runtime, Fireworks' perf_metrics, Groq's usage_breakdown, Venice's
// cost, Azure's latency_checkpoint and routing), on the last chunk: each when it
// changes. Not inlined: its locals would grow handle's frame, which every
// stream's stack holds at its deepest (server's TestIdleStreamStack).
//
//go:noinline
func (s *chatStream) noteServerStats(x *ChunkExtras, meta *llmrelayv1.ResponseMeta) {
	for i, f := range x.serverStats() {
		if !isPresent(f.raw) {
			continue
		}
		if r := s.rareOf(); string(f.raw) != r.stats[i] {
			r.stats[i] = string(f.raw)
			setExtendedJSON(meta, f.key, f.raw)
		}
	}
}

// noteContentFilter reads a choice's Azure content filter annotation: its
// verdicts (merged with the earlier ones, mergeContentFilter; a block
// noted, noteBlock) and the range of the answer they are for
// (content_filter_offsets: reported when it changes, and the blocking
// verdict's range once). Not inlined, as noteServerStats.
//
//go:noinline
func (s *chatStream) noteContentFilter(ch *chatChoice, meta *llmrelayv1.ResponseMeta) {
	if sent(ch.ContentFilterResults) {
		blockedBefore := s.rare != nil && s.rare.blocked != ""
		s.mergeContentFilter(ch.ContentFilterResults, meta)
		s.noteBlock(ch.ContentFilterResults)
		if !blockedBefore && s.rare != nil && s.rare.blocked != "" && sent(ch.ContentFilterOffsets) {
			// The range of the answer the blocking verdict is for.
			setExtendedJSON(meta, extContentFilterBlockedOffsets, ch.ContentFilterOffsets)
		}
	}
	if sent(ch.ContentFilterOffsets) {
		if r := s.rareOf(); string(ch.ContentFilterOffsets) != r.filterOffsets {
			r.filterOffsets = string(ch.ContentFilterOffsets)
			setExtendedJSON(meta, extContentFilterOffsets, ch.ContentFilterOffsets)
		}
	}
}

// mergeContentFilter merges one chunk's Azure content_filter_results into
// the verdicts so far, category by category (Azure annotates each chunk
// with some categories only), and reports the merged verdicts when they
// changed.
func (s *chatStream) mergeContentFilter(raw json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		meta.Warnings = append(meta.Warnings, "content_filter_results is not an object; ignored")
		return
	}
	r := s.rareOf()
	changed := false
	for k, v := range m {
		if old, ok := r.filter[k]; ok && bytes.Equal(old, v) {
			continue
		}
		if _, ok := r.filter[k]; !ok && len(r.filter) >= maxFilterCategories {
			meta.Warnings = append(meta.Warnings, "too many content filter categories; "+k+" ignored")
			continue
		}
		if r.filter == nil {
			r.filter = make(map[string]json.RawMessage)
		}
		r.filter[k] = append(json.RawMessage(nil), v...)
		changed = true
		if k == "error" {
			// The filter did not run (filterError); told when the
			// error changes, not for every chunk that repeats it.
			if w := filterError(raw, "answer"); w != "" {
				meta.Warnings = append(meta.Warnings, w)
			}
		}
	}
	if !changed {
		return
	}
	merged, err := json.Marshal(r.filter) // sorted keys
	if err != nil {
		meta.Warnings = append(meta.Warnings, "content_filter_results: "+err.Error())
		return
	}
	setExtendedJSON(meta, extContentFilterResults, merged)
}

// mergeAnnotations adds one delta's annotations to those of the earlier
// deltas (a server sends each citation once, or repeats the list: an
// annotation already received is not added again). The whole list is
// reported by flushAnnotations at the finish and at [DONE], not after
// every delta: meta.extended keys are replaced whole, and a list re-sent
// per delta would grow quadratically.
func (s *chatStream) mergeAnnotations(raw json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	anns, warn := annotationList(raw)
	if warn != "" {
		if !s.annWarned {
			s.annWarned = true
			meta.Warnings = append(meta.Warnings, warn)
		}
		return
	}
	r := s.rareOf()
next:
	for _, a := range anns {
		a = bytes.TrimSpace(a)
		for _, old := range r.annotations {
			if bytes.Equal(old, a) {
				continue next
			}
		}
		if len(r.annotations) >= maxAnnotations {
			if !s.annWarned {
				s.annWarned = true
				meta.Warnings = append(meta.Warnings, fmt.Sprintf("more than %d annotations; the rest ignored", maxAnnotations))
			}
			break
		}
		r.annotations = append(r.annotations, append(json.RawMessage(nil), a...))
		r.annPending = true
	}
}

// flushAnnotations reports the annotations received so far when some
// were not reported yet.
func (s *chatStream) flushAnnotations() {
	if s.rare == nil || !s.rare.annPending {
		return
	}
	s.rare.annPending = false
	meta := &llmrelayv1.ResponseMeta{}
	merged, err := json.Marshal(s.rare.annotations)
	if err != nil {
		meta.Warnings = append(meta.Warnings, "annotations: "+err.Error())
	} else {
		setExtendedJSON(meta, extAnnotations, merged)
	}
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
}

// noteSeed reports a seed (seedText) when it differs from the last one.
func (s *chatStream) noteSeed(meta *llmrelayv1.ResponseMeta, raw json.RawMessage) {
	if !isPresent(raw) {
		return
	}
	if t := seedText(raw); t != "" && t != s.rareOf().seed {
		s.rare.seed = t
		provider.SetExtended(meta, extSeed, t)
	}
}

// streamLogprobs gathers a stream's token logprobs: each chunk's choice
// carries those of its own tokens ({"content": [...], "refusal": [...]},
// either null), and a unary answer carries all of them in one object of
// the same shape, which meta.extended["logprobs"] relays. The stream's
// lists are joined and reported whole, as that one object, at the finish
// and at the end (testdata/real_oljs_openai_logprobs_stream.http); before
// this, streamed logprobs were read and dropped. Together streams the
// completions API's shape instead ({"tokens": [...], "token_logprobs":
// [...], "top_logprobs": [[{token, logprob}, …]]} per chunk, where its
// unary answer has the chat shape:
// testdata/real_maruel_together_qwen_logprobs_stream.http): its lists are
// joined the same way, key by key, into one object of that shape; they
// were dropped with a warning.
type streamLogprobs struct {
	// entries: the lists' entries so far, joined
	// (logprobBudget.joinEntries), in the order of the shape's keys
	// (logprobKeys or completionLogprobKeys); saw: a chunk had the key
	// (null or a list); list: a list (maybe empty) was received.
	entries   [4]bytes.Buffer
	saw, list [4]bool
	// completion: the stream's logprobs have the completions API's keys;
	// shaped: a chunk with keys fixed which shape.
	completion, shaped bool
	pending            bool
	// got: a chunk had a logprobs object.
	got bool
	logprobBudget
}

// logprobKeys are the keys of a chat logprobs object, in the order of
// streamLogprobs' lists.
var logprobKeys = []string{"content", "refusal"}

// completionLogprobKeys are the keys of a completions API logprobs
// object, in the order of streamLogprobs' lists.
var completionLogprobKeys = []string{"tokens", "token_logprobs", "top_logprobs", "text_offset"}

// keys are the keys of the stream's logprobs shape.
func (l *streamLogprobs) keys() []string {
	if l.completion {
		return completionLogprobKeys
	}
	return logprobKeys
}

// logprobKeyIndex is the index of key in keys, -1 when it is not one.
func logprobKeyIndex(keys []string, key string) int {
	for i, k := range keys {
		if k == key {
			return i
		}
	}
	return -1
}

// merge adds one chunk's logprobs to the lists. Another shape (a key of
// neither shape, keys of both, a shape other than the earlier chunks', a
// value neither a list nor null) is dropped with one warning.
func (l *streamLogprobs) merge(raw json.RawMessage, meta *llmrelayv1.ResponseMeta) {
	l.got = true
	var obj map[string]json.RawMessage
	var lists [4][]json.RawMessage
	var has, null [4]bool
	ok := json.Unmarshal(raw, &obj) == nil && obj != nil
	completion := l.completion
	if ok && len(obj) > 0 {
		chat, legacy := false, false
		for k := range obj {
			chat = chat || logprobKeyIndex(logprobKeys, k) >= 0
			legacy = legacy || logprobKeyIndex(completionLogprobKeys, k) >= 0
		}
		completion = legacy && !chat
		ok = !(chat && legacy) && (!l.shaped || completion == l.completion)
	}
	keys := logprobKeys
	if completion {
		keys = completionLogprobKeys
	}
	for k, v := range obj {
		if !ok {
			break
		}
		i := logprobKeyIndex(keys, k)
		if i < 0 || json.Unmarshal(v, &lists[i]) != nil {
			ok = false
			break
		}
		has[i], null[i] = true, !isPresent(v)
	}
	if !ok {
		l.warn(meta, "streamed logprobs in a shape other than {content, refusal} or {tokens, token_logprobs, top_logprobs, text_offset} lists dropped")
		return
	}
	if len(obj) > 0 {
		l.completion, l.shaped = completion, true
	}
	for i := range keys {
		if !has[i] {
			continue
		}
		if !l.saw[i] {
			l.saw[i], l.pending = true, true
		}
		if null[i] {
			continue
		}
		l.list[i], l.pending = true, true
		if !l.joinEntries(&l.entries[i], lists[i], meta) {
			return
		}
	}
}

// mergeReasoningLogprobs adds a chunk's reasoning_logprobs (choice 0's):
// Cerebras streams the logprobs of gpt-oss's reasoning tokens in the chat
// logprobs shape beside the delta's reasoning, each chunk those of its own
// tokens (testdata/real_maruel_cerebras_oss_logprobs_stream.http); they
// were dropped unsaid. Read apart from the chunk's decoding (chatChoice has
// no field for them: reasoningLogprobs), only from a chunk that names
// them, and reported as the unary answer's are, in
// meta.extended["reasoning_logprobs"]. Called before the chunk is handled
// (so that a finish in it reports them), not from handle, whose frame an
// idle stream's stack keeps (server's TestIdleStreamStack).
//
//go:noinline
func (s *chatStream) mergeReasoningLogprobs(chunk []byte) {
	if !bytes.Contains(chunk, []byte(`"reasoning_logprobs"`)) {
		return
	}
	if rl := reasoningLogprobs(bytes.TrimSpace(chunk)); isPresent(rl) {
		meta := &llmrelayv1.ResponseMeta{}
		s.rareOf().reasoningLogprobs.merge(rl, meta)
		if len(meta.Warnings) > 0 {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
		}
	}
}

// flushLogprobs reports the logprobs (and reasoning logprobs) received so
// far, whole, when some were not reported yet.
func (s *chatStream) flushLogprobs() {
	if s.rare == nil || (!s.rare.logprobs.pending && !s.rare.reasoningLogprobs.pending) {
		return
	}
	s.pushLogprobs()
}

// pushLogprobs reports the pending logprobs (flushLogprobs), in a frame of
// its own: the idle stream's stack does not pay for it.
//
//go:noinline
func (s *chatStream) pushLogprobs() {
	meta := &llmrelayv1.ResponseMeta{}
	s.rare.logprobs.flush(meta, extLogprobs)
	s.rare.reasoningLogprobs.flush(meta, extReasoningLogprobs)
	if len(meta.GetExtended().GetFields()) > 0 {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
}

// flush sets the lists received so far, whole, as meta.extended[key] when
// some were not reported yet.
func (l *streamLogprobs) flush(meta *llmrelayv1.ResponseMeta, key string) {
	if !l.pending {
		return
	}
	l.pending = false
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range l.keys() {
		if !l.saw[i] {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + k + `":`)
		if !l.list[i] {
			b.WriteString("null")
			continue
		}
		writeList(&b, &l.entries[i])
	}
	b.WriteByte('}')
	setExtendedJSON(meta, key, b.Bytes())
}

// markReasoning notes the reasoning blocks that have text. An encrypted
// piece of such a block is its signature, not a redacted block:
// OpenRouter relaying Gemini sends the thought text of index 0, then a
// reasoning.encrypted detail at the same index (the thought signature,
// with the id of the call it belongs to), whose text was not withheld.
func (s *chatStream) markReasoning(p *provider.ReasoningDelta) {
	if p.Text == "" && (!p.Redacted || s.rare == nil) {
		return
	}
	r := s.rareOf()
	if p.Text != "" {
		if r.reasoningText == nil {
			r.reasoningText = map[int]bool{}
		}
		r.reasoningText[p.Index] = true
	} else if r.reasoningText[p.Index] {
		p.Redacted = false
	}
}

// delta queues the events of one choice delta; raw holds the quoted
// tokens of its reasoning strings when the chunk had a surrogate escape.
func (s *chatStream) delta(d *respMessage, meta *llmrelayv1.ResponseMeta, raw *rawReasoning) {
	if r := s.rare; r != nil {
		// A half held from the previous delta that this one does not
		// continue with a string is what it decodes to alone, before
		// what this delta says.
		if (d.ReasoningContent == nil && d.Reasoning == nil) || isPresent(d.ReasoningDetails) {
			s.flushReasoning()
		}
		if !isPresent(d.ReasoningDetails) {
			s.flushDetail()
		}
		thinking := mayHoldThinking(d.Content)
		if !thinking {
			s.flushThinking()
		}
		if len(d.Content) == 0 || (d.Content[0] != '"' && (!isContentArray(d.Content) || thinking)) {
			// A content array continues the text only with its text
			// parts alone (a thinking part's reasoning would come
			// before the released half).
			s.flushText()
		}
		if d.Refusal == nil {
			s.flushRefusal()
		}
	}
	s.joinReasoning(d, raw)
	if isPresent(d.ProviderMetadata) {
		// The Vercel AI Gateway names the provider that served the call
		// on the finish chunk (testdata/real_vercelgw_chat_muse_tool_stream_1.http).
		up, cost := provider.VercelGateway(d.ProviderMetadata)
		if up != "" {
			if r := s.rareOf(); up != r.upstream {
				r.upstream = up
				provider.SetExtended(meta, extUpstreamProvider, up)
			}
		}
		if cost != "" {
			provider.SetExtended(meta, extGatewayCost, cost)
		}
	}
	if isPresent(d.ExecutedTools) && !s.executedWarned {
		s.executedWarned = true
		meta.Warnings = append(meta.Warnings, warnExecutedTools)
	}
	if isPresent(d.Annotations) {
		s.mergeAnnotations(d.Annotations, meta)
	}
	images, w := imageItems(d.Images)
	if w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	if isPresent(d.Audio) {
		s.noteAudio(d.Audio, meta)
	}
	if d.ReasoningContent != nil || d.Reasoning != nil || d.ReasoningDetails != nil || d.ThoughtSignature != "" || d.ReasoningText != nil || d.ReasoningOpaque != "" || isContentArray(d.Content) {
		pieces, from, warns := reasoningPiecesFrom(d)
		meta.Warnings = append(meta.Warnings, warns...)
		if s.rare != nil || provider.MayCutCharacter(d.ReasoningDetails) || (isContentArray(d.Content) && provider.MayCutCharacter(d.Content)) {
			pieces = s.joinPieces(d, pieces, from)
		}
		if len(pieces) > 0 {
			// Content held back (whitespace that might open a <think>
			// block) came before this reasoning: it goes first, in the
			// order sent (Z.ai sends "\n" before and after its
			// reasoning_content: testdata/real_fantasy_zai_glm_4_5_thinking_stream.http).
			s.flushThink()
		}
		for _, p := range pieces {
			s.markReasoning(&p)
			s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: p})
		}
		s.reasoningSeen = s.reasoningSeen || len(pieces) > 0
	}
	text, refusal, ok := contentText(d.Content)
	if !ok {
		meta.Warnings = append(meta.Warnings, "delta content has an unrecognized shape; kept as JSON text")
	}
	if len(d.Content) > 0 && d.Content[0] == '"' && (s.rare != nil || provider.MayCutCharacter(d.Content)) {
		text = s.rareOf().textJoin.Text(text, d.Content)
	} else if isContentArray(d.Content) && (s.rare != nil || provider.MayCutCharacter(d.Content)) {
		tok, _ := contentTokens(d.Content)
		text = s.rareOf().textJoin.Text(text, tok)
	}
	if text != "" {
		if !s.contentSeen {
			s.prefill()
		}
		if d.Phase != "" || (s.rare != nil && s.rare.phase != "") {
			s.rareOf().phase = validUTF8(d.Phase)
		}
		s.noteToolTokens(text, meta)
		s.pushThink(s.think.Content(text))
		if s.think.PrefillBoundPassed() {
			meta.Warnings = append(meta.Warnings, warnPrefillBound)
		}
		if n := len(s.order); n > 0 {
			s.order[n-1].textAfter = true
		}
	}
	if d.Refusal != nil {
		var tok json.RawMessage
		if raw != nil && raw.Delta != nil {
			tok = raw.Delta.Refusal
		}
		if s.rare != nil || tok != nil {
			refusal += s.rareOf().refusalJoin.Text(*d.Refusal, tok)
		} else {
			refusal += *d.Refusal
		}
	}
	if refusal != "" {
		s.push(&provider.Event{Kind: provider.EventRefusal, Text: refusal})
	}
	if len(images) > 0 {
		// After the text (held content included), before the calls, as
		// the unary answer has them.
		s.beforeCalls()
		for _, it := range images {
			s.pushCall(&provider.Event{Kind: provider.EventProviderItem, Item: it})
		}
	}
	// A delta with several calls that have neither index nor id continues
	// the last as many calls, by position (Moonshot sends its parallel
	// calls so: testdata/real_moonshot_indexless_tool_calls_stream.http);
	// a lone one continues the last call.
	base := len(s.order) - len(d.ToolCalls)
	if len(d.ToolCalls) > 0 {
		// Content held back came before the calls: it goes first (it
		// was released after them, at the finish).
		s.beforeCalls()
	}
	for i, tc := range d.ToolCalls {
		index := -1
		if tc.Index != nil && *tc.Index >= 0 {
			index = int(*tc.Index)
		}
		var st *callState
		id := string(tc.ID)
		// named: the function a fragment with an id names, unless it only
		// restates its own call's id and name (no arguments but white
		// space, at that call's index: restates): only a naming fragment
		// after a call's arguments are whole can be another call (whole).
		// A call opened with a reused id at another index names its
		// function with empty arguments as any first fragment does.
		named := ""
		if fragmentName(&tc) == "" && tc.Function != nil {
			var pos *callState
			if index < 0 && id == "" && len(d.ToolCalls) > 1 && base >= 0 {
				pos = s.order[base+i]
			}
			if c := s.namelessRepeatOf(index, id, fragmentArgs(&tc), pos); c != nil {
				meta.Warnings = append(meta.Warnings, repeatWarning(c.id))
				continue
			}
		}
		if name := fragmentName(&tc); id != "" && name != "" {
			args := fragmentArgs(&tc)
			if c := s.repeatOf(&tc, id, name, args); c != nil {
				meta.Warnings = append(meta.Warnings, repeatWarning(c.id))
				continue
			}
			if strings.TrimSpace(args) != "" || !s.restates(index, id, name) {
				named = name
			}
		}
		if index < 0 && id == "" && len(d.ToolCalls) > 1 && base >= 0 && !s.order[base+i].ended {
			st = s.order[base+i]
		} else if st = s.call(index, id, named, meta); st == nil {
			return // s.err is set
		}
		if id == "" && st.startsAnother(fragmentName(&tc)) {
			if st = s.open(st, index, "", meta); st == nil {
				return // s.err is set
			}
		}
		if index < 0 && id != "" {
			// A call named by id without an index takes its position in
			// the delta as index, for later fragments that give one
			// (testdata/real_moonshot_tool_calls_stream.http).
			if s.byIndex == nil {
				s.byIndex = make(map[int]*callState)
			}
			if _, taken := s.byIndex[i]; !taken {
				s.byIndex[i] = st
			}
		}
		var name, args string
		switch {
		case tc.Function != nil:
			name, args = tc.Function.Name, st.arguments(tc.Function)
		case tc.Custom != nil:
			name, args = tc.Custom.Name, tc.Custom.Input
		}
		if st.args != nil {
			st.addArgs(args)
		}
		st.textAfter = false
		ev := provider.ToolCallDelta{CallID: st.id, Index: st.pos, Arguments: args, Signature: tc.signature()}
		if !st.named && name != "" {
			ev.Name, st.named, st.name = name, true, name
		}
		if ev.Name == "" && ev.Arguments == "" && ev.Signature == "" && st.named {
			continue
		}
		s.pushCall(&provider.Event{Kind: provider.EventToolCall, ToolCall: ev})
	}
	if d.FunctionCall != nil {
		s.functionCall(d.FunctionCall, meta)
	}
}

// wholeMessage is the delta of a choice that carries a whole message and
// no delta: servers that do not stream answer a stream request with the
// chat.completion object as one event (`data: {…"message": {…}}` then
// [DONE]; Amm1rr/WebAI-to-API#55, and the clients that read `delta ??
// message` for it). The message is read as one delta holding all of it
// (text, reasoning, calls with their ids, refusal); before, the answer was
// empty and marked STOP. Said once in a warning: a server that sent the
// message again, whole, in later chunks would have its text repeated. A
// choice with both (Perplexity sends the message so far beside each
// delta) is read by its delta. Not inlined: rare, and handle's frame is
// the idle stream's (server's TestIdleStreamStack).
//
//go:noinline
func (s *chatStream) wholeMessage(m *respMessage, meta *llmrelayv1.ResponseMeta) *respMessage {
	if r := s.rareOf(); !r.messageWarned {
		r.messageWarned = true
		meta.Warnings = append(meta.Warnings, warnWholeMessage)
	}
	return m
}

// warnWholeMessage says a stream chunk's choice had a whole message
// instead of a delta.
const warnWholeMessage = "a stream chunk carried a whole message instead of a delta; read as one delta"

// prefill decides, at the stream's first content, whether its content
// may be a prefilled think block, as the unary answer decides it
// (prefilledThink): the answer's model says Thinking and no reasoning
// came before. Such content is held back until its "</think>"
// (provider.ThinkSplitter.Prefill): Together streams Qwen3's Thinking
// models' reasoning as content with no opening tag (testdata/
// real_maruel_together_qwen_thinking_sqrt_stream_1.http), which was
// relayed as the answer's text where the unary answer has it as
// reasoning. Apart from delta, whose frame an idle stream's stack keeps
// (server's TestIdleStreamStack).
//
//go:noinline
func (s *chatStream) prefill() {
	s.contentSeen = true
	if !s.reasoningSeen && thinkingModel(s.resolvedModel) {
		s.think.Prefill(maxPrefilledHold)
	}
}

// functionCall queues a legacy function_call delta, the answer to a
// request with "functions" (Azure's 2023 API versions stream it:
// testdata/real_azsdk_streaming_function_call.http): one call without an
// id, named in its first delta, its arguments in fragments. It is keyed
// as the unary answer keys it.
func (s *chatStream) functionCall(fc *respFunction, meta *llmrelayv1.ResponseMeta) {
	r := s.rareOf()
	st := r.legacyCall
	if st == nil {
		if len(s.order) >= maxStreamToolCalls {
			s.err = s.bad("more than %d tool calls in one response", maxStreamToolCalls)
			return
		}
		// Content held back came before the call: it goes first.
		s.beforeCalls()
		st = &callState{pos: len(s.order), fallback: true, args: &strings.Builder{}}
		st.id = provider.MadeCallID(st.pos, s.idTaken)
		meta.Warnings = append(meta.Warnings, "legacy function_call without an id; keyed as "+st.id)
		s.order = append(s.order, st)
		r.legacyCall = st
	}
	ev := provider.ToolCallDelta{CallID: st.id, Index: st.pos, Arguments: st.arguments(fc)}
	st.addArgs(ev.Arguments)
	st.textAfter = false
	if !st.named && fc.Name != "" {
		ev.Name, st.named = fc.Name, true
	}
	if ev.Name == "" && ev.Arguments == "" {
		return
	}
	s.pushCall(&provider.Event{Kind: provider.EventToolCall, ToolCall: ev})
}

// repeatOf is the call a fragment sends again whole: a call the server
// sent with the fragment's id, named name, whose arguments are whole and
// the same JSON as the fragment's (args). Some servers send a streamed
// call whole again, at its index or at another (LiteLLM's proxy appends a
// summary chunk, BerriAI/litellm#20480; LocalAI repeats a call at other
// indexes, mudler/LocalAI#9722): the repeat is no second call, which
// could not be answered apart from the first (a tool result names its
// call by id). Anything else sent with a known id after its call is
// whole (another name, other arguments) is a second call, re-keyed
// (call). nil when the fragment repeats no call.
func (s *chatStream) repeatOf(tc *respToolCall, id, name, args string) *callState {
	if args == "" || tc.Function == nil {
		return nil
	}
	for _, c := range s.order {
		if c.sent != id || c.name != name || !c.whole(name) {
			continue
		}
		if prev := c.args.String(); args == prev || provider.SameJSON([]byte(args), []byte(prev)) {
			return c
		}
	}
	return nil
}

// namelessRepeatOf is the call a fragment without a name sends again
// whole: the call it would continue (pos, the call at its place in a
// delta of calls without index or id; else the call sent with its id,
// the one at its index, or the last; at an index no call has, any call),
// whose arguments are a whole JSON object, the same JSON as the
// fragment's (args). Some servers send a
// streamed call's whole arguments again in a later chunk without the
// name; joined, the call's arguments were `{"a":1}{"a":1}`, not valid.
// The fragment is compared only when the call's text is at most about
// twice its length, so a stream of small fragments after a whole call
// costs no more than its bytes. nil when the fragment repeats no call.
func (s *chatStream) namelessRepeatOf(index int, id, args string, pos *callState) *callState {
	a := strings.TrimSpace(args)
	if !strings.HasPrefix(a, "{") {
		return nil
	}
	c := pos
	switch {
	case c != nil:
	case id != "":
		c = s.bySent(id)
		if x := s.byIndex[index]; index >= 0 && x != nil && x.sent == id {
			c = x
		}
	case index >= 0:
		if c = s.byIndex[index]; c == nil {
			// At an index no call has: the repeat of a call sent at
			// another (LocalAI repeats calls at other indexes,
			// mudler/LocalAI#9722), else the start of a call.
			for _, o := range s.order {
				if sameWhole(o, a) {
					return o
				}
			}
			return nil
		}
	case len(s.order) > 0:
		c = s.order[len(s.order)-1]
	}
	if c == nil || !sameWhole(c, a) {
		return nil
	}
	return c
}

// sameWhole reports whether call c is named, its arguments a whole JSON
// value the same as a (trimmed). Only a text at most about twice a's
// length is compared.
func sameWhole(c *callState, a string) bool {
	if !c.named || c.args == nil || !c.scan.closed() {
		return false
	}
	prev := c.args.String()
	if len(prev) > 2*len(a)+16 {
		return false
	}
	return a == strings.TrimSpace(prev) || provider.SameJSON([]byte(a), []byte(prev))
}

// restates reports whether a fragment with id naming name, at index (-1:
// none), is at a call sent with that id and named so: the call at the
// index, or without one the first sent with the id. Such a fragment
// without arguments adds nothing to the call (vLLM repeats the id on
// every fragment: testdata/tools19_vllm_id_every_chunk_stream.http; a
// server may repeat the name too); at another index it opens a call.
func (s *chatStream) restates(index int, id, name string) bool {
	var c *callState
	if index >= 0 {
		c = s.byIndex[index]
	} else {
		c = s.bySent(id)
	}
	return c != nil && c.sent == id && c.name == name
}

// fragmentArgs is the arguments text a tool-call fragment carries.
func fragmentArgs(tc *respToolCall) string {
	switch {
	case tc.Function != nil:
		return tc.Function.arguments()
	case tc.Custom != nil:
		return tc.Custom.Input
	}
	return ""
}

// call finds or opens the call of a tool-call delta. index is -1 when the
// delta has none; name is the function the fragment names ("": none, or
// one restating its call's id and name without arguments: restates).
func (s *chatStream) call(index int, id, name string, meta *llmrelayv1.ResponseMeta) *callState {
	var cur *callState
	if index >= 0 {
		cur = s.byIndex[index]
	} else if id != "" {
		if c := s.bySent(id); c != nil && !c.whole(name) {
			return c
		}
	} else if len(s.order) > 0 {
		cur = s.order[len(s.order)-1]
	}
	if cur != nil && (id == "" || id == cur.sent || cur.fallback) {
		if id != "" && id == cur.sent && cur.whole(name) {
			// Another call sent with the id of the call at its index,
			// after that call's arguments were whole (not a repeat of
			// it: repeatOf): a second call, re-keyed (open), as the
			// unary answer re-keys it, not joined into one with
			// `{"a":1}{"b":2}`.
			return s.open(cur, index, id, meta)
		}
		return cur
	}
	if id != "" && index >= 0 {
		// The id is the call's key: a fragment that names a known call
		// by its id at another index (first sent without index, at a
		// position in its delta that another call's index takes later)
		// continues that call, which takes this index, instead of
		// opening a second call with the same id.
		// A fragment naming a function after that call's arguments are
		// whole starts another call with the same id (whole).
		if c := s.bySent(id); c != nil && !c.whole(name) {
			if s.byIndex == nil {
				s.byIndex = make(map[int]*callState)
			}
			s.byIndex[index] = c
			return c
		}
	}
	return s.open(cur, index, id, meta)
}

// bySent is the first call the server sent with id.
func (s *chatStream) bySent(id string) *callState {
	for _, c := range s.order {
		if c.sent == id {
			return c
		}
	}
	return nil
}

// idTaken reports whether a call of the stream is keyed by id.
func (s *chatStream) idTaken(id string) bool {
	for _, c := range s.order {
		if c.id == id {
			return true
		}
	}
	return false
}

// open opens a new call at index (-1: none) with id ("": one is made),
// ending cur, the call it follows at that index.
func (s *chatStream) open(cur *callState, index int, id string, meta *llmrelayv1.ResponseMeta) *callState {
	if len(s.order) >= maxStreamToolCalls {
		s.err = s.bad("more than %d tool calls in one response", maxStreamToolCalls)
		return nil
	}
	if cur != nil && !cur.ended {
		cur.ended = true
		s.flushHigh(cur)
		s.push(&provider.Event{Kind: provider.EventToolCallEnd, ToolCall: provider.ToolCallDelta{CallID: cur.id, Index: cur.pos}})
	}
	st := &callState{id: id, sent: id, pos: len(s.order), args: &strings.Builder{}}
	switch {
	case id == "":
		st.id, st.fallback = provider.MadeCallID(st.pos, s.idTaken), true
		meta.Warnings = append(meta.Warnings, fmt.Sprintf("tool call %d has no id; keyed as %s", st.pos, st.id))
	case s.idTaken(id):
		// Another call has the id (sent with it, or made): calls are
		// keyed by id, so this one gets a made id, as in the unary
		// answer (toolCallFromWire).
		st.id = provider.MadeCallID(st.pos, s.idTaken)
		meta.Warnings = append(meta.Warnings, fmt.Sprintf("tool call %d repeats the id %s of an earlier call; keyed as %s", st.pos, id, st.id))
	}
	s.order = append(s.order, st)
	if index >= 0 {
		if s.byIndex == nil {
			s.byIndex = make(map[int]*callState)
		}
		s.byIndex[index] = st
	}
	if fr := mapFinishReason(s.finish); s.finishSeen && len(s.order) == 1 && provider.ToolCallsFinish(fr, 1) != fr {
		// The finish reason was reported before the first call.
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{
			ProviderFinishReason: s.finish, FinishReason: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS}})
	}
	return st
}

// endCalls completes the calls still open. cut is what ended the answer
// when it stopped mid-output (cutBy): the answer's last call is the one
// being written then, so it ends as EventToolCallCut, its arguments
// partial even when they parse, with a warning; unless text followed it
// and its arguments parse, when the text is what the limit stopped (the
// unary answer flags it the same way: cutChatLastCall).
func (s *chatStream) endCalls(cut string) {
	for i, c := range s.order {
		if c.ended {
			continue
		}
		c.ended = true
		s.flushHigh(c)
		kind := provider.EventToolCallEnd
		if cut != "" && i == len(s.order)-1 && !(c.textAfter && c.args != nil && fold.ValidArguments(c.args.String())) {
			kind = provider.EventToolCallCut
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{cutCallWarning(c.id, cut)}}})
		}
		s.pushCall(&provider.Event{Kind: kind, ToolCall: provider.ToolCallDelta{CallID: c.id, Index: c.pos}})
	}
}

// arguments is the text of a fragment's arguments, a high surrogate that
// ends it held back for the next fragment and one held before prepended
// (provider/surrogate.go).
func (st *callState) arguments(f *respFunction) string {
	raw := f.Arguments
	if len(raw) == 0 || raw[0] != '"' {
		if st.high != "" && isPresent(raw) {
			st.high = ""
			return "\uFFFD" + f.arguments()
		}
		return f.arguments()
	}
	raw, st.high = provider.CutHighSurrogate(provider.WithHighSurrogate(st.high, raw))
	return argumentsText(raw)
}

// flushHigh sends what a high surrogate still held at the call's end
// decodes to alone: U+FFFD.
func (s *chatStream) flushHigh(c *callState) {
	if c.high == "" {
		return
	}
	c.high = ""
	s.pushCall(&provider.Event{Kind: provider.EventToolCall, ToolCall: provider.ToolCallDelta{CallID: c.id, Index: c.pos, Arguments: "\uFFFD"}})
}

// fragmentName is the function name a tool-call fragment carries.
func fragmentName(tc *respToolCall) string {
	switch {
	case tc.Function != nil:
		return tc.Function.Name
	case tc.Custom != nil:
		return tc.Custom.Name
	}
	return ""
}

// reasoningTokens reads the quoted tokens of the choices' reasoning
// strings of chunk t, which has a surrogate escape: encoding/json keeps
// them as sent in rawReasoning. A chunk encoding/json cannot read has
// none (its decode failed already); a field of an unexpected type
// elsewhere (decodeLenient's warning) leaves the rest read.
func (s *chatStream) reasoningTokens(t []byte) {
	r := s.rareOf()
	var v struct {
		Choices []rawReasoning `json:"choices"`
	}
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(t, &v); err != nil && !errors.As(err, &te) {
		return
	}
	r.rawReasoning = append(r.rawReasoning[:0], v.Choices...)
}

// hasReasoningString reports whether a choice delta of c has a
// reasoning_content, reasoning or refusal string (the tokens
// reasoningTokens reads).
func hasReasoningString(c *chatResponse) bool {
	for _, ch := range c.Choices {
		if d := ch.Delta; d != nil && (d.ReasoningContent != nil || d.Reasoning != nil || d.Refusal != nil) {
			return true
		}
	}
	return false
}

// rawReasoningAt is the reasoning tokens of the chunk's choice i, nil when
// the chunk had no surrogate escape.
func (s *chatStream) rawReasoningAt(i int) *rawReasoning {
	if s.rare == nil || i >= len(s.rare.rawReasoning) {
		return nil
	}
	return &s.rare.rawReasoning[i]
}

// joinReasoning joins a surrogate pair cut between the reasoning string
// of the previous delta and this one's (provider.SurrogateJoin): the
// field reasoningPieces reads (reasoning_content, else reasoning) gets the
// joined text, a high half ending it held back. Typed reasoning_details
// win over both and are left as they are.
func (s *chatStream) joinReasoning(d *respMessage, raw *rawReasoning) {
	if isPresent(d.ReasoningDetails) || (d.ReasoningContent == nil && d.Reasoning == nil) {
		return
	}
	var rc, r json.RawMessage
	if raw != nil && raw.Delta != nil {
		rc, r = raw.Delta.ReasoningContent, raw.Delta.Reasoning
	}
	dst, tok := d.ReasoningContent, rc
	if deref(dst) == "" && d.Reasoning != nil {
		dst, tok = d.Reasoning, r
	}
	if dst == nil || (s.rare == nil && tok == nil) {
		return
	}
	text := s.rareOf().reasonJoin.Text(*dst, tok)
	*dst = text
	if text == "" && d.ReasoningContent != nil && dst == d.ReasoningContent && d.Reasoning != nil {
		// Only a held half: the same text in reasoning (newer vLLM
		// sends both) is not read in its place.
		*d.Reasoning = ""
	}
}

// flushHeld releases the halves still held at the end of the answer.
func (s *chatStream) flushHeld() {
	if s.rare == nil {
		return
	}
	s.flushReasoning()
	s.flushDetail()
	s.flushThinking()
	s.flushText()
	s.flushRefusal()
}

// joinPieces joins the surrogate pairs cut between the reasoning texts of
// the previous delta and this one's pieces (from: where each came from,
// reasoningPiecesFrom): a reasoning_details entry's text continues the
// last entry's of the same block, Mistral's thinking text the last
// thinking text. A half held before that this delta does not continue is
// a U+FFFD piece of its own block, before what comes after it.
func (s *chatStream) joinPieces(d *respMessage, pieces []provider.ReasoningDelta, from []int) []provider.ReasoningDelta {
	r := s.rareOf()
	var toks []json.RawMessage
	if isPresent(d.ReasoningDetails) {
		toks = detailTokens(d.ReasoningDetails)
	}
	_, thinkTok := contentTokens(d.Content)
	out := make([]provider.ReasoningDelta, 0, len(pieces)+1)
	releaseDetail := func() {
		if t := r.detailJoin.Flush(); t != "" {
			out = append(out, provider.ReasoningDelta{Index: r.detailIdx, Text: t})
		}
	}
	var thought, detail bool
	for i, p := range pieces {
		switch src := from[i]; {
		case src >= 0:
			if p.Redacted || (r.detailJoin.Held() && r.detailIdx != p.Index) {
				releaseDetail()
			}
			if !p.Redacted {
				var tok json.RawMessage
				if src < len(toks) {
					tok = toks[src]
				}
				p.Text = r.detailJoin.Text(p.Text, tok)
				r.detailIdx, detail = p.Index, true
			}
		case src == fromThinking:
			thought = true
			p.Text = r.thinkJoin.Text(p.Text, thinkTok)
		}
		if p.Text != "" || p.Signature != "" || p.ID != "" || p.Redacted {
			out = append(out, p)
		}
	}
	if !detail {
		releaseDetail()
	}
	if !thought {
		if t := r.thinkJoin.Flush(); t != "" {
			out = append(out, provider.ReasoningDelta{Text: t})
		}
	}
	return out
}

// flushDetail releases a held reasoning_details half as U+FFFD in its
// block.
func (s *chatStream) flushDetail() {
	s.releaseReasoning(&s.rare.detailJoin, s.rare.detailIdx)
}

// releaseReasoning sends what a reasoning joiner still holds (a high half:
// U+FFFD) as reasoning of block index, after the think splitter's held
// text.
func (s *chatStream) releaseReasoning(j *provider.SurrogateJoin, index int) {
	if t := j.Flush(); t != "" {
		s.flushThink()
		p := provider.ReasoningDelta{Index: index, Text: t}
		s.markReasoning(&p)
		s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: p})
	}
}

// flushThinking releases a held half of Mistral's thinking text as U+FFFD.
func (s *chatStream) flushThinking() { s.releaseReasoning(&s.rare.thinkJoin, 0) }

// flushRefusal releases a held refusal half as U+FFFD.
func (s *chatStream) flushRefusal() {
	if t := s.rare.refusalJoin.Flush(); t != "" {
		s.push(&provider.Event{Kind: provider.EventRefusal, Text: t})
	}
}

// flushReasoning releases a held reasoning half as U+FFFD.
func (s *chatStream) flushReasoning() { s.releaseReasoning(&s.rare.reasonJoin, 0) }

// flushText releases a held content half as U+FFFD.
func (s *chatStream) flushText() {
	if t := s.rare.textJoin.Flush(); t != "" {
		s.pushThink(s.think.Content(t))
		if n := len(s.order); n > 0 {
			s.order[n-1].textAfter = true
		}
	}
}
