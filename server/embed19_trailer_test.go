package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// embedRoutedYAML routes model m to deployment "first" ({{URL}}) then
// "second" (URL2), both splitting at limit inputs.
func embedRoutedYAML(url2 string, limit int) string {
	return fmt.Sprintf(`
defaults:
  retry: {max_attempts: 1, base_delay: 1ms, max_delay: 2ms}
providers:
  - {name: first, type: openai, base_url: {{URL}}, api_key: sk-embed-test-0000, max_embedding_inputs: %[2]d}
  - {name: second, type: openai, base_url: %[1]s, api_key: sk-embed-test-0001, max_embedding_inputs: %[2]d}
models:
  - name: m
    deployments:
      - {provider: first, upstream_model: bge-small}
      - {provider: second, upstream_model: bge-small}
    capabilities:
      embeddings: {format: openai-embeddings}
`, url2, limit)
}

// TestEmbed19FallbackKeepsSpentUsage: the first deployment embeds two of
// three parts (billed: 4 inputs x 3 tokens each) and fails the third with
// a 503; the second deployment embeds all 12 inputs (36 tokens). The
// call's usage is what was spent on both (60), and a warning says how
// much of it came from the deployment that failed: the first's usage was
// dropped when the route fell back.
func TestEmbed19FallbackKeepsSpentUsage(t *testing.T) {
	t.Parallel()
	first := newEmbedUpstream(t, 4, false, map[int]int{3: 503})
	second := newEmbedUpstream(t, 4, false, nil)
	c, _ := startWith(t, embedRoutedYAML(second.URL, 4), first.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(12)})
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, resp.GetEmbeddings(), 12)
	m := resp.GetMeta()
	if m.GetRouting().GetDeployment() != "second" || m.GetAttempts() != 6 {
		t.Fatalf("meta %v", m)
	}
	if u := m.GetUsage(); u.GetInputTokens() != 60 || u.GetTotalTokens() != 60 {
		t.Errorf("usage %v, want the 24 tokens spent on first added to the 36 of second", u)
	}
	if !slices.ContainsFunc(m.GetWarnings(), func(w string) bool {
		return strings.Contains(w, "usage includes 24 tokens") && strings.Contains(w, "first")
	}) {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}

// TestEmbed19BothDeploymentsFail: both deployments fail partway; the
// status's meta counts every part embedded on either, and says how much
// came from the first.
func TestEmbed19BothDeploymentsFail(t *testing.T) {
	t.Parallel()
	first := newEmbedUpstream(t, 4, false, map[int]int{3: 503})
	second := newEmbedUpstream(t, 4, false, map[int]int{2: 503})
	c, _ := startWith(t, embedRoutedYAML(second.URL, 4), first.URL)
	_, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: inputs(12)})
	m := failedMeta(t, err)
	if u := m.GetUsage(); u.GetInputTokens() != 36 {
		t.Errorf("usage %v, want 24 (first) + 12 (second)", u)
	}
	if !slices.Contains(m.GetWarnings(), "usage includes 24 tokens spent on first before it failed (a fallback embeds every input again)") {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}
