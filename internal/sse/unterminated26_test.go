package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestUnterminated: an event ended by its blank line (or a bare JSON
// object by its last brace) is whole; one dispatched at the end of the
// input or at a read error after its last whole line is not.
func TestUnterminated(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []bool
	}{
		{"data: {\"a\":\n\n", []bool{false}},
		{"data: {\"a\":\n", []bool{true}},
		{"data: 1\n\ndata: 2\n", []bool{false, true}},
		{"data: 1\r\n\r\ndata: 2\r\n\r\n", []bool{false, false}},
		{"{\"error\":{\"code\":503}}\n", []bool{false}},
	} {
		for _, oneByte := range []bool{false, true} {
			var in io.Reader = strings.NewReader(tc.in)
			if oneByte {
				in = iotest.OneByteReader(in)
			}
			r := NewReader(in)
			var got []bool
			for {
				_, err := r.Next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("%q: %v", tc.in, err)
					}
					break
				}
				got = append(got, r.Unterminated())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%q: %d events, want %d", tc.in, len(got), len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("%q (one byte %v) event %d: Unterminated %v, want %v", tc.in, oneByte, i, got[i], tc.want[i])
				}
			}
		}
	}
	// A read error after a whole line: dispatched, unterminated, then the error.
	r := NewReader(io.MultiReader(strings.NewReader("data: 1\n"), iotest.ErrReader(io.ErrUnexpectedEOF)))
	if _, err := r.Next(); err != nil || !r.Unterminated() {
		t.Errorf("err %v, unterminated %v", err, r.Unterminated())
	}
	if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) || r.Unterminated() {
		t.Errorf("err %v, unterminated %v", err, r.Unterminated())
	}
}
