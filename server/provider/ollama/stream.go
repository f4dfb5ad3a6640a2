package ollama

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// maxLineSize bounds one NDJSON line (a chunk), so that a broken upstream
// cannot make the gateway buffer without limit.
const maxLineSize = 8 << 20

// stream reads Ollama's NDJSON chat stream: one JSON object per line,
// content and thinking pieces, whole tool calls, and a final line with
// "done": true carrying done_reason, counts and timings. Thinking pieces
// are passed on as they come (EventReasoning, block 0: Ollama has one
// thinking text per answer), so nothing is buffered across lines.
type stream struct {
	body      io.ReadCloser
	r         *bufio.Reader
	line      []byte
	status    int
	requestID string
	salt      string
	win       window
	warnings  []string // request warnings, sent with the first meta

	queue []*provider.Event
	head  int

	started bool
	model   string
	seen    map[string]bool // tool call ids used
	calls   int
	lineNo  int
	done    bool
	closed  bool
	err     error
	// failed: what was held when err came was queued before it.
	failed bool

	fastMsg respMessage // reused by decodeLineFast

	// think splits a leading <think> block off the content when the
	// model's reasoning comes inline (an Ollama before 0.12.5 asked
	// without "think"); thinking is set once a message.thinking piece came,
	// and the content is then text as sent.
	think    provider.ThinkSplitter
	thinking bool
	// answered: a line had content (see window.formatCountWarning).
	answered bool

	// logprobs are the lines' logprobs entries, reported with the finish.
	logprobs []any
	// reasoned: inline reasoning went out (with thinking, the logprobs
	// then cover the thinking too: logprobsCoverThinking).
	reasoned bool
	// thinkJoin and textJoin hold the high half of a surrogate pair that
	// a UTF-16 proxy cut off the end of a line's thinking or content, for
	// the next line (provider.SurrogateJoin).
	thinkJoin, textJoin provider.SurrogateJoin
}

var _ provider.Stream = (*stream)(nil)

func newStream(resp *http.Response, salt string, win window, warnings []string) *stream {
	return &stream{
		// 4 KiB holds a typical line; readLine assembles longer ones.
		body: resp.Body, r: bufio.NewReaderSize(resp.Body, 4<<10), status: resp.StatusCode,
		requestID: provider.HeaderValue(resp.Header, requestIDHeader), salt: salt, win: win, warnings: warnings, seen: map[string]bool{},
	}
}

// Recv returns the next event; io.EOF only after the done line.
func (s *stream) Recv() (*provider.Event, error) {
	for {
		if s.closed {
			return nil, provider.ErrStreamClosed(providerName)
		}
		if s.head < len(s.queue) {
			ev := s.queue[s.head]
			s.queue[s.head] = nil
			s.head++
			if s.head == len(s.queue) {
				s.queue, s.head = s.queue[:0], 0
			}
			return ev, nil
		}
		if s.err != nil {
			if !s.failed {
				// What the failed answer said, before its error: the
				// halves and text still held, and the logprobs gathered
				// for the done line (the server merges a stream's meta
				// events into the failure's meta).
				s.failed = true
				s.flushHeld()
				s.pushThink(s.think.Flush())
				if s.logprobs != nil {
					meta := &llmrelayv1.ResponseMeta{}
					provider.SetExtended(meta, extLogprobs, s.logprobs)
					s.logprobs = nil
					s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
				}
				continue
			}
			return nil, s.err
		}
		if s.done {
			return nil, io.EOF
		}
		line, err := s.readLine()
		if err != nil {
			s.err = s.readError(err)
			continue
		}
		s.handleLine(line)
	}
}

// Close releases the connection; safe to call more than once.
func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.queue = nil
	return s.body.Close()
}

// readError converts an error of reading the body, with the request id of
// the answer it cut.
func (s *stream) readError(err error) error {
	var pe *provider.Error
	switch {
	case errors.Is(err, io.EOF):
		if s.lineNo == 0 {
			pe = provider.StreamCut(providerName, "stream ended before any line (no done:true line)")
		} else {
			pe = provider.StreamCut(providerName, "stream ended before the final done:true line (after %d lines)", s.lineNo)
		}
	case errors.As(err, &pe):
	default:
		pe = provider.BodyReadError(providerName, err)
	}
	if pe.RequestID == "" {
		pe.RequestID = s.requestID
	}
	return pe
}

// readLine returns the next line (without bounds on where reads split it),
// at most maxLineSize bytes. A last line without a newline is returned
// before io.EOF.
func (s *stream) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		if len(s.line)+len(frag) > maxLineSize {
			return nil, provider.BadResponse(providerName, "stream line %d is longer than %d bytes", s.lineNo+1, maxLineSize)
		}
		s.line = append(s.line, frag...)
		switch {
		case err == nil:
			return s.line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(s.line)) > 0:
			return s.line, nil
		default:
			return nil, err
		}
	}
}

func (s *stream) push(ev *provider.Event) { s.queue = append(s.queue, ev) }

// handleLine turns one NDJSON line into events.
func (s *stream) handleLine(line []byte) {
	line = bytes.TrimSpace(line)
	if s.lineNo == 0 {
		// A byte order mark before the first line (a proxy re-encoding
		// the body) is not part of the JSON.
		line = bytes.TrimPrefix(line, []byte("\ufeff"))
	}
	if len(line) == 0 {
		return
	}
	s.lineNo++
	var c chatResponse
	if !decodeLineFast(line, &c, &s.fastMsg) {
		if err := json.Unmarshal(line, &c); err != nil {
			e := provider.BadResponse(providerName, "stream line %d is not valid JSON: %v", s.lineNo, err)
			e.RequestID = s.requestID
			s.err = e
			return
		}
	}
	if e := inBandError(c.Error, s.status, s.requestID); e != nil {
		s.err = e
		return
	}
	if c.generateShaped() {
		e := provider.BadResponse(providerName, "stream line %d: %s", s.lineNo, errGenerateShaped)
		e.RequestID = s.requestID
		s.err = e
		return
	}
	if !s.started {
		s.started = true
		s.model = c.Model
		meta := &llmrelayv1.ResponseMeta{ResolvedModel: c.Model, ProviderRequestId: s.requestID, Warnings: s.warnings}
		setRemote(meta, &c)
		if meta.ResolvedModel != "" || meta.ProviderRequestId != "" || len(meta.Warnings) > 0 || meta.Extended != nil {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
		}
	}
	if m := c.Message; m == nil {
		s.flushHeld()
	} else {
		var warnings []string
		// A half held from the previous line that this one does not
		// continue with a string is what it decodes to alone, first.
		if !isString(m.Thinking) {
			s.flushThinking()
		}
		if !isString(m.Content) {
			s.flushText()
		}
		// Thinking before content, as in the unary answer's part order.
		thinking, w := contentText(m.Thinking, s.lineNo, "message.thinking")
		warnings = append(warnings, w...)
		if isString(m.Thinking) {
			thinking = s.thinkJoin.Text(thinking, m.Thinking)
		}
		if thinking != "" {
			s.thinking = true
			s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: 0, Text: thinking}})
		}
		text, w := contentText(m.Content, s.lineNo, "message.content")
		warnings = append(warnings, w...)
		if isString(m.Content) {
			text = s.textJoin.Text(text, m.Content)
		}
		if text != "" {
			s.answered = true
		}
		s.pushText(text)
		for _, tc := range m.ToolCalls {
			call, w := toolCall(tc, s.calls, s.model, s.salt, s.seen)
			if w != "" {
				warnings = append(warnings, w)
			}
			d := provider.ToolCallDelta{CallID: call.CallId, Index: s.calls}
			s.calls++
			first := d
			first.Name, first.Arguments = call.Name, call.Arguments
			s.push(&provider.Event{Kind: provider.EventToolCall, ToolCall: first})
			s.push(&provider.Event{Kind: provider.EventToolCallEnd, ToolCall: d})
		}
		if len(warnings) > 0 {
			s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: warnings}})
		}
	}
	if lp, w := logprobEntries(c.Logprobs, s.lineNo); lp != nil {
		s.logprobs = append(s.logprobs, lp...)
	} else if w != "" {
		s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{w}}})
	}
	if c.Done {
		s.done = true
		s.flushHeld()
		s.pushThink(s.think.Flush())
		s.finish(&c)
	}
}

// pushThink queues the events of a released reasoning and text pair.
func (s *stream) pushThink(reasoning, text string) {
	if reasoning != "" {
		s.reasoned = true
		s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: 0, Text: reasoning}})
	}
	if text != "" {
		s.push(&provider.Event{Kind: provider.EventText, Text: text})
	}
}

// finish emits the meta and usage of the done line.
func (s *stream) finish(c *chatResponse) {
	meta := &llmrelayv1.ResponseMeta{
		FinishReason:         doneFinish(string(c.DoneReason), s.calls),
		ProviderFinishReason: string(c.DoneReason),
		ToolCallCount:        int32(s.calls),
	}
	setMetrics(meta, c.metrics)
	if s.logprobs != nil {
		provider.SetExtended(meta, extLogprobs, s.logprobs)
		if s.reasoned || s.thinking {
			meta.Warnings = append(meta.Warnings, logprobsCoverThinking)
		}
	}
	u := usage(c.metrics)
	if w := usageWarning(c.metrics); w != "" && u != nil {
		meta.Warnings = append(meta.Warnings, w)
	}
	meta.Warnings = append(meta.Warnings, s.win.warnings(c.metrics, string(c.DoneReason))...)
	if w := s.win.formatCountWarning(c.metrics, s.thinking, s.answered); w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	if w := doneWarning(string(c.DoneReason)); w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	if ts, w := createTime(c.CreatedAt); ts != nil {
		meta.CreateTime = ts
	} else if w != "" {
		meta.Warnings = append(meta.Warnings, w)
	}
	s.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	if u != nil {
		s.push(&provider.Event{Kind: provider.EventUsage, Usage: u})
	}
}

// pushText queues a content piece: text as sent once thinking came, else
// through the think splitter.
func (s *stream) pushText(text string) {
	switch {
	case text == "":
	case s.thinking:
		s.pushThink(s.think.Flush()) // held back before the thinking came: text
		s.push(&provider.Event{Kind: provider.EventText, Text: text})
	default:
		s.pushThink(s.think.Content(text))
	}
}

// isString reports whether raw is a JSON string.
func isString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

// flushHeld releases the halves still held (the answer ended, or a line
// without a message came) as U+FFFD, what each decodes to alone.
func (s *stream) flushHeld() {
	s.flushThinking()
	s.flushText()
}

func (s *stream) flushThinking() {
	if t := s.thinkJoin.Flush(); t != "" {
		s.thinking = true
		s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Index: 0, Text: t}})
	}
}

func (s *stream) flushText() {
	s.pushText(s.textJoin.Flush())
}
