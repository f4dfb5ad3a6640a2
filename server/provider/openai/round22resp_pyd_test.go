package openai

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"google.golang.org/protobuf/proto"
)

// r22Body reads the JSON body of a unary recording (after the blank line
// ending its headers).
func r22Body(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(td(name + ".http"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), "\n\n")
	if i < 0 {
		t.Fatalf("%s: no blank line after the headers", name)
	}
	var body map[string]any
	if err := json.Unmarshal(raw[i+2:], &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// TestRound22WebSearchPreview: pydantic-ai's cassette of gpt-4o with
// web_search_preview (August 2025), unary: one web_search_call (a search
// with its query), then the message whose five url_citation annotations
// index the text by code point (it has "–", "ú", "ó", "ð": byte offsets
// would cut the citations). The annotations are relayed as OpenAI sent
// them, the search as a warning.
func TestRound22WebSearchPreview(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_openai_responses_model_web_search_tool"
	res := r21Unary(t, name, r21Request("gpt-4o", "What are the latest news in Iceland?"))
	body := r22Body(t, name)
	msg := body["output"].([]any)[1].(map[string]any)
	content := msg["content"].([]any)[0].(map[string]any)
	want := content["text"].(string)
	parts := res.Message.GetParts()
	if len(parts) != 1 || parts[0].GetText() != want || parts[0].GetItemId() != "msg_68ac1e3616548192bc0265a336983d12014ed998995dd5ee" {
		t.Fatalf("parts %v", parts)
	}
	m := res.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if m.GetResponseId() != "resp_68ac1e32b0108192973c8cfec29c2e61014ed998995dd5ee" || m.GetResolvedModel() != "gpt-4o-2024-08-06" ||
		m.GetServiceTier() != "default" || m.GetToolCallCount() != 0 {
		t.Errorf("meta %v", m)
	}
	if u := (&llmrelayv1.Usage{InputTokens: 319, OutputTokens: 556, TotalTokens: 875}); !proto.Equal(m.GetUsage(), u) {
		t.Errorf("usage %v, want %v", m.GetUsage(), u)
	}
	// The annotations, exactly as sent, each citing the markdown link
	// it spans (counted in code points).
	var anns []map[string]any
	if err := json.Unmarshal([]byte(extendedJSON(t, m, extAnnotations)), &anns); err != nil {
		t.Fatal(err)
	}
	sent := content["annotations"].([]any)
	if len(anns) != len(sent) {
		t.Fatalf("annotations %v", anns)
	}
	runes := []rune(want)
	for i, a := range anns {
		s := sent[i].(map[string]any)
		for _, k := range []string{"type", "title", "url", "start_index", "end_index"} {
			if a[k] != s[k] {
				t.Errorf("annotation %d %s: %v, want %v", i, k, a[k], s[k])
			}
		}
		cited := string(runes[int(s["start_index"].(float64)):int(s["end_index"].(float64))])
		if !strings.HasPrefix(cited, "([") || !strings.Contains(cited, s["url"].(string)) {
			t.Errorf("annotation %d spans %q", i, cited)
		}
	}
	if w := []string{`ignored output item of type "web_search_call" (id ws_68ac1e339ee8819289d2eb5604ce44ce014ed998995dd5ee; a tool the provider ran itself)`}; strings.Join(m.GetWarnings(), "\n") != strings.Join(w, "\n") {
		t.Errorf("warnings %q, want %q", m.GetWarnings(), w)
	}
}
