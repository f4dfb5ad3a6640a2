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

// TestSplitThinkBlocks: Bedrock's gpt-oss markup, one or more leading
// <reasoning> blocks (a <think> block too), whitespace between them
// dropped, the text after the last one unchanged; a tag later in the
// text, or an unknown one, is text.
func TestSplitThinkBlocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		content, reasoning, text string
		ok                       bool
	}{
		{"<reasoning>The user says hi.</reasoning>Hello!", "The user says hi.", "Hello!", true},
		{"<reasoning>a</reasoning><reasoning>b</reasoning>\n\nHi", "ab", "\n\nHi", true},
		{"\n<reasoning>a</reasoning>\n <reasoning>b</reasoning>Hi", "ab", "Hi", true},
		{"<reasoning>a</reasoning><think>b</think>Hi", "ab", "Hi", true},
		{"<think>a</think><reasoning>b</reasoning>", "ab", "", true},
		{"<reasoning>cut </reason", "cut </reason", "", true},
		{"<reasoning>a</reasoning>Hi <reasoning>b</reasoning>", "a", "Hi <reasoning>b</reasoning>", true},
		{"Use <reasoning>…</reasoning> tags.", "", "Use <reasoning>…</reasoning> tags.", false},
		{"<reasoningx>a</reasoningx>", "", "<reasoningx>a</reasoningx>", false},
		{"<reas", "", "<reas", false},
		{"", "", "", false},
	} {
		r, txt, ok := SplitThinkDialect(tc.content, ThinkBlocks)
		if r != tc.reasoning || txt != tc.text || ok != tc.ok {
			t.Errorf("SplitThinkDialect(%q) = %q, %q, %v; want %q, %q, %v", tc.content, r, txt, ok, tc.reasoning, tc.text, tc.ok)
		}
	}
	// The default dialect does not know <reasoning>, nor a second block.
	for c, want := range map[string]string{
		"<reasoning>a</reasoning>Hi":       "<reasoning>a</reasoning>Hi",
		"<think>a</think><think>b</think>": "<think>b</think>",
	} {
		if _, txt, _ := SplitThink(c); txt != want {
			t.Errorf("SplitThink(%q) text %q, want %q", c, txt, want)
		}
	}
}

// TestThinkBlocksSplitterAgreesWithUnary: the streamed form of ThinkBlocks
// releases what SplitThinkDialect finds in the whole, however the content
// is cut (tags split across deltas included).
func TestThinkBlocksSplitterAgreesWithUnary(t *testing.T) {
	t.Parallel()
	for _, content := range []string{
		"<reasoning>a </reasoning\n</reasoning>\n<reasoning>b</reasoning>\n\nHi </reasoning> x",
		" <reasoning>x<</reasoning><think>y</think>z",
		"<reasoning>never closed </reas",
		"<reasoning>a</reasoning>\n",
		"<reas",
		"<rea plain",
		"plain <reasoning>x</reasoning>",
		"<reasoning></reasoning><reasoning></reasoning>",
	} {
		wantR, wantT, _ := SplitThinkDialect(content, ThinkBlocks)
		for cut1 := 0; cut1 <= len(content); cut1++ {
			for cut2 := cut1; cut2 <= len(content); cut2++ {
				sp := NewThinkSplitter(ThinkBlocks)
				var r, txt strings.Builder
				for _, d := range []string{content[:cut1], content[cut1:cut2], content[cut2:]} {
					if d == "" {
						continue
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

// TestPrefilledSplitterAgreesWithUnary: a splitter told to Prefill
// releases, however the content is cut into deltas, what the unary answer
// finds in the whole (SplitThinkDialect of PrefilledThink), in both
// dialects, for content shorter than the bound; and at the bound what was
// held is released as text, the rest after it too.
func TestPrefilledSplitterAgreesWithUnary(t *testing.T) {
	t.Parallel()
	for _, d := range []ThinkDialect{ThinkDefault, ThinkBlocks, ThinkThought} {
		for _, content := range []string{
			"reasoning\n</think>\n\nanswer",
			"r </think",
			"r </think>",
			"</think>",
			"never closed",
			"<think>a</think>b",
			"  <think>a</think>b",
			"x <think>y</think>z",
			"a</think>b</think>c",
			"a</think> <reasoning>b</reasoning>c",
			"a</think>\n<think>b</think>c",
			"</thin</think>k",
			"<thin</think>",
		} {
			wantR, wantT, _ := SplitThinkDialect(PrefilledThink(content), d)
			for cut1 := 0; cut1 <= len(content); cut1++ {
				for cut2 := cut1; cut2 <= len(content); cut2++ {
					sp := NewThinkSplitter(d)
					sp.Prefill(1 << 10)
					var r, txt strings.Builder
					for _, p := range []string{content[:cut1], content[cut1:cut2], content[cut2:]} {
						if p == "" {
							continue
						}
						a, b := sp.Content(p)
						r.WriteString(a)
						txt.WriteString(b)
					}
					txt.WriteString(sp.FlushPrefilled())
					a, b := sp.Flush()
					r.WriteString(a)
					txt.WriteString(b)
					if r.String() != wantR || txt.String() != wantT {
						t.Fatalf("dialect %d %q cut at %d,%d: %q, %q; want %q, %q", d, content, cut1, cut2, r.String(), txt.String(), wantR, wantT)
					}
				}
			}
		}
	}
	var sp ThinkSplitter
	sp.Prefill(8)
	if r, txt := sp.Content("12345678"); r != "" || txt != "" {
		t.Fatalf("within the bound: %q, %q released", r, txt)
	}
	if r, txt := sp.Content("9"); r != "" || txt != "123456789" {
		t.Fatalf("past the bound: %q, %q; want the held content as text", r, txt)
	}
	if r, txt := sp.Content("x</think>y"); r != "" || txt != "x</think>y" {
		t.Fatalf("after the bound: %q, %q; want plain text", r, txt)
	}
}

// TestPrefilledFlushThenText: a prefilled block released as text by
// FlushPrefilled (a tool call or the finish came before its "</think>";
// Flush leaves it) leaves the content after it plain text.
func TestPrefilledFlushThenText(t *testing.T) {
	t.Parallel()
	var sp ThinkSplitter
	sp.Prefill(1 << 10)
	if r, txt := sp.Content("a"); r != "" || txt != "" {
		t.Fatalf("%q, %q released before the tag", r, txt)
	}
	if r, txt := sp.Flush(); r != "" || txt != "" {
		t.Fatalf("Flush released a prefilled block: %q, %q", r, txt)
	}
	if txt := sp.FlushPrefilled(); txt != "a" {
		t.Fatalf("flush %q", txt)
	}
	if r, txt := sp.Content("b</think>c"); r != "" || txt != "b</think>c" {
		t.Fatalf("after the flush %q, %q", r, txt)
	}
}

// TestPrefillBoundPassedOnce: a prefilled hold that passes its bound is
// reported once by PrefillBoundPassed, and the content after it stays
// plain text; a hold released by its "</think>" or by FlushPrefilled is
// not reported.
func TestPrefillBoundPassedOnce(t *testing.T) {
	var sp ThinkSplitter
	sp.Prefill(4)
	if sp.PrefillBoundPassed() {
		t.Fatal("reported before any content")
	}
	sp.Content("123")
	if sp.PrefillBoundPassed() {
		t.Fatal("reported within the bound")
	}
	if _, txt := sp.Content("45"); txt != "12345" || !sp.PrefillBoundPassed() {
		t.Fatalf("past the bound: %q, not reported", txt)
	}
	if sp.PrefillBoundPassed() {
		t.Fatal("reported twice")
	}
	if r, txt := sp.Content("a</think>b"); r != "" || txt != "a</think>b" {
		t.Fatalf("after the bound: %q, %q", r, txt)
	}
	for _, end := range []string{"r</think>t", ""} {
		var sp ThinkSplitter
		sp.Prefill(64)
		sp.Content("ab")
		if end != "" {
			sp.Content(end)
		} else {
			sp.FlushPrefilled()
		}
		if sp.PrefillBoundPassed() {
			t.Errorf("%q: reported without passing the bound", end)
		}
	}
}

// TestSplitThinkThought: Gemini's markup on Google's OpenAI-compatible
// endpoint, one leading <thought> block (a <think> block too), the text
// after it unchanged; a second block, a tag later in the text or another
// dialect's tag is text; and the streamed form releases what the unary
// one finds in the whole, however the content is cut.
func TestSplitThinkThought(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		content, reasoning, text string
		ok                       bool
	}{
		{"<thought>**Plan**\n\nx\n\n\n</thought>你好！", "**Plan**\n\nx\n\n\n", "你好！", true},
		{"\n<thought>a</thought>\n\nHi", "a", "\n\nHi", true},
		{"<think>a</think>Hi", "a", "Hi", true},
		{"<thought>a</thought><thought>b</thought>", "a", "<thought>b</thought>", true},
		{"<thought>cut </thoug", "cut </thoug", "", true},
		{"<reasoning>a</reasoning>Hi", "", "<reasoning>a</reasoning>Hi", false},
		{"Hi <thought>a</thought>", "", "Hi <thought>a</thought>", false},
		{"<thoughts>a</thoughts>", "", "<thoughts>a</thoughts>", false},
		{"<thou", "", "<thou", false},
	} {
		r, txt, ok := SplitThinkDialect(tc.content, ThinkThought)
		if r != tc.reasoning || txt != tc.text || ok != tc.ok {
			t.Errorf("SplitThinkDialect(%q) = %q, %q, %v; want %q, %q, %v", tc.content, r, txt, ok, tc.reasoning, tc.text, tc.ok)
		}
	}
	if _, txt, ok := SplitThink("<thought>a</thought>Hi"); ok || txt != "<thought>a</thought>Hi" {
		t.Errorf("the default dialect read <thought>: %q", txt)
	}
	for _, content := range []string{
		"<thought>a </thought\n</thought>\n\nHi </thought> x",
		" <thought>x<</thought><thought>y</thought>z",
		"<thought>never closed </thou",
		"<thou",
		"<thi plain",
		"<think>a</think>b",
		"plain <thought>x</thought>",
	} {
		wantR, wantT, _ := SplitThinkDialect(content, ThinkThought)
		for cut1 := 0; cut1 <= len(content); cut1++ {
			for cut2 := cut1; cut2 <= len(content); cut2++ {
				sp := NewThinkSplitter(ThinkThought)
				var r, txt strings.Builder
				for _, d := range []string{content[:cut1], content[cut1:cut2], content[cut2:]} {
					if d == "" {
						continue
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
