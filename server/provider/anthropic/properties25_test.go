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
	})
	counts.Log(t)
}
