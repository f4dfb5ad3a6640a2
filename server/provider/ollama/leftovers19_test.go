package ollama

import (
	"slices"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestLeftovers19ExtraBodyDefaults: "truncate" and "shift" are the
// adapter's defaults (false: no silent cut), which extra_body sets back
// to Ollama's own without a warning (testdata/real_lcg_truncate_stream
// asks so); a field built from the request that extra_body replaces is
// warned (a field of its "options" object, the embeddings' input).
func TestLeftovers19ExtraBodyDefaults(t *testing.T) {
	t.Parallel()
	chat := func(extra string) []string {
		req := &provider.Request{Model: "llama3", Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("hi"))},
			Options:         &llmrelayv1.GenerationOptions{Temperature: ptr(0.2)},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: extra}}
		b, err := buildChatRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		return b.warnings
	}
	if w := chat(`{"truncate": true, "shift": true}`); len(w) != 0 {
		t.Errorf("opting in to Ollama's cutting: warnings %q", w)
	}
	// options merge field by field (extra19_test.go): adding num_ctx
	// replaces nothing, changing the temperature is warned.
	if w := chat(`{"options": {"num_ctx": 8192}}`); len(w) != 0 {
		t.Errorf("options added to: warnings %q", w)
	}
	if w := chat(`{"options": {"temperature": 0.9}}`); !slices.Equal(w, []string{provider.ReplacedWarning("options.temperature")}) {
		t.Errorf("options.temperature replaced: warnings %q", w)
	}
	embed := func(extra string) []string {
		_, w, err := buildEmbedRequest(&provider.EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"a"},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: extra}})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := embed(`{"truncate": true}`); len(w) != 0 {
		t.Errorf("embeddings' truncate: warnings %q", w)
	}
	if w := embed(`{"input": ["b"]}`); !slices.Equal(w, []string{provider.ReplacedWarning("input")}) {
		t.Errorf("embeddings' input replaced: warnings %q", w)
	}
}
