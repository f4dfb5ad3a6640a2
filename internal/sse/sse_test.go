package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type ev struct{ typ, data, id string }

func readAll(t *testing.T, r io.Reader) ([]ev, error) {
	t.Helper()
	sr := NewReader(r)
	var out []ev
	for {
		e, err := sr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev{string(e.Type), string(e.Data), string(e.ID)})
	}
}

func TestReader(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want []ev
	}{
		{"lf", "data: a\n\ndata: b\n\n", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"crlf", "data: {\"x\":1}\r\n\r\nevent: done\r\ndata: [DONE]\r\n\r\n", []ev{{"", `{"x":1}`, ""}, {"done", "[DONE]", ""}}},
		{"cr", "data: a\r\rdata: b\r\r", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"comments", ": keep-alive\n\n: OPENROUTER PROCESSING\ndata: x\n\n", []ev{{"", "x", ""}}},
		{"multiline", "data: a\ndata: b\n\n", []ev{{"", "a\nb", ""}}},
		{"typed", "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n", []ev{{"message_start", "{}", ""}, {"ping", `{"type": "ping"}`, ""}}},
		{"no space", "data:x\n\n", []ev{{"", "x", ""}}},
		{"id and retry", "id: 7\nretry: 100\ndata: x\n\n", []ev{{"", "x", "7"}}},
		{"no final blank line", "data: a\n\ndata: b", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"event without data", "event: x\n\ndata: y\n\n", []ev{{"", "y", ""}}},
		{"empty data", "data:\n\n", []ev{{"", "", ""}}},
		// The spec ignores one leading byte order mark (only there).
		{"leading BOM", "\ufeffdata: a\n\ndata: b\n\n", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"BOM before a field", "\ufeffevent: x\ndata: a\n\n", []ev{{"x", "a", ""}}},
		{"BOM before a bare object", "\ufeff{\"error\":{\"code\":503}}\n", []ev{{"", `{"error":{"code":503}}`, ""}}},
		{"BOM before a long line", "\ufeffdata: " + strings.Repeat("x", 3000) + "\n\ndata: b\n\n", []ev{{"", strings.Repeat("x", 3000), ""}, {"", "b", ""}}},
		{"BOM only first", "data: a\n\n\ufeffdata: b\n\ndata: c\n\n", []ev{{"", "a", ""}, {"", "c", ""}}},
		// llama.cpp's server: a stream's error as an "error:" line.
		{"llama.cpp error field", "data: {\"a\":1}\n\nerror: {\"code\":400,\"message\":\"too long\"}\n\ndata: [DONE]\n\n",
			[]ev{{"", `{"a":1}`, ""}, {"error", `{"code":400,"message":"too long"}`, ""}, {"", "[DONE]", ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Whole, and one byte per read (boundaries everywhere, CRLF split).
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				got, err := readAll(t, r)
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %d events %q, want %d %q", len(got), got, len(tc.want), tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("event %d = %+v, want %+v", i, got[i], tc.want[i])
					}
				}
			}
		})
	}
}

func TestReaderTooLarge(t *testing.T) {
	t.Parallel()
	sr := NewReader(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n"))
	sr.SetMaxEventSize(50)
	if _, err := sr.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
}

func TestReaderReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	sr := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	if e, err := sr.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("first = %q, %v", e.Data, err)
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add("data: a\r\n\r\nevent: x\ndata: b\n\n: c\n")
	f.Add("data:\r\rdata")
	f.Add("{\"a\":\n{b\n: c\ndata: x\n\n{\"a\":1} {\"b\":\"}{\"}\n{\n}")
	// Round 19: an event whose blank line a read error replaced.
	f.Add("data: a\n\nevent: x\ndata: b\n")
	f.Add("data: a\r\ndata: b\r")
	f.Add("data: a\n\n{\"a\":1}{\"b\":2}\n")
	f.Fuzz(func(t *testing.T, in string) {
		whole, err1 := readAll(t, strings.NewReader(in))
		split, err2 := readAll(t, iotest.OneByteReader(strings.NewReader(in)))
		if (err1 == nil) != (err2 == nil) || len(whole) != len(split) {
			t.Fatalf("chunking changed the result: %q/%v vs %q/%v", whole, err1, split, err2)
		}
		for i := range whole {
			if whole[i] != split[i] {
				t.Fatalf("event %d differs: %+v vs %+v", i, whole[i], split[i])
			}
		}
		// The same input ended by a read error instead of io.EOF (a
		// connection cut): the events before the error are the same, in
		// order; when the input's last line was whole (it ends with a
		// terminator), so is the event it ended, which is dispatched
		// before the error. The error then comes on every call.
		sr := NewReader(io.MultiReader(strings.NewReader(in), iotest.ErrReader(io.ErrUnexpectedEOF)))
		var cut []ev
		var errc error
		for {
			e, err := sr.Next()
			if err != nil {
				errc = err
				break
			}
			cut = append(cut, ev{string(e.Type), string(e.Data), string(e.ID)})
		}
		if err1 == nil && !errors.Is(errc, io.ErrUnexpectedEOF) {
			t.Fatalf("read error %v, want io.ErrUnexpectedEOF", errc)
		}
		if _, again := sr.Next(); again != errc {
			t.Fatalf("after the error %v, Next gives %v", errc, again)
		}
		if len(cut) > len(whole) {
			t.Fatalf("%d events before the read error, %d before io.EOF", len(cut), len(whole))
		}
		for i := range cut {
			if cut[i] != whole[i] {
				t.Fatalf("event %d before the read error %+v, before io.EOF %+v", i, cut[i], whole[i])
			}
		}
		if err1 == nil && (in == "" || strings.HasSuffix(in, "\n") || strings.HasSuffix(in, "\r")) && len(cut) != len(whole) {
			t.Fatalf("last line whole: %d events before the read error, %d before io.EOF (%q)", len(cut), len(whole), whole[len(cut):])
		}
	})
}

var readerSink *Reader

// TestNewReaderAllocs: a Reader is two allocations, itself (its
// bufio.Reader inside) and the 1 KiB buffer, since every open stream holds
// one (issue 17).
func TestNewReaderAllocs(t *testing.T) {
	src := strings.NewReader("")
	if n := testing.AllocsPerRun(100, func() { readerSink = NewReader(src) }); n != 2 {
		t.Errorf("NewReader: %v allocations, want 2", n)
	}
}

// piecesReader returns one piece per Read.
type piecesReader struct{ pieces []string }

func (p *piecesReader) Read(b []byte) (int, error) {
	if len(p.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.pieces[0])
	p.pieces[0] = p.pieces[0][n:]
	if p.pieces[0] == "" {
		p.pieces = p.pieces[1:]
	}
	return n, nil
}

// TestReaderDataView: an event whose one data line and blank line come in
// the same read is returned from the read buffer, not copied (an open
// stream holds no copy of its last event); when the buffer is refilled
// before the event ends, or a second data line follows, the line is copied
// first and the event is still whole.
func TestReaderDataView(t *testing.T) {
	t.Parallel()
	r := NewReader(&piecesReader{pieces: []string{"data: first\n\n"}})
	e, err := r.Next()
	if err != nil || string(e.Data) != "first" {
		t.Fatalf("got %q, %v", e.Data, err)
	}
	if cap(r.data) != 0 {
		t.Errorf("a whole event was copied (%d bytes of data buffer)", cap(r.data))
	}
	if cap(e.Data) != len(e.Data) {
		t.Errorf("the event data has capacity %d past its %d bytes: an append would write into the read buffer", cap(e.Data), len(e.Data))
	}
	cases := []struct {
		pieces []string
		want   []string
	}{
		{[]string{"data: aaaa\n", "\ndata: bbbb\n\n"}, []string{"aaaa", "bbbb"}},
		{[]string{"data: aaaa\n", "data: cc\n\n"}, []string{"aaaa\ncc"}},
		{[]string{"data: aaaa\r", "\nid: 1\n", "\n"}, []string{"aaaa"}},
		{[]string{"data: aaaa\nevent: x\n", "xxxxxxxxxxxxxx\n\n"}, []string{"aaaa"}},
		{[]string{"data: aa", "aa\n\ndata: b\n", "\n"}, []string{"aaaa", "b"}},
		{[]string{"data: aaaa\n", "data: b"}, []string{"aaaa\nb"}},
		{[]string{"data: aaaa\n"}, []string{"aaaa"}},
	}
	for _, tc := range cases {
		r := NewReader(&piecesReader{pieces: append([]string(nil), tc.pieces...)})
		var got []string
		for {
			e, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%q: %v", tc.pieces, err)
				}
				break
			}
			got = append(got, string(e.Data))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: events %q, want %q", tc.pieces, got, tc.want)
		}
	}
}

// TestReaderReadErrorAfterWholeLine: a read error after an event's last
// line was whole (its terminator read, its blank line not) dispatches the
// event first, as the end of the stream does, then returns the error on
// every later call: a connection cut between an event's data line and its
// blank line (a chunked body cut is io.ErrUnexpectedEOF, not io.EOF) lost
// the event, which could be the one with the answer's usage. A line the
// error cut, or a bare JSON object not closed, is not dispatched.
func TestReaderReadErrorAfterWholeLine(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name string
		in   string
		err  error
		want []string
	}{
		{"LF", "data: a\n\nevent: e\ndata: b\n", boom, []string{"a", "b"}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n", io.ErrUnexpectedEOF, []string{"a", "b"}},
		{"CR", "data: a\r\rdata: b\r", boom, []string{"a", "b"}},
		{"two data lines", "data: a\ndata: b\n", boom, []string{"a\nb"}},
		{"line cut", "data: a\n\ndata: b", boom, []string{"a"}},
		{"line cut after a whole one", "data: a\ndata: b", boom, nil},
		{"event type only", "data: a\n\nevent: e\n", boom, []string{"a"}},
		{"bare JSON open", "data: a\n\n{\"error\":\n", boom, []string{"a"}},
	}
	for _, tc := range cases {
		for _, chunked := range []bool{false, true} {
			var src io.Reader = strings.NewReader(tc.in)
			if chunked {
				src = iotest.OneByteReader(src)
			}
			sr := NewReader(io.MultiReader(src, iotest.ErrReader(tc.err)))
			var got []string
			var err error
			for {
				var e Event
				if e, err = sr.Next(); err != nil {
					break
				}
				got = append(got, string(e.Data))
			}
			if !errors.Is(err, tc.err) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%s (one byte a read: %v): events %q, err %v; want %q, %v", tc.name, chunked, got, err, tc.want, tc.err)
			}
			if _, again := sr.Next(); !errors.Is(again, tc.err) {
				t.Errorf("%s: next call %v, want the error again", tc.name, again)
			}
		}
	}
}
