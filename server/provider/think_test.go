package provider

import (
	"strings"
	"testing"
)

func TestSplitThink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		content, reasoning, text string
		ok                       bool
	}{
		{"<think>\nhmm\n</think>\n\nHi", "\nhmm\n", "\n\nHi", true},
		{"\n <think>a</think>b", "a", "b", true},
		{"<think>cut before the end", "cut before the end", "", true},
		{"<think></think>Hi", "", "Hi", true},
		{"Hi <think>x</think>", "", "Hi <think>x</think>", false},
		{"<thinking>x</thinking>", "", "<thinking>x</thinking>", false},
		{"<thi", "", "<thi", false},
		{"", "", "", false},
	} {
		r, txt, ok := SplitThink(tc.content)
		if r != tc.reasoning || txt != tc.text || ok != tc.ok {
			t.Errorf("SplitThink(%q) = %q, %q, %v; want %q, %q, %v", tc.content, r, txt, ok, tc.reasoning, tc.text, tc.ok)
		}
	}
}

// TestThinkSplitterAgreesWithUnary: however the content is cut into
// deltas, the streamed splitter releases the reasoning and text that
// SplitThink finds in the whole content.
func TestThinkSplitterAgreesWithUnary(t *testing.T) {
	t.Parallel()
	for _, content := range []string{
		"<think>\nhmm </think\n</think>\n\nHi </think> there",
		"  \n<think>a<</think>b",
		"<think>never closed </thin",
		"<thi",
		" <th plain",
		"plain <think>x</think>",
		"\n\n",
		"<think></think>",
	} {
		wantR, wantT, _ := SplitThink(content)
		for cut1 := 0; cut1 <= len(content); cut1++ {
			for cut2 := cut1; cut2 <= len(content); cut2++ {
				var sp ThinkSplitter
				var r, txt strings.Builder
				for _, d := range []string{content[:cut1], content[cut1:cut2], content[cut2:]} {
					if d == "" {
						continue // the stream skips empty content
					}
					a, b := sp.Content(d)
					r.WriteString(a)
					txt.WriteString(b)
				}
				a, b := sp.Flush()
				r.WriteString(a)
				txt.WriteString(b)
				if r.String() != wantR || txt.String() != wantT {
					t.Fatalf("%q cut at %d,%d: %q, %q; want %q, %q", content, cut1, cut2, r.String(), txt.String(), wantR, wantT)
				}
			}
		}
	}
}
