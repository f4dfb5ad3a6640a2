package mcp

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestEventLimitedBody: each event (up to its blank line, whatever the
// line ends: \n, \r\n, \r) is bounded, not the stream, read in any pieces.
func TestEventLimitedBody(t *testing.T) {
	for _, tc := range []struct {
		stream string
		max    int64
		ok     bool
	}{
		{"data: 0123456789\n\n" + "data: 0123456789\n\n" + "data: 0123456789\n\n", 18, true},
		{"data: 0123456789\r\n\r\n" + "data: 0123456789\r\n\r\n", 20, true},
		{"data: 0123456789\r\r" + "data: 0123456789\r\r", 18, true},
		{"data: 0123456789\n\n" + "data: 01234567890\n\n", 18, false},
		{"data: 0123456789\r\n" + "data: 0123456789\r\n\r\n", 30, false}, // one event: its lines add up
	} {
		cut := &streamCut{}
		b := &eventLimitedBody{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(tc.stream))), max: tc.max, cut: cut}
		got, err := io.ReadAll(b)
		if tc.ok != (err == nil) || (tc.ok && string(got) != tc.stream) {
			t.Errorf("%q (max %d): %q, %v", tc.stream, tc.max, got, err)
		}
		if !tc.ok && (cut.explain(io.EOF) == io.EOF || !strings.HasPrefix(tc.stream, string(got))) {
			t.Errorf("%q (max %d): read %q, cut %v", tc.stream, tc.max, got, cut.explain(io.EOF))
		}
	}
}
