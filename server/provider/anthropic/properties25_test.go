package anthropic

import (
	"path/filepath"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound25Properties checks the cross-provider properties
// (providertest.Properties) over every real recording of this package.
func TestRound25Properties(t *testing.T) {
	t.Parallel()
	counts := providertest.Properties(t, providertest.PropertyCheck{
		Glob:    filepath.Join("testdata", "real_*.http"),
		Wire:    func(string, providertest.Recording) providertest.Wire { return providertest.WireAnthropic },
		Request: func(providertest.Wire) *provider.Request { return plainRequest() },
		NewProvider: func(url, _ string, _ providertest.Recording) provider.Provider {
			return newTestProvider(t, url)
		},
		RequestIDHeaders: []string{requestIDHeader},
		IgnoredFields: map[string]string{
			// Found by the kept property (round 26): every recorded
			// caller is {"type":"direct"} (the model called the tool); the
			// caller of programmatic tool calling (code execution's) is not
			// read (NOT KEPT).
			"content[].caller":     "a tool_use block's caller: direct in every recording",
			"content_block.caller": "a tool_use block's caller: direct in every recording",
		},
	})
	counts.Log(t)
}
