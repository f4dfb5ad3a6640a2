// Package sse reads Server-Sent Events streams as providers send them: LF,
// CRLF or CR line endings, comment lines, multi-line data, and events split
// at any byte across reads.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventSize bounds one event's data (a provider chunk), so that a
// broken upstream cannot make the gateway buffer without limit.
const DefaultMaxEventSize = 8 << 20

// ErrEventTooLarge is returned when an event exceeds the size limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event. Its slices are valid until the next call
// to Next.
type Event struct {
	// Type is the `event:` field; empty means "message".
	Type []byte
	// Data is the `data:` lines joined with "\n".
	Data []byte
	// ID is the `id:` field.
	ID []byte
}

// Reader reads events from a stream.
type Reader struct {
	// r is held by value: one allocation less per open stream.
	r    bufio.Reader
	max  int
	line []byte
	typ  []byte
	data []byte
	// view is the event's one data line while it is still a slice of the
	// read buffer (no copy into data): the common event, one data line
	// and its blank line in the same read, is never copied, and an open
	// stream holds no copy of its last event. It is copied into data
	// before the buffer is refilled or a second data line is added.
	view    []byte
	id      []byte
	hasData bool
	// skipLF is set after a lone CR so that a following LF (CRLF split
	// across reads) is not read as an empty line.
	skipLF bool
	// lines counts the lines read: the first one loses a leading byte
	// order mark.
	lines int
	// bare is the state of a bare JSON object being read (bareJSON):
	// the depth of its braces (0: none), inside a string, after a
	// backslash in one.
	bare             int
	bareStr, bareEsc bool
	// pending is the rest of a line after a bare JSON object that closed
	// before the line's end, when a second object starts there: the
	// next event's first line.
	pending []byte
	// cutAtLineStart is set when a read failed between two lines (no
	// part of a line read): the lines before it were whole.
	cutAtLineStart bool
	// err is the read error that came after an event dispatched at it:
	// the next call returns it.
	err error
	// unterminated: the last event Next returned was dispatched at the
	// end of the input, without its blank line (Unterminated).
	unterminated bool
}

// Unterminated reports whether the event the last call to Next returned
// was dispatched at the end of the input (or at a read error after its
// last whole line) without the blank line that ends an event: it may be
// the first part of an event the connection cut. An event that had its
// blank line (or a bare JSON object whose last brace closed it) is
// whole: data in it that does not parse is what the server wrote, not a
// cut.
func (r *Reader) Unterminated() bool { return r.unterminated }

// NewReader returns a Reader with the default event size limit.
//
// The read buffer is 1 KiB (longer lines are assembled across reads, one
// allocation each): an open stream costs little memory while it waits,
// which matters with thousands of concurrent streams. Delta events are a
// few hundred bytes; the longer ones (Responses API created/completed
// events, Gemini thought signatures) are few per stream. The buffer only
// decides how many reads go through the body's decoding layers: the
// connection keeps its own 2 KiB reader for the system calls.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{max: DefaultMaxEventSize}
	rd.r = *bufio.NewReaderSize(r, 1<<10)
	return rd
}

// SetMaxEventSize changes the size limit of one event.
func (r *Reader) SetMaxEventSize(n int) { r.max = n }

// Next returns the next event. At the end of the stream it returns io.EOF;
// an event whose data lines were not yet followed by a blank line is still
// dispatched first, since some servers omit the final blank line. So is it
// when another read error ends the input (a connection reset, a chunked
// body cut: io.ErrUnexpectedEOF) after its last line was whole; the error
// comes on the next call, and every call after. A line the error cut
// (no terminator read) is not dispatched: its data may be incomplete.
func (r *Reader) Next() (Event, error) {
	r.unterminated = false
	if r.err != nil {
		return Event{}, r.err
	}
	r.typ, r.data, r.view, r.id, r.hasData = r.typ[:0], r.data[:0], nil, r.id[:0], false
	for {
		var line []byte
		var err error
		if r.pending != nil {
			// Copied out of pending: bareJSON may store a third object's
			// start there.
			line, r.pending = append(r.line[:0], r.pending...), nil
			r.line = line
		} else {
			line, err = r.readLine()
		}
		if err != nil {
			if r.hasData && r.bare == 0 && (errors.Is(err, io.EOF) || r.cutAtLineStart) {
				if !errors.Is(err, io.EOF) {
					r.err = err
				}
				r.unterminated = true
				return Event{Type: r.typ, Data: r.eventData(), ID: r.id}, nil
			}
			// A bare JSON object the stream ended inside of is a cut,
			// like any event not finished.
			return Event{}, err
		}
		if r.bare > 0 && !jsonContinues(line) {
			// The object collected so far cannot go on with this line (an
			// SSE field, a blank line): it was a line that is not a field,
			// which the spec ignores, and so is it; the line is read as
			// what it is. Without that, a "{" line that never balances
			// would swallow the valid events after it.
			r.bare, r.bareStr, r.bareEsc = 0, false, false
			r.data, r.hasData = r.data[:0], false
		}
		if r.bare > 0 || (!r.hasData && len(line) > 0 && line[0] == '{') {
			if done, err := r.bareJSON(line); err != nil {
				return Event{}, err
			} else if done {
				return Event{Type: r.typ, Data: r.data, ID: r.id}, nil
			}
			continue
		}
		if len(line) == 0 {
			if r.hasData {
				return Event{Type: r.typ, Data: r.eventData(), ID: r.id}, nil
			}
			// A blank line with no data dispatches nothing; the type is reset.
			r.typ, r.id = r.typ[:0], r.id[:0]
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. ": OPENROUTER PROCESSING"
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if r.hasData {
				r.keepView()
				r.data = append(r.data, '\n')
			}
			if len(r.data)+len(value) > r.max {
				return Event{}, fmt.Errorf("%w (over %d bytes)", ErrEventTooLarge, r.max)
			}
			if !r.hasData && !r.lineCopied(line) {
				// Capped: an append to the event data must not write into
				// the buffer bytes not yet read.
				r.view = value[:len(value):len(value)] // valid until the buffer is refilled (keepView)
			} else {
				r.data = append(r.data, value...)
			}
			r.hasData = true
		case "event":
			r.typ = append(r.typ[:0], value...)
		case "id":
			r.id = append(r.id[:0], value...)
		case "error":
			// Not an SSE field: llama.cpp's server writes a stream's error
			// as "error: {json}" (server_sent_event(sink, "error", ...)).
			// Ignoring it, as the spec says for unknown fields, would turn
			// the server's message into a cut stream; it is dispatched as
			// the data of an event of type "error".
			if len(r.data)+len(value) > r.max {
				return Event{}, fmt.Errorf("%w (over %d bytes)", ErrEventTooLarge, r.max)
			}
			r.keepView()
			r.typ = append(r.typ[:0], "error"...)
			r.data = append(r.data[:0], value...)
			r.hasData = true
		default:
			// "retry" and unknown fields are ignored, as the spec says.
		}
	}
}

// bareJSON reads a line of a JSON object written into the stream without
// any field (not "data: {...}" but "{...}", over one or more lines): no
// SSE field starts with "{", so the spec would ignore every line of it,
// and a provider's error written so (Gemini's streamed errors, which the
// google-genai SDKs read by counting braces; a proxy's JSON error) would
// read as a stream that ended without its final event. The object is
// dispatched as the data of an event, as if it had come as "data:" lines;
// done reports that its last brace closed it.
func (r *Reader) bareJSON(line []byte) (done bool, err error) {
	if r.bare > 0 {
		r.data = append(r.data, '\n')
	}
	end := len(line)
	for i, c := range line {
		switch {
		case r.bareEsc:
			r.bareEsc = false
		case r.bareStr:
			r.bareStr, r.bareEsc = c != '"', c == '\\'
		case c == '"':
			r.bareStr = true
		case c == '{':
			r.bare++
		case c == '}':
			r.bare--
		}
		if r.bare <= 0 {
			// Closed (or more closing braces than opening ones). A second
			// object on the same line ("{...}{...}", "{...} {...}") is an
			// event of its own, as it would be on a line of its own;
			// anything else after it stays in this one, which then is not
			// a JSON object and fails as such.
			if rest := bytes.TrimLeft(line[i+1:], " \t"); len(rest) > 0 && rest[0] == '{' {
				end = i + 1
				r.pending = append(r.pending[:0], rest...)
			}
			break
		}
	}
	if len(r.data)+end > r.max {
		return false, fmt.Errorf("%w (over %d bytes)", ErrEventTooLarge, r.max)
	}
	r.data = append(r.data, line[:end]...)
	r.hasData = true
	r.bareStr, r.bareEsc = false, false // a string does not span lines
	if r.bare <= 0 {
		r.bare = 0
		return true, nil
	}
	return false, nil
}

// jsonContinues reports whether line can be the next line of a JSON
// object: it starts (after blanks) with what a JSON value, member or
// separator starts with. A blank line cannot (JSON encoders write none
// inside an object, and in SSE it ends an event), and neither can an SSE
// field ("data: ...", "event: ...", "id: ...", "retry: ...").
func jsonContinues(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	if len(line) == 0 {
		return false
	}
	if len(t) == 0 {
		return true // blanks only: JSON whitespace, not an SSE blank line
	}
	switch c := t[0]; {
	case bytes.IndexByte([]byte(`{}[]",:-0123456789`), c) >= 0:
		return true
	case c == 't':
		return bytes.HasPrefix(t, []byte("true"))
	case c == 'f':
		return bytes.HasPrefix(t, []byte("false"))
	case c == 'n':
		return bytes.HasPrefix(t, []byte("null"))
	}
	return false
}

// readLine returns the next line without its terminator (LF, CRLF or CR).
// The line is valid until the next call: when it is whole in the buffer it
// is a slice of the buffer (no copy), otherwise it is assembled in r.line.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		n := r.r.Buffered()
		if n == 0 {
			r.keepView() // the refill overwrites the buffer
			if _, err := r.r.Peek(1); err != nil {
				if errors.Is(err, io.EOF) && len(r.line) > 0 {
					// A last line without terminator still counts.
					return r.firstLine(r.line), nil
				}
				r.cutAtLineStart = len(r.line) == 0
				return nil, err
			}
			n = r.r.Buffered()
		}
		buf, err := r.r.Peek(n)
		if err != nil {
			return nil, err // cannot happen: n bytes are buffered
		}
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				r.discard(1)
				continue
			}
		}
		// The first terminator: LF, or an earlier CR.
		i := bytes.IndexByte(buf, '\n')
		end := i
		if end < 0 {
			end = len(buf)
		}
		if j := bytes.IndexByte(buf[:end], '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			if len(r.line)+len(buf) > r.max {
				return nil, fmt.Errorf("%w (line over %d bytes)", ErrEventTooLarge, r.max)
			}
			r.line = append(r.line, buf...)
			r.discard(len(buf))
			continue
		}
		if len(r.line)+i > r.max {
			return nil, fmt.Errorf("%w (line over %d bytes)", ErrEventTooLarge, r.max)
		}
		r.skipLF = buf[i] == '\r'
		r.discard(i + 1)
		if len(r.line) == 0 {
			// Discard does not overwrite the buffer: the slice stays valid
			// until the next read.
			return r.firstLine(buf[:i]), nil
		}
		r.line = append(r.line, buf[:i]...)
		return r.firstLine(r.line), nil
	}
}

// bom is UTF-8's byte order mark.
var bom = []byte("\xEF\xBB\xBF")

// firstLine drops a byte order mark from the stream's first line: the
// spec ignores one leading BOM, and without that the first line's field
// name would start with it, so the stream's first event (a Gemini answer's
// first text) would be dropped as an unknown field. A line assembled in
// r.line is moved down in place, so that lineCopied still knows it.
func (r *Reader) firstLine(line []byte) []byte {
	r.lines++
	if r.lines > 1 || !bytes.HasPrefix(line, bom) {
		return line
	}
	if r.lineCopied(line) {
		r.line = append(r.line[:0], r.line[len(bom):]...)
		return r.line
	}
	return line[len(bom):]
}

// eventData is the data of the event being dispatched.
func (r *Reader) eventData() []byte {
	if r.view != nil {
		return r.view
	}
	return r.data
}

// keepView copies the data line still in the read buffer into data.
func (r *Reader) keepView() {
	if r.view != nil {
		r.data = append(r.data[:0], r.view...)
		r.view = nil
	}
}

// lineCopied reports whether line (from readLine) was assembled in r.line
// rather than sliced from the read buffer.
func (r *Reader) lineCopied(line []byte) bool {
	return len(line) > 0 && len(r.line) > 0 && &line[0] == &r.line[0]
}

// discard drops n buffered bytes (never fails: they are buffered).
func (r *Reader) discard(n int) {
	_, _ = r.r.Discard(n) // n <= Buffered(), so Discard cannot fail
}
