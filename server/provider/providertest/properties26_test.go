package providertest

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func collect(reports *[]string) func(string, string, ...any) {
	return func(prop, format string, args ...any) {
		*reports = append(*reports, prop+": "+fmt.Sprintf(format, args...))
	}
}

// TestCheckKept: a field whose values the answer does not hold is
// reported once per path; one kept in meta.extended, named by a warning,
// listed as ignored, or saying nothing (null, 0, "") is not.
func TestCheckKept(t *testing.T) {
	t.Parallel()
	rec := sseRecording("data: {\"id\":\"c9\",\"object\":\"chat.completion.chunk\",\"created\":1,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}],\"cost\":{\"usd\":0.5},\"odd\":null}\r\n\r\n" +
		"data: {\"id\":\"c9\",\"choices\":[{\"index\":0,\"delta\":{\"phase\":\"commentary\",\"extra\":\"x\"},\"finish_reason\":\"stop\"}],\"timing\":{\"ms\":7},\"gone\":\"lost value\",\"zero\":0}\r\n\r\n" +
		"data: [DONE]\r\n\r\n")
	said, ok := Said(WireChat, rec)
	if !ok {
		t.Fatal("not read")
	}
	ext, err := structpb.NewStruct(map[string]any{"cost": map[string]any{"usd": 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	res := &provider.Result{
		Message: &llmrelayv1.Message{Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "Hi"}}}},
		Meta:    &llmrelayv1.ResponseMeta{ResponseId: "c9", Extended: ext, Warnings: []string{"timing not supported; ignored"}},
	}
	var reports []string
	checkKept(WireChat, said, res, map[string]string{"choices[].delta.extra": "listed"}, collect(&reports))
	want := []string{
		`kept: field choices[].delta.phase dropped: "\"commentary\"" (12 bytes)`,
		`kept: field gone dropped: "\"lost value\"" (12 bytes)`,
	}
	if strings.Join(reports, "\n") != strings.Join(want, "\n") {
		t.Errorf("reports\n%s\nwant\n%s", strings.Join(reports, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckUsageTotal: the body's own total is the answer's where it is
// at least input + output; a lost or made-up total, or a negative count,
// is reported.
func TestCheckUsageTotal(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name  string
		total *int64
		got   *llmrelayv1.Usage
		bad   bool
	}{
		{"the body's larger total", n(12), &llmrelayv1.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 12}, false},
		{"the body's larger total lost", n(12), &llmrelayv1.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8}, true},
		{"a smaller total raised to the sum", n(6), &llmrelayv1.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8}, false},
		{"a total made up", nil, &llmrelayv1.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8}, false},
		{"a negative count", nil, &llmrelayv1.Usage{InputTokens: 5, OutputTokens: 3, TotalTokens: 8, ReasoningTokens: -1}, true},
	} {
		var reports []string
		checkUsage(&SaidUsage{Input: n(5), Output: n(3), Total: c.total}, &llmrelayv1.ResponseMeta{Usage: c.got}, collect(&reports))
		if (len(reports) > 0) != c.bad {
			t.Errorf("%s: reports %q", c.name, reports)
		}
	}
}
