package sse

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReaderBareJSON: a JSON object written without a field, on one line
// or pretty-printed over several (Gemini's streamed errors), is
// dispatched as an event's data; braces inside its strings do not count;
// one the stream ends inside of is not dispatched (a cut); a "{" line in
// the middle of an event's data lines is ignored as the spec says.
func TestReaderBareJSON(t *testing.T) {
	t.Parallel()
	pretty := "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"quota {per minute} \\\"x}\\\" exceeded\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n"
	for _, tc := range []struct {
		name string
		in   string
		want []ev
	}{
		{"one line", `{"error":{"code":503,"message":"overloaded"}}` + "\n", []ev{{"", `{"error":{"code":503,"message":"overloaded"}}`, ""}}},
		{"one line, no terminator", `{"error":{}}`, []ev{{"", `{"error":{}}`, ""}}},
		{"pretty", pretty, []ev{{"", strings.TrimSuffix(pretty, "\n"), ""}}},
		{"after events", "data: a\n\n" + pretty + "\ndata: b\n\n", []ev{{"", "a", ""}, {"", strings.TrimSuffix(pretty, "\n"), ""}, {"", "b", ""}}},
		{"crlf", strings.ReplaceAll(pretty, "\n", "\r\n"), []ev{{"", strings.TrimSuffix(pretty, "\n"), ""}}},
		{"cut inside", "data: a\n\n{\n  \"error\": {\n", []ev{{"", "a", ""}}},
		{"inside an event", "data: a\n{\"x\":1}\n\n", []ev{{"", "a", ""}}},
		// A "{" line that never balances is a line that is not a field:
		// ignored, and the events after it are read.
		{"unbalanced, then data", "{\"error\": {\ndata: a\n\ndata: b\n\n", []ev{{"", "a", ""}, {"", "b", ""}}},
		{"unbalanced, then event", "{broken\nevent: x\ndata: a\n\n", []ev{{"x", "a", ""}}},
		{"unbalanced, blank, object", "{broken\n\n" + pretty, []ev{{"", strings.TrimSuffix(pretty, "\n"), ""}}},
		{"unbalanced, comment, data", "{\"a\":\n: keep-alive\ndata: a\n\n", []ev{{"", "a", ""}}},
		{"continuation literals", "{\"a\":\n  [true,\nfalse, null,\n -1]\n}\n", []ev{{"", "{\"a\":\n  [true,\nfalse, null,\n -1]\n}", ""}}},
		// Two objects on one line are two events, as on two lines.
		{"two on a line", `{"a":1}{"b":{"c":2}}` + "\n", []ev{{"", `{"a":1}`, ""}, {"", `{"b":{"c":2}}`, ""}}},
		{"three on a line", `{"a":1} {"b":2}` + "\t" + `{"c":"}{"}` + "\ndata: d\n\n", []ev{{"", `{"a":1}`, ""}, {"", `{"b":2}`, ""}, {"", `{"c":"}{"}`, ""}, {"", "d", ""}}},
		{"trailing text stays", `{"a":1} x` + "\n", []ev{{"", `{"a":1} x`, ""}}},
	} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := readAll(t, r)
			if err != nil || len(got) != len(tc.want) {
				t.Errorf("%s (one byte %v): %q, %v", tc.name, oneByte, got, err)
				continue
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("%s (one byte %v): event %d = %q, want %q", tc.name, oneByte, i, got[i], tc.want[i])
				}
			}
		}
	}
}

// FuzzBareLineBeforeEvent: whatever one line starting with "{" holds
// (balanced or not, one object or several), the event after it is read.
func FuzzBareLineBeforeEvent(f *testing.F) {
	f.Add(`{"error": {`)
	f.Add(`{"a":1}{"b":`)
	f.Add(`{"a":"}\"{"} x {`)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n") {
			return
		}
		in := "{" + line + "\ndata: x\n\n"
		got, err := readAll(t, strings.NewReader(in))
		if err != nil || len(got) == 0 || got[len(got)-1] != (ev{"", "x", ""}) {
			t.Fatalf("%q: %q, %v", in, got, err)
		}
	})
}
