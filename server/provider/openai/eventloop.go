package openai

import (
	"errors"
	"io"
	"net/http"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/sse"
	"github.com/llmrelay/llmrelay/server/provider"
)

// eventLoop is what both OpenAI stream formats share: the SSE reader, a
// queue of normalized events that the format's handler fills from each SSE
// event, and the terminal state. The embedding stream sets handle.
type eventLoop struct {
	p      *Provider
	body   io.ReadCloser
	rd     *sse.Reader
	header http.Header
	model  string
	sec    secrets

	queue []*provider.Event
	qpos  int

	// handle turns one SSE event into queued events, done or err.
	handle func(typ, data []byte)
	// final names the event a complete stream ends with, for the error of
	// a stream cut before it.
	final string

	done   bool // the final event was received
	closed bool
	// completeAtEOF: the handler saw the end of a complete answer, so a
	// body that ends cleanly (at an event boundary) before the final
	// event is ended as if the final event had come.
	completeAtEOF bool
	err           error // sticky terminal error
}

func (p *Provider) newEventLoop(resp *http.Response, model string, warnings []string, sec secrets, final string) eventLoop {
	rd := sse.NewReader(resp.Body)
	rd.SetMaxEventSize(maxStreamEventBytes)
	l := eventLoop{p: p, body: resp.Body, rd: rd, header: resp.Header, model: model, sec: sec, final: final}
	meta := &llmrelayv1.ResponseMeta{Warnings: warnings}
	p.headerMeta(meta, resp.Header, model)
	if proto.Size(meta) > 0 {
		l.push(&provider.Event{Kind: provider.EventMeta, Meta: meta})
	}
	return l
}

func (s *eventLoop) push(ev *provider.Event) { s.queue = append(s.queue, ev) }

// Recv returns the next event; io.EOF after the format's final event.
func (s *eventLoop) Recv() (*provider.Event, error) {
	for {
		if s.closed {
			return nil, provider.ErrStreamClosed(s.p.name)
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
		if s.done {
			return nil, io.EOF
		}
		ev, err := s.rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) && s.completeAtEOF {
				s.completeAtEOF = false // a handler that does not end the stream gets the cut error next
				s.handle(nil, []byte(s.final))
				continue
			}
			if errors.Is(err, provider.ErrIdleTimeout) && s.completeAtEOF {
				// A complete answer (finish and usage) without its
				// terminator, the connection left open: complete, as at EOF.
				s.completeAtEOF = false
				s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{provider.IdleAfterEndWarning}}})
				s.handle(nil, []byte(s.final))
				continue
			}
			if s.completeAtEOF && provider.CutAfterEnd(err) {
				// The same answer, the connection broken instead of
				// closed cleanly: complete.
				s.completeAtEOF = false
				s.push(&provider.Event{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{Warnings: []string{provider.CutAfterEndWarning}}})
				s.handle(nil, []byte(s.final))
				continue
			}
			s.err = s.readError(err)
			continue
		}
		s.handle(ev.Type, ev.Data)
	}
}

// Close closes the response body; safe to call more than once.
func (s *eventLoop) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.body.Close()
}

// readError converts an error of the SSE reader.
func (s *eventLoop) readError(err error) error {
	var e *provider.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e = provider.StreamCut(s.p.name, "stream ended before %s", s.final)
	case errors.Is(err, sse.ErrEventTooLarge):
		e = provider.BadResponse(s.p.name, "%v", err)
	default:
		e = provider.BodyReadError(s.p.name, err)
		e.Message = s.sec.redact(e.Message)
	}
	e.RequestID = s.p.requestID(s.header)
	return e
}

// cut is the error of a stream cut before its final event, carrying the
// request id.
func (s *eventLoop) cut(format string, args ...any) *provider.Error {
	e := provider.StreamCut(s.p.name, format, args...)
	e.RequestID = s.p.requestID(s.header)
	return e
}

// bad is a KindBadResponse error carrying the request id.
func (s *eventLoop) bad(format string, args ...any) *provider.Error {
	e := provider.BadResponse(s.p.name, format, args...)
	e.RequestID = s.p.requestID(s.header)
	return e
}
