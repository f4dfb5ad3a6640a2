package anthropic

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestLeftovers19ExtraBodyMaxTokens: max_tokens is the configured default
// when the request has none, and extra_body may set its own silently;
// when the request gives max_tokens, extra_body's other value replaces it
// with a warning naming the field (it was silent).
func TestLeftovers19ExtraBodyMaxTokens(t *testing.T) {
	t.Parallel()
	warned := provider.ReplacedWarning("max_tokens")
	for _, tc := range []struct {
		name string
		max  *int32
		warn bool
	}{
		{"default", nil, false},
		{"asked", proto.Int32(512), true},
		{"asked the same", proto.Int32(77), false},
	} {
		m, _, warnings, err := build(t, &provider.Request{
			Model:           model,
			Messages:        []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("hi"))},
			Options:         &llmrelayv1.GenerationOptions{MaxTokens: tc.max},
			ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"max_tokens": 77}`},
		})
		if err != nil {
			t.Fatal(err)
		}
		if m["max_tokens"] != 77.0 || slices.Contains(warnings, warned) != tc.warn {
			t.Errorf("%s: max_tokens %v, warnings %q; want 77, warned %v", tc.name, m["max_tokens"], warnings, tc.warn)
		}
	}
}
